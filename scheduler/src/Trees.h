// Trees.h — the source trees of candidates that are code changes (docs/propose.md): `{tree}` in
// a command is a private copy of [propose] tree with the candidate's chain of patches applied.
//
// Each chain has one folder, ROOT/KEY (chain_key: plain for the declared candidates), made once:
// the parent's tree copied, the chain's last patch applied with GNU patch (-p1, no fuzz, no
// reject files, no backups), then renamed into place, so a killed run never leaves a half-made
// tree under a chain's name (a folder .tmp-* it left is removed by the next run). A patch must
// not go through a symlink of the tree nor make one: the tree stays inside itself.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "flotilla/results/Store.h"

namespace flotilla::scheduler {

class TreeCache {
 public:
  // `plain`: [propose] tree; `root`: where the trees go (RESULTS.trees).
  TreeCache(std::filesystem::path plain, std::filesystem::path root,
            std::vector<std::filesystem::path> path_prepend = {});

  // The tree of `chain` (proposal ids, root first), made when missing. Throws std::runtime_error
  // naming the proposal whose patch does not apply (an accepted one always did).
  std::filesystem::path ensure(const std::vector<std::int64_t>& chain,
                               const std::vector<results::ProposalRecord>& proposals);

  // Whether `patch` applies cleanly to a copy of `tree`, touching only `files` without going
  // through a symlink: "" if so, else why not (patch's own words). Leaves nothing behind.
  std::string try_apply(const std::filesystem::path& tree, std::string_view patch,
                        const std::vector<std::string>& files) const;

  // Removes what a killed run left half-made.
  void remove_stale() const;

  const std::filesystem::path& root() const { return m_root; }

 private:
  // Copies `from` to a fresh temporary folder under the root and applies `patch`: the folder, or
  // throws with the reason.
  std::filesystem::path patched_copy(const std::filesystem::path& from, std::string_view patch,
                                     const std::vector<std::string>& files) const;

  std::filesystem::path m_plain, m_root;
  std::vector<std::filesystem::path> m_path_prepend;
};

}  // namespace flotilla::scheduler

// Trees.cpp — candidates' source trees: copies with chains of patches applied (Trees.h).
#include "Trees.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "flotilla/jobs/Subprocess.h"
#include "flotilla/scheduler/Proposals.h"

namespace flotilla::scheduler {
namespace {

namespace fs = std::filesystem;

// The first component of `relative` (or the path itself) that is a symlink inside `tree`.
std::string symlink_on_the_way(const fs::path& tree, const std::string& relative) {
  fs::path at = tree;
  for (const auto& part : fs::path(relative)) {
    at /= part;
    struct stat info {};
    if (::lstat(at.c_str(), &info) != 0) return {};  // not there (yet): nothing to follow
    if (S_ISLNK(info.st_mode)) return at.lexically_relative(tree).string();
  }
  return {};
}

void copy_tree(const fs::path& from, const fs::path& to) {
  fs::copy(from, to, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
}

}  // namespace

TreeCache::TreeCache(fs::path plain, fs::path root, std::vector<fs::path> path_prepend)
    : m_plain(std::move(plain)), m_root(std::move(root)), m_path_prepend(std::move(path_prepend)) {}

void TreeCache::remove_stale() const {
  std::error_code ec;
  for (fs::directory_iterator it(m_root, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename().string().starts_with(".tmp-")) fs::remove_all(it->path(), ec);
}

fs::path TreeCache::patched_copy(const fs::path& from, std::string_view patch,
                                 const std::vector<std::string>& files) const {
  for (const auto& file : files)
    if (const auto link = symlink_on_the_way(from, file); !link.empty())
      throw std::runtime_error(fmt::format("'{}' goes through '{}', a symbolic link: a patch stays inside its tree",
                                           file, link));
  fs::create_directories(m_root);
  std::string pattern = (m_root / ".tmp-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr)
    throw std::runtime_error(fmt::format("cannot make a folder in {}", m_root.string()));
  const fs::path scratch = pattern;
  try {
    copy_tree(from, scratch / "tree");
    const auto patch_file = scratch / "proposal.patch";
    std::ofstream(patch_file, std::ios::binary) << patch;
    const auto run = jobs::run_subprocess({.argv = {"patch", "-p1", "--batch", "--forward", "--fuzz=0",
                                                    "--no-backup-if-mismatch", "--reject-file=-", "--silent", "-d",
                                                    (scratch / "tree").string(), "-i", patch_file.string()},
                                           .timeout = std::chrono::minutes(2),
                                           .stderr_to = jobs::SubprocessSpec::Output::to_stdout,
                                           .capture_limit = 16 << 10,
                                           .path_prepend = m_path_prepend});
    fs::remove(patch_file);
    if (!run.ok()) {
      std::string words = run.out;
      while (!words.empty() && (words.back() == '\n' || words.back() == ' ')) words.pop_back();
      throw std::runtime_error(fmt::format("it does not apply cleanly ({}){}{}", run.describe(std::chrono::minutes(2)),
                                           words.empty() ? "" : ": ", words));
    }
    for (const auto& file : files)
      if (const auto link = symlink_on_the_way(scratch / "tree", file); !link.empty())
        throw std::runtime_error(fmt::format("it makes '{}' a symbolic link: a patch stays inside its tree", link));
  } catch (...) {
    std::error_code ignored;
    fs::remove_all(scratch, ignored);
    throw;
  }
  return scratch;
}

std::string TreeCache::try_apply(const fs::path& tree, std::string_view patch,
                                 const std::vector<std::string>& files) const {
  try {
    const auto scratch = patched_copy(tree, patch, files);
    std::error_code ignored;
    fs::remove_all(scratch, ignored);
    return {};
  } catch (const std::exception& e) {
    return e.what();
  }
}

fs::path TreeCache::ensure(const std::vector<std::int64_t>& chain,
                           const std::vector<results::ProposalRecord>& proposals) {
  const auto folder = m_root / chain_key(chain, proposals);
  if (fs::is_directory(folder)) return folder;
  if (chain.empty()) {
    fs::create_directories(m_root);
    std::string pattern = (m_root / ".tmp-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr)
      throw std::runtime_error(fmt::format("cannot make a folder in {}", m_root.string()));
    copy_tree(m_plain, fs::path(pattern) / "tree");
    fs::rename(fs::path(pattern) / "tree", folder);
    fs::remove_all(pattern);
    return folder;
  }
  const std::vector<std::int64_t> parent(chain.begin(), chain.end() - 1);
  const auto& last = proposals.at(static_cast<std::size_t>(chain.back()));
  const auto from = ensure(parent, proposals);
  fs::path scratch;
  try {
    scratch = patched_copy(from, last.patch, check_patch(last.patch).files);
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("proposal {} ({}): {}", last.id, last.name, e.what()));
  }
  std::error_code ec;
  fs::rename(scratch / "tree", folder, ec);  // another run's twin may have won: the same content
  fs::remove_all(scratch);
  return folder;
}

}  // namespace flotilla::scheduler

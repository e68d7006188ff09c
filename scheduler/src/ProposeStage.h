// ProposeStage.h — running the proposers and judging what they wrote (docs/propose.md).
//
// A round's proposers run at once, propose.parallel of them, through a local backend (the same
// process runner as every task: an argv, no shell, a process group and a cgroup of its own, a
// timeout that kills the whole group). Proposer I of round R gets RESULTS.proposals/rR/contextI.json
// and an empty folder RESULTS.proposals/rR/outI, and FLOTILLA_PROPOSER_INDEX, _SEED and
// FLOTILLA_ROUND in its environment. What it wrote is judged file by file (judge): every
// NAME.patch becomes one record, accepted or refused with its reason, and the run one `answered`
// record. Nothing here writes the results file: the campaign records what judge() returns.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "Trees.h"
#include "flotilla/results/Analysis.h"
#include "flotilla/results/Store.h"
#include "flotilla/scheduler/Settings.h"
#include "flotilla/search/Space.h"

namespace flotilla::scheduler {

// One proposer's run: how it ended and the files it left in its out folder.
struct ProposerRun {
  int index = 0;
  std::string failure;  // "exit code 3: ...", "timed out after 10m": nothing it wrote counts
  std::string output_tail;
  struct File {
    std::string name;     // as found in the out folder
    std::string content;  // empty for what could not be read (see problem)
    std::string problem;  // why it cannot be a proposal file (a link, a folder, too big, ...)
  };
  std::vector<File> files;
  std::string tree_changed;  // the trees it was given to read that it changed ("" when none)
  std::optional<std::string> done;  // it wrote {out}/done: it has nothing more to propose (why)
};

// A proposal accepted by judge(): its record, and the configuration its candidate gets.
struct Accepted {
  std::size_t record = 0;  // index into the records judge() returns
  std::string config;      // canonical configuration text
};

struct Judgement {
  std::vector<results::ProposalRecord> records;  // in order: each run's proposals, then its answered row
  std::vector<Accepted> accepted;
};

class ProposeStage {
 public:
  ProposeStage(const Settings& settings, std::vector<std::filesystem::path> path_prepend);
  bool active() const { return m_s.propose.active(); }
  TreeCache& trees() { return m_trees; }
  std::filesystem::path folder() const;  // RESULTS.proposals

  // Runs proposers `indices` for `round` at once; `context_of(index)` is the JSON text each one
  // reads, and `given` the trees it names for them to read (copies in the cache: each one a
  // proposer changed is removed, to be made again). `stopping` is polled while they run: a stop
  // kills them (nothing they wrote counts, so a resumed campaign runs them again).
  std::vector<ProposerRun> run(int round, const std::vector<int>& indices,
                               const std::function<std::string(int)>& context_of,
                               const std::function<bool()>& stopping, const std::vector<std::filesystem::path>& given);

  // Judges the runs' files against what is recorded (duplicates, parents, budgets). `made` is
  // the number of proposals the budget has counted so far.
  Judgement judge(int round, const std::vector<ProposerRun>& runs, const results::CampaignSummary& summary,
                  const std::vector<results::CandidateRecord>& candidates,
                  const std::vector<results::ProposalRecord>& recorded, int made);

  // The seed proposer `index` is given in `round`.
  std::uint64_t seed(int round, int index) const;

 private:
  const Settings& m_s;
  std::vector<std::filesystem::path> m_path_prepend;
  TreeCache m_trees;
};

}  // namespace flotilla::scheduler

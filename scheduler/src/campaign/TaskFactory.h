// TaskFactory.h — a campaign's tasks from its settings and its candidates: the command lines
// with each candidate's values (its parameters, build folder, tree, repeat or shard), the env,
// the timeouts, the resources each stage runs on, and a confirmation's flotilla-pairs task.
// Only reads: what to run and when is decided elsewhere (Round.h, Dispatcher.h).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "flotilla/jobs/Task.h"
#include "flotilla/results/Store.h"
#include "flotilla/scheduler/Settings.h"

namespace flotilla::scheduler {

class Ledger;
class BuildStage;
class SuiteStage;

// "ABBABA...": pair i runs the candidate first (A) or the baseline first (B); from the seed,
// in blocks of two pairs that run one each way (AB or BA), so that at any look the two orders
// are as many (within one) and an order effect can be measured (Stats.h, unreliability).
std::string pair_order(std::uint64_t seed, std::int64_t candidate, int pairs);

class TaskFactory {
 public:
  using Values = std::map<std::string, std::string, std::less<>>;
  using TreeOf = std::function<std::filesystem::path(std::int64_t)>;

  TaskFactory(const Settings& settings, const Ledger& ledger, const BuildStage& builds, SuiteStage& suite,
              TreeOf tree_of)
      : m_s(settings), m_ledger(ledger), m_builds(builds), m_suite(suite), m_tree_of(std::move(tree_of)) {}

  // The candidate's parameter values, as the build key names them, and its source tree (its
  // chain of patches is part of what it is).
  Values parameter_values(std::int64_t id) const;
  // What a task's command placeholders are filled with.
  Values task_values(std::int64_t id, results::TrialKind kind, int index) const;
  // The task of one trial: a benchmark repeat or warm-up, an evaluate shard, or a confirmation.
  jobs::TaskSpec make(std::int64_t id, results::TrialKind kind, int index, int attempt = 0);
  // The candidate's evaluate command as discovery and the re-run use it (the kinds whose protocol
  // lists tests by the command itself: gtest, ctest, lit, pytest); empty for the others.
  std::vector<std::string> suite_argv(std::int64_t id) const;

 private:
  // Against the baseline, or head to head against `opponent` (index 1 + opponent of the task).
  jobs::TaskSpec confirm_task(std::int64_t id, int attempt, std::optional<std::int64_t> opponent) const;
  std::vector<std::string> with_env(std::vector<std::string> argv, std::int64_t id) const;

  const Settings& m_s;
  const Ledger& m_ledger;
  const BuildStage& m_builds;
  SuiteStage& m_suite;
  TreeOf m_tree_of;
};

}  // namespace flotilla::scheduler

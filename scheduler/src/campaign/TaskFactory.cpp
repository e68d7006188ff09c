// TaskFactory.cpp — see TaskFactory.h.
#include "TaskFactory.h"

#include <fmt/format.h>

#include "flotilla/jobs/Command.h"
#include "flotilla/scheduler/Planning.h"
#include "flotilla/suites/Protocols.h"
#include "../BuildStage.h"
#include "../ChoiceValues.h"
#include "../SuiteStage.h"
#include "Ledger.h"

namespace flotilla::scheduler {

std::string pair_order(std::uint64_t seed, std::int64_t candidate, int pairs) {
  std::uint64_t state = seed ^ (0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(candidate + 1));
  std::string order;
  while (static_cast<int>(order.size()) < pairs) {
    state += 0x9e3779b97f4a7c15ULL;  // splitmix64
    std::uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    order += ((z ^ (z >> 31)) >> 63) ? "AB" : "BA";
  }
  order.resize(static_cast<std::size_t>(pairs));
  return order;
}

TaskFactory::Values TaskFactory::parameter_values(std::int64_t id) const {
  Values values;
  const auto& config = m_ledger.config(id);
  for (std::size_t i = 0; i < config.size(); ++i)
    values[m_s.space.parameters()[i].name] = m_s.space.parameters()[i].format(config[i]);
  if (!m_s.propose.tree.empty()) values["tree"] = m_tree_of(id).string();
  return values;
}

TaskFactory::Values TaskFactory::task_values(std::int64_t id, results::TrialKind kind, int index) const {
  auto values = parameter_values(id);
  if (m_builds.active()) values["build_dir"] = m_builds.folder(values).string();
  values["candidate"] = std::to_string(id);
  const bool explore = kind == results::TrialKind::explore;
  values[explore ? "repeat" : "shard"] = std::to_string(index);
  if (!explore) values["shards"] = std::to_string(m_s.shards);
  apply_choice_values(m_s.space, values);  // a choice's value in place of its label (ChoiceValues.h)
  return values;
}

jobs::TaskSpec TaskFactory::make(std::int64_t id, results::TrialKind kind, int index, int attempt) {
  if (kind == results::TrialKind::confirm)
    return confirm_task(id, attempt, index > 0 ? std::optional<std::int64_t>(index - 1) : std::nullopt);
  // A warm-up runs the benchmark command as a repeat does, with no objective required.
  const bool bench = kind == results::TrialKind::explore || kind == results::TrialKind::warmup;
  auto values = task_values(id, bench ? results::TrialKind::explore : kind, index);
  if (!bench && m_suite.active()) m_suite.add_shard_values(values, id, index, attempt);
  auto spec = jobs::TaskSpec{.id = encode_task_id({id, kind, index}),
                             .argv = jobs::render_argv(bench ? m_s.explore_command : m_s.evaluate_command, values),
                             .timeout = bench ? m_s.explore_timeout : m_s.evaluate_timeout,
                             .objective = kind == results::TrialKind::explore ? m_s.objective : std::string(),
                             .attempt = attempt,
                             .exclusive = bench && m_s.explore_exclusive,
                             .resources = bench ? "explore" : "evaluate",
                             .after = bench ? "" : "explore",
                             .array_index = bench ? -1 : index};
  spec.env = jobs::render_env(bench ? m_s.explore_env : m_s.evaluate_env, values);
  if (!bench && m_suite.active()) m_suite.finish_shard_task(spec, id, index, attempt);
  return spec;
}

std::vector<std::string> TaskFactory::suite_argv(std::int64_t id) const {
  if (!suites::suite_protocol(m_s.suite).discovery.parse) return {};
  return jobs::render_argv(m_s.evaluate_command, task_values(id, results::TrialKind::evaluate, 0));
}

// A benchmark command with its [explore] env in front, through env(1): a confirmation runs the
// candidate's and the baseline's commands in one task, each with its own values.
std::vector<std::string> TaskFactory::with_env(std::vector<std::string> argv, std::int64_t id) const {
  if (m_s.explore_env.empty()) return argv;
  std::vector<std::string> out{"env"};
  for (const auto& [name, value] : jobs::render_env(m_s.explore_env, task_values(id, results::TrialKind::explore, 0)))
    out.push_back(name + "=" + value);
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

// A confirmation is one task (flotilla-pairs): the candidate's and the baseline's benchmark
// commands, in pairs, in a seeded random order, alone in one slot (one rank of one job under
// mpi and Slurm), stopping at the first look that decides.
// Head to head (docs/verdicts.md, "Ties"), the opponent's command takes the baseline's place and
// the task's index is 1 + the opponent's id; its pairs' order is seeded by both.
jobs::TaskSpec TaskFactory::confirm_task(std::int64_t id, int attempt, std::optional<std::int64_t> opponent) const {
  const auto reference = opponent ? *opponent : *m_ledger.baseline_id();
  const auto order_seed = opponent ? m_s.seed ^ (0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(*opponent + 1))
                                   : m_s.seed;
  auto candidate = with_env(jobs::render_argv(m_s.explore_command, task_values(id, results::TrialKind::explore, 0)), id);
  auto baseline = with_env(
      jobs::render_argv(m_s.explore_command, task_values(reference, results::TrialKind::explore, 0)), reference);
  std::vector<std::string> argv = {"flotilla-pairs",
                                   "--objective", m_s.objective,
                                   "--direction", m_s.maximize ? "maximize" : "minimize",
                                   "--order", pair_order(order_seed, id, m_s.confirm_max_pairs),
                                   "--timeout", std::to_string(m_s.explore_timeout.count()),
                                   "--warmup", std::to_string(m_s.warmup),
                                   "--confidence", fmt::format("{}", m_s.confirm_confidence),
                                   "--min-effect", fmt::format("{}", m_s.confirm_min_effect),
                                   "--max-pairs", std::to_string(m_s.confirm_max_pairs),
                                   "--candidate", std::to_string(candidate.size())};
  argv.insert(argv.end(), candidate.begin(), candidate.end());
  argv.push_back("--reference");
  argv.push_back(std::to_string(baseline.size()));
  argv.insert(argv.end(), baseline.begin(), baseline.end());
  // Each run has the explore timeout; the task as a whole has the sum, and a minute to spare.
  const auto runs = 2 * (m_s.confirm_max_pairs + m_s.warmup);
  const auto limit = m_s.explore_timeout.count() > 0 ? m_s.explore_timeout * runs + std::chrono::minutes(1)
                                                     : std::chrono::milliseconds(0);
  const int index = opponent ? static_cast<int>(*opponent + 1) : 0;
  return jobs::TaskSpec{.id = encode_task_id({id, results::TrialKind::confirm, index}), .argv = std::move(argv),
                        .timeout = limit, .attempt = attempt, .exclusive = true, .resources = "explore"};
}

}  // namespace flotilla::scheduler

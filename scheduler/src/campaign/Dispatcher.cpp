// Dispatcher.cpp — see Dispatcher.h.
#include "Dispatcher.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "flotilla/scheduler/Ingest.h"
#include "flotilla/scheduler/Planning.h"
#include "../SuiteStage.h"
#include "Ledger.h"
#include "TaskFactory.h"

namespace flotilla::scheduler {

std::string tasks_text(const std::vector<std::uint64_t>& ids) {
  std::vector<std::string> names;
  for (auto id : ids) {
    const auto key = decode_task_id(id);
    names.push_back(fmt::format("candidate {} {} {}", key.candidate, results::to_string(key.kind), key.index));
    if (names.size() == 10) break;
  }
  return fmt::format("{}{}", fmt::join(names, ", "),
                     ids.size() > names.size() ? fmt::format(" and {} more", ids.size() - names.size()) : std::string());
}

Halt Dispatcher::run(std::vector<jobs::TaskSpec> specs, const std::function<void(bool)>& show) {
  if (specs.empty()) return std::nullopt;
  submit(std::move(specs));
  while (m_backend->queued() + m_backend->running() > 0) {
    if (m_stops.any()) return obey_stop();
    record(m_backend->collect(std::chrono::milliseconds(200)));
    if (m_backend->held()) return Stop::held;  // nothing runs until a person submits the job
    show(false);
  }
  // A stop that came while the last collect ran: its lost results were dropped by record(),
  // so the phase is not complete and must not be decided on (the model's FINAL_PHASE,
  // docs/verification.md).
  if (m_stops.any()) return obey_stop();
  show(true);
  return std::nullopt;
}

void Dispatcher::end_speculative() {
  record(std::exchange(m_held, {}));  // every exploration is in now: keep or drop each
  m_speculative = false;
}

Stop Dispatcher::obey_stop() {
  const Stop stop = m_stops.kind();
  if (m_backend->capabilities().outlives_scheduler && !(stop == Stop::interrupted && m_o.cancel_on_interrupt)) {
    record(m_backend->collect(std::chrono::milliseconds(0)));  // what has come back is kept
    m_detached = m_backend->detach();
  } else {
    m_backend->cancel_all();
    while (m_backend->queued() + m_backend->running() > 0) record(m_backend->collect(std::chrono::milliseconds(200)));
  }
  return stop;
}

// Every task runs in the campaign's working directory, on every backend (a Slurm job's ranks
// start in the job's folder).
void Dispatcher::submit(std::vector<jobs::TaskSpec> specs) {
  for (auto& spec : specs) {
    if (spec.workdir.empty()) spec.workdir = m_s.workdir;
    m_in_flight.insert(spec.id);
  }
  m_backend->submit(std::move(specs));
}

std::string Dispatcher::disk_full_text() const {
  std::vector<std::uint64_t> running;
  for (auto id : m_in_flight)
    if (std::find(m_unwritten.begin(), m_unwritten.end(), id) == m_unwritten.end()) running.push_back(id);
  std::string text = m_unwritten.empty() ? std::string("no result was being written")
                                         : "the results of " + tasks_text(m_unwritten) + " could not be written";
  if (!running.empty()) text += "; still running or queued: " + tasks_text(running);
  return text;
}

void Dispatcher::record(const std::vector<jobs::TaskResult>& finished) {
  // One flush for everything one collect() returned (1,000 results of a job cost one flush per
  // table, not 1,000). A crash before the commit loses only this call's results: those a job's
  // workers wrote are still in its results file, and a resumed campaign takes them from there;
  // the others (a local task's, a lost task's) run again, as any result not yet recorded would.
  // Nothing outside this call acts on them before the commit.
  results::Store::Group group(m_ledger.store());
  for (const auto& r : finished) {
    m_suite.task_ended(r.id, r.attempt);  // a per_file shard's temporary folders, however it ended
    // Cancelled (or lost while stopping, or to `flotilla cancel`) is not a result: the task
    // runs again on resume, never now.
    if (r.status == jobs::TaskStatus::cancelled || (r.status == jobs::TaskStatus::lost && m_stops.any())) continue;
    // Before any requeue: an evaluation whose exploration failed is dropped, not run again (its
    // array was cancelled with the failed explore job, and that must not cost it an attempt).
    const auto key = decode_task_id(r.id);
    if (key.kind == results::TrialKind::evaluate && m_speculative && m_ledger.explore_outcome(key.candidate) == false) {
      drop_evaluation(key.candidate, key.index);
      continue;
    }
    if (r.status != jobs::TaskStatus::lost) m_launcher_worked = true;
    if (should_requeue(r, m_s.max_attempts)) {
      requeue(r);
      continue;
    }
    // Lost on every attempt while nothing of this run came back: the launcher fails (a batch
    // system's lost jobs have their own accounting, and a restarted scheduler takes them up).
    if (r.status == jobs::TaskStatus::lost && !m_launcher_worked && !m_backend->capabilities().outlives_scheduler)
      throw LauncherFailed(fmt::format(
          "{} was lost {} times, and no task of this run came back: {}. The launcher fails, not the candidate: "
          "nothing was recorded for it; fix the launcher and run the same command again to resume",
          tasks_text({r.id}), r.attempt + 1, r.reason));
    if (key.kind == results::TrialKind::confirm) {
      record_pairs(r);
      continue;
    }
    auto t = *to_trial_record(r);
    require_objectives(t);
    m_suite.judge(t);  // a suite's shard: ok once its report is readable
    if (t.kind == results::TrialKind::evaluate && !keep_evaluation(r, t.candidate, t.index)) continue;
    if (t.kind == results::TrialKind::evaluate) m_ledger.evaluated_now(t.candidate);
    m_ledger.add_trial(std::move(t));
  }
  try {
    group.commit();
  } catch (const results::StoreError&) {
    for (const auto& r : finished) m_unwritten.push_back(r.id);  // named by disk_full_text
    throw;
  }
  for (const auto& r : finished) m_in_flight.erase(r.id);
}

// A confirmation task's result as one trial per pair (index = pair), and one failed trial
// after them when the task failed: the pairs are what the verdict is computed from.
void Dispatcher::record_pairs(const jobs::TaskResult& r) {
  std::map<int, std::map<std::string, double>> pairs;
  for (const auto& [name, value] : r.metrics) {
    if (!name.starts_with("pair.")) continue;
    const auto dot = name.find('.', 5);
    if (dot == std::string::npos) continue;
    int index = -1;
    const auto digits = std::string_view(name).substr(5, dot - 5);
    if (std::from_chars(digits.data(), digits.data() + digits.size(), index).ec != std::errc{} || index < 0) continue;
    pairs[index][name.substr(dot + 1)] = value;
  }
  const auto base = to_trial_record(r);
  if (!base) return;
  // Index 0 is the confirmation against the baseline; 1 + N, head to head against candidate N.
  const auto key = decode_task_id(r.id);
  const double reference = static_cast<double>(key.index > 0 ? key.index - 1 : *m_ledger.baseline_id());
  const int first = key.index > 0 ? head_to_head_first_index(key.candidate, key.index - 1) : 0;
  int n = 0;
  double last_end = base->start;
  for (;; ++n) {
    auto it = pairs.find(n);
    if (it == pairs.end() || !it->second.contains("candidate") || !it->second.contains("reference")) break;
    const double c = it->second["candidate"], b = it->second["reference"];
    results::TrialRecord t = *base;
    t.index = first + n;
    // The pair's own time within the task (flotilla-pairs says when it began and ended): with
    // the task's, every pair would count the whole confirmation, and their sum many times it.
    if (it->second.contains("begin_s") && it->second.contains("end_s")) {
      t.start = std::clamp(base->start + it->second["begin_s"], base->start, base->end);
      t.end = std::clamp(base->start + it->second["end_s"], t.start, base->end);
      last_end = t.end;
    }
    t.status = results::TrialStatus::ok;
    t.exit_code = 0;
    t.reason.clear();
    t.output_tail.clear();
    t.objective = m_s.maximize ? c / b : b / c;
    t.metrics = {{"candidate", c}, {"reference", b}, {"order", it->second["order"]}, {"reference_candidate", reference}};
    m_ledger.add_trial(std::move(t));
  }
  if (r.status == jobs::TaskStatus::ok && n > 0) return;
  results::TrialRecord failed = *base;
  failed.index = first + n;
  failed.start = n > 0 ? last_end : base->start;  // what came after the last pair measured
  if (failed.status == results::TrialStatus::ok) failed.status = results::TrialStatus::failed;
  failed.objective = std::nan("");
  std::string detail;
  std::istringstream lines(r.output_tail);
  for (std::string line; std::getline(lines, line);)
    if (line.starts_with("flotilla-pairs: pair "))  // "flotilla-pairs: pair N: WHAT": the summary adds "pair N"
      if (auto colon = line.find(": ", 21); colon != std::string::npos) detail = line.substr(colon + 2);
  failed.reason = detail.empty() ? (r.reason.empty() ? "no pair was measured" : r.reason) : detail;
  failed.metrics = {{"reference_candidate", reference}};
  m_ledger.add_trial(std::move(failed));
}

// Where a head-to-head confirmation's pairs are numbered from (results::kHeadToHeadIndex): the
// slot the challenger's earlier pairs against this opponent used (an attempt after a lost one),
// else the next free one.
int Dispatcher::head_to_head_first_index(std::int64_t challenger, std::int64_t opponent) const {
  std::map<int, std::int64_t> slots;  // slot -> opponent
  for (const auto* t : m_ledger.trials_of(challenger)) {
    if (t->kind != results::TrialKind::confirm || t->index < results::kHeadToHeadIndex) continue;
    const int slot = (t->index - results::kHeadToHeadIndex) / results::kHeadToHeadStride;
    for (const auto& m : t->metrics)
      if (m.name == "reference_candidate") slots[slot] = static_cast<std::int64_t>(m.value);
  }
  int slot = 0;
  for (const auto& [used, against] : slots) {
    if (against == opponent) return results::kHeadToHeadIndex + used * results::kHeadToHeadStride;
    slot = used + 1;
  }
  return results::kHeadToHeadIndex + slot * results::kHeadToHeadStride;
}

// Several objectives: a benchmark run must print every one (the worker checks the first); one
// that leaves one out failed, as a run without the objective does.
void Dispatcher::require_objectives(results::TrialRecord& t) const {
  if (t.kind != results::TrialKind::explore || t.status != results::TrialStatus::ok) return;
  for (std::size_t g = 1; g < m_s.objectives.size(); ++g) {
    const auto& name = m_s.objectives[g].metric;
    const auto it = std::find_if(t.metrics.begin(), t.metrics.end(), [&](const auto& m) { return m.name == name; });
    if (it != t.metrics.end() && std::isfinite(it->value)) continue;
    t.status = results::TrialStatus::failed;
    t.reason = fmt::format("objective '{}' {} output", name, it == t.metrics.end() ? "missing from" : "not finite in");
    return;
  }
}

// A speculative evaluation (submitted with its exploration) is kept only for a candidate whose
// exploration succeeded, as the gate would have chosen it; it waits while that is not known yet.
bool Dispatcher::keep_evaluation(const jobs::TaskResult& r, std::int64_t candidate, int shard) {
  if (!m_speculative) return true;
  auto outcome = m_ledger.explore_outcome(candidate);
  if (!outcome) {
    m_held.push_back(r);
    return false;
  }
  if (outcome == true) return true;
  drop_evaluation(candidate, shard);
  return false;
}

void Dispatcher::drop_evaluation(std::int64_t candidate, int shard) {
  m_ledger.event("evaluation_dropped",
                 fmt::format("candidate {} shard {}: its exploration failed, so the gate does not choose it",
                             candidate, shard));
}

// A task whose rank died before it reported runs again in the next job, as its next attempt.
void Dispatcher::requeue(const jobs::TaskResult& r) {
  const auto key = decode_task_id(r.id);
  std::optional<jobs::TaskSpec> rerun;
  if (m_suite.active() && key.kind == results::TrialKind::evaluate && key.index == m_suite.rerun_index()) {
    rerun = m_suite.rerun_task(key.candidate, m_tasks.suite_argv(key.candidate), m_ledger.trials_of(key.candidate), r.attempt + 1);
    if (!rerun) return;
  }
  auto spec = rerun ? std::move(*rerun) : m_tasks.make(key.candidate, key.kind, key.index, r.attempt + 1);
  m_ledger.event("task_requeued", fmt::format("candidate {} {} {} attempt {}: {}", key.candidate,
                                              results::to_string(key.kind), key.index, spec.attempt, r.reason));
  submit({std::move(spec)});
}

}  // namespace flotilla::scheduler

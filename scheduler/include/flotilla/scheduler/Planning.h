// Planning.h — the campaign loop's decisions as pure functions over recorded results, so resume
// and gating are tested without running anything.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "flotilla/results/Analysis.h"
#include "flotilla/scheduler/Settings.h"

namespace flotilla::scheduler {

// A task's id is its trial key, so results that come back after a restart (a worker's job file,
// a re-attached Slurm job) still say which trial they are: candidate << 24 | kind << 23 | index.
struct TaskKey {
  std::int64_t candidate = 0;
  results::TrialKind kind = results::TrialKind::explore;
  int index = 0;  // < 2^23
  bool operator==(const TaskKey&) const = default;
};
std::uint64_t encode_task_id(const TaskKey& key);
TaskKey decode_task_id(std::uint64_t id);

// Indices in [0, count) that have no recorded trial of `kind` (any attempt): the tasks a
// resumed campaign still has to run. Completed tasks are never run again.
std::vector<int> missing_indices(const std::vector<const results::TrialRecord*>& recorded, results::TrialKind kind,
                                 int count);

// The next candidates of one round to evaluate, given what is recorded so far. Explored
// candidates are taken best first, as many as are still needed for gate.top of the round to be
// verified; a rolled-back candidate makes room for the next best, so a round whose fastest
// variants break the output still yields verified ones. Candidates that cannot beat the
// incumbent (the best verified objective, the baseline's included) are not worth verifying and
// are skipped. Gate::Kind::all takes every explored candidate not yet decided. The baseline is
// not gated: it is always evaluated, as the reference. Returns none when the round is done.
std::vector<std::int64_t> next_evaluations(const std::vector<results::CandidateSummary>& round, const Gate& gate,
                                           bool maximize, std::optional<double> incumbent);

// Why the campaign stops before proposing another batch, or nullopt to go on.
// `explored` counts candidates other than the baseline.
std::optional<std::string> stop_reason(const Settings& settings, std::size_t explored,
                                       std::optional<double> best_verified);

}  // namespace flotilla::scheduler

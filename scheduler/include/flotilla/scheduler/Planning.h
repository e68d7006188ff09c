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

// Indices in [0, count) that have no recorded trial of `kind` (any attempt): the tasks a
// resumed campaign still has to run. Completed tasks are never run again.
std::vector<int> missing_indices(const std::vector<const results::TrialRecord*>& recorded, results::TrialKind kind,
                                 int count);

// Candidates of one round that go on to evaluation: explored (all repeats ok), best first, at
// most gate.top of them (all of them for Gate::Kind::all). The baseline is not gated: it is
// always evaluated, as the reference.
std::vector<std::int64_t> select_for_evaluation(const std::vector<results::CandidateSummary>& round, const Gate& gate,
                                                bool maximize);

// Why the campaign stops before proposing another batch, or nullopt to go on.
// `explored` counts candidates other than the baseline.
std::optional<std::string> stop_reason(const Settings& settings, std::size_t explored,
                                       std::optional<double> best_verified);

}  // namespace flotilla::scheduler

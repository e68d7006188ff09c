// Planning.h — the campaign loop's decisions as pure functions over recorded results, so resume
// and gating are tested without running anything.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "flotilla/jobs/Backend.h"
#include "flotilla/results/Analysis.h"
#include "flotilla/scheduler/Settings.h"
#include "flotilla/search/Strategy.h"

namespace flotilla::scheduler {

// A task's id is its trial key, so results that come back after a restart (a worker's job file,
// a re-attached Slurm job) still say which trial they are: candidate << 24 | kind << 22 | index.
struct TaskKey {
  std::int64_t candidate = 0;
  results::TrialKind kind = results::TrialKind::explore;
  int index = 0;  // < 2^22
  bool operator==(const TaskKey&) const = default;
};
std::uint64_t encode_task_id(const TaskKey& key);
TaskKey decode_task_id(std::uint64_t id);

// Why a candidate has no objective to tell the strategy (search::Failure): its build failed
// (build), it was rolled back (verification), or an explore run failed: timeout when one of its
// runs ran past its limit, else crash. nullopt for a candidate with an objective, or pending.
std::optional<search::Failure> failure_of(const results::CandidateSummary& candidate,
                                          const std::vector<results::TrialRecord>& trials);
// The same from the candidate's own trials (Ledger::trials_of); others in the list are ignored.
std::optional<search::Failure> failure_of(const results::CandidateSummary& candidate,
                                          const std::vector<const results::TrialRecord*>& trials);

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

// Adaptive repeats and racing (docs/verdicts.md): which explored candidates of a round get more
// repeats, and how many repeats each should have in all. A candidate whose objective's interval
// still contains the incumbent's objective is undecided: it gets `step` more, up to
// `max_repeats`. One whose interval lies entirely on one side is decided: clearly worse stops
// there (it is raced out), clearly better needs no more (its confirmation will measure it).
// The baseline is the reference, not a contender. Without an incumbent nothing is undecided.
struct MoreRepeats {
  std::int64_t candidate = 0;
  int total = 0;  // repeats it should have, the recorded ones included
};
std::vector<MoreRepeats> more_repeats(const std::vector<results::CandidateSummary>& round,
                                      std::optional<double> incumbent, int step, int max_repeats);

// More benchmark runs at once on one host than it has cores (the backend's tasks_per_host): they
// slow each other down, and a median measured so is not comparable with one measured alone. The
// warning names the setting to change; none when each benchmark runs alone (explore.exclusive, where
// the backend honours it).
std::optional<std::string> oversubscription_warning(const jobs::BackendCapabilities& backend, unsigned cores,
                                                    bool exclusive);

// The objective every contender is measured against: the winner's (the best confirmed, or the
// best verified without confirmation), else the baseline's; none when that is the baseline's and
// the candidates' repeats ran more at once than its own (summary.unlike_placement): medians
// measured under another load are not like with like, so the gate, the adaptive repeats and the
// choice of what to confirm then hold nothing against them, and the confirmations (interleaved
// pairs, one at a time) decide.
std::optional<double> incumbent_objective(const results::CampaignSummary& summary);

// The candidates to confirm after a round, at most `tries`: eligible ones (verified, or explored
// when the campaign has no evaluate stage) other than the baseline, not confirmed yet, that may
// beat `threshold` (the winner's objective, or the baseline's when nothing is confirmed):
//  - first those whose objective beats it, best first;
//  - then those that adaptive repeats could not decide: their interval still contains the
//    threshold after `max_repeats` repeats, best first. Exploration cannot tell whether they
//    beat it; only the interleaved pairs of a confirmation can.
// A confirmation decides whether a candidate may be reported as beating the baseline at all,
// so only those that could change the headline are worth its pairs.
std::vector<std::int64_t> confirmation_candidates(const results::CampaignSummary& summary,
                                                  std::optional<double> threshold, int tries, int max_repeats);

// Why the campaign cannot go on from its baseline, or nullopt: the baseline failed to explore
// (no measurement: nothing can be compared with it or confirmed against it) or failed its
// verification (the reference itself is broken). Spending the budget then only buys candidates
// no verdict can be given for, so the campaign stops with this reason unless
// `intent.on_baseline_failure = continue`. Nullopt while the baseline is still pending.
std::optional<std::string> baseline_failure(const results::CampaignSummary& summary);

// Why the campaign stops before proposing another batch, or nullopt to go on.
// `explored` counts candidates other than the baseline.
std::optional<std::string> stop_reason(const Settings& settings, std::size_t explored,
                                       std::optional<double> best_verified);

// search.warm_start: a finished campaign's candidates as advice for this campaign's strategy
// (search::StrategyOptions::warm_start). A candidate with an objective (explored or verified)
// is an outcome in this campaign's loss convention; a failed one (build, exploration,
// verification) a failure of that kind; pending and screened ones say nothing. Candidates that
// are not configurations of this space (another parameter, a value off its grid, a constraint
// they break) are counted in `off_space` and left out.
struct WarmStart {
  std::vector<search::Observation> observations;
  std::size_t failed = 0;     // of the observations
  std::size_t off_space = 0;
  std::string first_off_space;  // why the first of them was left out
};
// Throws ConfigError naming `file` when the other campaign optimises another objective or
// direction, or when none of its candidates is a configuration of this space.
WarmStart warm_start_from(const results::CampaignSummary& other, const Settings& settings, const std::string& file);

}  // namespace flotilla::scheduler

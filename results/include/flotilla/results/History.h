// History.h — how a campaign progressed: the best objective so far after each evaluation and
// after each round, and whether the campaign ran to its end. Pure functions over records.
//
// Rules (beyond Analysis.h's):
//  - An evaluation is one candidate whose explore repeats are all recorded (explored, verified,
//    rolled back or explore_failed), ordered by the end of its last repeat (without explore
//    repeats: of its last build or evaluate trial); pending candidates are not evaluations yet.
//  - "Best so far" is judged in hindsight: a candidate that was rolled back later never counts,
//    so the curve never shows a value the campaign could not deliver. "Best verified so far"
//    counts only candidates that were (eventually) verified.
//  - A campaign is finished when its last lifecycle event is `campaign_finished`; otherwise it
//    was interrupted (resumable), is still running (a writer holds the file), or stopped without
//    a word (crashed or SIGKILLed).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flotilla/results/Analysis.h"

namespace flotilla::results {

struct HistoryPoint {
  std::size_t evaluation = 0;         // 1-based
  std::size_t candidate = 0;          // index into CampaignSummary::candidates (= id)
  double elapsed = 0;                 // seconds from the campaign's first trial start
  std::optional<double> objective;    // none when the candidate failed to explore
  std::optional<double> best_so_far;  // best non-rolled-back objective up to here
  std::optional<double> best_verified_so_far;
  bool improved = false;  // this evaluation set a new best_so_far
};

struct RoundHistory {
  std::int32_t round = 0;
  std::size_t candidates = 0;
  std::size_t failed = 0;  // explore_failed
  std::size_t verified = 0;
  std::size_t rolled_back = 0;
  std::size_t pending = 0;
  std::optional<double> round_best;   // best non-rolled-back objective of this round
  std::optional<double> best_so_far;  // after this round
  std::optional<double> best_verified_so_far;
  std::optional<std::size_t> best_candidate;  // the candidate holding best_verified_so_far, else best_so_far
};

struct History {
  std::vector<HistoryPoint> evaluations;
  std::vector<RoundHistory> rounds;
};

History history(const CampaignSummary& summary, const std::vector<TrialRecord>& trials);

// cancelled: the last lifecycle event is `cancelled` (the run obeyed `flotilla cancel`).
enum class RunState { finished, interrupted, running, stopped, cancelled };
std::string_view to_string(RunState state);

struct RunStatus {
  RunState state = RunState::stopped;
  std::size_t pending = 0;  // candidates without all their results
  std::size_t candidates = 0;
  bool complete() const { return state == RunState::finished && pending == 0; }
  // One line for people, e.g. "incomplete: stopped without finishing (crashed or killed) with
  // 3 of 12 candidates pending; run the campaign again to resume". Empty when complete.
  std::string note() const;
};

// `writer_active`: a flotilla process holds the file's writer lock (see has_live_writer).
RunStatus run_status(const std::vector<EventRecord>& events, const CampaignSummary& summary, bool writer_active);

}  // namespace flotilla::results

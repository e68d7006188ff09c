// ProgressLine.h — what the progress line of `flotilla run` says, as pure functions of the
// campaign's state, the time it has run and the terminal's width (Progress.h does the I/O).
//
// Invariants:
//  - format_progress never returns more than width - 1 columns (a line as wide as the terminal
//    wraps on some terminals, and a wrapped line cannot be rewritten in place). It keeps the most
//    important fields and drops the others whole, abbreviating before dropping; it never cuts
//    a field (on a terminal too narrow for any field, the line is empty).
//  - Failures are counted as the final report counts them: candidates whose exploration failed.
//    A rolled-back candidate's failed shards are its verification's verdict, not a failure.
//  - The rate and the ETA count only candidates this run finished, over the time this run took,
//    so a resumed campaign is not credited with the work of an earlier run.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

#include "flotilla/jobs/Backend.h"
#include "flotilla/results/Analysis.h"

namespace flotilla::scheduler {

struct ProgressState {
  int round = 0;
  std::string phase;                    // "explore", "evaluate", "confirm", ...; "done" at a round's end
  std::size_t finished = 0;             // candidates (not the baseline) whose exploration is over
  std::size_t finished_before_run = 0;  // of those, finished by an earlier run (a resume)
  std::size_t budget = 0;
  std::size_t running = 0;  // tasks
  std::size_t queued = 0;
  std::size_t verified = 0;
  std::size_t rolled_back = 0;
  std::size_t failed = 0;               // candidates whose exploration failed: the report's "failed"
  bool verifies = true;                 // an evaluate stage exists (without one nothing is verified)
  std::optional<double> best_verified;  // the winner, when it passed its tests
  std::optional<double> best_explored;  // the best not (yet) verified objective, when better
  std::string objective;
  // Several objectives: the Pareto front's size, how many of its members are verified, and the
  // pick's value of each objective ("time_s 0.012, residual 3e-05"); front is 0 with one.
  std::size_t front = 0;
  std::size_t front_verified = 0;
  std::string pick;
  std::optional<jobs::JobsOverview> jobs;  // the batch system's view of the campaign's jobs (Slurm)
};

// Candidates other than the baseline whose exploration is over (explored, verified, rolled
// back or failed): what the budget counts, and what is finished of it.
std::size_t finished_candidates(const results::CampaignSummary& summary);
// The fields the campaign's summary decides, counted as its report counts them.
void fill_from_summary(ProgressState& s, const results::CampaignSummary& summary);

using Seconds = std::chrono::duration<double>;

// Candidates this run finished per minute; nullopt before the first one (there is nothing to
// measure a rate by).
std::optional<double> candidates_per_minute(const ProgressState& s, Seconds elapsed);
// Time left to finish the budget's candidates at this run's rate; nullopt when no rate exists
// yet or every candidate is finished (what is left then, verifying the last ones, has no rate).
// The campaign may stop sooner (a target, patience, an exhausted space).
std::optional<Seconds> eta(const ProgressState& s, Seconds elapsed);

// "42s", "3m05s", "2h07m".
std::string duration_text(Seconds d);
// Terminal columns of UTF-8 text, counting each code point as one column.
std::size_t display_width(const std::string& text);

// A note line ("candidate 4: confirmed faster ...") broken on words into rows narrower than
// `width`, continued two columns in, so that a terminal never wraps it mid-word; width 0: as is.
std::string wrap_note(const std::string& line, int width);

// The line, at most width - 1 columns; width 0 means no limit (a log file).
std::string format_progress(const ProgressState& s, int width, Seconds elapsed);

}  // namespace flotilla::scheduler

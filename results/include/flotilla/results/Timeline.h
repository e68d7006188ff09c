// Timeline.h — which task ran where and when, so idle ranks and stragglers show.
//
// Lanes: trials are grouped by where they ran, (host, rank) when the trial records a rank, one
// group for trials that do not (the local backend; files from before ranks were recorded).
// Within a group the trials are packed into the fewest lanes in which none overlaps, taken in
// start order, each into the lowest free lane (interval partitioning: optimal, so an MPI rank,
// which runs one task at a time, gets one lane, and N concurrent local slots get N lanes).
//
// A confirmation records each interleaved pair with the whole confirmation's span; its rows are
// one bar (one task), so a confirmation of 40 pairs does not open 40 lanes. Candidates that share
// a build each record a build trial, a copy of the one that ran (its metric `built_by` names the
// candidate that ran it): copies are not drawn, since no task ran for them.
//
// Times are seconds from the earliest trial start. Utilisation is busy time over lanes × the time
// the campaign was running (its runs, from the lifecycle events), both counted only within the
// timeline's span: a campaign stopped overnight is not idle overnight.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "flotilla/results/Store.h"

namespace flotilla::results {

// Where a trial ran, when the file says: rank and host (and device) of the MPI worker or the
// local backend. Unknown for rows from files older than the rank/host/device columns.
struct TrialPlace {
  bool known = false;
  std::string host;
  long rank = 0;
  std::string device;
};
TrialPlace place_of(const TrialRecord& trial);

struct TimelineBar {
  std::size_t lane = 0;
  std::size_t runs = 1;   // trials in this bar: a confirmation's pairs share one span
  std::size_t trial = 0;  // row in /trials (the first, for a confirmation)
  std::int64_t candidate = 0;
  TrialKind kind = TrialKind::explore;
  TrialStatus status = TrialStatus::ok;
  double start = 0;  // seconds from the timeline's origin
  double end = 0;
};

struct TimelineLane {
  std::string label;  // "rank 3", "node01 rank 3", "slot 1"
  double busy = 0;    // seconds with a task running
  std::size_t tasks = 0;
};

// A stretch of time on the timeline's clock.
struct TimelinePeriod {
  double start = 0, end = 0;
};

struct Timeline {
  std::vector<TimelineLane> lanes;
  std::vector<TimelineBar> bars;  // in /trials order
  double origin = 0;              // seconds since the epoch of time 0
  double span = 0;                // seconds from the first start to the last end
  bool by_rank = false;           // some lane comes from a recorded rank
  std::size_t ranks = 0;          // distinct (host, rank) places recorded
  // In [0, 1]: busy time over lanes × running time, both counted only in `running` (the whole
  // span when empty); 0 for an empty timeline.
  double utilisation(const std::vector<TimelinePeriod>& running = {}) const;
};

Timeline build_timeline(const std::vector<TrialRecord>& trials);

// A build trial that copies another candidate's (metric built_by names another candidate).
bool shared_build_copy(const TrialRecord& trial);

// When the campaign was running, within the timeline's span: each run from its campaign_started
// or campaign_resumed event to its interrupted or campaign_finished event; a run with no end (it
// crashed, was killed, or still runs) ends at its last record (an event, or the end of a trial
// that started in it). Empty when the events record no run (then the whole span counts).
std::vector<TimelinePeriod> running_periods(const Timeline& timeline, const std::vector<TrialRecord>& trials,
                                            const std::vector<EventRecord>& events);

// A round (a batch; on Slurm one job) on the timeline: when it was proposed, when its first task
// started, and the wait between (queueing, on Slurm). From the `batch_proposed` and `proposals`
// events (a round of proposals only has no batch_proposed) and the candidates' rounds; its first
// task is its first drawn bar (never a copy of a build that ran in an earlier round); times on the
// timeline's clock. A round with no task yet has no start.
struct TimelineRound {
  std::int32_t round = 0;
  double proposed = 0;
  std::optional<double> first_start;
  double wait = 0;
};

std::vector<TimelineRound> timeline_rounds(const Timeline& timeline, const std::vector<CandidateRecord>& candidates,
                                           const std::vector<EventRecord>& events);

}  // namespace flotilla::results

// Scheduling.h — how many tasks the dispatcher hands a worker at a time (pure functions).
//
// Self-scheduling with two knobs, both driven by what the worker reported for its last batch:
//  - batch size: enough tasks for about `target_batch_seconds` of work (more with thousands of
//    workers, see BatchPolicy), so that one message
//    round trip (about 1 us on a node, tens of us across a network) is amortised over many
//    short tasks, while long tasks go out one at a time. Guided self-scheduling caps it at
//    remaining / (2 * workers), so batches shrink towards the end and no worker is left holding
//    a long tail while others idle. A worker's first batch is one task (nothing is known yet).
//  - prefetch: a worker holds a second batch while it runs one, so it never waits for the
//    dispatcher, but only for short tasks (below `prefetch_below_seconds`, or not yet measured)
//    and while there are at least as many tasks left as workers: a second long task held by
//    one worker would only make another idle at the end.
#pragma once

#include <cstddef>
#include <optional>

namespace flotilla::jobs::worker {

struct BatchPolicy {
  // A batch lasts at least this long, and longer with many workers: workers * per_worker_seconds,
  // so the dispatcher receives at most about 1 / per_worker_seconds messages a second however
  // many ranks there are (4,000 workers: 80 ms batches, 50,000 messages/s).
  double target_batch_seconds = 0.002;
  double per_worker_seconds = 20e-6;
  std::size_t max_batch = 1024;
  double prefetch_below_seconds = 0.05;
};

// Tasks for the worker's next batch; 0 only when none remain.
std::size_t batch_size(const BatchPolicy& policy, std::optional<double> mean_task_seconds, std::size_t remaining,
                       std::size_t workers);

// Batches a worker should hold (running + prefetched): 1 or 2.
std::size_t batches_in_hand(const BatchPolicy& policy, std::optional<double> mean_task_seconds, std::size_t remaining,
                            std::size_t workers);

}  // namespace flotilla::jobs::worker

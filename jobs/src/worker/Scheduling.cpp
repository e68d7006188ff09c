// Scheduling.cpp — batch sizing and prefetch (Scheduling.h).
#include "Scheduling.h"

#include <algorithm>
#include <cmath>

namespace flotilla::jobs::worker {

std::size_t batch_size(const BatchPolicy& policy, std::optional<double> mean_task_seconds, std::size_t remaining,
                       std::size_t workers) {
  if (remaining == 0) return 0;
  std::size_t by_time = 1;
  if (mean_task_seconds) {
    const double target =
        std::max(policy.target_batch_seconds, static_cast<double>(workers) * policy.per_worker_seconds);
    const double tasks = target / std::max(*mean_task_seconds, 1e-9);
    by_time = tasks >= static_cast<double>(policy.max_batch)
                  ? policy.max_batch
                  : std::max<std::size_t>(1, static_cast<std::size_t>(std::round(tasks)));
  }
  const std::size_t guided = (remaining + 2 * workers - 1) / (2 * std::max<std::size_t>(workers, 1));
  return std::max<std::size_t>(1, std::min({by_time, guided, policy.max_batch, remaining}));
}

std::size_t batches_in_hand(const BatchPolicy& policy, std::optional<double> mean_task_seconds, std::size_t remaining,
                            std::size_t workers) {
  const bool short_tasks = !mean_task_seconds || *mean_task_seconds < policy.prefetch_below_seconds;
  return short_tasks && remaining >= workers ? 2 : 1;
}

}  // namespace flotilla::jobs::worker

// Sharding.cpp — deterministic shard assignment (LPT with recorded durations, round-robin
// without).
#include <flotilla/suites/Sharding.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <queue>
#include <stdexcept>

namespace flotilla::suites {

namespace {

bool known(double seconds) { return std::isfinite(seconds) && seconds >= 0; }

}  // namespace

// to_string and suite_kind_from_string: the protocols' registry (Protocols.cpp).

std::vector<std::int32_t> assign_shards(std::span<const double> seconds, std::size_t tests, int shards) {
  if (shards < 1) throw std::invalid_argument("assign_shards: shards must be at least 1");
  if (!seconds.empty() && seconds.size() != tests) {
    throw std::invalid_argument("assign_shards: one duration per test, or none");
  }
  std::vector<std::int32_t> shard(tests);
  std::vector<double> known_seconds;
  for (const double s : seconds) {
    if (known(s)) known_seconds.push_back(s);
  }
  if (known_seconds.empty()) {
    for (std::size_t i = 0; i < tests; ++i) shard[i] = static_cast<std::int32_t>(i % static_cast<std::size_t>(shards));
    return shard;
  }
  std::nth_element(known_seconds.begin(), known_seconds.begin() + known_seconds.size() / 2, known_seconds.end());
  const double median = known_seconds[known_seconds.size() / 2];
  std::vector<double> cost(tests);
  for (std::size_t i = 0; i < tests; ++i) cost[i] = known(seconds[i]) ? seconds[i] : median;
  std::vector<std::size_t> order(tests);
  std::iota(order.begin(), order.end(), 0);
  // Longest first; equal durations keep index order, so the result does not depend on the sort.
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return cost[a] > cost[b]; });
  // Least-loaded shard first; ties go to the lowest shard number.
  using Load = std::pair<double, std::int32_t>;
  std::priority_queue<Load, std::vector<Load>, std::greater<>> loads;
  for (std::int32_t s = 0; s < shards; ++s) loads.push({0.0, s});
  for (const std::size_t i : order) {
    auto [load, s] = loads.top();
    loads.pop();
    shard[i] = s;
    loads.push({load + cost[i], s});
  }
  return shard;
}

namespace {

std::vector<double> with_median(std::span<const double> seconds) {
  std::vector<double> known_seconds;
  for (const double s : seconds)
    if (known(s)) known_seconds.push_back(s);
  if (known_seconds.empty()) return {};
  std::nth_element(known_seconds.begin(), known_seconds.begin() + known_seconds.size() / 2, known_seconds.end());
  const double median = known_seconds[known_seconds.size() / 2];
  std::vector<double> cost(seconds.begin(), seconds.end());
  for (double& c : cost)
    if (!known(c)) c = median;
  return cost;
}

}  // namespace

double makespan(std::span<const std::int32_t> assignment, std::span<const double> seconds) {
  const auto cost = with_median(seconds);
  if (cost.empty()) return 0;
  std::vector<double> load;
  for (std::size_t i = 0; i < assignment.size() && i < cost.size(); ++i) {
    const auto shard = static_cast<std::size_t>(assignment[i]);
    if (load.size() <= shard) load.resize(shard + 1, 0.0);
    load[shard] += cost[i];
  }
  return load.empty() ? 0 : *std::max_element(load.begin(), load.end());
}

int auto_shard_count(double total_seconds, std::size_t tests, unsigned slots, double min_seconds) {
  std::size_t count = std::max(1u, slots);
  if (std::isfinite(total_seconds) && total_seconds > 0 && min_seconds > 0)
    count = std::min(count, static_cast<std::size_t>(std::floor(total_seconds / min_seconds)));
  count = std::min(count, tests);
  return static_cast<int>(std::clamp<std::size_t>(count, 1, 1'000'000));
}

std::vector<std::int32_t> assign_gtest_shards(const std::vector<std::string>& names, int shards) {
  if (shards < 1) throw std::invalid_argument("assign_gtest_shards: shards must be at least 1");
  const auto disabled = [](std::string_view part) {
    return part.starts_with("DISABLED_") || part.find("/DISABLED_") != std::string_view::npos;
  };
  std::vector<std::int32_t> shard(names.size());
  std::int64_t runnable = 0;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string_view name = names[i];
    // The suite name may hold '.' only in a parameter, never before the separator gtest adds.
    const std::size_t dot = name.find('.');
    const std::string_view suite = name.substr(0, dot);
    const std::string_view test = dot == std::string_view::npos ? std::string_view() : name.substr(dot + 1);
    shard[i] = static_cast<std::int32_t>(runnable % shards);
    if (!disabled(suite) && !disabled(test)) ++runnable;
  }
  return shard;
}

std::vector<std::int64_t> tests_of_shard(std::span<const std::int32_t> assignment, int shard) {
  std::vector<std::int64_t> tests;
  for (std::size_t i = 0; i < assignment.size(); ++i) {
    if (assignment[i] == shard) tests.push_back(static_cast<std::int64_t>(i));
  }
  return tests;
}

}  // namespace flotilla::suites

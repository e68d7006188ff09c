// search_bar.h — issue 20's bar for the default strategy, judged cell by cell: on every space,
// at 50, 100 and 200 evaluations, by the mean and by the worst decile's edge (p90) of
// best-found / optimum over the repeats, the default must be at least as good as every other
// row of the bench (every flotilla strategy run, Optuna TPE, exact random sampling).
//
// A miss is reported with the best other row and a 90% bootstrap interval of the difference
// (default − best other): each row's repeats resampled with replacement, independently (the
// strategies share seeds but not paths, so there is nothing to pair). A miss whose interval
// lies above 0 is "significant": the repeats say the other row is better, not only luck. Exact
// random sampling has no repeats: its figure is a constant. Pure functions: bench/search.cpp
// does the printing.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace flotilla::bench {

enum class Statistic { mean, p90 };

// The mean, or the 90th percentile interpolated between order statistics as numpy's default.
// A repeat that found nothing valid is +inf: it makes the mean infinite, and the p90 once it is
// among the worst tenth.
inline double statistic(std::vector<double> values, Statistic which) {
  if (values.empty()) return INFINITY;
  if (which == Statistic::mean) {
    double sum = 0;
    for (double v : values) sum += v;
    return sum / static_cast<double>(values.size());
  }
  std::sort(values.begin(), values.end());
  const auto n = values.size();
  const double pos = 0.9 * static_cast<double>(n - 1);
  const auto lo = static_cast<std::size_t>(pos);
  const auto hi = std::min(lo + 1, n - 1);
  if (std::isinf(values[hi])) return values[hi];
  return values[lo] + (pos - static_cast<double>(lo)) * (values[hi] - values[lo]);
}

// One row of a cell: the repeats' best/optimum, or the exact mean and p90 (random-exact).
struct RowSample {
  std::vector<double> repeats;
  std::optional<double> exact_mean, exact_p90;
  std::optional<double> exact(Statistic which) const { return which == Statistic::mean ? exact_mean : exact_p90; }
  double value(Statistic which) const { return exact(which) ? *exact(which) : statistic(repeats, which); }
};

struct BarMiss {
  std::string space;
  std::size_t budget = 0;
  Statistic stat = Statistic::mean;
  double value = 0;            // the default's
  std::string best_other;      // the row with the best figure
  double other_value = 0;
  double low = 0, high = 0;    // 90% bootstrap interval of value − other_value
  bool significant() const { return low > 0; }
};

inline double difference(double a, double b) { return std::isinf(a) && std::isinf(b) ? 0.0 : a - b; }

// The 90% percentile-bootstrap interval of stat(a) − stat(b), `draws` resamples, fixed seed.
inline std::pair<double, double> bootstrap_difference(const RowSample& a, const RowSample& b, Statistic which,
                                                      std::size_t draws = 2000, std::uint64_t seed = 20261203) {
  std::mt19937_64 rng(seed);
  auto resample = [&](const RowSample& row) {
    if (row.exact(which)) return *row.exact(which);
    std::vector<double> drawn(row.repeats.size());
    for (auto& v : drawn) v = row.repeats[rng() % row.repeats.size()];
    return statistic(std::move(drawn), which);
  };
  std::vector<double> diffs;
  for (std::size_t k = 0; k < draws; ++k) {
    const double da = resample(a);  // a before b: the draws do not depend on argument order
    diffs.push_back(difference(da, resample(b)));
  }
  std::sort(diffs.begin(), diffs.end());
  auto at = [&](double q) { return diffs[static_cast<std::size_t>(q * static_cast<double>(diffs.size() - 1))]; };
  return {at(0.05), at(0.95)};
}

// The 90% percentile-bootstrap interval of one row's statistic (its spread over repeats).
inline std::pair<double, double> bootstrap_statistic(const RowSample& a, Statistic which, std::size_t draws = 2000,
                                                     std::uint64_t seed = 20261204) {
  if (a.exact(which) || a.repeats.empty()) return {a.value(which), a.value(which)};
  std::mt19937_64 rng(seed);
  std::vector<double> values;
  for (std::size_t k = 0; k < draws; ++k) {
    std::vector<double> drawn(a.repeats.size());
    for (auto& v : drawn) v = a.repeats[rng() % a.repeats.size()];
    values.push_back(statistic(std::move(drawn), which));
  }
  std::sort(values.begin(), values.end());
  auto at = [&](double q) { return values[static_cast<std::size_t>(q * static_cast<double>(values.size() - 1))]; };
  return {at(0.05), at(0.95)};
}

// The cells judged and the misses among them.
struct BarResult {
  std::size_t cells = 0;  // spaces × budgets × 2 statistics
  std::vector<BarMiss> misses;
  std::size_t significant() const {
    return static_cast<std::size_t>(std::count_if(misses.begin(), misses.end(), [](const BarMiss& m) { return m.significant(); }));
  }
};

// `cells[space][budget index][row name]`.
using BarCells = std::map<std::string, std::vector<std::map<std::string, RowSample>>>;

// Every cell where `candidate` is not at least as good as every other row (ties within
// `tolerance`, for floating-point noise only), each with its bootstrap interval.

inline BarResult judge_bar(const BarCells& cells, const std::vector<std::size_t>& budgets, const std::string& candidate,
                           double tolerance = 1e-9) {
  BarResult result;
  for (const auto& [space, by_budget] : cells)
    for (std::size_t b = 0; b < by_budget.size() && b < budgets.size(); ++b) {
      const auto& rows = by_budget[b];
      auto mine = rows.find(candidate);
      if (mine == rows.end()) continue;
      for (auto which : {Statistic::mean, Statistic::p90}) {
        ++result.cells;
        const double value = mine->second.value(which);
        const std::string* best = nullptr;
        double best_value = INFINITY;
        for (const auto& [name, row] : rows)
          if (name != candidate && row.value(which) < best_value) best_value = row.value(which), best = &name;
        if (!best || !(value > best_value + tolerance)) continue;
        auto [low, high] = bootstrap_difference(mine->second, rows.at(*best), which);
        result.misses.push_back({space, budgets[b], which, value, *best, best_value, low, high});
      }
    }
  return result;
}

// Issue 36's bar against the peers (other tuners' strategies: Kernel Tuner's, Optuna TPE), cell by
// cell and in aggregate. In each cell (space × budget × mean / p90) the candidate is compared
// with the best peer row of that cell: it fails the cell only when it is behind by more than
// `margin` (0.005: 0.5% of the optimum) with significance, i.e. when the 90% bootstrap interval of
// candidate − best peer lies entirely above `margin`. In aggregate, its geometric mean over every
// cell must be below every single peer row's; each comparison comes with a 90% bootstrap interval
// of the ratio of geometric means − 1, resampling each row's repeats per space (the same
// resampled repeats read off at every budget: the budgets of one run are not independent).
struct PeerCell {
  std::string space;
  std::size_t budget = 0;
  Statistic stat = Statistic::mean;
  double value = 0;          // the candidate's
  std::string best_peer;     // the peer row with the best figure
  double peer_value = 0;
  double low = 0, high = 0;  // 90% bootstrap interval of value − peer_value
};

struct PeerAggregate {
  std::string peer;
  std::size_t cells = 0;       // cells both rows have
  double candidate = 0, other = 0;  // geometric means over those cells
  double low = 0, high = 0;    // 90% bootstrap interval of candidate / other − 1
  bool ahead() const { return candidate < other; }
};

struct PeerResult {
  double margin = 0.005;
  std::vector<PeerCell> cells;
  std::vector<PeerAggregate> aggregates;  // one per peer row, in the order given
  std::vector<const PeerCell*> behind() const {  // significantly behind by more than the margin
    std::vector<const PeerCell*> out;
    for (const auto& c : cells)
      if (c.low > margin) out.push_back(&c);
    return out;
  }
  bool ahead_of_every_peer() const {
    return std::all_of(aggregates.begin(), aggregates.end(), [](const PeerAggregate& a) { return a.ahead(); });
  }
  bool met() const { return behind().empty() && ahead_of_every_peer(); }
};

inline PeerResult judge_peers(const BarCells& cells, const std::vector<std::size_t>& budgets, const std::string& candidate,
                              const std::vector<std::string>& peers, double margin = 0.005, std::size_t draws = 2000,
                              std::uint64_t seed = 20261204) {
  PeerResult result;
  result.margin = margin;
  for (const auto& [space, by_budget] : cells)
    for (std::size_t b = 0; b < by_budget.size() && b < budgets.size(); ++b) {
      const auto& rows = by_budget[b];
      auto mine = rows.find(candidate);
      if (mine == rows.end()) continue;
      for (auto which : {Statistic::mean, Statistic::p90}) {
        const std::string* best = nullptr;
        double best_value = INFINITY;
        for (const auto& peer : peers)
          if (auto it = rows.find(peer); it != rows.end() && (!best || it->second.value(which) < best_value))
            best_value = it->second.value(which), best = &it->first;
        if (!best) continue;
        const double value = mine->second.value(which);
        auto [low, high] = bootstrap_difference(mine->second, rows.at(*best), which, draws);
        result.cells.push_back({space, budgets[b], which, value, *best, best_value, low, high});
      }
    }
  // Geometric means, and their ratio's interval: per draw, each row's repeats of each space are
  // resampled once and read off at every budget and by both statistics.
  std::mt19937_64 rng(seed);
  for (const auto& peer : peers) {
    PeerAggregate agg{.peer = peer};
    double log_mine = 0, log_other = 0;
    std::vector<std::pair<const std::vector<std::map<std::string, RowSample>>*, std::size_t>> spaces;  // by_budget, budgets both have
    for (const auto& [space, by_budget] : cells) {
      std::size_t shared = 0;
      for (std::size_t b = 0; b < by_budget.size() && b < budgets.size(); ++b) {
        if (!by_budget[b].contains(candidate) || !by_budget[b].contains(peer)) continue;
        for (auto which : {Statistic::mean, Statistic::p90}) {
          log_mine += std::log(by_budget[b].at(candidate).value(which));
          log_other += std::log(by_budget[b].at(peer).value(which));
          ++agg.cells;
        }
        shared = b + 1;
      }
      if (shared) spaces.push_back({&by_budget, shared});
    }
    if (agg.cells == 0) continue;
    const double n = static_cast<double>(agg.cells);
    agg.candidate = std::exp(log_mine / n), agg.other = std::exp(log_other / n);
    std::vector<double> ratios;
    for (std::size_t k = 0; k < draws; ++k) {
      double sum = 0;
      for (const auto& [by_budget, shared] : spaces) {
        for (const std::string* row : {&candidate, &peer}) {
          const auto& first = by_budget->at(0).at(*row);
          std::vector<std::size_t> pick(first.repeats.size());
          for (auto& i : pick) i = rng() % first.repeats.size();
          for (std::size_t b = 0; b < shared; ++b) {
            const auto& sample = by_budget->at(b).at(*row);
            for (auto which : {Statistic::mean, Statistic::p90}) {
              double v = sample.exact(which) ? *sample.exact(which) : 0;
              if (!sample.exact(which)) {
                std::vector<double> drawn;
                for (auto i : pick) drawn.push_back(sample.repeats[i]);
                v = statistic(std::move(drawn), which);
              }
              sum += (row == &candidate ? 1 : -1) * std::log(v);
            }
          }
        }
      }
      ratios.push_back(std::exp(sum / n) - 1);
    }
    std::sort(ratios.begin(), ratios.end());
    agg.low = ratios[static_cast<std::size_t>(0.05 * static_cast<double>(draws - 1))];
    agg.high = ratios[static_cast<std::size_t>(0.95 * static_cast<double>(draws - 1))];
    result.aggregates.push_back(agg);
  }
  return result;
}

}  // namespace flotilla::bench

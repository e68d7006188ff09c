// ModelSearch.cpp — the shared pieces of a GP-driven proposal (see ModelSearch.h).
#include "ModelSearch.h"

#include <algorithm>
#include <cmath>
#include <unordered_set>

namespace flotilla::search::model {

std::vector<std::size_t> model_subset(const std::vector<std::size_t>& best_first) {
  if (best_first.size() <= kModelBest + kModelRest) return best_first;
  std::vector<std::size_t> kept(best_first.begin(), best_first.begin() + kModelBest);
  const double stride = static_cast<double>(best_first.size() - kModelBest) / kModelRest;
  for (std::size_t k = 0; k < kModelRest; ++k) kept.push_back(best_first[kModelBest + static_cast<std::size_t>(k * stride)]);
  return kept;
}

void fit_believing(GaussianProcess& gp, const Encoding& encoding, std::vector<Point> x, std::vector<double> y, bool select,
                   const std::vector<Configuration>& pending, const std::vector<Observation>& history) {
  const double worst = *std::max_element(y.begin(), y.end());
  gp.fit(std::move(x), std::move(y), select);
  std::vector<Point> believed;
  std::vector<double> values;
  auto believe = [&](const Configuration& c, double at_least) {
    believed.push_back(encoding.point(c));
    values.push_back(std::max(gp.predict(believed.back()).mean, at_least));
  };
  for (const auto& c : pending) believe(c, -INFINITY);
  std::size_t failed = 0;
  for (auto o = history.rbegin(); o != history.rend() && failed < kModelFailed; ++o)
    if (o->failed()) believe(o->config, worst), ++failed;
  gp.extend(believed, values);
}

std::vector<Configuration> candidate_pool(const Space& space, const Encoding& encoding, Rng& rng, std::size_t told,
                                          const std::vector<Configuration>& elite, const Fresh& fresh) {
  std::vector<Configuration> pool;
  std::unordered_set<Configuration, ConfigurationHash> in_pool;
  auto add = [&](Configuration c) {
    if (fresh(c) && in_pool.insert(c).second) pool.push_back(std::move(c));
  };
  if (const auto* all = space.feasible_indices()) {
    if (all->size() <= kScoreAll + told) {
      for (auto index : *all) add(space.grid_point(index));
      return pool;
    }
    for (std::size_t i = 0; i < 3 * kSample && pool.size() < kSample; ++i) add(space.grid_point((*all)[rng.index(all->size())]));
  } else {
    for (std::size_t i = 0; i < 20 * kSample && pool.size() < kSample; ++i) add(encoding.random(rng));
  }
  for (std::size_t e = 0; e < std::min(kElite, elite.size()); ++e) {
    for (auto& n : encoding.neighbours(elite[e], false)) add(std::move(n));
    for (std::size_t m = 0; m < kMutations; ++m) add(encoding.mutate(elite[e], 0.3, rng));
  }
  return pool;
}

// Exact, but pruned: the mean with a bound of the standard deviation bounds a candidate's
// expected improvement (it grows with the deviation), and the chance of not failing is at most
// 1, so the full O(n^2) prediction and the failure model are consulted best bound first, until
// no bound can beat the best score found.
std::optional<std::pair<Configuration, double>> acquire(const GaussianProcess& gp, const Encoding& encoding,
                                                        const FailureModel& failures, std::vector<Configuration> pool,
                                                        std::optional<double> reference) {
  if (pool.empty()) return std::nullopt;
  const double best = reference.value_or(gp.best_target());
  std::vector<Point> points(pool.size());
  std::vector<std::vector<double>> cross(pool.size());
  std::vector<std::pair<double, std::size_t>> bounds;
  for (std::size_t i = 0; i < pool.size(); ++i) {
    points[i] = encoding.point(pool[i]);
    cross[i] = gp.cross(points[i]);
    bounds.emplace_back(expected_improvement(best, gp.mean_from(cross[i]), gp.sd_bound_from(cross[i])), i);
  }
  std::sort(bounds.begin(), bounds.end(),
            [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); });
  double top = -1;
  std::size_t chosen = bounds.front().second;
  for (const auto& [bound, i] : bounds) {
    if (bound <= top) break;
    auto prediction = gp.predict_from(std::move(cross[i]));
    double score = expected_improvement(best, prediction.mean, prediction.sd);
    if (failures.any_failure() && score > top) score *= std::pow(1.0 - failures.p_fail(points[i]), kFailurePower);
    if (score > top) top = score, chosen = i;
  }
  return std::pair{pool[chosen], top};
}

}  // namespace flotilla::search::model

// search_random_exact.h — the exact statistics of uniform random sampling without replacement
// on a recorded space, the baseline every strategy of bench/search is measured against.
//
// Drawing n of N recorded configurations (failed ones included: they cost an evaluation), the
// best-found is the successful value of lowest rank among the drawn. With the successful
// values sorted best first, P(best is the i-th) = C(N-i, n-1) / C(N, n) and
// P(best is the i-th or better) = 1 - C(N-i, n) / C(N, n); the evaluations until one of the k
// configurations within a tolerance is drawn satisfy P(T > n) = C(N-k, n) / C(N, n). Computed
// with lgamma, in closed form: no sampling, so the baseline carries no noise.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace flotilla::bench {

struct RandomExact {
  double mean = 0;      // E[best / optimum]
  double median = 0;    // median of best / optimum
  double p90 = 0;       // 90th percentile of best / optimum (the worst decile's edge)
  double to_5pct = 0;   // median evaluations until within 5% (inf if more than the space)
  double to_1pct = 0;
};

inline double log_choose(double n, double k) {
  if (k < 0 || k > n) return -INFINITY;
  return std::lgamma(n + 1) - std::lgamma(k + 1) - std::lgamma(n - k + 1);
}

// `ratios`: best/optimum of every successful configuration; `total`: every configuration.
inline RandomExact random_exact(std::vector<double> ratios, std::size_t total, std::size_t n) {
  std::sort(ratios.begin(), ratios.end());
  const double N = static_cast<double>(total), draws = static_cast<double>(std::min(n, total));
  RandomExact r;
  const double all = log_choose(N, draws);
  double cdf = 0, mass = 0;
  r.median = INFINITY;
  r.p90 = INFINITY;
  for (std::size_t i = 0; i < ratios.size(); ++i) {
    double p = std::exp(log_choose(N - static_cast<double>(i) - 1, draws - 1) - all);
    r.mean += p * ratios[i];
    mass += p;
    cdf += p;
    if (cdf >= 0.5 && !std::isfinite(r.median)) r.median = ratios[i];
    if (cdf >= 0.9 && !std::isfinite(r.p90)) r.p90 = ratios[i];
  }
  if (mass > 0) r.mean /= mass;  // conditional on something succeeding (all-failed is ~0 here)
  auto median_evals = [&](double tolerance) {
    double k = static_cast<double>(std::count_if(ratios.begin(), ratios.end(), [&](double x) { return x <= 1 + tolerance + 1e-12; }));
    for (double m = 1; m <= N; ++m)
      if (std::exp(log_choose(N - k, m) - log_choose(N, m)) <= 0.5) return m;
    return static_cast<double>(INFINITY);
  };
  r.to_5pct = median_evals(0.05);
  r.to_1pct = median_evals(0.01);
  return r;
}

}  // namespace flotilla::bench

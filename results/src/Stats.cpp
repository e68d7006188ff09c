// Stats.cpp — distribution-free estimates, intervals and the sequential confirmation rule (Stats.h).
#include "flotilla/results/Stats.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace flotilla::results::stats {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// Above this many pairs the signed-rank distribution is taken as normal (the exact one costs
// n^3 / 4 additions: 2 million at 200).
constexpr int kExactSignedRankPairs = 200;
// Each look of a confirmation has 1.5 times the pairs of the one before.
constexpr double kLookGrowth = 1.5;

// Smallest n for which the most extreme signed-rank outcome (every difference of one sign,
// probability 2^-n) rejects at two-sided level `alpha`.
int min_pairs_at(double alpha) { return static_cast<int>(std::ceil(std::log2(2.0 / alpha) - 1e-12)); }

// The regularised incomplete beta function I_x(a, b), by its continued fraction (Lentz's
// method, as in Numerical Recipes' betacf); for the t distribution's tail.
double incomplete_beta(double x, double a, double b) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) +
                                b * std::log1p(-x));
  if (x > (a + 1) / (a + b + 2)) return 1 - incomplete_beta(1 - x, b, a);
  constexpr double kTiny = 1e-300;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  d = 1 / (std::abs(d) < kTiny ? kTiny : d);
  double f = d;
  for (int m = 1; m <= 300; ++m) {
    for (int step = 0; step < 2; ++step) {
      const double numerator = step == 0 ? m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
                                         : -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
      d = 1 + numerator * d;
      d = 1 / (std::abs(d) < kTiny ? kTiny : d);
      c = 1 + numerator / c;
      if (std::abs(c) < kTiny) c = kTiny;
      f *= c * d;
    }
    if (std::abs(c * d - 1) < 1e-12) break;
  }
  return front * f / a;
}

// Two-sided p-value of Student's t with `df` degrees of freedom.
double t_two_sided(double t, double df) {
  if (!std::isfinite(t)) return 0;
  return incomplete_beta(df / (df + t * t), df / 2, 0.5);
}

double mean_of(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

double variance_of(const std::vector<double>& v, double mean) {
  double sum = 0;
  for (double x : v) sum += (x - mean) * (x - mean);
  return sum / static_cast<double>(v.size() - 1);
}

// Welch's two-sample t-test: the two-sided p-value that the means are equal.
double welch_p(const std::vector<double>& a, const std::vector<double>& b) {
  const double ma = mean_of(a), mb = mean_of(b);
  const double va = variance_of(a, ma) / static_cast<double>(a.size()), vb = variance_of(b, mb) / static_cast<double>(b.size());
  if (va + vb == 0) return std::abs(ma - mb) > 1e-12 ? 0.0 : 1.0;  // no spread: only equal means are alike
  const double t = (ma - mb) / std::sqrt(va + vb);
  const double df = (va + vb) * (va + vb) /
                    (va * va / static_cast<double>(a.size() - 1) + vb * vb / static_cast<double>(b.size() - 1));
  return t_two_sided(t, df);
}

// Ranks 1..n, ties given their mean rank.
std::vector<double> ranks_of(std::span<const double> v) {
  std::vector<std::size_t> order(v.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return v[x] < v[y]; });
  std::vector<double> rank(v.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    for (std::size_t k = i; k <= j; ++k) rank[order[k]] = 0.5 * static_cast<double>(i + j) + 1;
    i = j + 1;
  }
  return rank;
}

// Spearman's rho between the pair index and the values, with its two-sided p-value (the t
// approximation, n - 2 degrees of freedom).
std::pair<double, double> spearman_trend(std::span<const double> values) {
  const auto n = static_cast<double>(values.size());
  const auto rank = ranks_of(values);
  double mean = (n + 1) / 2, sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double x = static_cast<double>(i + 1) - mean, y = rank[i] - mean;
    sxy += x * y, sxx += x * x, syy += y * y;
  }
  if (syy == 0) return {0, 1};
  const double rho = sxy / std::sqrt(sxx * syy);
  if (std::abs(rho) >= 1) return {rho, 0};
  return {rho, t_two_sided(rho * std::sqrt((n - 2) / (1 - rho * rho)), n - 2)};
}

double geometric_mean(const std::vector<double>& logs) { return std::exp(mean_of(logs)); }

std::string fmt_order(double first, double second, std::size_t n1, std::size_t n2) {
  return fmt::format("order effect: {:.3g}x when the candidate runs first ({} pairs), {:.3g}x when it runs right "
                     "after the reference ({} pairs); one command gains more from its place than the other",
                     first, n1, second, n2);
}

std::string fmt_trend(double early, double late, double rho) {
  return fmt::format("trend across runs: {:.3g}x in the first half of the pairs, {:.3g}x in the second (Spearman's "
                     "rho {:.2f})",
                     early, late, rho);
}

std::vector<double> walsh_averages(std::span<const double> d) {
  std::vector<double> w;
  w.reserve(d.size() * (d.size() + 1) / 2);
  for (std::size_t i = 0; i < d.size(); ++i)
    for (std::size_t j = i; j < d.size(); ++j) w.push_back(0.5 * (d[i] + d[j]));
  std::sort(w.begin(), w.end());
  return w;
}

// The rank k (1-based, k <= m/2) of the signed-rank interval [W_(k), W_(m+1-k)] at two-sided
// level alpha, and its coverage.
std::pair<std::size_t, double> signed_rank_rank(int n, double alpha) {
  const double m = 0.5 * n * (n + 1.0);
  if (n <= kExactSignedRankPairs) {
    const auto cdf = signed_rank_cdf(n);
    std::size_t k = 1;
    while (k < cdf.size() && static_cast<double>(k + 1) <= m / 2 && cdf[k] <= alpha / 2) ++k;
    return {k, 1 - 2 * cdf[k - 1]};
  }
  const double mean = m / 2, sd = std::sqrt(n * (n + 1.0) * (2.0 * n + 1.0) / 24.0);
  const double z = normal_quantile(1 - alpha / 2);
  const double k = std::clamp(std::floor(mean - z * sd + 0.5), 1.0, std::floor(m / 2));
  const double tail = 0.5 * std::erfc(-((k - 0.5 - mean) / sd) / std::sqrt(2.0));
  return {static_cast<std::size_t>(k), 1 - 2 * tail};
}

}  // namespace

double median(std::vector<double> values) {
  if (values.empty()) return kNaN;
  std::sort(values.begin(), values.end());
  const auto n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

double binomial_half_cdf(int n, int k) {
  if (k < 0) return 0;
  if (k >= n) return 1;
  double sum = 0;
  const double log_total = std::lgamma(n + 1.0) - n * std::log(2.0);
  for (int i = 0; i <= k; ++i) sum += std::exp(log_total - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0));
  return std::min(1.0, sum);
}

std::optional<Interval> median_interval(std::vector<double> values, double confidence) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  const int n = static_cast<int>(values.size());
  const double alpha = 1 - confidence;
  int k = 1;  // [x_(k), x_(n+1-k)]
  while (k + 1 <= (n + 1) / 2 && 2 * binomial_half_cdf(n, k) <= alpha) ++k;
  const double coverage = 1 - 2 * binomial_half_cdf(n, k - 1);
  return Interval{.estimate = median(values),
                  .low = values[static_cast<std::size_t>(k - 1)],
                  .high = values[static_cast<std::size_t>(n - k)],
                  .coverage = std::max(0.0, coverage)};
}

std::vector<double> signed_rank_cdf(int n) {
  const auto top = static_cast<std::size_t>(n) * static_cast<std::size_t>(n + 1) / 2;
  std::vector<double> pmf(top + 1, 0.0);
  pmf[0] = 1;
  std::size_t reach = 0;
  for (int r = 1; r <= n; ++r) {  // rank r is positive or not, each with probability 1/2
    reach += static_cast<std::size_t>(r);
    for (std::size_t t = reach; t >= static_cast<std::size_t>(r); --t) pmf[t] = 0.5 * (pmf[t] + pmf[t - r]);
    for (std::size_t t = 0; t < static_cast<std::size_t>(r) && t <= reach; ++t) pmf[t] *= 0.5;
  }
  for (std::size_t t = 1; t <= top; ++t) pmf[t] += pmf[t - 1];
  return pmf;
}

std::optional<Interval> hodges_lehmann(std::span<const double> differences, double confidence) {
  if (differences.empty()) return std::nullopt;
  const auto w = walsh_averages(differences);
  const auto [k, coverage] = signed_rank_rank(static_cast<int>(differences.size()), 1 - confidence);
  return Interval{.estimate = median(w), .low = w[k - 1], .high = w[w.size() - k], .coverage = std::max(0.0, coverage)};
}

std::vector<int> look_schedule(int max_pairs, double confidence) {
  const double alpha = 1 - confidence;
  const auto chain = [&](int floor_pairs) {
    std::vector<int> looks;
    for (int n = max_pairs; n >= floor_pairs && n > 0;) {
      looks.push_back(n);
      const int next = static_cast<int>(std::floor(n / kLookGrowth));
      if (next >= n) break;
      n = next;
    }
    return looks;  // largest first
  };
  // K looks at alpha / K each: the largest K whose chain still has K looks that can reject.
  std::vector<int> best;
  for (int k = 1; k <= 64; ++k) {
    auto looks = chain(min_pairs_at(alpha / k));
    if (static_cast<int>(looks.size()) < k) break;
    looks.resize(static_cast<std::size_t>(k));
    best = std::move(looks);
  }
  std::reverse(best.begin(), best.end());
  return best;
}

int min_pairs_for(double confidence) { return min_pairs_at(1 - confidence); }

std::string_view to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::pending: return "pending";
    case Verdict::faster: return "confirmed faster";
    case Verdict::no_difference: return "no significant difference";
    case Verdict::slower: return "slower";
    case Verdict::failed: return "confirmation failed";
    case Verdict::unreliable: return "unreliable";
  }
  return "unknown";
}

std::string_view verdict_key(Verdict verdict) {
  switch (verdict) {
    case Verdict::pending: return "pending";
    case Verdict::faster: return "faster";
    case Verdict::no_difference: return "no_difference";
    case Verdict::slower: return "slower";
    case Verdict::failed: return "failed";
    case Verdict::unreliable: return "unreliable";
  }
  return "unknown";
}

std::optional<Verdict> verdict_from_key(std::string_view key) {
  for (auto v : {Verdict::pending, Verdict::faster, Verdict::no_difference, Verdict::slower, Verdict::failed,
                 Verdict::unreliable})
    if (verdict_key(v) == key) return v;
  return std::nullopt;
}

std::string unreliability(std::span<const double> log_ratios, std::span<const PairRun> runs, double min_effect,
                          double level) {
  const double enough = std::log1p(min_effect);
  if (runs.size() >= log_ratios.size()) {
    std::vector<double> first_products, second_products, first_ratios, second_ratios;
    for (std::size_t i = 0; i < log_ratios.size(); ++i) {
      const auto& r = runs[i];
      (r.candidate_first ? first_products : second_products).push_back(r.log_candidate + r.log_reference);
      (r.candidate_first ? first_ratios : second_ratios).push_back(log_ratios[i]);
    }
    if (first_products.size() >= 2 && second_products.size() >= 2) {
      const double shift = mean_of(second_products) - mean_of(first_products);
      if (std::abs(shift) > enough && welch_p(first_products, second_products) < level)
        return fmt_order(geometric_mean(first_ratios), geometric_mean(second_ratios), first_ratios.size(),
                         second_ratios.size());
    }
  }
  if (log_ratios.size() >= 6) {
    const auto [rho, p] = spearman_trend(log_ratios);
    const std::size_t half = log_ratios.size() / 2;
    const std::vector<double> early(log_ratios.begin(), log_ratios.begin() + static_cast<std::ptrdiff_t>(half));
    const std::vector<double> late(log_ratios.end() - static_cast<std::ptrdiff_t>(half), log_ratios.end());
    // A gain that changes across the run by more than the effect worth reporting is not one
    // number to confirm, whether or not both halves would pass.
    if (std::abs(mean_of(late) - mean_of(early)) > enough && p < level)
      return fmt_trend(geometric_mean(early), geometric_mean(late), rho);
  }
  return {};
}

Confirmation decide_confirmation(std::span<const double> log_ratios, const ConfirmSettings& settings,
                                 std::span<const PairRun> runs) {
  const auto looks = look_schedule(settings.max_pairs, settings.confidence);
  Confirmation c;
  if (looks.empty()) return c;
  c.look_level = 1 - (1 - settings.confidence) / static_cast<double>(looks.size());
  const double up = std::log1p(settings.min_effect), down = -up;
  const auto set_interval = [&](std::size_t n) {
    const auto hl = *hodges_lehmann(log_ratios.first(n), c.look_level);
    c.pairs = static_cast<int>(n);
    c.ratio = std::exp(hl.estimate);
    c.low = std::exp(hl.low);
    c.high = std::exp(hl.high);
    return hl;
  };
  for (const int look : looks) {
    const auto n = static_cast<std::size_t>(look);
    if (n > log_ratios.size()) break;
    ++c.looks;
    const auto hl = set_interval(n);
    if (hl.low > up) {
      c.verdict = Verdict::faster;
      const double level = 0.01 / static_cast<double>(looks.size());
      c.reason = unreliability(log_ratios.first(n), runs.size() >= n ? runs.first(n) : std::span<const PairRun>(),
                               settings.min_effect, level);
      if (!c.reason.empty()) c.verdict = Verdict::unreliable;
    }
    else if (hl.high < down) c.verdict = Verdict::slower;
    else if (hl.low > down && hl.high < up) c.verdict = Verdict::no_difference;
    else if (look == looks.back()) c.verdict = hl.high < 0 ? Verdict::slower : Verdict::no_difference;
    if (c.verdict != Verdict::pending) return c;
  }
  if (!log_ratios.empty()) set_interval(log_ratios.size());  // pending: the data so far
  return c;
}

double robust_cv(std::vector<double> values) {
  if (values.size() < 2) return 0;
  const double m = median(values);
  if (m == 0) return 0;
  for (auto& v : values) v = std::abs(v - m);
  return 1.4826 * median(std::move(values)) / std::abs(m);
}

double expected_half_width(double cv, const ConfirmSettings& settings) {
  const auto looks = look_schedule(settings.max_pairs, settings.confidence);
  if (looks.empty()) return std::numeric_limits<double>::infinity();
  const double alpha = (1 - settings.confidence) / static_cast<double>(looks.size());
  return normal_quantile(1 - alpha / 2) * std::sqrt(2.0) * cv / std::sqrt(0.955 * looks.back());
}

double normal_quantile(double p) {
  if (p <= 0) return -std::numeric_limits<double>::infinity();
  if (p >= 1) return std::numeric_limits<double>::infinity();
  static constexpr std::array<double, 6> a = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                                              1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr std::array<double, 5> b = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                                              6.680131188771972e+01,  -1.328068155288572e+01};
  static constexpr std::array<double, 6> c = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                                              -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr std::array<double, 4> d = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                                              3.754408661907416e+00};
  const double low = 0.02425;
  if (p < low || p > 1 - low) {
    const double q = std::sqrt(-2 * std::log(p < low ? p : 1 - p));
    const double x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
                     ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    return p < low ? x : -x;
  }
  const double q = p - 0.5, r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
         (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

}  // namespace flotilla::results::stats

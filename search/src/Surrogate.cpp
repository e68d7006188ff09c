// Surrogate.cpp — Gaussian-process regression, the failure model and expected improvement.
#include "Surrogate.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace flotilla::search {

std::vector<double> transform_losses(const std::vector<double>& losses) {
  bool positive = std::all_of(losses.begin(), losses.end(), [](double v) { return v > 0; });
  bool negative = std::all_of(losses.begin(), losses.end(), [](double v) { return v < 0; });
  std::vector<double> out = losses;
  for (auto& v : out) v = positive ? std::log(v) : negative ? -std::log(-v) : v;
  return out;
}

double GaussianProcess::kernel(const Point& a, const Point& b, const std::vector<double>& inv_l2) const {
  double r2 = 0;
  for (std::size_t d = 0; d < a.size(); ++d) {
    double diff = m_categorical[d] ? (a[d] != b[d] ? 1.0 : 0.0) : a[d] - b[d];
    r2 += diff * diff * inv_l2[d];
  }
  double r = std::sqrt(5.0 * r2);  // Matern 5/2
  return (1.0 + r + r * r / 3.0) * std::exp(-r);
}

double GaussianProcess::factor(const std::vector<double>& inv_l2, double noise) {
  const std::size_t n = m_x.size();
  std::vector<double> l(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j <= i; ++j) l[i * n + j] = kernel(m_x[i], m_x[j], inv_l2) + (i == j ? noise : 0.0);
  double log_det = 0;
  for (std::size_t j = 0; j < n; ++j) {  // Cholesky, column by column
    double d = l[j * n + j];
    for (std::size_t k = 0; k < j; ++k) d -= l[j * n + k] * l[j * n + k];
    if (!(d > 1e-12)) return -std::numeric_limits<double>::infinity();
    d = std::sqrt(d);
    l[j * n + j] = d;
    log_det += std::log(d);
    for (std::size_t i = j + 1; i < n; ++i) {
      double s = l[i * n + j];
      for (std::size_t k = 0; k < j; ++k) s -= l[i * n + k] * l[j * n + k];
      l[i * n + j] = s / d;
    }
  }
  std::vector<double> a = m_y;  // solve L L^T alpha = y
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t k = 0; k < i; ++k) a[i] -= l[i * n + k] * a[k];
    a[i] /= l[i * n + i];
  }
  double fit = std::inner_product(a.begin(), a.end(), a.begin(), 0.0);
  for (std::size_t i = n; i-- > 0;) {
    for (std::size_t k = i + 1; k < n; ++k) a[i] -= l[k * n + i] * a[k];
    a[i] /= l[i * n + i];
  }
  m_chol = std::move(l);
  m_alpha = std::move(a);
  return -0.5 * fit - log_det;
}

namespace {
// Choosing hyperparameters factors the kernel matrix some 40 times: on more than kSelectAll
// points it is done on an even kSelectSample-point subsample (every k-th point, so the best
// ones and the spread-out rest keep their shares), which bounds the costliest ask of a long
// campaign (about 200 ms at 500 evaluations on 300 points, see bench/search/RESULTS.md "Cost of an
// ask"). Up to kSelectAll points nothing changes.
constexpr std::size_t kSelectAll = 200, kSelectSample = 120;
}  // namespace

void GaussianProcess::select_hyperparameters() {
  if (m_x.size() > kSelectAll) {
    std::vector<Point> all_x = std::move(m_x);
    std::vector<double> all_y = std::move(m_y);
    m_x.clear(), m_y.clear();
    const double stride = static_cast<double>(all_x.size()) / kSelectSample;
    for (std::size_t k = 0; k < kSelectSample; ++k) {
      const auto i = static_cast<std::size_t>(static_cast<double>(k) * stride);
      m_x.push_back(all_x[i]), m_y.push_back(all_y[i]);
    }
    select_on_data();
    m_x = std::move(all_x), m_y = std::move(all_y);
    return;
  }
  select_on_data();
}

namespace {
// An inner product in four independent partial sums, which the CPU overlaps (one running sum
// is a chain of dependent additions that the compiler may not reorder).
double dot(const double* a, const double* b, std::size_t n) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  std::size_t k = 0;
  for (; k + 4 <= n; k += 4) s0 += a[k] * b[k], s1 += a[k + 1] * b[k + 1], s2 += a[k + 2] * b[k + 2], s3 += a[k + 3] * b[k + 3];
  for (; k < n; ++k) s0 += a[k] * b[k];
  return (s0 + s1) + (s2 + s3);
}

// The log marginal likelihood that GaussianProcess::factor returns, for choosing
// hyperparameters only (nothing is kept): the same kernel matrix, built from per-parameter
// squared distances computed once per selection (`d2`: pair (i, j <= i) at i(i+1)/2 + j, one
// value per parameter), and a Cholesky factorisation whose inner products are dot(): equal to
// factor()'s up to rounding, and a third cheaper (a selection on 200 points: 45 ms before,
// 30 after), the selection being the costliest part of an ask (bench/search/RESULTS.md "Cost of an ask").
double log_likelihood(const std::vector<double>& d2, const std::vector<double>& y, const std::vector<double>& inv_l2, double noise,
                      std::vector<double>& l) {
  const std::size_t n = y.size(), dims = inv_l2.size();
  l.assign(n * n, 0.0);
  for (std::size_t i = 0, pair = 0; i < n; ++i)
    for (std::size_t j = 0; j <= i; ++j, ++pair) {
      double r2 = 0;
      for (std::size_t d = 0; d < dims; ++d) r2 += d2[pair * dims + d] * inv_l2[d];
      const double r = std::sqrt(5.0 * r2);  // Matern 5/2, as kernel()
      l[i * n + j] = (1.0 + r + r * r / 3.0) * std::exp(-r) + (i == j ? noise : 0.0);
    }
  double log_det = 0;
  for (std::size_t j = 0; j < n; ++j) {
    double* row_j = &l[j * n];
    const double d2j = row_j[j] - dot(row_j, row_j, j);
    if (!(d2j > 1e-12)) return -std::numeric_limits<double>::infinity();
    const double d = std::sqrt(d2j);
    row_j[j] = d;
    log_det += std::log(d);
    for (std::size_t i = j + 1; i < n; ++i) l[i * n + j] = (l[i * n + j] - dot(&l[i * n], row_j, j)) / d;
  }
  std::vector<double> a(n);  // L a = y: the fit term is |a|^2
  double fit = 0;
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = (y[i] - dot(&l[i * n], a.data(), i)) / l[i * n + i];
    fit += a[i] * a[i];
  }
  return -0.5 * fit - log_det;
}
}  // namespace

void GaussianProcess::select_on_data() {
  const std::size_t dims = m_encoding.dims(), n = m_x.size();
  std::vector<double> d2;
  d2.reserve(n * (n + 1) / 2 * dims);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j <= i; ++j)
      for (std::size_t d = 0; d < dims; ++d) {
        const double diff = m_categorical[d] ? (m_x[i][d] != m_x[j][d] ? 1.0 : 0.0) : m_x[i][d] - m_x[j][d];
        d2.push_back(diff * diff);
      }
  std::vector<double> work;
  double best = -std::numeric_limits<double>::infinity();
  std::vector<double> best_l(dims, 1.0);
  double best_noise = 1e-2;
  auto consider = [&](const std::vector<double>& inv_l2, double noise) {
    double ll = log_likelihood(d2, m_y, inv_l2, noise, work);
    if (ll > best) best = ll, best_l = inv_l2, best_noise = noise;
  };
  for (double length : {0.1, 0.2, 0.35, 0.6, 1.0, 1.8})
    for (double noise : {1e-4, 1e-2, 0.05, 0.2}) consider(std::vector<double>(dims, 1.0 / (length * length)), noise);
  // One coordinate pass: parameters that barely matter get long lengthscales, so distance
  // along them stops hiding the ones that do.
  for (std::size_t d = 0; d < dims; ++d)
    for (double f : {0.25, 4.0, 0.02}) {
      auto trial = best_l;
      trial[d] *= f;
      consider(trial, best_noise);
    }
  m_inv_l2 = best_l;
  m_noise = best_noise;
}

void GaussianProcess::fit(std::vector<Point> x, std::vector<double> y, bool select) {
  m_categorical.resize(m_encoding.dims());
  for (std::size_t d = 0; d < m_encoding.dims(); ++d) m_categorical[d] = m_encoding.categorical(d);
  m_x = std::move(x);
  m_mean = std::accumulate(y.begin(), y.end(), 0.0) / static_cast<double>(y.size());
  double var = 0;
  for (double v : y) var += (v - m_mean) * (v - m_mean);
  m_scale = std::sqrt(var / static_cast<double>(y.size()));
  if (!(m_scale > 1e-12)) m_scale = 1.0;
  m_y.clear();
  for (double v : y) m_y.push_back((v - m_mean) / m_scale);
  m_best = *std::min_element(y.begin(), y.end());
  if (select || m_inv_l2.size() != m_encoding.dims()) select_hyperparameters();
  if (!std::isfinite(factor(m_inv_l2, m_noise))) factor(m_inv_l2, m_noise + 0.1);
}

void GaussianProcess::extend(const std::vector<Point>& x, const std::vector<double>& y) {
  if (x.empty()) return;
  for (std::size_t i = 0; i < x.size(); ++i) {
    m_x.push_back(x[i]);
    m_y.push_back((y[i] - m_mean) / m_scale);
  }
  if (!std::isfinite(factor(m_inv_l2, m_noise))) factor(m_inv_l2, m_noise + 0.1);
}

std::vector<double> GaussianProcess::cross(const Point& p) const {
  std::vector<double> k(m_x.size());
  for (std::size_t i = 0; i < m_x.size(); ++i) k[i] = kernel(p, m_x[i], m_inv_l2);
  return k;
}

double GaussianProcess::mean_from(const std::vector<double>& k) const {
  return std::inner_product(k.begin(), k.end(), m_alpha.begin(), 0.0) * m_scale + m_mean;
}

double GaussianProcess::sd_bound_from(const std::vector<double>& k) const {
  double nearest = k.empty() ? 0.0 : *std::max_element(k.begin(), k.end());
  return std::sqrt(std::max(1.0 - nearest * nearest / (1.0 + m_noise), 1e-12)) * m_scale;
}

GaussianProcess::Prediction GaussianProcess::predict_from(std::vector<double> k) const {
  const std::size_t n = m_x.size();
  double mean = std::inner_product(k.begin(), k.end(), m_alpha.begin(), 0.0);
  for (std::size_t i = 0; i < n; ++i) {  // v = L^-1 k, in place
    const double* row = &m_chol[i * n];
    double s = k[i];
    for (std::size_t j = 0; j < i; ++j) s -= row[j] * k[j];
    k[i] = s / row[i];
  }
  double var = 1.0 - std::inner_product(k.begin(), k.end(), k.begin(), 0.0);
  return {mean * m_scale + m_mean, std::sqrt(std::max(var, 1e-12)) * m_scale};
}

std::size_t FailureModel::bin(std::size_t d, double u) const {
  const auto levels = m_encoding.levels(d);
  if (levels < 2) return 0;
  return std::min(levels - 1, static_cast<std::size_t>(std::lround(u * static_cast<double>(levels - 1))));
}

void FailureModel::add(const Point& p, bool failed) {
  m_points.push_back(p);
  m_failed.push_back(failed);
  m_failures += failed;
  m_counts.resize(p.size());
  for (std::size_t d = 0; d < p.size(); ++d) {
    auto& c = m_counts[d][bin(d, p[d])];
    ++c.first;
    c.second += failed;
  }
  m_relevance_known = m_logistic_known = false;
}

void FailureModel::clear() {
  m_points.clear();
  m_failed.clear();
  m_failures = 0;
  m_counts.clear();
  m_relevance_known = m_logistic_known = false;
}

std::vector<double> FailureModel::features(const Point& p) const {
  std::vector<double> f{1.0};
  for (std::size_t d = 0; d < p.size(); ++d) {
    if (!m_encoding.categorical(d)) {
      f.push_back(p[d]);
      continue;
    }
    for (std::size_t l = 0; l < m_encoding.levels(d); ++l) f.push_back(bin(d, p[d]) == l ? 1.0 : 0.0);
  }
  return f;
}

// L2-regularised logistic regression by iteratively reweighted least squares (Newton steps).
void FailureModel::fit_logistic() const {
  m_logistic_known = true;
  m_logistic.clear();
  if (m_failures == 0 || m_failures == m_points.size()) return;
  constexpr double kRidge = 1.0;
  std::vector<std::vector<double>> x;
  for (const auto& p : m_points) x.push_back(features(p));
  const std::size_t k = x.front().size();
  std::vector<double> w(k, 0.0);
  for (int iteration = 0; iteration < 12; ++iteration) {
    std::vector<double> grad(k, 0.0), h(k * k, 0.0);
    for (std::size_t i = 0; i < k; ++i) {
      grad[i] = -kRidge * w[i];
      h[i * k + i] = kRidge;
    }
    for (std::size_t n = 0; n < x.size(); ++n) {
      double z = std::inner_product(w.begin(), w.end(), x[n].begin(), 0.0);
      double p = 1.0 / (1.0 + std::exp(-z)), s = std::max(p * (1 - p), 1e-6);
      for (std::size_t i = 0; i < k; ++i) {
        grad[i] += ((m_failed[n] ? 1.0 : 0.0) - p) * x[n][i];
        for (std::size_t j = 0; j <= i; ++j) h[i * k + j] += s * x[n][i] * x[n][j];
      }
    }
    for (std::size_t j = 0; j < k; ++j) {  // Cholesky of the (positive definite) Hessian, in place
      for (std::size_t q = 0; q < j; ++q) h[j * k + j] -= h[j * k + q] * h[j * k + q];
      h[j * k + j] = std::sqrt(std::max(h[j * k + j], 1e-12));
      for (std::size_t i = j + 1; i < k; ++i) {
        for (std::size_t q = 0; q < j; ++q) h[i * k + j] -= h[i * k + q] * h[j * k + q];
        h[i * k + j] /= h[j * k + j];
      }
    }
    for (std::size_t i = 0; i < k; ++i) {  // solve L L^T step = grad
      for (std::size_t q = 0; q < i; ++q) grad[i] -= h[i * k + q] * grad[q];
      grad[i] /= h[i * k + i];
    }
    double change = 0;
    for (std::size_t i = k; i-- > 0;) {
      for (std::size_t q = i + 1; q < k; ++q) grad[i] -= h[q * k + i] * grad[q];
      grad[i] /= h[i * k + i];
      w[i] += grad[i];
      change = std::max(change, std::abs(grad[i]));
    }
    if (change < 1e-6) break;
  }
  m_logistic = std::move(w);
}

namespace {
double entropy(double failed, double total) {  // of a binary outcome, in nats
  if (total <= 0 || failed <= 0 || failed >= total) return 0.0;
  double p = failed / total;
  return -p * std::log(p) - (1 - p) * std::log(1 - p);
}
}  // namespace

const std::vector<double>& FailureModel::relevance() const {
  if (m_relevance_known) return m_relevance;
  const double n = static_cast<double>(m_points.size());
  const double prior_entropy = entropy(static_cast<double>(m_failures), n);
  m_relevance.assign(m_counts.size(), 0.0);
  double top = 0;
  for (std::size_t d = 0; d < m_counts.size(); ++d) {
    double conditional = 0, levels = 0;
    for (const auto& entry : m_counts[d]) {  // every level here was seen at least once
      const auto [seen, failed] = entry.second;
      conditional += static_cast<double>(seen) / n * entropy(static_cast<double>(failed), static_cast<double>(seen));
      ++levels;
    }
    // Miller-Madow: a parameter with many values looks informative on few samples by chance.
    m_relevance[d] = std::max(0.0, prior_entropy - conditional - (levels - 1) / (2 * n));
    top = std::max(top, m_relevance[d]);
  }
  for (auto& r : m_relevance) r = top > 0 ? r / top : 1.0;  // nothing learnt yet: all alike
  m_relevance_known = true;
  return m_relevance;
}

double FailureModel::p_fail(const Point& p) const {
  // Prior: the logistic regression's chance, or the overall failure rate (with one
  // pseudo-failure and one pseudo-success) before there is anything to regress.
  double prior = (static_cast<double>(m_failures) + 1.0) / (static_cast<double>(m_points.size()) + 2.0);
  if (m_failures == 0) return prior;
  if (!m_logistic_known) fit_logistic();
  if (!m_logistic.empty()) {
    auto f = features(p);
    prior = 1.0 / (1.0 + std::exp(-std::inner_product(m_logistic.begin(), m_logistic.end(), f.begin(), 0.0)));
  }
  constexpr double kWidth2 = 2 * 0.15 * 0.15;  // about one level step on an 8-level axis
  const auto& weights = relevance();
  double weight = 1.0, failures = prior;
  for (std::size_t i = 0; i < m_points.size(); ++i) {
    double d2 = 0;
    for (std::size_t d = 0; d < p.size(); ++d) {
      double diff = m_encoding.categorical(d) ? (p[d] != m_points[i][d] ? 1.0 : 0.0) : p[d] - m_points[i][d];
      d2 += weights[d] * diff * diff;
    }
    double w = std::exp(-d2 / kWidth2);
    weight += w;
    if (m_failed[i]) failures += w;
  }
  return failures / weight;
}

double normal_pdf(double z) { return 0.3989422804014327 * std::exp(-0.5 * z * z); }
double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

double expected_improvement(double best, double mean, double sd) {
  if (sd <= 0) return std::max(best - mean, 0.0);
  double z = (best - mean) / sd;
  return (best - mean) * normal_cdf(z) + sd * normal_pdf(z);
}

}  // namespace flotilla::search

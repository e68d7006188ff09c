// Surrogate.h — the models the adaptive strategies learn from what they are told.
//
// GaussianProcess: regression of transformed objectives on encoded points, Matern-5/2 kernel
// with one lengthscale per parameter (ARD), lengthscales and noise chosen by marginal
// likelihood on a coarse grid plus one coordinate pass (cheap and deterministic, where a
// gradient optimiser would need restarts and seeds). Failed configurations never enter it:
// fed in as huge values they wreck the fit (Kernel Tuner's Bayesian optimisation collapses on
// spaces with failures for exactly this reason).
// FailureModel: the hidden constraints. The chance that a configuration fails is the
// kernel-weighted share of failures among nearby observations, shrunk towards the overall
// failure rate, so configurations that resemble failed ones are proposed less often. "Nearby"
// weighs each parameter by how much it tells about failing (its mutual information with the
// outcome, bias-corrected), so a failure caused by two parameters is generalised across all
// values of the others. Far from any observation the chance is a logistic regression on the
// coordinates (categorical ones one-hot), which extends a straight boundary such as "tile_x *
// tile_y too large" (straight in rank coordinates of power-of-two values) into unvisited
// corners; near observations, local evidence outweighs it.
#pragma once

#include <map>
#include <vector>

#include "Encoding.h"

namespace flotilla::search {

// Monotone transform of losses before modelling: log for strictly positive (times) or
// strictly negative (negated throughputs) values, so that "twice as fast" weighs the same
// anywhere in the space; identity otherwise.
std::vector<double> transform_losses(const std::vector<double>& losses);

class GaussianProcess {
 public:
  explicit GaussianProcess(const Encoding& encoding) : m_encoding(encoding) {}

  // Fits to the points and targets; chooses hyperparameters again when `select` (or never
  // chosen yet), otherwise keeps the last ones.
  void fit(std::vector<Point> x, std::vector<double> y, bool select);
  // Adds points with targets without re-choosing hyperparameters (batch fantasies).
  void extend(const std::vector<Point>& x, const std::vector<double>& y);

  struct Prediction {
    double mean = 0, sd = 1;
  };
  // In the units of the targets given to fit.
  Prediction predict(const Point& p) const { return predict_from(cross(p)); }
  // The same in steps, for screening many candidates: the kernel against every training
  // point (O(n)); from it the mean (O(n)) and an upper bound of the standard deviation (O(n):
  // the deviation given the nearest training point alone, since more data never adds
  // uncertainty); and the exact prediction (O(n^2)).
  std::vector<double> cross(const Point& p) const;
  double mean_from(const std::vector<double>& k) const;
  double sd_bound_from(const std::vector<double>& k) const;
  Prediction predict_from(std::vector<double> k) const;
  double best_target() const { return m_best; }
  std::size_t size() const { return m_x.size(); }

 private:
  double kernel(const Point& a, const Point& b, const std::vector<double>& inv_l2) const;
  // Factors K + noise*I for the given hyperparameters; returns the log marginal likelihood
  // (-inf when not positive definite). Keeps the factor and weights on success.
  double factor(const std::vector<double>& inv_l2, double noise);
  void select_hyperparameters();
  void select_on_data();  // on m_x and m_y as they are

  const Encoding& m_encoding;
  std::vector<char> m_categorical;  // per parameter, copied from the encoding for the inner loop
  std::vector<Point> m_x;
  std::vector<double> m_y;  // standardised
  double m_mean = 0, m_scale = 1, m_best = 0;
  std::vector<double> m_inv_l2;  // 1 / lengthscale^2 per parameter
  double m_noise = 1e-2;
  std::vector<double> m_chol;    // lower-triangular factor, row-major n x n
  std::vector<double> m_alpha;   // (K + noise I)^-1 y
};

class FailureModel {
 public:
  explicit FailureModel(const Encoding& encoding) : m_encoding(encoding) {}
  void add(const Point& p, bool failed);
  void clear();
  // Probability in (0, 1) that the configuration at p fails.
  double p_fail(const Point& p) const;
  bool any_failure() const { return m_failures > 0; }
  // Weight of each parameter in the distance, in [0, 1] (1: the most telling one).
  const std::vector<double>& relevance() const;

 private:
  std::size_t bin(std::size_t d, double u) const;
  std::vector<double> features(const Point& p) const;
  void fit_logistic() const;

  const Encoding& m_encoding;
  std::vector<Point> m_points;
  std::vector<bool> m_failed;
  std::size_t m_failures = 0;
  // [dim][level] = (seen, failed), for the levels seen only: an axis may have 10^7 levels.
  // Ordered, so that relevance() sums in the order of levels whatever the order of arrival.
  std::vector<std::map<std::size_t, std::pair<std::size_t, std::size_t>>> m_counts;
  mutable std::vector<double> m_relevance;
  mutable bool m_relevance_known = false;
  mutable std::vector<double> m_logistic;  // weights of features(); empty until fitted
  mutable bool m_logistic_known = false;
};

// Standard normal density and distribution, and expected improvement below `best`.
double normal_pdf(double z);
double normal_cdf(double z);
double expected_improvement(double best, double mean, double sd);

}  // namespace flotilla::search

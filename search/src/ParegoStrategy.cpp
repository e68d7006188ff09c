// ParegoStrategy.cpp — ParEGO (Knowles 2006): model-based multi-objective search that turns
// several objectives into one by a weight vector drawn afresh for every proposal, and runs
// expected improvement on a Gaussian process of that one value.
//
// How it proposes:
//  1. a scrambled Sobol design, 2 x parameters configurations in all (6 to 16), the picks of a
//     warm start (WarmStart.h) among them, and the model waits until two have succeeded;
//  2. a weight vector is drawn from the seed, uniformly from the simplex lattice of s divisions
//     (s = 10 for two objectives: 11 vectors; 4 for three; 3 beyond);
//  3. each objective's losses over the successes seen are put on a log scale when all share a
//     sign (transform_losses, as `bayes` does) and normalised to [0, 1]; the scalar is the
//     augmented Chebyshev max_j w_j f_j + rho * sum_j w_j f_j, rho = 0.05;
//  4. the GP is fitted to it (the best 200 and 100 others on long runs, ModelSearch.h),
//     pending configurations and failures believed as `bayes` believes them, and the candidate
//     with the best expected improvement times (1 - p_fail)^2 over the pool (the whole space
//     up to 3,000 unseen, else a sample plus the neighbourhoods of the best five under these
//     weights) is proposed. No bias towards the incumbent: with several objectives there is
//     none, and with one objective this is a plain EI search.
// Hyperparameters are chosen again as the successes grow by 20%, not per weight vector: the
// lengthscales say which parameters matter, which the weights change little.
// Observations with another number of objectives than the first success's are left out of
// the model (a caller mixing tell() and tell_objectives()).
#include <algorithm>
#include <cmath>

#include "Adaptive.h"
#include "ModelSearch.h"
#include "Sobol.h"
#include "WarmStart.h"

namespace flotilla::search {
namespace {

constexpr double kRho = 0.05;  // the augmentation, Knowles' value

// Every vector of `k` non-negative multiples of 1/s summing to 1, in lexicographic order.
std::vector<std::vector<double>> simplex_lattice(std::size_t k, std::size_t s) {
  std::vector<std::vector<double>> out;
  std::vector<std::size_t> parts(k, 0);
  auto fill = [&](auto&& self, std::size_t j, std::size_t left) -> void {
    if (j + 1 == k) {
      parts[j] = left;
      std::vector<double> w;
      for (auto p : parts) w.push_back(static_cast<double>(p) / static_cast<double>(s));
      out.push_back(std::move(w));
      return;
    }
    for (std::size_t p = 0; p <= left; ++p) parts[j] = p, self(self, j + 1, left - p);
  };
  fill(fill, 0, s);
  return out;
}

class ParegoStrategy final : public AdaptiveStrategy {
 public:
  ParegoStrategy(const StrategyOptions& options, const Space& space)
      : AdaptiveStrategy(space, options), m_gp(m_encoding), m_design(m_encoding.dims(), mix_seed(options.seed, 3)),
        m_initial(std::clamp<std::size_t>(2 * m_encoding.dims(), 6, 16)),
        m_warm(space, options.warm_start, warm_start_picks(m_initial)) {}
  std::string_view name() const override { return "parego"; }

 protected:
  std::optional<Configuration> propose() override {
    auto good = successes();
    if (history().size() + pending().size() < m_initial || good.size() < 2) return initial();
    const auto weights = draw_weights(history()[good.front()].loss.size());
    auto value = scalarised(good, weights);
    std::vector<std::size_t> order(good.size());
    for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return value[a] < value[b]; });
    std::vector<Point> x;
    std::vector<double> y;
    for (auto k : model::model_subset(order)) x.push_back(m_encoding.point(history()[good[k]].config)), y.push_back(value[k]);
    const bool select = static_cast<double>(good.size()) >= model::kReselectGrowth * static_cast<double>(m_selected_at);
    if (select) m_selected_at = good.size();
    model::fit_believing(m_gp, m_encoding, std::move(x), std::move(y), select, pending(), history());
    std::vector<Configuration> elite;
    for (std::size_t k = 0; k < std::min(model::kElite, order.size()); ++k) elite.push_back(history()[good[order[k]]].config);
    auto pool = model::candidate_pool(space(), m_encoding, m_rng, history().size(), elite,
                                      [this](const Configuration& c) { return fresh(c); });
    if (auto pick = model::acquire(m_gp, m_encoding, m_failures, std::move(pool))) return pick->first;
    return fallback();
  }

 private:
  std::optional<Configuration> initial() {
    if (auto warm = m_warm.next(history(), history().size() + pending().size(), [this](const Configuration& c) { return fresh(c); }))
      return warm;
    for (int attempt = 0; attempt < 64; ++attempt) {
      auto config = m_encoding.binned(m_design.next());
      if (fresh(config) && risk_accepted(config)) return config;
    }
    return fallback();
  }

  // Successful observations with as many objectives as the first one.
  std::vector<std::size_t> successes() const {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < history().size(); ++i)
      if (!history()[i].failed() && (out.empty() || history()[i].loss.size() == history()[out.front()].loss.size()))
        out.push_back(i);
    return out;
  }

  const std::vector<double>& draw_weights(std::size_t objectives) {
    if (m_lattice.empty() || m_lattice.front().size() != objectives)
      m_lattice = simplex_lattice(objectives, objectives == 2 ? 10 : objectives == 3 ? 4 : objectives == 1 ? 1 : 3);
    return m_lattice[m_rng.index(m_lattice.size())];
  }

  // The augmented Chebyshev value of each success under `weights`, objectives normalised.
  std::vector<double> scalarised(const std::vector<std::size_t>& good, const std::vector<double>& weights) const {
    std::vector<double> value(good.size(), 0.0), chebyshev(good.size(), 0.0);
    for (std::size_t j = 0; j < weights.size(); ++j) {
      std::vector<double> column;
      for (auto i : good) column.push_back(history()[i].loss[j]);
      column = transform_losses(column);
      const auto [lo, hi] = std::minmax_element(column.begin(), column.end());
      const double span = *hi - *lo;
      for (std::size_t k = 0; k < good.size(); ++k) {
        const double f = weights[j] * (span > 0 ? (column[k] - *lo) / span : 0.0);
        chebyshev[k] = std::max(chebyshev[k], f);
        value[k] += kRho * f;
      }
    }
    for (std::size_t k = 0; k < good.size(); ++k) value[k] += chebyshev[k];
    return value;
  }

  GaussianProcess m_gp;
  SobolSequence m_design;
  std::size_t m_initial;
  WarmStart m_warm;
  std::vector<std::vector<double>> m_lattice;
  std::size_t m_selected_at = 0;
};

}  // namespace

std::unique_ptr<Strategy> make_parego_strategy(const StrategyOptions& options, const Space& space) {
  return std::make_unique<ParegoStrategy>(options, space);
}

}  // namespace flotilla::search

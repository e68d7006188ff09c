// BayesStrategy.cpp — Bayesian optimisation: a Gaussian-process surrogate with expected
// improvement, for discrete, ordinal, categorical and real parameters alike (Encoding.h),
// that refines around the incumbent as a local search would.
//
// How it proposes:
//  1. a space-filling start: the first 2 x parameters (6 to 16) configurations come from a
//     scrambled Sobol design, and the model waits until at least two have succeeded;
//  2. then the GP is fitted to the log of the successful objectives, and each candidate is
//     scored by expected improvement times (1 - p_fail)^2, p_fail from the failure model;
//  3. two pools compete: the unseen one-parameter neighbours of the best configuration
//     (local) and the whole space (every unseen feasible configuration when at most kScoreAll
//     remain, else a uniform sample plus the neighbourhoods and mutations of the best few).
//     The local winner is proposed unless the global one scores kLocalBias times more. Plain
//     expected improvement under-rates small steps from the incumbent on rugged tuning
//     spaces (a GP smooths over the power-of-two effects that make a neighbour 10% faster),
//     and spends the budget on uncertain corners; the bias makes it climb to a local optimum
//     first and leave only for a clearly better prospect.
// `bayes-escape` is the same model with one rule more, for the runs that climb to a local
// optimum and stay there: once kStall x parameters (at least kStallMin) evaluations in a row
// have not improved the best, every other proposal is the best-scoring candidate that differs
// from the incumbent in two parameters or more, with no bias towards the incumbent (a jump out
// of its neighbourhood), until something improves again.
// `bayes-climb` is the same model with a second search beside it, for the same runs: the GP
// refines around the incumbent only, so a better basin it samples once is never climbed (its
// first point is worse than the incumbent). Once stalled (as above), every other proposal
// belongs to a climb, a trust region of one-parameter moves around its own centre: it starts
// at a point two or more parameters away from the incumbent, chosen by expected improvement
// among perturbations of the incumbent or in the whole space (in turn, next door first: the
// better basin may be close, or the model may know where it is), moves its centre
// to each better configuration found, proposes the centre's unseen neighbour with the most
// expected improvement over the centre, and gives up after kClimbPatience x parameters (at
// least kClimbPatienceMin) evaluations in a row that did not improve the centre, or when the
// centre's neighbourhood is used up; then the next climb starts. When anything beats the
// incumbent, the run is no longer stalled and the ordinary proposals refine around it.
// What it believes about configurations it has no value for: pending ones (asked, not told)
// and failed ones enter the GP with its own prediction, failed ones no better than the worst
// value seen. This removes their uncertainty, so a batch does not crowd around the pending
// ones (the "kriging believer") and the search does not keep returning to an unexplored hole
// that only ever fails, without feeding the GP the huge values that wreck its fit.
#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "Adaptive.h"
#include "Sobol.h"
#include "WarmStart.h"

namespace flotilla::search {
namespace {

constexpr std::size_t kScoreAll = 3000;  // unseen feasible configurations scored exhaustively
constexpr std::size_t kSample = 500;     // otherwise: uniform candidates per proposal
constexpr std::size_t kElite = 5;        // incumbents whose neighbourhoods join the global pool
constexpr std::size_t kMutations = 30;   // mutations per incumbent
constexpr double kReselectGrowth = 1.2;  // re-choose GP hyperparameters as the data grows by 20%
constexpr double kLocalBias = 10.0;      // how much more a global candidate must promise
constexpr double kFailurePower = 2.0;    // a failed evaluation is wasted: weigh the risk twice
// The GP costs O(n^3) per proposal: on long campaigns it sees the kModelBest best successes,
// kModelRest others spread evenly over the rest (the shape of the bad regions), and the most
// recent kModelFailed failures.
constexpr std::size_t kModelBest = 200, kModelRest = 100, kModelFailed = 100;
// bayes-escape and bayes-climb: stalled after this many evaluations per parameter without a gain.
constexpr std::size_t kStall = 2, kStallMin = 10;
// bayes-climb: while stalled, one proposal in kClimbShare is the climb's, the others the
// model's: every other one, as bayes-escape's jumps, with no reason to favour either. (1 in 3,
// and climbs only after a stall twice as long, were tried too: over 160 repeats of
// convolution_W7800 and pnpoly_RTX3090, seeds 1, 7 and 11, neither was better; docs/search.md.)
constexpr std::size_t kClimbShare = 2;
// bayes-climb: a climb gives up after this many evaluations per parameter (at least
// kClimbPatienceMin) without improving its centre. One per parameter: the GP ranks the
// neighbours, so a better one, if any, is usually among the first few tried; at least 4 (as
// TuRBO's failure tolerance) so that a space of few parameters still tries a handful.
constexpr std::size_t kClimbPatience = 1, kClimbPatienceMin = 4;
// bayes-climb: a climb that starts near the incumbent picks the most promising of this many
// perturbations (about 2.5 parameters changed, as `local`'s restarts).
constexpr std::size_t kClimbStarts = 64;

enum class Mode { plain, escape, climb };

class BayesStrategy final : public AdaptiveStrategy {
 public:
  BayesStrategy(const StrategyOptions& options, const Space& space, Mode mode)
      : AdaptiveStrategy(space, options), m_gp(m_encoding), m_design(m_encoding.dims(), mix_seed(options.seed, 3)),
        m_mode(mode) {
    m_initial = std::clamp<std::size_t>(2 * m_encoding.dims(), 6, 16);
    m_stall = std::max(kStallMin, kStall * m_encoding.dims());
    m_patience = std::max(kClimbPatienceMin, kClimbPatience * m_encoding.dims());
  }
  std::string_view name() const override {
    return m_mode == Mode::escape ? "bayes-escape" : m_mode == Mode::climb ? "bayes-climb" : "bayes";
  }

 protected:
  void on_observe(std::size_t index) override {
    const bool climbed = m_climb_out.erase(history()[index].config) > 0;
    if (best() && (!m_best_loss || loss(*best()) < *m_best_loss)) {
      m_best_loss = loss(*best()), m_last_gain = history().size();
      m_climb.reset();  // no longer stalled: the ordinary proposals refine around the new best
      m_climbs = 0, m_climb_misses = 0;  // the next stall's first climb starts next door
      return;
    }
    if (!climbed) return;
    if (m_climb && history()[*m_climb].failed()) m_climb.reset();  // rolled back under us
    if (!history()[index].failed() && (!m_climb || m_climb_misses == kStarting || loss(index) < loss(*m_climb)))
      m_climb = index, m_climb_misses = 0;
    else if (m_climb_misses != kStarting) ++m_climb_misses;
  }

  std::optional<Configuration> propose() override {
    auto good = ranked();
    if (history().size() + pending().size() < m_initial || good.size() < 2) return initial();
    fit(good);
    if (m_mode == Mode::climb && history().size() >= m_last_gain + m_stall && m_turn++ % kClimbShare == 0)
      if (auto step = climb(history()[good.front()].config)) {
        m_climb_out.insert(*step);
        return step;
      }
    return ordinary(good);
  }

  // The model's own proposal: bayes' rule, with bayes-escape's jumps while stalled.
  std::optional<Configuration> ordinary(const std::vector<std::size_t>& good) {
    const bool stalled = history().size() >= m_last_gain + m_stall;
    if (m_mode == Mode::escape && stalled && m_turn++ % 2 == 0) {
      const auto& incumbent = history()[good.front()].config;
      auto pool = candidates();
      std::erase_if(pool, [&](const Configuration& c) {
        std::size_t differ = 0;
        for (std::size_t d = 0; d < c.size(); ++d) differ += c[d] != incumbent[d];
        return differ < 2;
      });
      if (auto far = acquire(std::move(pool))) return far->first;
    }
    std::vector<Configuration> near;
    for (auto& n : m_encoding.neighbours(history()[good.front()].config, false))
      if (fresh(n)) near.push_back(std::move(n));
    auto local = acquire(std::move(near));
    auto global = acquire(candidates());
    if (local && (!global || kLocalBias * local->second >= global->second)) return local->first;
    if (global) return global->first;
    return fallback();
  }

 private:
  std::optional<Configuration> initial() {
    if (!m_warm) m_warm.emplace(space(), options().warm_start, warm_start_picks(m_initial));  // its best few first
    if (auto warm = m_warm->next(history(), history().size() + pending().size(), [this](const Configuration& c) { return fresh(c); }))
      return warm;
    for (int attempt = 0; attempt < 64; ++attempt) {
      auto config = m_encoding.binned(m_design.next());
      if (fresh(config) && risk_accepted(config)) return config;
    }
    return fallback();
  }

  // The climb's next proposal: the unseen neighbour of its centre with the most expected
  // improvement over the centre, or the start of a new climb. nullopt when neither is left.
  std::optional<Configuration> climb(const Configuration& incumbent) {
    if (m_climb && m_climb_misses != kStarting && m_climb_misses < m_patience) {
      const auto& centre = history()[*m_climb].config;
      std::vector<Configuration> near;
      for (auto& n : m_encoding.neighbours(centre, false))
        if (fresh(n)) near.push_back(std::move(n));
      if (auto step = acquire(std::move(near), m_gp.predict(m_encoding.point(centre)).mean)) return step->first;
    }
    if (m_climb_misses == kStarting && !m_climb_out.empty()) return std::nullopt;  // its start is still out
    // A new climb, from next door and from far away in turn.
    std::vector<Configuration> pool;
    if (m_climbs++ % 2 == 1) pool = candidates();
    else {
      const double rate = 2.5 / static_cast<double>(std::max<std::size_t>(m_encoding.dims(), 1));
      for (std::size_t k = 0; k < kClimbStarts; ++k) pool.push_back(m_encoding.mutate(incumbent, rate, m_rng));
    }
    std::erase_if(pool, [&](const Configuration& c) {
      std::size_t differ = 0;
      for (std::size_t d = 0; d < c.size(); ++d) differ += c[d] != incumbent[d];
      return differ < 2 || !fresh(c);
    });
    auto start = acquire(std::move(pool));
    if (!start) return std::nullopt;
    m_climb.reset();
    m_climb_misses = kStarting;
    return start->first;
  }

  void fit(std::vector<std::size_t> good) {
    const std::size_t successes = good.size();
    if (good.size() > kModelBest + kModelRest) {
      std::vector<std::size_t> kept(good.begin(), good.begin() + kModelBest);
      const double stride = static_cast<double>(good.size() - kModelBest) / kModelRest;
      for (std::size_t k = 0; k < kModelRest; ++k) kept.push_back(good[kModelBest + static_cast<std::size_t>(k * stride)]);
      good = std::move(kept);
    }
    std::vector<Point> x;
    std::vector<double> losses;
    for (auto i : good) {
      x.push_back(m_encoding.point(history()[i].config));
      losses.push_back(loss(i));
    }
    bool select = static_cast<double>(successes) >= kReselectGrowth * static_cast<double>(m_selected_at);
    if (select) m_selected_at = successes;
    auto y = transform_losses(losses);
    const double worst = *std::max_element(y.begin(), y.end());
    m_gp.fit(std::move(x), y, select);
    std::vector<Point> believed;
    std::vector<double> values;
    auto believe = [&](const Configuration& c, double at_least) {
      believed.push_back(m_encoding.point(c));
      values.push_back(std::max(m_gp.predict(believed.back()).mean, at_least));
    };
    for (const auto& c : pending()) believe(c, -INFINITY);
    std::size_t failed = 0;
    for (auto o = history().rbegin(); o != history().rend() && failed < kModelFailed; ++o)
      if (o->failed()) believe(o->config, worst), ++failed;
    m_gp.extend(believed, values);
  }

  // The best candidate of a pool and its score, or nullopt for an empty pool. Exact, but
  // pruned: the mean with a bound of the standard deviation bounds a candidate's expected
  // improvement (it grows with the deviation), and the chance of not failing is at most 1, so
  // the full O(n^2) prediction and the failure model are consulted best bound first, until
  // no bound can beat the best score found.
  // `reference` is the target to improve on (the best seen, unless a climb's centre).
  std::optional<std::pair<Configuration, double>> acquire(std::vector<Configuration> pool, std::optional<double> reference = {}) {
    if (pool.empty()) return std::nullopt;
    const double best = reference.value_or(m_gp.best_target());
    std::vector<Point> points(pool.size());
    std::vector<std::vector<double>> cross(pool.size());
    std::vector<std::pair<double, std::size_t>> bounds;
    for (std::size_t i = 0; i < pool.size(); ++i) {
      points[i] = m_encoding.point(pool[i]);
      cross[i] = m_gp.cross(points[i]);
      bounds.emplace_back(expected_improvement(best, m_gp.mean_from(cross[i]), m_gp.sd_bound_from(cross[i])), i);
    }
    std::sort(bounds.begin(), bounds.end(),
              [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); });
    double top = -1;
    std::size_t chosen = bounds.front().second;
    for (const auto& [bound, i] : bounds) {
      if (bound <= top) break;
      auto prediction = m_gp.predict_from(std::move(cross[i]));
      double score = expected_improvement(best, prediction.mean, prediction.sd);
      if (m_failures.any_failure() && score > top) score *= std::pow(1.0 - m_failures.p_fail(points[i]), kFailurePower);
      if (score > top) top = score, chosen = i;
    }
    return std::pair{pool[chosen], top};
  }

  std::vector<Configuration> candidates() {
    std::vector<Configuration> pool;
    std::unordered_set<Configuration, ConfigurationHash> in_pool;
    auto add = [&](Configuration c) {
      if (fresh(c) && in_pool.insert(c).second) pool.push_back(std::move(c));
    };
    if (const auto* all = space().feasible_indices()) {
      if (all->size() <= kScoreAll + history().size()) {
        for (auto index : *all) add(space().grid_point(index));
        return pool;
      }
      for (std::size_t i = 0; i < 3 * kSample && pool.size() < kSample; ++i)
        add(space().grid_point((*all)[m_rng.index(all->size())]));
    } else {
      for (std::size_t i = 0; i < 20 * kSample && pool.size() < kSample; ++i) add(m_encoding.random(m_rng));
    }
    auto good = ranked();
    for (std::size_t e = 0; e < std::min(kElite, good.size()); ++e) {
      const auto& incumbent = history()[good[e]].config;
      for (auto& n : m_encoding.neighbours(incumbent, false)) add(std::move(n));
      for (std::size_t m = 0; m < kMutations; ++m) add(m_encoding.mutate(incumbent, 0.3, m_rng));
    }
    return pool;
  }

  GaussianProcess m_gp;
  SobolSequence m_design;
  std::size_t m_initial = 10;
  std::size_t m_selected_at = 0;
  Mode m_mode = Mode::plain;
  std::size_t m_stall = kStallMin;
  std::optional<double> m_best_loss;
  std::size_t m_last_gain = 0;  // history size when the best last improved
  std::size_t m_turn = 0;       // takes turns between jumps (climbs) and ordinary proposals while stalled
  // bayes-climb: the climb's centre (history index), the evaluations in a row that did not
  // improve it (kStarting while its first point is out), the climbs begun, the climb's
  // proposals not told yet.
  static constexpr std::size_t kStarting = static_cast<std::size_t>(-1);
  std::size_t m_patience = kClimbPatienceMin;
  std::optional<std::size_t> m_climb;
  std::size_t m_climb_misses = 0;
  std::size_t m_climbs = 0;
  std::unordered_set<Configuration, ConfigurationHash> m_climb_out;
  std::optional<WarmStart> m_warm;  // StrategyOptions::warm_start's picks (WarmStart.h)
};

}  // namespace

std::unique_ptr<Strategy> make_bayes_strategy(const StrategyOptions& options, const Space& space) {
  return std::make_unique<BayesStrategy>(options, space, Mode::plain);
}

std::unique_ptr<Strategy> make_bayes_escape_strategy(const StrategyOptions& options, const Space& space) {
  return std::make_unique<BayesStrategy>(options, space, Mode::escape);
}

std::unique_ptr<Strategy> make_bayes_climb_strategy(const StrategyOptions& options, const Space& space) {
  return std::make_unique<BayesStrategy>(options, space, Mode::climb);
}

}  // namespace flotilla::search

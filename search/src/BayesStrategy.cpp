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
// What it promises: every proposal of the model's own (not a climb's, nor the design's) adds its
// score, the expected improvement of the log objective times (1 - p_fail)^2, to an account
// that a gain empties (ModelPromise, Strategies.h); `bayes-genetic` and `bayes-local` read it.
// What it believes about configurations it has no value for: pending ones (asked, not told)
// and failed ones enter the GP with its own prediction, failed ones no better than the worst
// value seen. This removes their uncertainty, so a batch does not crowd around the pending
// ones (the "kriging believer") and the search does not keep returning to an unexplored hole
// that only ever fails, without feeding the GP the huge values that wreck its fit.
#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "Adaptive.h"
#include "ModelSearch.h"
#include "Sobol.h"
#include "WarmStart.h"

namespace flotilla::search {
namespace {

// The pools, the GP's subset and the believer are ModelSearch.h's (shared with parego).
constexpr double kLocalBias = 10.0;      // how much more a global candidate must promise
// bayes-escape and bayes-climb: stalled after this many evaluations per parameter without a gain.
constexpr std::size_t kStall = 2, kStallMin = 10;
// bayes-climb: while stalled, one proposal in kClimbShare is the climb's, the others the
// model's: every other one, as bayes-escape's jumps, with no reason to favour either. (1 in 3,
// and climbs only after a stall twice as long, were tried too: over 160 repeats of
// convolution_W7800 and pnpoly_RTX3090, seeds 1, 7 and 11, neither was better; bench/search/RESULTS.md.)
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

class BayesStrategy final : public AdaptiveStrategy, public ModelPromise {
 public:
  BayesStrategy(const StrategyOptions& options, const Space& space, Mode mode)
      : AdaptiveStrategy(space, options), m_gp(m_encoding), m_design(m_encoding.dims(), mix_seed(options.seed, 3)),
        m_mode(mode) {
    m_initial = std::clamp<std::size_t>(2 * m_encoding.dims(), 6, 16);
    m_stall = std::max(kStallMin, kStall * m_encoding.dims());
    m_patience = std::max(kClimbPatienceMin, kClimbPatience * m_encoding.dims());
  }
  double promised_since_gain() const override { return m_promised; }
  std::string_view name() const override {
    return m_mode == Mode::escape ? "bayes-escape" : m_mode == Mode::climb ? "bayes-climb" : "bayes";
  }

 protected:
  void on_observe(std::size_t index) override {
    const bool climbed = m_climb_out.erase(history()[index].config) > 0;
    if (best() && (!m_best_loss || loss(*best()) < *m_best_loss)) {
      m_best_loss = loss(*best()), m_last_gain = history().size();
      m_promised = 0;
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
      if (auto far = acquire(std::move(pool))) return m_promised += far->second, far->first;
    }
    std::vector<Configuration> near;
    for (auto& n : m_encoding.neighbours(history()[good.front()].config, false))
      if (fresh(n)) near.push_back(std::move(n));
    auto local = acquire(std::move(near));
    auto global = acquire(candidates());
    if (local && (!global || kLocalBias * local->second >= global->second)) return m_promised += local->second, local->first;
    if (global) return m_promised += global->second, global->first;
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

  // The GP on this run's successes, believing pending and failed configurations (ModelSearch.h).
  void fit(const std::vector<std::size_t>& good) {
    const std::size_t successes = good.size();
    std::vector<Point> x;
    std::vector<double> losses;
    for (auto i : model::model_subset(good)) {
      x.push_back(m_encoding.point(history()[i].config));
      losses.push_back(loss(i));
    }
    const bool select = static_cast<double>(successes) >= model::kReselectGrowth * static_cast<double>(m_selected_at);
    if (select) m_selected_at = successes;
    model::fit_believing(m_gp, m_encoding, std::move(x), transform_losses(losses), select, pending(), history());
  }

  // The best candidate of a pool and its score, or nullopt for an empty pool (ModelSearch.h);
  // `reference` is the target to improve on (the best seen, unless a climb's centre).
  std::optional<std::pair<Configuration, double>> acquire(std::vector<Configuration> pool, std::optional<double> reference = {}) {
    return model::acquire(m_gp, m_encoding, m_failures, std::move(pool), reference);
  }

  std::vector<Configuration> candidates() {
    std::vector<Configuration> elite;
    for (auto i : ranked()) {
      if (elite.size() == model::kElite) break;
      elite.push_back(history()[i].config);
    }
    return model::candidate_pool(space(), m_encoding, m_rng, history().size(), elite,
                                 [this](const Configuration& c) { return fresh(c); });
  }

  GaussianProcess m_gp;
  SobolSequence m_design;
  std::size_t m_initial = 10;
  std::size_t m_selected_at = 0;
  Mode m_mode = Mode::plain;
  std::size_t m_stall = kStallMin;
  std::optional<double> m_best_loss;
  std::size_t m_last_gain = 0;  // history size when the best last improved
  double m_promised = 0;        // ModelPromise: the scores of its proposals since then
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

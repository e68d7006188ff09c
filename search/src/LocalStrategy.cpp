// LocalStrategy.cpp — iterated local search: first-improvement hill climbing over the
// configurations that differ in one parameter, restarted by perturbing the best one.
//
// The climb moves as soon as a neighbour is told better than the current configuration (in
// batches, several neighbours of one configuration are out at once; the first better one
// wins). When every neighbour of the current configuration has been seen, it is a local
// optimum: the search perturbs the best configuration found (two or three parameters, larger
// steps) and climbs again from there, or, one time in kClimbRestartOdds, restarts at a random
// configuration to leave a basin for good. Hidden constraints: neighbours like failed
// configurations are drawn less often (AdaptiveStrategy::neighbour_of).
#include "Adaptive.h"

namespace flotilla::search {
namespace {

constexpr int kClimbRestartOdds = 5;

class LocalStrategy final : public AdaptiveStrategy {
 public:
  LocalStrategy(const StrategyOptions& options, const Space& space) : AdaptiveStrategy(space, options) {}
  std::string_view name() const override { return "local"; }

 protected:
  std::optional<Configuration> propose() override {
    if (!m_current) {
      if (!best()) return start();
      m_current = best();
    }
    if (auto n = neighbour_of(history()[*m_current].config, false)) return n;
    // A local optimum (or all its neighbours are out): perturb and climb again.
    m_current.reset();
    return start();
  }

  void on_observe(std::size_t index) override {
    if (m_current && history()[*m_current].failed()) m_current.reset();  // rolled back under us
    if (history()[index].failed()) return;
    if (m_starts.erase(history()[index].config) > 0 && !m_current) {
      m_current = index;  // a new climb begins at the perturbed configuration
      return;
    }
    if (!m_current || loss(index) < loss(*m_current)) m_current = index;
  }

 private:
  std::optional<Configuration> start() {
    std::optional<Configuration> config;
    if (best() && m_rng.index(kClimbRestartOdds) != 0) {
      const double rate = 2.5 / static_cast<double>(std::max<std::size_t>(m_encoding.dims(), 1));
      for (int attempt = 0; attempt < kDrawAttempts && !config; ++attempt) {
        auto c = m_encoding.mutate(history()[*best()].config, rate, m_rng);
        if (fresh(c) && risk_accepted(c)) config = std::move(c);
      }
    }
    for (int attempt = 0; attempt < kDrawAttempts && !config; ++attempt) {
      auto c = m_encoding.random(m_rng);
      if (fresh(c) && risk_accepted(c)) config = std::move(c);
    }
    if (!config) config = fallback();
    if (config) m_starts.insert(*config);
    return config;
  }

  std::optional<std::size_t> m_current;  // history index the climb stands on
  std::unordered_set<Configuration, ConfigurationHash> m_starts;
};

}  // namespace

std::unique_ptr<Strategy> make_local_strategy(const StrategyOptions& options, const Space& space) {
  return std::make_unique<LocalStrategy>(options, space);
}

}  // namespace flotilla::search

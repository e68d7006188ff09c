// Nsga2Strategy.cpp — multi-objective search in the manner of NSGA-II (Deb et al. 2002).
//
// Told several objectives per configuration (Strategy::tell_objectives), it keeps as parents
// the kPopulation best configurations by non-domination rank, ties broken by crowding
// distance (spread along the front is worth keeping), and proposes children by tournament
// on (rank, crowding), uniform crossover and mutation. Steady state, like the
// genetic strategy, because ask/tell hands out one child at a time. The Pareto front of
// everything told is Strategy::pareto_front(). Told a single objective it is an elitist
// genetic algorithm. Failed configurations never become parents, and children like them are
// drawn less often.
#include <limits>

#include "Adaptive.h"
#include "Pareto.h"
#include "Sobol.h"

namespace flotilla::search {
namespace {

constexpr std::size_t kPopulation = 24;
constexpr double kCrossover = 0.8;
constexpr std::size_t kTournament = 3;

class Nsga2Strategy final : public AdaptiveStrategy {
 public:
  Nsga2Strategy(const StrategyOptions& options, const Space& space)
      : AdaptiveStrategy(space, options), m_design(m_encoding.dims(), mix_seed(options.seed, 3)) {}
  std::string_view name() const override { return "nsga2"; }

 protected:
  std::optional<Configuration> propose() override {
    if (m_dirty) select_parents();
    if (m_parents.size() < kPopulation / 4 || history().size() + pending().size() < kPopulation / 2) return initial();
    const double rate = 1.0 / static_cast<double>(std::max<std::size_t>(m_encoding.dims(), 1));
    for (int attempt = 0; attempt < kDrawAttempts; ++attempt) {
      auto child = history()[tournament()].config;
      if (m_rng.chance(kCrossover)) child = m_encoding.crossover(child, history()[tournament()].config, m_rng);
      if (!fresh(child) || m_rng.chance(0.5)) child = m_encoding.mutate(child, rate, m_rng);
      if (fresh(child) && risk_accepted(child)) return child;
    }
    return fallback();
  }

  void on_observe(std::size_t) override { m_dirty = true; }

 private:
  struct Parent {
    std::size_t index, rank;
    double crowding;
  };

  // Environmental selection: whole fronts while they fit, then the most crowded-apart members.
  void select_parents() {
    m_dirty = false;
    m_parents.clear();
    std::vector<std::size_t> ok;
    std::vector<std::vector<double>> losses;
    for (std::size_t i = 0; i < history().size(); ++i)
      if (!history()[i].failed()) ok.push_back(i), losses.push_back(history()[i].loss);
    auto fronts = pareto_fronts(losses);
    for (std::size_t rank = 0; rank < fronts.size() && m_parents.size() < kPopulation; ++rank) {
      auto distance = crowding(losses, fronts[rank]);
      std::vector<std::size_t> order(fronts[rank].size());
      for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
      std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return distance[a] > distance[b]; });
      for (auto k : order) {
        if (m_parents.size() == kPopulation) break;
        m_parents.push_back({ok[fronts[rank][k]], rank, distance[k]});
      }
    }
  }

  // Crowded tournament of kTournament: lower rank wins, then larger crowding distance.
  std::size_t tournament() {
    const Parent* winner = &m_parents[m_rng.index(m_parents.size())];
    for (std::size_t k = 1; k < kTournament; ++k) {
      const Parent& other = m_parents[m_rng.index(m_parents.size())];
      if (other.rank < winner->rank || (other.rank == winner->rank && other.crowding > winner->crowding)) winner = &other;
    }
    return winner->index;
  }

  std::optional<Configuration> initial() {
    for (int attempt = 0; attempt < kDrawAttempts; ++attempt) {
      auto config = m_encoding.binned(m_design.next());
      if (fresh(config) && risk_accepted(config)) return config;
    }
    return fallback();
  }

  SobolSequence m_design;
  std::vector<Parent> m_parents;
  bool m_dirty = true;
};

}  // namespace

std::unique_ptr<Strategy> make_nsga2_strategy(const StrategyOptions& options, const Space& space) {
  return std::make_unique<Nsga2Strategy>(options, space);
}

}  // namespace flotilla::search

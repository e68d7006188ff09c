// GeneticStrategy.cpp — a steady-state genetic algorithm.
//
// The population is the kPopulation best configurations told so far (elitist: a good
// configuration stays until better ones push it out). Each proposal is one child: two parents
// chosen by tournament, uniform crossover, then mutation of about one parameter in
// `dims` (Encoding::mutate: ordered parameters mostly move one level, categorical ones jump).
// Steady state rather than generations because ask/tell hands out one child at a time and
// results may come back in any order; a batch is simply several children, all distinct.
// The first kPopulation / 2 configurations come from a space-filling start (Sobol); breeding
// begins then, with the population filling up as results arrive.
// Hidden constraints: a child like failed configurations is kept only with the chance
// 1 - p_fail, and failed configurations never become parents.
#include "Adaptive.h"
#include "Sobol.h"

namespace flotilla::search {
namespace {

constexpr std::size_t kPopulation = 20;
constexpr std::size_t kTournament = 3;
constexpr double kCrossover = 0.8;

class GeneticStrategy final : public AdaptiveStrategy {
 public:
  GeneticStrategy(const StrategyOptions& options, const Space& space)
      : AdaptiveStrategy(space, options), m_design(m_encoding.dims(), mix_seed(options.seed, 3)) {}
  std::string_view name() const override { return "genetic"; }

 protected:
  std::optional<Configuration> propose() override {
    auto population = ranked();
    if (population.size() > kPopulation) population.resize(kPopulation);
    if (population.size() < kPopulation / 4 || history().size() + pending().size() < kPopulation / 2) return initial();
    const double rate = 1.0 / static_cast<double>(std::max<std::size_t>(m_encoding.dims(), 1));
    for (int attempt = 0; attempt < kDrawAttempts; ++attempt) {
      const auto& a = history()[select(population)].config;
      Configuration child = a;
      if (m_rng.chance(kCrossover)) child = m_encoding.crossover(a, history()[select(population)].config, m_rng);
      // Mutate always when crossover gave back a known configuration, else with the usual odds.
      if (!fresh(child) || m_rng.chance(0.5)) child = m_encoding.mutate(child, rate, m_rng);
      if (fresh(child) && risk_accepted(child)) return child;
    }
    return fallback();
  }

 private:
  std::optional<Configuration> initial() {
    for (int attempt = 0; attempt < kDrawAttempts; ++attempt) {
      auto config = m_encoding.binned(m_design.next());
      if (fresh(config) && risk_accepted(config)) return config;
    }
    return fallback();
  }

  // Tournament: the best of kTournament members drawn at random (population is best first).
  std::size_t select(const std::vector<std::size_t>& population) {
    std::size_t pick = m_rng.index(population.size());
    for (std::size_t k = 1; k < kTournament; ++k) pick = std::min(pick, m_rng.index(population.size()));
    return population[pick];
  }

  SobolSequence m_design;
};

}  // namespace

std::unique_ptr<Strategy> make_genetic_strategy(const StrategyOptions& options, const Space& space) {
  return std::make_unique<GeneticStrategy>(options, space);
}

}  // namespace flotilla::search

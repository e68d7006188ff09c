// SobolStrategy.cpp — quasi-random sampling: a scrambled Sobol sequence mapped onto the grid.
//
// Coordinate u of a discrete parameter picks level floor(u * levels), so every level is hit
// equally often and every 2^k prefix of points is spread evenly over each pair of parameters;
// real parameters take u directly (log scale where declared). A point that is infeasible or
// already seen is skipped; after kMaxSkips skips in a row (small or heavily constrained
// spaces) the next configuration comes from uniform random sampling, which also detects the
// end of the space. Like random, it does not adapt to what it is told.
#include "Encoding.h"
#include "Sobol.h"
#include "Strategies.h"

namespace flotilla::search {
namespace {

constexpr int kMaxSkips = 64;

class SobolStrategy final : public Strategy {
 public:
  SobolStrategy(const StrategyOptions& options, const Space& space)
      : Strategy(space, options),
        m_encoding(space),
        m_sequence(space.parameters().size(), options.seed),
        m_source(space, mix_seed(options.seed, 7)) {}
  std::string_view name() const override { return "sobol"; }

 protected:
  std::optional<Configuration> propose() override {
    for (int skip = 0; skip < kMaxSkips; ++skip) {
      auto config = m_encoding.binned(m_sequence.next());
      if (space().feasible(config) && !seen(config)) return config;
    }
    return m_source.next([this](const Configuration& c) { return seen(c); });
  }

 private:
  Encoding m_encoding;
  SobolSequence m_sequence;
  RandomSource m_source;
};

}  // namespace

std::unique_ptr<Strategy> make_sobol_strategy(const StrategyOptions& options, const Space& space) {
  return std::make_unique<SobolStrategy>(options, space);
}

}  // namespace flotilla::search

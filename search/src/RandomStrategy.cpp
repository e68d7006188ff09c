// RandomStrategy.cpp — uniform sampling without replacement, seeded.
//
// A finite space of at most Space::kEnumerateLimit grid points is enumerated once (feasible
// points only) and drawn in a seeded random order, so sampling is exactly uniform over
// feasible configurations and ends when they are used up. Larger or continuous spaces are
// sampled by rejection: each parameter uniformly (real ones uniform or log-uniform),
// infeasible and seen draws discarded (RandomSource in Encoding.h). Random is the baseline
// every adaptive strategy is measured against, so it deliberately learns nothing, not even
// from failures.
#include "Encoding.h"
#include "Strategies.h"

namespace flotilla::search {
namespace {

class RandomStrategy final : public Strategy {
 public:
  RandomStrategy(const StrategyOptions& options, const Space& space)
      : Strategy(space, options), m_source(space, options.seed) {}
  std::string_view name() const override { return "random"; }

 protected:
  std::optional<Configuration> propose() override {
    return m_source.next([this](const Configuration& c) { return seen(c); });
  }

 private:
  RandomSource m_source;
};

}  // namespace

std::unique_ptr<Strategy> make_random_strategy(const StrategyOptions& options, const Space& space) {
  return std::make_unique<RandomStrategy>(options, space);
}

}  // namespace flotilla::search

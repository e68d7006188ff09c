// GridStrategy.cpp — walks the grid in index order (last parameter fastest), skipping
// infeasible points. Real parameters contribute their grid_points values. Lazy: the grid is
// never materialised, so it works on spaces of any size. On a grid larger than
// Space::kEnumerateLimit, a proposal gives up after Space::kMaxRejections points in a row that
// are infeasible or seen (as sampling does): 10^56 points (eight parameters of 10^7 levels)
// under a constraint that holds nowhere would never end. The next ask walks on from there.
#include "Strategies.h"

namespace flotilla::search {
namespace {

class GridStrategy final : public Strategy {
 public:
  GridStrategy(const StrategyOptions& options, const Space& space)
      : Strategy(space, options), m_size(space.grid_size()) {}
  std::string_view name() const override { return "grid"; }

 protected:
  std::optional<Configuration> propose() override {
    const bool bounded = m_size > Space::kEnumerateLimit;
    for (int skipped = 0; m_next < m_size && !(bounded && skipped == Space::kMaxRejections); ++skipped) {
      auto config = space().grid_point(m_next++);
      if (space().feasible(config) && !seen(config)) return config;
    }
    return std::nullopt;
  }

 private:
  std::uint64_t m_size;
  std::uint64_t m_next = 0;
};

}  // namespace

std::unique_ptr<Strategy> make_grid_strategy(const StrategyOptions& options, const Space& space) {
  return std::make_unique<GridStrategy>(options, space);
}

}  // namespace flotilla::search

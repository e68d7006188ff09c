// GridStrategy.cpp — walks the grid in index order (last parameter fastest), skipping
// infeasible points. Real parameters contribute their grid_points values. Lazy: the grid is
// never materialised, so it works on spaces of any size.
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
    while (m_next < m_size) {
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

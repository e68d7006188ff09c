// RandomStrategy.cpp — uniform sampling without replacement, seeded.
//
// A finite space of at most kEnumerateLimit grid points is enumerated once (feasible points
// only) and shuffled with the seed, so sampling is exactly uniform over feasible
// configurations and ends when they are used up. Larger or continuous spaces are sampled by
// rejection: each parameter uniformly (real ones uniform or log-uniform), infeasible and seen
// draws discarded; after kMaxRejections draws in a row without a new point it gives up.
#include <cmath>
#include <random>

#include "Strategies.h"

namespace flotilla::search {
namespace {

constexpr std::uint64_t kEnumerateLimit = std::uint64_t{1} << 24;
constexpr int kMaxRejections = 100'000;

bool has_continuous(const Space& space) {
  for (const auto& p : space.parameters())
    if (p.continuous()) return true;
  return false;
}

class RandomStrategy final : public Strategy {
 public:
  RandomStrategy(const Space& space, std::uint64_t seed) : Strategy(space), m_rng(seed) {
    m_enumerated = !has_continuous(space) && space.grid_size() <= kEnumerateLimit;
    if (m_enumerated) {
      space.for_each_feasible([&](std::uint64_t index) { m_order.push_back(index); });
      // Fisher-Yates with our own bounded draw: std::shuffle's sequence differs between
      // standard libraries, and a campaign must be reproducible from its seed anywhere.
      for (std::size_t i = m_order.size(); i > 1; --i) std::swap(m_order[i - 1], m_order[draw_below(i)]);
    }
  }
  std::string_view name() const override { return "random"; }

 protected:
  std::optional<Configuration> propose() override {
    if (m_enumerated) {
      while (m_next < m_order.size()) {
        auto config = space().grid_point(m_order[m_next++]);
        if (!seen(config)) return config;
      }
      return std::nullopt;
    }
    for (int attempt = 0; attempt < kMaxRejections; ++attempt) {
      auto config = sample();
      if (space().feasible(config) && !seen(config)) return config;
    }
    return std::nullopt;
  }

 private:
  std::uint64_t draw_below(std::uint64_t bound) {  // unbiased: rejects the short last stripe
    const std::uint64_t limit = std::numeric_limits<std::uint64_t>::max() - std::numeric_limits<std::uint64_t>::max() % bound;
    std::uint64_t x;
    do x = m_rng(); while (x >= limit);
    return x % bound;
  }
  double draw_unit() { return static_cast<double>(m_rng() >> 11) * 0x1.0p-53; }

  Configuration sample() {
    Configuration config;
    for (const auto& p : space().parameters()) {
      if (!p.continuous()) {
        config.push_back(p.grid_value(draw_below(p.grid_size())));
      } else if (p.log_scale) {
        config.push_back(std::exp(std::log(p.lo) + draw_unit() * (std::log(p.hi) - std::log(p.lo))));
      } else {
        config.push_back(p.lo + draw_unit() * (p.hi - p.lo));
      }
    }
    return config;
  }

  std::mt19937_64 m_rng;
  bool m_enumerated = false;
  std::vector<std::uint64_t> m_order;
  std::size_t m_next = 0;
};

}  // namespace

std::unique_ptr<Strategy> make_random_strategy(const Space& space, std::uint64_t seed) {
  return std::make_unique<RandomStrategy>(space, seed);
}

}  // namespace flotilla::search

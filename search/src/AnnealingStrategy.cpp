// AnnealingStrategy.cpp — simulated annealing over one-parameter moves.
//
// The walk starts from the best of kStart random configurations, stands on one configuration
// and proposes a small move from it (Encoding::mutate: about one parameter, mostly by one
// level; a one-parameter neighbour when moves find nothing new). A told move becomes the new
// standpoint if it is better, or else with probability
// exp(-worsening / T), the worsening measured on the log scale of the objective (transform_losses)
// in units of its observed spread, so that T means the same on any objective. T falls
// geometrically with every evaluation (kCooling), so the walk roams at first and then
// settles; when the standpoint has no unseen neighbour left, the walk reheats (T back to half
// its start) and continues from the best configuration or, one time in kAnnealRestartOdds, from a
// random one. In batches, several neighbours of one standpoint are out at once; each is
// judged against the standpoint as it stands when its result comes in. Failed neighbours are
// never accepted and, through the failure model, are drawn less often.
#include <cmath>

#include "Adaptive.h"

namespace flotilla::search {
namespace {

constexpr std::size_t kStart = 5;
constexpr double kStartTemperature = 0.5;
constexpr double kCooling = 0.97;
constexpr int kAnnealRestartOdds = 4;

class AnnealingStrategy final : public AdaptiveStrategy {
 public:
  AnnealingStrategy(const StrategyOptions& options, const Space& space) : AdaptiveStrategy(space, options) {}
  std::string_view name() const override { return "annealing"; }

 protected:
  std::optional<Configuration> propose() override {
    if (history().size() + pending().size() < kStart) return restart();
    if (!m_here && best()) m_here = best();
    if (!m_here) return restart();
    if (auto n = move(history()[*m_here].config)) return n;
    m_temperature = 0.5 * kStartTemperature;  // reheat: this standpoint is used up
    m_here.reset();
    if (best() && m_rng.index(kAnnealRestartOdds) != 0) {
      m_here = best();
      if (auto n = move(history()[*m_here].config)) return n;
    }
    return restart();
  }

  void on_observe(std::size_t index) override {
    m_temperature *= kCooling;
    if (history()[index].failed() || history().size() <= kStart) return;
    if (!m_here || history()[*m_here].failed()) {
      m_here = index;
      return;
    }
    double worsening = (scaled(index) - scaled(*m_here));
    if (worsening <= 0 || m_rng.unit() < std::exp(-worsening / std::max(m_temperature, 1e-9))) m_here = index;
  }

 private:
  // The loss on the log scale, divided by the spread (interquartile range) of what was seen.
  double scaled(std::size_t index) {
    auto order = ranked();
    std::vector<double> losses;
    for (auto i : order) losses.push_back(loss(i));
    auto t = transform_losses(losses);
    double spread = t.size() >= 4 ? t[3 * t.size() / 4] - t[t.size() / 4] : 0.0;
    if (!(spread > 1e-12)) spread = 1.0;
    auto it = std::find(order.begin(), order.end(), index);
    return t[static_cast<std::size_t>(it - order.begin())] / spread;
  }

  std::optional<Configuration> move(const Configuration& from) {
    const double rate = 1.0 / static_cast<double>(std::max<std::size_t>(m_encoding.dims(), 1));
    for (int attempt = 0; attempt < kDrawAttempts; ++attempt) {
      auto c = m_encoding.mutate(from, rate, m_rng);
      if (fresh(c) && risk_accepted(c)) return c;
    }
    return neighbour_of(from, true);
  }

  std::optional<Configuration> restart() {
    for (int attempt = 0; attempt < kDrawAttempts; ++attempt) {
      auto c = m_encoding.random(m_rng);
      if (fresh(c) && risk_accepted(c)) return c;
    }
    return fallback();
  }

  std::optional<std::size_t> m_here;
  double m_temperature = kStartTemperature;
};

}  // namespace

std::unique_ptr<Strategy> make_annealing_strategy(const StrategyOptions& options, const Space& space) {
  return std::make_unique<AnnealingStrategy>(options, space);
}

}  // namespace flotilla::search

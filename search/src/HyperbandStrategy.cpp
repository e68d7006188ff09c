// HyperbandStrategy.cpp — asynchronous successive halving (ASHA, Li et al. 2020) over a
// fidelity.
//
// Arms are candidate configurations. Every arm starts at rung 0 at the lowest fidelity;
// whenever an arm is among the best 1/kEta of the arms that finished its rung, it is promoted
// to the next rung, where it gets kEta times the fidelity. Asynchronous, because ask/tell
// hands out work whenever asked: an idle slot promotes what deserves it, or else starts a new
// arm, never waiting for a rung to fill. The fidelity is one of:
//  - a parameter (StrategyOptions::fidelity, e.g. a problem size), whose declared values are
//    the rungs: promotion evaluates the same configuration at the next value, and arms are
//    compared only at equal fidelity;
//  - without one, evaluations: an arm at rung k has had kEta^k evaluations spent on it, a
//    hill climb over its one-parameter neighbours (one level up or down first), and its score is the best it found. Recorded
//    spaces have no fidelity parameter; this form still halves the budget towards the most
//    promising regions.
// New arms come from a Sobol design, configurations like failed ones drawn less often; a
// failed arm is dropped.
#include <map>

#include "Adaptive.h"
#include "Sobol.h"

namespace flotilla::search {
namespace {

constexpr std::size_t kEta = 3;
constexpr std::size_t kMaxRung = 4;

class HyperbandStrategy final : public AdaptiveStrategy {
 public:
  HyperbandStrategy(const StrategyOptions& options, const Space& space)
      : AdaptiveStrategy(space, options), m_design(m_encoding.dims(), mix_seed(options.seed, 3)) {
    const auto& params = space.parameters();
    for (std::size_t d = 0; d < params.size(); ++d)
      if (params[d].name == options.fidelity) m_fidelity = d;
    if (!options.fidelity.empty() && !m_fidelity)
      throw std::invalid_argument("fidelity parameter '" + options.fidelity + "' is not a parameter of the space");
    m_top = m_fidelity ? std::min(kMaxRung, params[*m_fidelity].grid_size() - 1) : kMaxRung;
  }
  std::string_view name() const override { return "hyperband"; }

 protected:
  std::optional<Configuration> propose() override {
    if (auto step = climb()) return step;
    if (auto promoted = promote()) return promoted;
    return new_arm();
  }

  void on_observe(std::size_t index) override {
    auto it = m_origin.find(history()[index].config);
    if (it == m_origin.end()) return;  // told again (a rollback), or not ours
    const std::size_t arm_index = it->second;  // `it` is gone once erased
    Arm& arm = m_arms[arm_index];
    m_origin.erase(it);
    --arm.out;
    if (history()[index].failed()) {
      if (arm.rung == 0 || m_fidelity) arm.dead = true;
    } else if (!arm.score || loss(index) < *arm.score || m_fidelity) {
      arm.score = loss(index);
      arm.center = history()[index].config;
    }
    if (arm.out == 0 && arm.owed == 0 && !arm.dead && arm.score) m_finished[arm.rung].emplace_back(*arm.score, arm_index);
  }

 private:
  struct Arm {
    Configuration center;  // fidelity: the configuration at rung 0; else: the best found
    std::optional<double> score;
    std::size_t rung = 0, owed = 0, out = 0;
    bool dead = false;
  };

  // Without a fidelity parameter: the next evaluation owed to a promoted arm, highest rung first.
  std::optional<Configuration> climb() {
    for (std::size_t r = m_top + 1; r-- > 0;)
      for (std::size_t a = 0; a < m_arms.size(); ++a) {
        Arm& arm = m_arms[a];
        if (arm.rung != r || arm.owed == 0) continue;
        if (auto n = neighbour_of(arm.center, true)) return hand_out(a, *n, true);
        arm.owed = 0;  // its neighbourhood is used up: the rung ends early
        if (arm.out == 0 && arm.score) m_finished[arm.rung].emplace_back(*arm.score, a);
      }
    return std::nullopt;
  }

  std::optional<Configuration> promote() {
    for (std::size_t r = m_top; r-- > 0;) {
      auto& done = m_finished[r];
      std::sort(done.begin(), done.end());
      for (std::size_t i = 0; i < done.size() / kEta; ++i) {
        Arm& arm = m_arms[done[i].second];
        if (arm.rung != r || arm.dead) continue;  // promoted already
        arm.rung = r + 1;
        if (!m_fidelity) {
          arm.owed = power(r + 1) - power(r);
          if (auto step = climb()) return step;
          continue;
        }
        auto config = arm.center;
        config[*m_fidelity] = m_encoding.value(*m_fidelity, r + 1);
        if (fresh(config)) return hand_out(done[i].second, config, false);
        arm.dead = true;  // infeasible or already measured at the higher fidelity
      }
    }
    return std::nullopt;
  }

  std::optional<Configuration> new_arm() {
    std::optional<Configuration> config;
    for (int attempt = 0; attempt < kDrawAttempts && !config; ++attempt) {
      auto c = m_encoding.binned(m_design.next());
      if (m_fidelity) c[*m_fidelity] = m_encoding.value(*m_fidelity, 0);
      if (fresh(c) && risk_accepted(c)) config = std::move(c);
    }
    if (!config) config = fallback();  // the whole space, any fidelity, before giving up
    if (!config) return std::nullopt;
    m_arms.push_back({.center = *config});
    return hand_out(m_arms.size() - 1, *config, false);
  }

  Configuration hand_out(std::size_t arm, const Configuration& config, bool owed) {
    m_origin[config] = arm;
    ++m_arms[arm].out;
    if (owed) --m_arms[arm].owed;
    return config;
  }

  static std::size_t power(std::size_t r) {
    std::size_t p = 1;
    while (r-- > 0) p *= kEta;
    return p;
  }

  SobolSequence m_design;
  std::optional<std::size_t> m_fidelity;
  std::size_t m_top = kMaxRung;
  std::vector<Arm> m_arms;
  std::map<std::size_t, std::vector<std::pair<double, std::size_t>>> m_finished;  // rung -> (score, arm)
  std::unordered_map<Configuration, std::size_t, ConfigurationHash> m_origin;     // out -> arm
};

}  // namespace

std::unique_ptr<Strategy> make_hyperband_strategy(const StrategyOptions& options, const Space& space) {
  return std::make_unique<HyperbandStrategy>(options, space);
}

}  // namespace flotilla::search

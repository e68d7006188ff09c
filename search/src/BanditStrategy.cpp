// BanditStrategy.cpp — a meta-strategy that shares the budget among other strategies by
// their recent gains (the area-under-curve bandit of OpenTuner, Ansel et al. 2014).
//
// Each proposal goes to one arm (a strategy of kArms), chosen by its credit plus an
// exploration bonus: credit is the recency-weighted share of the arm's last kWindow
// proposals that improved on the best found so far, bonus = kExploration *
// sqrt(2 ln(total uses) / uses of the arm). Every arm is told every outcome, whoever proposed
// it, so each keeps learning from the whole history; a configuration handed out by one arm is
// reserved in all the others, so none proposes it again. An arm with nothing left is skipped.
#include <cmath>
#include <deque>

#include "Adaptive.h"

namespace flotilla::search {
namespace {

constexpr const char* kArms[] = {"bayes", "genetic", "local"};
constexpr std::size_t kWindow = 20;
constexpr double kExploration = 0.3;

class BanditStrategy final : public Strategy {
 public:
  BanditStrategy(const StrategyOptions& options, const Space& space) : Strategy(space, options) {
    std::uint64_t salt = 0;
    for (const char* name : kArms) {
      auto arm_options = options;
      arm_options.name = name;
      arm_options.seed = mix_seed(options.seed, 100 + salt++);
      m_arms.push_back({make_strategy(arm_options, space), {}, 0, false});
    }
  }
  std::string_view name() const override { return "bandit"; }

 protected:
  std::optional<Configuration> propose() override {
    while (true) {
      auto chosen = choose();
      if (!chosen) return std::nullopt;
      Arm& arm = m_arms[*chosen];
      auto batch = arm.strategy->ask(1);
      if (batch.empty()) {
        arm.exhausted = true;
        continue;
      }
      for (std::size_t a = 0; a < m_arms.size(); ++a)
        if (a != *chosen) m_arms[a].strategy->reserve(batch.front());
      ++arm.uses;
      m_origin[batch.front()] = *chosen;
      return batch.front();
    }
  }

  void observe(std::size_t index) override {
    const auto& o = history()[index];
    for (auto& arm : m_arms) {
      if (o.failed()) arm.strategy->tell(o.config, o.failure);
      else arm.strategy->tell(o.config, options().maximize ? -o.loss.front() : o.loss.front());
    }
    auto it = m_origin.find(o.config);
    if (it == m_origin.end()) return;  // told again, or told from outside (a resumed campaign)
    bool gain = !o.failed() && (!m_best || o.loss.front() < *m_best);
    if (!o.failed() && (!m_best || o.loss.front() < *m_best)) m_best = o.loss.front();
    auto& results = m_arms[it->second].results;
    results.push_back(gain);
    if (results.size() > kWindow) results.pop_front();
    m_origin.erase(it);
  }

 private:
  struct Arm {
    std::unique_ptr<Strategy> strategy;
    std::deque<bool> results;  // improved the best? oldest first
    std::size_t uses = 0;
    bool exhausted = false;
  };

  std::optional<std::size_t> choose() const {
    std::size_t total = 0;
    for (const auto& arm : m_arms) total += arm.uses;
    std::optional<std::size_t> chosen;
    double top = -1;
    for (std::size_t a = 0; a < m_arms.size(); ++a) {
      const Arm& arm = m_arms[a];
      if (arm.exhausted) continue;
      if (arm.uses == 0) return a;  // every arm once, in order
      double weighted = 0, weights = 0;  // area under the curve: recent results weigh more
      for (std::size_t i = 0; i < arm.results.size(); ++i) {
        weighted += static_cast<double>(i + 1) * arm.results[i];
        weights += static_cast<double>(i + 1);
      }
      double credit = weights > 0 ? weighted / weights : 0.0;
      double score = credit + kExploration * std::sqrt(2.0 * std::log(static_cast<double>(total)) / static_cast<double>(arm.uses));
      if (score > top) top = score, chosen = a;
    }
    return chosen;
  }

  std::vector<Arm> m_arms;
  std::unordered_map<Configuration, std::size_t, ConfigurationHash> m_origin;
  std::optional<double> m_best;
};

}  // namespace

std::unique_ptr<Strategy> make_bandit_strategy(const StrategyOptions& options, const Space& space) {
  return std::make_unique<BanditStrategy>(options, space);
}

}  // namespace flotilla::search

// Strategy.h — the ask/tell interface every search strategy implements.
//
// The scheduler asks for a batch of configurations, runs them, and tells the outcome of each:
// an objective value, or nullopt for a failed or rolled-back candidate. Strategies are
// registered by name in one explicit list (make_strategy) and take every random choice from
// their seed, so a campaign is reproducible from its file and seed.
// Invariants (kept by the Strategy base class for every strategy):
//  - ask() never returns a configuration that was asked or told before, nor one that violates a
//    constraint;
//  - ask(n) returns fewer than n (possibly none) only when the strategy has nothing new left.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "flotilla/search/Space.h"

namespace flotilla::search {

struct StrategyOptions {
  std::string name = "random";
  std::uint64_t seed = 0;
  bool maximize = true;
};

class Strategy {
 public:
  explicit Strategy(const Space& space) : m_space(space) {}
  virtual ~Strategy() = default;
  virtual std::string_view name() const = 0;

  std::vector<Configuration> ask(std::size_t n);
  void tell(const Configuration& config, std::optional<double> objective);
  bool seen(const Configuration& config) const;

 protected:
  // Proposes the next configuration not yet seen (the base class filters again), or nullopt
  // when nothing is left.
  virtual std::optional<Configuration> propose() = 0;
  virtual void observe(const Configuration& /*config*/, std::optional<double> /*objective*/) {}
  const Space& space() const { return m_space; }

 private:
  struct Hash {
    std::size_t operator()(const Configuration& c) const noexcept;
  };
  const Space& m_space;
  std::unordered_set<Configuration, Hash> m_seen;
};

// Throws std::invalid_argument naming the known strategies for an unknown name.
std::unique_ptr<Strategy> make_strategy(const StrategyOptions& options, const Space& space);
std::vector<std::string_view> strategy_names();

}  // namespace flotilla::search

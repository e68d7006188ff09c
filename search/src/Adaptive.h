// Adaptive.h — what every learning strategy shares: the encoding, a seeded random source,
// the failure model (hidden constraints) and the ranking of what was told.
//
// Invariants: the failure model always reflects the latest outcome of every told
// configuration (a rollback re-told as a failure rebuilds it); fresh() is the one test of
// "may be proposed" (feasible and never seen); fallback() enumerates what is left uniformly, so
// every adaptive strategy still visits a whole small space and reports its end truthfully.
#pragma once

#include <optional>
#include <vector>

#include "Encoding.h"
#include "Strategies.h"
#include "Surrogate.h"

namespace flotilla::search {

// How many draws a strategy makes for a fresh configuration near its pick before it falls back
// to fallback()'s uniform one.
inline constexpr int kDrawAttempts = 50;

class AdaptiveStrategy : public Strategy {
 public:
  AdaptiveStrategy(const Space& space, const StrategyOptions& options)
      : Strategy(space, options),
        m_encoding(space),
        m_rng(mix_seed(options.seed, 11)),
        m_source(space, mix_seed(options.seed, 12)),
        m_failures(m_encoding) {}

 protected:
  void observe(std::size_t index) override {
    const bool retold = index < m_modelled;  // told again: its old outcome is in the model
    if (retold) {
      m_failures.clear();
      m_modelled = 0;
    }
    for (; m_modelled < history().size(); ++m_modelled) {
      const auto& o = history()[m_modelled];
      m_failures.add(m_encoding.point(o.config), o.failed());
    }
    if (retold) recompute_best();
    else if (!history()[index].failed() && (!m_best || loss(index) < loss(*m_best))) m_best = index;
    on_observe(index);
  }
  virtual void on_observe(std::size_t /*index*/) {}

  bool fresh(const Configuration& c) const { return space().feasible(c) && !seen(c); }
  std::optional<Configuration> fallback() {
    return m_source.next([this](const Configuration& c) { return seen(c); });
  }
  // Keeps a candidate with probability 1 - p_fail: configurations like failed ones are
  // proposed less often, never ruled out (a failure may have been transient).
  bool risk_accepted(const Configuration& c) {
    return !m_failures.any_failure() || m_rng.unit() >= m_failures.p_fail(m_encoding.point(c));
  }
  // A random unseen feasible neighbour of `center` (differing in one parameter), configurations
  // like failed ones drawn less often; with `adjacent_first`, one level up or down is tried
  // before jumps to other values. nullopt when every neighbour has been seen.
  std::optional<Configuration> neighbour_of(const Configuration& center, bool adjacent_first) {
    for (bool adjacent : {true, false}) {
      if (adjacent && !adjacent_first) continue;
      std::vector<Configuration> options;
      for (auto& n : m_encoding.neighbours(center, adjacent))
        if (fresh(n)) options.push_back(std::move(n));
      m_rng.shuffle(options);
      for (const auto& n : options)
        if (risk_accepted(n)) return n;
      if (!options.empty()) return options.front();
    }
    return std::nullopt;
  }
  // The first objective's loss (single-objective strategies rank by it).
  double loss(std::size_t index) const { return history()[index].loss.front(); }
  std::optional<std::size_t> best() const { return m_best; }
  // Indices of successful observations, best first.
  std::vector<std::size_t> ranked() const {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < history().size(); ++i)
      if (!history()[i].failed()) out.push_back(i);
    std::stable_sort(out.begin(), out.end(), [&](std::size_t a, std::size_t b) { return loss(a) < loss(b); });
    return out;
  }

  Encoding m_encoding;
  Rng m_rng;
  RandomSource m_source;
  FailureModel m_failures;

 private:
  void recompute_best() {
    m_best.reset();
    for (std::size_t i = 0; i < history().size(); ++i)
      if (!history()[i].failed() && (!m_best || loss(i) < loss(*m_best))) m_best = i;
  }
  std::size_t m_modelled = 0;
  std::optional<std::size_t> m_best;
};

}  // namespace flotilla::search

// WarmStart.h — turns StrategyOptions::warm_start (outcomes measured elsewhere on the same
// space: another GPU, compiler or campaign) into a few configurations to try first.
//
// Advice, not history: a strategy proposes the picks in its initial design (each is measured here
// like any proposal), alternating with its space-filling points from the first pick on, and
// nothing of the warm start enters a model. Trust is checked as the picks are measured: once a
// pick has failed here, or more than half of the design's successes so far dominate it (one
// objective: it is worse than their median), the rest of the picks are dropped. So a warm start
// that ranks well puts a good incumbent in the model from the first fit, and one that misleads
// costs about one evaluation (never more than the picks).
// Invariants: only configurations of this space's grid (every value one of the parameter's
// values; a real one within its bounds) and feasible here are considered; failures there are
// never picked; picks are distinct and in rank order (best first; several objectives: by
// non-domination rank, then crowding distance), and differ from every earlier pick in two
// parameters or more as long as the best quarter of the ranking offers such a one.
#pragma once

#include <optional>
#include <vector>

#include "flotilla/search/Strategy.h"

namespace flotilla::search {

// Every value on the parameter's grid (int: one of its values; enum and ordinal: a choice index;
// real: within the bounds), one per parameter.
bool on_grid(const Space& space, const Configuration& config);

class WarmStart {
 public:
  WarmStart(const Space& space, const std::vector<Observation>& observations, std::size_t count);
  const std::vector<Configuration>& picks() const { return m_picks; }
  // Observations on the grid, feasible here and successful there (the ones ranked).
  std::size_t usable() const { return m_usable; }
  // The next pick `fresh` accepts (not yet seen by the strategy), in rank order, when one is
  // due: the first at once, each later one after a design point (`asked`: the strategy's
  // history and pending configurations, picks included) and only while no measured pick has
  // misled (see above). nullopt: propose a design point instead.
  template <class Fresh>
  std::optional<Configuration> next(const std::vector<Observation>& history, std::size_t asked, Fresh&& fresh) {
    if (m_next >= m_picks.size() || asked < 2 * m_handed.size() || misled(history)) return std::nullopt;
    while (m_next < m_picks.size()) {
      const auto& c = m_picks[m_next++];
      if (fresh(c)) return m_handed.push_back(c), c;
    }
    return std::nullopt;
  }
  // A pick handed out has failed here, or more than half of the other successes dominate it.
  bool misled(const std::vector<Observation>& history) const;

 private:
  std::vector<Configuration> m_picks;
  std::vector<Configuration> m_handed;  // picks proposed so far
  std::size_t m_usable = 0;
  std::size_t m_next = 0;
};

// How many picks a strategy whose initial design has `initial` configurations takes from a warm
// start: a third of the design, 2 to 4 (what a misleading warm start may cost).
std::size_t warm_start_picks(std::size_t initial);

}  // namespace flotilla::search

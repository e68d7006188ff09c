// Strategies.h — factories of the built-in strategies, used only by the registry.
#pragma once

#include <memory>

#include "flotilla/search/Strategy.h"

namespace flotilla::search {

using Factory = std::unique_ptr<Strategy> (*)(const StrategyOptions&, const Space&);

// A model-based strategy's own account of what it has promised since the best last improved:
// the sum of the scores of the proposals it made since then (for `bayes`, expected improvement
// of the log objective times (1 - p_fail)^2: 0.05 promises about 5%). `bayes-genetic` and
// `bayes-local` read it to tell a stalled model that expects little (it may well be right) from
// one whose promises are not kept (RelayStrategy.cpp).
class ModelPromise {
 public:
  virtual ~ModelPromise() = default;
  virtual double promised_since_gain() const = 0;
};

std::unique_ptr<Strategy> make_grid_strategy(const StrategyOptions& options, const Space& space);
std::unique_ptr<Strategy> make_random_strategy(const StrategyOptions& options, const Space& space);
std::unique_ptr<Strategy> make_sobol_strategy(const StrategyOptions& options, const Space& space);
std::unique_ptr<Strategy> make_bayes_strategy(const StrategyOptions& options, const Space& space);
std::unique_ptr<Strategy> make_bayes_escape_strategy(const StrategyOptions& options, const Space& space);
std::unique_ptr<Strategy> make_bayes_climb_strategy(const StrategyOptions& options, const Space& space);
std::unique_ptr<Strategy> make_bayes_local_strategy(const StrategyOptions& options, const Space& space);
std::unique_ptr<Strategy> make_bayes_genetic_strategy(const StrategyOptions& options, const Space& space);
std::unique_ptr<Strategy> make_genetic_strategy(const StrategyOptions& options, const Space& space);
std::unique_ptr<Strategy> make_annealing_strategy(const StrategyOptions& options, const Space& space);
std::unique_ptr<Strategy> make_local_strategy(const StrategyOptions& options, const Space& space);
std::unique_ptr<Strategy> make_hyperband_strategy(const StrategyOptions& options, const Space& space);
std::unique_ptr<Strategy> make_bandit_strategy(const StrategyOptions& options, const Space& space);
std::unique_ptr<Strategy> make_nsga2_strategy(const StrategyOptions& options, const Space& space);
std::unique_ptr<Strategy> make_parego_strategy(const StrategyOptions& options, const Space& space);

}  // namespace flotilla::search

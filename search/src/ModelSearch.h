// ModelSearch.h — the parts of a Gaussian-process proposal that model-based strategies share:
// which successes the GP sees on a long campaign, what it believes of pending and failed
// configurations (the kriging believer), the pool of candidates, and the pruned acquisition by
// expected improvement times the chance of not failing.
//
// `bayes` (and its variants) and `parego` both call these.
// Invariants: the GP never sees a failure's value (failed configurations are believed to be what
// it predicts, no better than the worst target); the pool holds only fresh configurations, each
// once; acquire() returns the pool's best score exactly (the pruning only skips candidates whose
// bound cannot win).
#pragma once

#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "Encoding.h"
#include "Surrogate.h"
#include "flotilla/search/Strategy.h"

namespace flotilla::search::model {

constexpr std::size_t kScoreAll = 3000;  // unseen feasible configurations scored exhaustively
constexpr std::size_t kSample = 500;     // otherwise: uniform candidates per proposal
constexpr std::size_t kElite = 5;        // incumbents whose neighbourhoods join the pool
constexpr std::size_t kMutations = 30;   // mutations per incumbent
constexpr double kReselectGrowth = 1.2;  // re-choose GP hyperparameters as the data grows by 20%
constexpr double kFailurePower = 2.0;    // a failed evaluation is wasted: weigh the risk twice
// The GP costs O(n^3) per proposal: it sees the kModelBest best successes, kModelRest others
// spread evenly over the rest (the shape of the bad regions) and the kModelFailed latest failures.
constexpr std::size_t kModelBest = 200, kModelRest = 100, kModelFailed = 100;

using Fresh = std::function<bool(const Configuration&)>;

// Of successes ordered best first, the ones the GP sees (all of them up to 300).
std::vector<std::size_t> model_subset(const std::vector<std::size_t>& best_first);

// Fits the GP to (x, y) (re-choosing hyperparameters when `select`), then enters every pending
// configuration with its predicted target, and the latest kModelFailed failures of `history`
// with theirs but no better than the worst of y.
void fit_believing(GaussianProcess& gp, const Encoding& encoding, std::vector<Point> x, std::vector<double> y, bool select,
                   const std::vector<Configuration>& pending, const std::vector<Observation>& history);

// Every fresh feasible configuration when at most kScoreAll remain beyond the `told` ones, else a
// uniform sample of kSample plus the neighbourhoods and mutations of the `elite` (best first).
std::vector<Configuration> candidate_pool(const Space& space, const Encoding& encoding, Rng& rng, std::size_t told,
                                          const std::vector<Configuration>& elite, const Fresh& fresh);

// The pool's best candidate by expected improvement below `reference` (default: the GP's best
// target) times (1 - p_fail)^kFailurePower, and its score; nullopt for an empty pool.
std::optional<std::pair<Configuration, double>> acquire(const GaussianProcess& gp, const Encoding& encoding,
                                                        const FailureModel& failures, std::vector<Configuration> pool,
                                                        std::optional<double> reference = std::nullopt);

}  // namespace flotilla::search::model

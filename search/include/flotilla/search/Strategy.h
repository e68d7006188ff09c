// Strategy.h — the ask/tell interface every search strategy implements.
//
// The scheduler asks for a batch of configurations, runs them, and tells the outcome of each:
// an objective value, or nullopt for a failed or rolled-back candidate (a "hidden constraint"
// that adaptive strategies learn from), or, when the caller knows why it failed, a Failure
// kind. Multi-objective searches tell a vector of objectives instead. Strategies are registered by name in one explicit list (make_strategy) and take
// every random choice from their seed, so a campaign is reproducible from its file and seed.
// Invariants (kept by the Strategy base class for every strategy):
//  - ask() never returns a configuration that was asked, told or reserved before, nor one that
//    violates a constraint;
//  - ask(n) returns fewer than n (possibly none) only when the strategy has nothing new left,
//    or, on a space too large to enumerate, found nothing feasible and new in
//    Space::kMaxRejections tries in a row (a constraint that holds almost nowhere);
//  - a configuration told twice (measured, then rolled back) keeps only its latest outcome;
//  - an objective that is NaN or infinite is told as a failure.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "flotilla/search/Space.h"

namespace flotilla::search {

// Why a configuration failed, when the caller knows: it did not build (compile or link), it
// crashed or returned an error at run time, it ran past its time limit, its output failed
// verification, or the device refused it (e.g. too many threads per block or too much shared
// memory: a constraint nobody wrote down). `unknown` is what tell(config, std::nullopt) says.
// Every kind is a failure to every strategy (history()'s loss is empty); a strategy may weigh
// kinds differently by reading Observation::failure, and one that ignores it behaves exactly as
// with nullopt. The scheduler's trial statuses map onto these (build_failed -> build, ...).
enum class Failure { unknown, build, crash, timeout, verification, invalid };
std::string_view to_string(Failure failure);

struct ConfigurationHash {
  std::size_t operator()(const Configuration& c) const noexcept;
};

// One told outcome. `loss` holds every objective turned into "lower is better" (a maximised
// objective is negated); it is empty when the configuration failed.
struct Observation {
  Configuration config;
  std::vector<double> loss;
  Failure failure = Failure::unknown;  // why it failed, when failed() and the caller said
  bool failed() const { return loss.empty(); }
};

struct StrategyOptions {
  std::string name = "random";
  std::uint64_t seed = 0;
  bool maximize = true;
  // Multi-objective: the direction of each objective (empty: every one follows `maximize`).
  std::vector<bool> maximize_objectives;
  // Successive halving: the parameter whose values, in the order declared, are ever more
  // faithful (and costly) evaluations, e.g. a problem size. Empty: rungs spend evaluations.
  std::string fidelity;
  // Warm start: outcomes measured elsewhere on the same space (another GPU, compiler or finished
  // campaign), in this run's loss convention (Observation::loss, "lower is better"; empty loss =
  // it failed there). They are advice, not history: none of them is "seen" (each may be proposed
  // and must be measured here), history() never holds them, and a strategy that does not use them
  // behaves exactly as without. A configuration off this space's grid or infeasible here is
  // ignored. The same kernel can rank differently on other hardware, so a strategy that uses them
  // must recover when they mislead. `bayes` (so `bayes-escape`, `bayes-climb`, `bayes-genetic`,
  // `bayes-local` and `bandit`'s bayes arm too) and `parego` use them: the best few among their
  // first proposals, checked as they are measured (search/src/WarmStart.h); the other strategies
  // ignore them.
  std::vector<Observation> warm_start;
};

class Strategy {
 public:
  Strategy(const Space& space, const StrategyOptions& options);
  virtual ~Strategy() = default;
  virtual std::string_view name() const = 0;

  std::vector<Configuration> ask(std::size_t n);
  void tell(const Configuration& config, std::optional<double> objective);
  // A failure whose kind is known; the same as nullopt to a strategy that ignores kinds.
  void tell(const Configuration& config, Failure failure);
  // Several objectives of one configuration; empty = failed.
  void tell_objectives(const Configuration& config, const std::vector<double>& objectives);
  // Marks a configuration as taken elsewhere (e.g. by another strategy of an ensemble), so it
  // is never proposed; its outcome may be told later.
  void reserve(const Configuration& config);
  bool seen(const Configuration& config) const;

  // The non-dominated observations (one objective: every observation with the best loss), in
  // the order they were first told.
  std::vector<Observation> pareto_front() const;
  const std::vector<Observation>& history() const { return m_history; }
  // Asked or reserved, not yet told: strategies keep batches away from these.
  const std::vector<Configuration>& pending() const { return m_pending; }

 protected:
  // Proposes the next configuration not yet seen (the base class filters again), or nullopt
  // when nothing is left.
  virtual std::optional<Configuration> propose() = 0;
  // Called after history() holds the outcome; `index` is its position there. A configuration
  // told again (a rollback) keeps its index with the new outcome.
  virtual void observe(std::size_t /*index*/) {}
  const Space& space() const { return m_space; }
  const StrategyOptions& options() const { return m_options; }

 private:
  void record(const Configuration& config, std::vector<double> loss, Failure failure = Failure::unknown);

  const Space& m_space;
  StrategyOptions m_options;
  std::unordered_set<Configuration, ConfigurationHash> m_seen;
  std::unordered_map<Configuration, std::size_t, ConfigurationHash> m_index;
  std::vector<Observation> m_history;
  std::vector<Configuration> m_pending;
};

// Throws std::invalid_argument naming the known strategies for an unknown name.
std::unique_ptr<Strategy> make_strategy(const StrategyOptions& options, const Space& space);
std::vector<std::string_view> strategy_names();
// Whether the registered strategy reads StrategyOptions::warm_start (the others ignore it).
bool uses_warm_start(std::string_view name);

}  // namespace flotilla::search

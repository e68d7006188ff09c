// Strategy.cpp — the base class's bookkeeping and the explicit registry of strategies.
//
// The base class owns the invariants every strategy relies on: the seen set (asked, told or
// reserved), the history of outcomes in "lower is better" form, and the pending list (asked,
// not told) that batch-aware strategies keep new proposals away from.
#include "flotilla/search/Strategy.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <stdexcept>

#include <fmt/format.h>

#include "Pareto.h"
#include "Strategies.h"

namespace flotilla::search {

std::size_t ConfigurationHash::operator()(const Configuration& c) const noexcept {
  std::size_t h = c.size();
  for (double v : c) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof bits);
    h ^= std::hash<std::uint64_t>{}(bits) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  }
  return h;
}

Strategy::Strategy(const Space& space, const StrategyOptions& options) : m_space(space), m_options(options) {}

std::vector<Configuration> Strategy::ask(std::size_t n) {
  std::vector<Configuration> batch;
  while (batch.size() < n) {
    auto next = propose();
    if (!next) break;
    if (m_seen.contains(*next) || !m_space.feasible(*next)) continue;
    m_seen.insert(*next);
    m_pending.push_back(*next);
    batch.push_back(std::move(*next));
  }
  return batch;
}

void Strategy::tell(const Configuration& config, std::optional<double> objective) {
  if (!objective) return record(config, {});
  record(config, {m_options.maximize ? -*objective : *objective});
}

void Strategy::tell(const Configuration& config, Failure failure) { record(config, {}, failure); }

std::string_view to_string(Failure failure) {
  switch (failure) {
    case Failure::unknown: return "unknown";
    case Failure::build: return "build";
    case Failure::crash: return "crash";
    case Failure::timeout: return "timeout";
    case Failure::verification: return "verification";
    case Failure::invalid: return "invalid";
  }
  return "unknown";
}

void Strategy::tell_objectives(const Configuration& config, const std::vector<double>& objectives) {
  std::vector<double> loss = objectives;
  for (std::size_t i = 0; i < loss.size(); ++i) {
    bool maximize = i < m_options.maximize_objectives.size() ? m_options.maximize_objectives[i] : m_options.maximize;
    if (maximize) loss[i] = -loss[i];
  }
  record(config, std::move(loss));
}

void Strategy::reserve(const Configuration& config) {
  if (m_seen.insert(config).second) m_pending.push_back(config);
}

void Strategy::record(const Configuration& config, std::vector<double> loss, Failure failure) {
  // A NaN or infinite objective is a failure (a broken measurement), never a value: NaN would
  // break every ranking and an infinity every model fit.
  if (std::any_of(loss.begin(), loss.end(), [](double v) { return !std::isfinite(v); })) loss.clear();
  if (!loss.empty()) failure = Failure::unknown;  // a kind belongs to failures only
  m_seen.insert(config);
  auto pending = std::find(m_pending.begin(), m_pending.end(), config);
  if (pending != m_pending.end()) m_pending.erase(pending);
  auto [it, added] = m_index.try_emplace(config, m_history.size());
  if (added) m_history.push_back({config, std::move(loss), failure});
  else m_history[it->second].loss = std::move(loss), m_history[it->second].failure = failure;
  observe(it->second);
}

bool Strategy::seen(const Configuration& config) const { return m_seen.contains(config); }

std::vector<Observation> Strategy::pareto_front() const {
  std::vector<Observation> front;
  for (auto i : non_dominated(m_history)) front.push_back(m_history[i]);
  return front;
}

namespace {
struct Entry {
  std::string_view name;
  std::function<std::unique_ptr<Strategy>(const StrategyOptions&, const Space&)> make;
  bool uses_warm_start = false;  // reads StrategyOptions::warm_start (WarmStart.h)
};
// The one list of strategies. Add new ones here (no static self-registration: linkers drop it).
const std::vector<Entry>& registry() {
  static const std::vector<Entry> entries = {
      {"grid", make_grid_strategy},
      {"random", make_random_strategy},
      {"sobol", make_sobol_strategy},
      {"bayes", make_bayes_strategy, true},
      {"genetic", make_genetic_strategy},
      {"annealing", make_annealing_strategy},
      {"local", make_local_strategy},
      {"hyperband", make_hyperband_strategy},
      {"bandit", make_bandit_strategy, true},
      {"nsga2", make_nsga2_strategy},
      {"bayes-escape", make_bayes_escape_strategy, true},
      {"parego", make_parego_strategy, true},
      {"bayes-climb", make_bayes_climb_strategy, true},
      {"bayes-local", make_bayes_local_strategy, true},
      {"bayes-genetic", make_bayes_genetic_strategy, true},
  };
  return entries;
}
}  // namespace

std::unique_ptr<Strategy> make_strategy(const StrategyOptions& options, const Space& space) {
  for (const auto& e : registry())
    if (e.name == options.name) return e.make(options, space);
  throw std::invalid_argument(fmt::format("unknown strategy '{}' (known: {})", options.name, fmt::join(strategy_names(), ", ")));
}

bool uses_warm_start(std::string_view name) {
  for (const auto& e : registry())
    if (e.name == name) return e.uses_warm_start;
  return false;
}

std::vector<std::string_view> strategy_names() {
  std::vector<std::string_view> names;
  for (const auto& e : registry()) names.push_back(e.name);
  return names;
}

}  // namespace flotilla::search

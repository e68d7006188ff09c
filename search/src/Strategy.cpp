// Strategy.cpp — the base class's bookkeeping and the explicit registry of strategies.
#include "flotilla/search/Strategy.h"

#include <cstring>
#include <functional>
#include <stdexcept>

#include <fmt/format.h>

#include "Strategies.h"

namespace flotilla::search {

std::size_t Strategy::Hash::operator()(const Configuration& c) const noexcept {
  std::size_t h = c.size();
  for (double v : c) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof bits);
    h ^= std::hash<std::uint64_t>{}(bits) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  }
  return h;
}

std::vector<Configuration> Strategy::ask(std::size_t n) {
  std::vector<Configuration> batch;
  while (batch.size() < n) {
    auto next = propose();
    if (!next) break;
    if (m_seen.contains(*next) || !m_space.feasible(*next)) continue;
    m_seen.insert(*next);
    batch.push_back(std::move(*next));
  }
  return batch;
}

void Strategy::tell(const Configuration& config, std::optional<double> objective) {
  m_seen.insert(config);
  observe(config, objective);
}

bool Strategy::seen(const Configuration& config) const { return m_seen.contains(config); }

namespace {
struct Entry {
  std::string_view name;
  std::function<std::unique_ptr<Strategy>(const StrategyOptions&, const Space&)> make;
};
// The one list of strategies. Add new ones here (no static self-registration: linkers drop it).
const std::vector<Entry>& registry() {
  static const std::vector<Entry> entries = {
      {"grid", [](const StrategyOptions&, const Space& s) { return make_grid_strategy(s); }},
      {"random", [](const StrategyOptions& o, const Space& s) { return make_random_strategy(s, o.seed); }},
  };
  return entries;
}
}  // namespace

std::unique_ptr<Strategy> make_strategy(const StrategyOptions& options, const Space& space) {
  for (const auto& e : registry())
    if (e.name == options.name) return e.make(options, space);
  throw std::invalid_argument(fmt::format("unknown strategy '{}' (known: {})", options.name, fmt::join(strategy_names(), ", ")));
}

std::vector<std::string_view> strategy_names() {
  std::vector<std::string_view> names;
  for (const auto& e : registry()) names.push_back(e.name);
  return names;
}

}  // namespace flotilla::search

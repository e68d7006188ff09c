// WarmStart.cpp — filtering, ranking and the diverse choice of a warm start's picks.
#include "WarmStart.h"

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "Pareto.h"

namespace flotilla::search {

bool on_grid(const Space& space, const Configuration& config) {
  const auto& params = space.parameters();
  if (config.size() != params.size()) return false;
  for (std::size_t d = 0; d < params.size(); ++d) {
    const auto& p = params[d];
    const double v = config[d];
    if (!std::isfinite(v)) return false;
    switch (p.kind) {
      case ParamKind::integer:
      case ParamKind::enumeration:
      case ParamKind::ordinal:
        if (!p.index_of(v)) return false;
        break;
      case ParamKind::real:
        if (v < std::min(p.lo, p.hi) || v > std::max(p.lo, p.hi)) return false;
        break;
    }
  }
  return true;
}

namespace {

// Indices into `usable`, best first: by the loss with one objective, else by non-domination
// rank and then crowding distance (the ends and sparse parts of a front first).
std::vector<std::size_t> ranking(const std::vector<const Observation*>& usable) {
  std::vector<std::size_t> order;
  const bool single = std::all_of(usable.begin(), usable.end(), [](const auto* o) { return o->loss.size() == 1; });
  if (single) {
    for (std::size_t i = 0; i < usable.size(); ++i) order.push_back(i);
    std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return usable[a]->loss[0] < usable[b]->loss[0]; });
    return order;
  }
  std::vector<std::vector<double>> losses;
  for (const auto* o : usable) losses.push_back(o->loss);
  for (const auto& front : pareto_fronts(losses)) {
    auto distance = crowding(losses, front);
    std::vector<std::size_t> k(front.size());
    for (std::size_t i = 0; i < k.size(); ++i) k[i] = i;
    std::stable_sort(k.begin(), k.end(), [&](auto a, auto b) { return distance[a] > distance[b]; });
    for (auto i : k) order.push_back(front[i]);
  }
  return order;
}

std::size_t differing(const Configuration& a, const Configuration& b) {
  std::size_t n = 0;
  for (std::size_t d = 0; d < a.size(); ++d) n += a[d] != b[d];
  return n;
}

}  // namespace

WarmStart::WarmStart(const Space& space, const std::vector<Observation>& observations, std::size_t count) {
  std::vector<const Observation*> usable;
  std::unordered_set<Configuration, ConfigurationHash> taken;
  for (const auto& o : observations)
    if (!o.failed() && on_grid(space, o.config) && space.feasible(o.config) && taken.insert(o.config).second) usable.push_back(&o);
  m_usable = usable.size();
  if (usable.empty() || count == 0) return;
  const auto order = ranking(usable);
  // Diverse first: from the best quarter (at least 4 x count), each pick differs from every
  // earlier one in two parameters or more; then plain rank order fills what is left.
  const std::size_t window = std::min(order.size(), std::max(4 * count, order.size() / 4));
  std::vector<bool> picked(order.size(), false);
  for (std::size_t k = 0; k < window && m_picks.size() < count; ++k) {
    const auto& c = usable[order[k]]->config;
    if (std::all_of(m_picks.begin(), m_picks.end(), [&](const Configuration& p) { return differing(p, c) >= 2; }))
      m_picks.push_back(c), picked[k] = true;
  }
  for (std::size_t k = 0; k < order.size() && m_picks.size() < count; ++k)
    if (!picked[k]) m_picks.push_back(usable[order[k]]->config);
}

bool WarmStart::misled(const std::vector<Observation>& history) const {
  if (m_handed.empty()) return false;
  auto handed = [&](const Configuration& c) { return std::find(m_handed.begin(), m_handed.end(), c) != m_handed.end(); };
  std::vector<const Observation*> design;  // this run's other successes
  for (const auto& o : history)
    if (!o.failed() && !handed(o.config)) design.push_back(&o);
  for (const auto& o : history) {
    if (!handed(o.config)) continue;
    if (o.failed()) return true;
    const auto better = std::count_if(design.begin(), design.end(), [&](const Observation* d) { return dominates(d->loss, o.loss); });
    if (2 * static_cast<std::size_t>(better) > design.size()) return true;
  }
  return false;
}

std::size_t warm_start_picks(std::size_t initial) { return std::clamp<std::size_t>(initial / 3, 2, 4); }

}  // namespace flotilla::search

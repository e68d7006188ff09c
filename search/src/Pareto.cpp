// Pareto.cpp — fast non-dominated sort and crowding distance (Deb et al., NSGA-II, 2002), and
// the exact hypervolume of a set of points in 2 or 3 objectives.
#include "Pareto.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace flotilla::search {

bool dominates(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;  // different objectives are not comparable
  bool better = false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] > b[i]) return false;
    if (a[i] < b[i]) better = true;
  }
  return better;
}

std::vector<std::size_t> non_dominated(const std::vector<Observation>& history) {
  std::vector<std::size_t> front;
  for (std::size_t i = 0; i < history.size(); ++i) {
    if (history[i].failed()) continue;
    bool dominated = false;
    for (std::size_t j = 0; j < history.size() && !dominated; ++j)
      dominated = j != i && !history[j].failed() && history[j].loss.size() == history[i].loss.size() &&
                  dominates(history[j].loss, history[i].loss);
    if (!dominated) front.push_back(i);
  }
  return front;
}

std::vector<std::vector<std::size_t>> pareto_fronts(const std::vector<std::vector<double>>& losses) {
  const std::size_t n = losses.size();
  std::vector<std::vector<std::size_t>> dominated_by(n);
  std::vector<std::size_t> count(n, 0);
  std::vector<std::vector<std::size_t>> fronts(1);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      if (dominates(losses[i], losses[j])) dominated_by[i].push_back(j);
      else if (dominates(losses[j], losses[i])) ++count[i];
    }
    if (count[i] == 0) fronts[0].push_back(i);
  }
  while (!fronts.back().empty()) {
    std::vector<std::size_t> next;
    for (auto i : fronts.back())
      for (auto j : dominated_by[i])
        if (--count[j] == 0) next.push_back(j);
    std::sort(next.begin(), next.end());
    fronts.push_back(std::move(next));
  }
  fronts.pop_back();
  return fronts;
}

std::vector<double> crowding(const std::vector<std::vector<double>>& losses, const std::vector<std::size_t>& front) {
  std::vector<double> distance(front.size(), 0.0);
  if (front.empty()) return distance;
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<std::size_t> order(front.size());
  for (std::size_t m = 0; m < losses[front[0]].size(); ++m) {
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return losses[front[a]][m] < losses[front[b]][m]; });
    double span = losses[front[order.back()]][m] - losses[front[order.front()]][m];
    distance[order.front()] = distance[order.back()] = inf;
    if (!(span > 0)) continue;
    for (std::size_t k = 1; k + 1 < order.size(); ++k)
      distance[order[k]] += (losses[front[order[k + 1]]][m] - losses[front[order[k - 1]]][m]) / span;
  }
  return distance;
}

namespace {
// 2-D sweep: by the first objective ascending, each point adds the strip between its second
// objective and the lowest second objective of the points before it.
double hypervolume_2d(std::vector<std::pair<double, double>> points, double r0, double r1) {
  std::sort(points.begin(), points.end());
  double volume = 0, ceiling = r1;
  for (const auto& [x, y] : points)
    if (y < ceiling) volume += (r0 - x) * (ceiling - y), ceiling = y;
  return volume;
}
}  // namespace

double hypervolume(const std::vector<std::vector<double>>& points, const std::vector<double>& reference) {
  const std::size_t m = reference.size();
  if (m < 1 || m > 3) throw std::invalid_argument("hypervolume: only 1, 2 or 3 objectives");
  std::vector<const std::vector<double>*> inside;
  for (const auto& p : points) {
    if (p.size() != m) throw std::invalid_argument("hypervolume: a point's size differs from the reference's");
    bool below = true;
    for (std::size_t i = 0; i < m; ++i) below = below && p[i] < reference[i];
    if (below) inside.push_back(&p);
  }
  if (inside.empty()) return 0.0;
  if (m == 1) {
    double best = reference[0];
    for (const auto* p : inside) best = std::min(best, (*p)[0]);
    return reference[0] - best;
  }
  if (m == 2) {
    std::vector<std::pair<double, double>> xy;
    for (const auto* p : inside) xy.emplace_back((*p)[0], (*p)[1]);
    return hypervolume_2d(std::move(xy), reference[0], reference[1]);
  }
  // 3-D: between consecutive third-objective levels the dominated slice is the 2-D
  // hypervolume of the points at or below the level.
  std::stable_sort(inside.begin(), inside.end(), [](const auto* a, const auto* b) { return (*a)[2] < (*b)[2]; });
  double volume = 0;
  std::vector<std::pair<double, double>> xy;
  for (std::size_t i = 0; i < inside.size(); ++i) {
    xy.emplace_back((*inside[i])[0], (*inside[i])[1]);
    const double top = i + 1 < inside.size() ? (*inside[i + 1])[2] : reference[2];
    if (top > (*inside[i])[2]) volume += hypervolume_2d(xy, reference[0], reference[1]) * (top - (*inside[i])[2]);
  }
  return volume;
}

}  // namespace flotilla::search

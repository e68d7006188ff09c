// Pareto.cpp — fast non-dominated sort and crowding distance (Deb et al., NSGA-II, 2002).
#include "Pareto.h"

#include <algorithm>
#include <limits>

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

}  // namespace flotilla::search

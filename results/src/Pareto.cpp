// Pareto.cpp — non-dominated sorting of candidates over several goals (see Pareto.h).
#include "flotilla/results/Pareto.h"

#include <algorithm>

namespace flotilla::results {

bool dominates(const std::vector<double>& a, const std::vector<double>& b, const std::vector<Goal>& goals) {
  bool strictly = false;
  for (std::size_t g = 0; g < goals.size(); ++g) {
    if (better(b[g], a[g], goals[g].maximize)) return false;
    if (better(a[g], b[g], goals[g].maximize)) strictly = true;
  }
  return strictly;
}

std::vector<ParetoPoint> pareto_fronts(const CampaignSummary& summary, const std::vector<Goal>& goals,
                                       bool verified_only) {
  std::vector<ParetoPoint> points;
  for (std::size_t i = 0; i < summary.candidates.size(); ++i) {
    const auto& c = summary.candidates[i];
    if (c.status == CandidateStatus::rolled_back || (verified_only && c.status != CandidateStatus::verified)) continue;
    ParetoPoint p{.candidate = i};
    for (const auto& goal : goals) {
      auto v = goal_value(c, goal, summary.campaign);
      if (!v) break;
      p.values.push_back(*v);
    }
    if (p.values.size() == goals.size()) points.push_back(std::move(p));
  }
  // dominated_by[i]: how many points dominate i; beats[i]: the points i dominates.
  const auto n = points.size();
  std::vector<std::size_t> dominated_by(n, 0);
  std::vector<std::vector<std::size_t>> beats(n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) {
      if (dominates(points[i].values, points[j].values, goals)) {
        beats[i].push_back(j);
        ++dominated_by[j];
      } else if (dominates(points[j].values, points[i].values, goals)) {
        beats[j].push_back(i);
        ++dominated_by[i];
      }
    }
  std::vector<std::size_t> current;
  for (std::size_t i = 0; i < n; ++i)
    if (dominated_by[i] == 0) current.push_back(i);
  for (std::size_t front = 1; !current.empty(); ++front) {
    std::vector<std::size_t> next;
    for (auto i : current) {
      points[i].front = front;
      for (auto j : beats[i])
        if (--dominated_by[j] == 0) next.push_back(j);
    }
    current = std::move(next);
  }
  const bool first_max = !goals.empty() && goals.front().maximize;
  std::stable_sort(points.begin(), points.end(), [&](const ParetoPoint& a, const ParetoPoint& b) {
    if (a.front != b.front) return a.front < b.front;
    return !goals.empty() && better(a.values[0], b.values[0], first_max);
  });
  return points;
}

}  // namespace flotilla::results

// Pareto.h — dominance, non-dominated sorting, crowding distance and hypervolume over loss
// vectors (lower is better in every objective), for NSGA-II, ParEGO's tests and bench, and
// Strategy::pareto_front.
#pragma once

#include <cstddef>
#include <vector>

#include "flotilla/search/Strategy.h"

namespace flotilla::search {

// a dominates b: no worse in every objective and better in at least one.
bool dominates(const std::vector<double>& a, const std::vector<double>& b);
// Indices of the successful observations that nothing dominates, in history order.
std::vector<std::size_t> non_dominated(const std::vector<Observation>& history);
// Fronts of the given loss vectors: fronts[0] is non-dominated, fronts[1] is non-dominated
// once fronts[0] is removed, and so on (Deb et al.'s fast non-dominated sort).
std::vector<std::vector<std::size_t>> pareto_fronts(const std::vector<std::vector<double>>& losses);
// Crowding distance of each member of one front (infinite at the ends of every objective).
std::vector<double> crowding(const std::vector<std::vector<double>>& losses, const std::vector<std::size_t>& front);
// The volume dominated by the points and bounded by the reference point (lower is better:
// only points below the reference in every objective count), exact for 1, 2 and 3 objectives
// (2-D: one sweep, O(n log n); 3-D: 2-D slices along the third, O(n^2 log n)). Throws
// std::invalid_argument for more objectives or a point whose size differs from the reference's.
double hypervolume(const std::vector<std::vector<double>>& points, const std::vector<double>& reference);

}  // namespace flotilla::search

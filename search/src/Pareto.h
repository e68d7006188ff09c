// Pareto.h — dominance, non-dominated sorting and crowding distance over loss vectors
// (lower is better in every objective), for NSGA-II and Strategy::pareto_front.
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

}  // namespace flotilla::search

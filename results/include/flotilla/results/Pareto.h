// Pareto.h — multi-objective fronts: which candidates no other candidate beats on every goal.
//
// Rules:
//  - Candidate a dominates b when a is at least as good as b on every goal and strictly better
//    on one. Front 1 holds the candidates nothing dominates; front k + 1 those dominated only by
//    fronts 1..k (non-dominated sorting, as NSGA-II ranks a population).
//  - Only candidates with a value for every goal take part. Rolled-back candidates never do (their
//    output is wrong, so their speed is no trade-off); `verified_only` also drops unverified ones.
//  - The cost is O(goals · n²) comparisons: fine for the thousands of candidates of a tuning
//    campaign, and it works for any number of goals.
#pragma once

#include <cstddef>
#include <vector>

#include "flotilla/results/Columns.h"

namespace flotilla::results {

struct ParetoPoint {
  std::size_t candidate = 0;   // index into CampaignSummary::candidates
  std::vector<double> values;  // one per goal, in the goals' order
  std::size_t front = 0;       // 1 = non-dominated
};

// True when a dominates b under `goals` (a and b hold one value per goal).
bool dominates(const std::vector<double>& a, const std::vector<double>& b, const std::vector<Goal>& goals);

// Every eligible candidate with its front, ordered by front, then by the first goal (best first).
std::vector<ParetoPoint> pareto_fronts(const CampaignSummary& summary, const std::vector<Goal>& goals,
                                       bool verified_only);

}  // namespace flotilla::results

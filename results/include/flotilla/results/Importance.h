// Importance.h — how much each parameter matters: a variance-based (first-order) importance.
//
// For a parameter P and a metric y over the candidates that have y, the importance is the share
// of y's variance explained by P alone: Var(E[y | P]) / Var(y), the correlation ratio η², which
// is the first-order Sobol index estimated from the samples at hand. It lies in [0, 1]; what the
// first-order shares leave of 1 is the interactions' share (plus noise).
//
// Why this estimator: it needs no model and no extra runs, so it works on any finished campaign,
// and for a full grid it is exactly the main-effect share of a two-way ANOVA. On a random sample
// correlated parameters can share credit; the docs say so.
//
// Rules: rolled-back candidates count (their measurement is valid even though their output is
// not); explore_failed and pending ones have no value and do not count. Real-valued parameters
// are grouped by their canonical text, like every other kind.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "flotilla/results/Columns.h"

namespace flotilla::results {

struct ValueEffect {
  std::string value;      // the parameter's value, as in the configuration text
  std::size_t count = 0;  // candidates with this value
  double mean = 0;        // mean of the metric over them
};

struct ParameterImportance {
  std::string name;
  double importance = 0;            // η², in [0, 1]
  std::vector<ValueEffect> values;  // best mean first (in the goal's direction)
};

struct ImportanceReport {
  Goal goal;
  std::size_t samples = 0;
  double mean = 0;
  double variance = 0;                          // population variance of the metric
  std::vector<ParameterImportance> parameters;  // most important first
  double interactions = 0;                      // 1 - sum of importances, at least 0
};

ImportanceReport parameter_importance(const CampaignSummary& summary, const Goal& goal);

}  // namespace flotilla::results

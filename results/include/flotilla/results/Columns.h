// Columns.h — the values the analysis views read off a candidate: its parameters (from the
// canonical "name=value name=value" text) and its metrics, each judged in a direction.
//
// Rules:
//  - The campaign's objective is the candidate's median objective (CandidateSummary::objective);
//    any other metric is the median of that metric over the explore repeats.
//  - A goal names its direction ("time_s:min"); only the campaign's objective may omit it (it
//    takes the campaign's own direction), because guessing whether a metric is better high or
//    low would silently invert a Pareto front.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "flotilla/results/Analysis.h"
#include "flotilla/results/Objectives.h"  // Goal

namespace flotilla::results {

// Bad user input to an analysis (an unknown metric, a missing direction); what() is the message.
class AnalysisError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "x=1 y=a" -> {{"x", "1"}, {"y", "a"}}, in the text's order.
std::vector<std::pair<std::string, std::string>> split_config(std::string_view config);

// Parameter names in the order of the first candidate's configuration.
std::vector<std::string> parameter_names(const CampaignSummary& summary);

// Every metric name recorded for some candidate, sorted, the objective included.
std::vector<std::string> metric_names(const CampaignSummary& summary);


// "gflops", "gflops:max", "time_s:min". Throws AnalysisError naming the recorded metrics when the
// metric is unknown or its direction missing.
Goal parse_goal(std::string_view text, const CampaignSummary& summary);
// Comma-separated goals; throws AnalysisError on an empty list or a repeated metric.
std::vector<Goal> parse_goals(std::string_view text, const CampaignSummary& summary);

// The campaign's own objective and direction.
Goal objective_goal(const CampaignInfo& campaign);

// The unit a metric's name implies by convention ("gflops" -> "GFLOP/s", "time_s" -> "s",
// "bytes" -> "bytes"), for axis labels; empty when the name implies none.
std::string unit_of(std::string_view metric);

std::optional<double> goal_value(const CandidateSummary& candidate, const Goal& goal, const CampaignInfo& campaign);

}  // namespace flotilla::results

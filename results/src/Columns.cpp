// Columns.cpp — parameters and goal metrics of candidates (see Columns.h for the rules).
#include "flotilla/results/Columns.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace flotilla::results {
namespace {

std::string known_metrics(const CampaignSummary& summary) {
  std::string list;
  for (const auto& name : metric_names(summary)) list += (list.empty() ? "" : ", ") + name;
  return list.empty() ? std::string("none") : list;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> split_config(std::string_view config) {
  std::vector<std::pair<std::string, std::string>> out;
  std::size_t begin = 0;
  while (begin < config.size()) {
    auto end = config.find(' ', begin);
    if (end == std::string_view::npos) end = config.size();
    auto word = config.substr(begin, end - begin);
    if (!word.empty()) {
      auto eq = word.find('=');
      if (eq == std::string_view::npos)
        out.emplace_back(std::string(word), std::string());
      else
        out.emplace_back(std::string(word.substr(0, eq)), std::string(word.substr(eq + 1)));
    }
    begin = end + 1;
  }
  return out;
}

std::vector<std::string> parameter_names(const CampaignSummary& summary) {
  std::vector<std::string> names;
  if (summary.candidates.empty()) return names;
  for (auto& [name, value] : split_config(summary.candidates.front().record.config)) names.push_back(name);
  return names;
}

std::vector<std::string> metric_names(const CampaignSummary& summary) {
  std::set<std::string> names;
  if (!summary.campaign.objective.empty()) names.insert(summary.campaign.objective);
  for (const auto& c : summary.candidates)
    for (const auto& [name, value] : c.metrics) names.insert(name);
  return {names.begin(), names.end()};
}

Goal objective_goal(const CampaignInfo& campaign) {
  return {.metric = campaign.objective, .maximize = campaign.direction != "minimize"};
}

Goal parse_goal(std::string_view text, const CampaignSummary& summary) {
  const auto colon = text.rfind(':');
  const std::string metric(text.substr(0, colon));
  const auto names = metric_names(summary);
  if (metric.empty() || std::find(names.begin(), names.end(), metric) == names.end())
    throw AnalysisError(fmt::format("no metric '{}' in this campaign (recorded: {})", metric, known_metrics(summary)));
  if (colon == std::string_view::npos) {
    if (metric == summary.campaign.objective) return objective_goal(summary.campaign);
    throw AnalysisError(fmt::format("say whether '{0}' is better high or low: {0}:max or {0}:min", metric));
  }
  const auto direction = text.substr(colon + 1);
  if (direction == "max" || direction == "maximize") return {metric, true};
  if (direction == "min" || direction == "minimize") return {metric, false};
  throw AnalysisError(fmt::format("'{}': the direction must be max or min", text));
}

std::vector<Goal> parse_goals(std::string_view text, const CampaignSummary& summary) {
  std::vector<Goal> goals;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    auto end = text.find(',', begin);
    if (end == std::string_view::npos) end = text.size();
    if (end > begin) {
      auto goal = parse_goal(text.substr(begin, end - begin), summary);
      for (const auto& g : goals)
        if (g.metric == goal.metric) throw AnalysisError(fmt::format("metric '{}' given twice", goal.metric));
      goals.push_back(goal);
    }
    begin = end + 1;
  }
  if (goals.empty()) throw AnalysisError("no metrics given");
  return goals;
}

std::string unit_of(std::string_view metric) {
  // Whole names first, then suffixes: the names flotilla's kernels print and the common
  // "_s"/"_ms" style of the metrics protocol.
  static const std::pair<std::string_view, std::string_view> names[] = {
      {"gflops", "GFLOP/s"}, {"tflops", "TFLOP/s"}, {"mflops", "MFLOP/s"}, {"gbps", "GB/s"},
      {"bytes", "bytes"},    {"seconds", "s"},      {"time", "s"}};
  static const std::pair<std::string_view, std::string_view> suffixes[] = {{"_gflops", "GFLOP/s"},
                                                                           {"_gbps", "GB/s"},
                                                                           {"_ms", "ms"},
                                                                           {"_us", "µs"},
                                                                           {"_ns", "ns"},
                                                                           {"_s", "s"},
                                                                           {"_bytes", "bytes"},
                                                                           {"_mb", "MB"},
                                                                           {"_gb", "GB"},
                                                                           {"_pct", "%"},
                                                                           {"_percent", "%"},
                                                                           {"_hz", "Hz"},
                                                                           {"_w", "W"},
                                                                           {"_j", "J"}};
  for (auto [name, unit] : names)
    if (metric == name) return std::string(unit);
  for (auto [suffix, unit] : suffixes)
    if (metric.ends_with(suffix)) return std::string(unit);
  return {};
}

std::optional<double> goal_value(const CandidateSummary& candidate, const Goal& goal, const CampaignInfo& campaign) {
  if (goal.metric == campaign.objective) return candidate.objective;
  auto it = candidate.metrics.find(goal.metric);
  if (it == candidate.metrics.end() || !std::isfinite(it->second)) return std::nullopt;
  return it->second;
}

}  // namespace flotilla::results

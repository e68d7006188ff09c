// Importance.cpp — first-order variance shares of each parameter (see Importance.h).
#include "flotilla/results/Importance.h"

#include <algorithm>
#include <map>

namespace flotilla::results {
namespace {

struct Sample {
  std::vector<std::pair<std::string, std::string>> parameters;
  double value = 0;
};

std::vector<Sample> samples_of(const CampaignSummary& summary, const Goal& goal) {
  std::vector<Sample> samples;
  for (const auto& c : summary.candidates)
    if (auto v = goal_value(c, goal, summary.campaign)) samples.push_back({split_config(c.record.config), *v});
  return samples;
}

ParameterImportance importance_of(const std::string& name, const std::vector<Sample>& samples, double mean,
                                  double variance, bool maximize) {
  struct Group {
    std::size_t count = 0;
    double sum = 0;
  };
  std::map<std::string, Group> groups;
  for (const auto& s : samples)
    for (const auto& [param, value] : s.parameters)
      if (param == name) {
        auto& g = groups[value];
        ++g.count;
        g.sum += s.value;
      }
  ParameterImportance p{.name = name};
  double between = 0;  // Σ n_g (mean_g - mean)², over all samples
  for (const auto& [value, g] : groups) {
    const double group_mean = g.sum / static_cast<double>(g.count);
    between += static_cast<double>(g.count) * (group_mean - mean) * (group_mean - mean);
    p.values.push_back({value, g.count, group_mean});
  }
  const double total = variance * static_cast<double>(samples.size());
  p.importance = total > 0 ? std::clamp(between / total, 0.0, 1.0) : 0.0;
  std::stable_sort(p.values.begin(), p.values.end(),
                   [&](const ValueEffect& a, const ValueEffect& b) { return better(a.mean, b.mean, maximize); });
  return p;
}

}  // namespace

ImportanceReport parameter_importance(const CampaignSummary& summary, const Goal& goal) {
  ImportanceReport report{.goal = goal};
  const auto samples = samples_of(summary, goal);
  report.samples = samples.size();
  if (samples.empty()) return report;
  for (const auto& s : samples) report.mean += s.value;
  report.mean /= static_cast<double>(samples.size());
  for (const auto& s : samples) report.variance += (s.value - report.mean) * (s.value - report.mean);
  report.variance /= static_cast<double>(samples.size());
  double explained = 0;
  for (const auto& name : parameter_names(summary)) {
    report.parameters.push_back(importance_of(name, samples, report.mean, report.variance, goal.maximize));
    explained += report.parameters.back().importance;
  }
  report.interactions = report.variance > 0 ? std::max(0.0, 1.0 - explained) : 0.0;
  std::stable_sort(report.parameters.begin(), report.parameters.end(),
                   [](const auto& a, const auto& b) { return a.importance > b.importance; });
  return report;
}

}  // namespace flotilla::results

// Planning.cpp — pure decisions of the campaign loop.
#include "flotilla/scheduler/Planning.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

namespace flotilla::scheduler {

std::vector<int> missing_indices(const std::vector<const results::TrialRecord*>& recorded, results::TrialKind kind,
                                 int count) {
  std::set<int> done;
  for (const auto* t : recorded)
    if (t->kind == kind) done.insert(t->index);
  std::vector<int> missing;
  for (int i = 0; i < count; ++i)
    if (!done.contains(i)) missing.push_back(i);
  return missing;
}

std::vector<std::int64_t> select_for_evaluation(const std::vector<results::CandidateSummary>& round, const Gate& gate,
                                                bool maximize) {
  std::vector<const results::CandidateSummary*> explored;
  for (const auto& c : round)
    if (c.objective && c.record.origin != "baseline") explored.push_back(&c);
  std::stable_sort(explored.begin(), explored.end(), [&](const auto* a, const auto* b) {
    return results::better(*a->objective, *b->objective, maximize);
  });
  std::size_t keep = gate.kind == Gate::Kind::all ? explored.size() : std::min<std::size_t>(gate.top, explored.size());
  std::vector<std::int64_t> ids;
  for (std::size_t i = 0; i < keep; ++i) ids.push_back(explored[i]->record.id);
  return ids;
}

std::optional<std::string> stop_reason(const Settings& settings, std::size_t explored,
                                       std::optional<double> best_verified) {
  if (settings.target && best_verified &&
      !results::better(*settings.target, *best_verified, settings.maximize))
    return fmt::format("target {} {} reached", settings.objective, *settings.target);
  if (explored >= settings.budget) return fmt::format("budget of {} candidates spent", settings.budget);
  return std::nullopt;
}

}  // namespace flotilla::scheduler

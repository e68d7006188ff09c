// Stages.cpp — pure decisions of a staged campaign (Stages.h).
#include "flotilla/scheduler/Stages.h"

#include <algorithm>

#include <fmt/format.h>

namespace flotilla::scheduler {

std::string percent(double fraction) { return fmt::format("{:.1f}%", 100.0 * fraction); }

double stage_gain(double before, double after, bool maximize) {
  if (!(before > 0) || !(after > 0)) return 0.0;
  return maximize ? after / before - 1.0 : before / after - 1.0;
}

StageDecision next_stage(const std::vector<Component>& components, const std::map<std::string, double>& shares,
                         const std::vector<StageRecord>& history, double threshold, bool code_changes) {
  if (!history.empty() && history.back().gain < threshold) {
    const auto& last = history.back();
    return {.stop = true, .reason = fmt::format("stage {} gained {} < threshold {}", last.component,
                                                percent(last.gain), percent(threshold))};
  }
  const Component* best = nullptr;
  double best_share = -1;
  bool any_share = false;
  for (const auto& c : components) {
    const auto it = shares.find(c.share_metric);
    any_share = any_share || it != shares.end();
    const bool tuned = std::any_of(history.begin(), history.end(),
                                   [&](const StageRecord& r) { return r.component == c.name; });
    if ((c.params.empty() && !code_changes) || tuned || it == shares.end()) continue;
    if (it->second > best_share) {
      best = &c;
      best_share = it->second;
    }
  }
  if (!any_share) return {.stop = true, .reason = "the profile has none of the components' share metrics"};
  if (!best) return {.stop = true, .reason = "every tunable component has had its stage"};
  const double bound = best_share < 1.0 ? 1.0 / (1.0 - best_share) - 1.0 : 1e300;
  if (bound < threshold)
    return {.stop = true,
            .reason = fmt::format("largest untuned component {} has {} of the time: removing it entirely would gain "
                                  "{} < threshold {}",
                                  best->name, percent(best_share), percent(bound), percent(threshold))};
  return {.stop = false, .component = best->name, .share = best_share,
          .reason = fmt::format("{} has the largest untuned share, {}", best->name, percent(best_share))};
}

}  // namespace flotilla::scheduler

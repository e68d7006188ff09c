// DecodeStages.cpp — the staged decode intent's pure decisions (DecodeStages.h).
#include "flotilla/kernels/DecodeStages.h"

#include <algorithm>
#include <cstdio>

namespace flotilla::kernels {

const std::vector<DecodeComponent>& decode_components() {
  static const std::vector<DecodeComponent> list = {
      {"norm", "share_norm", {"norm", "norm_vec"}},
      {"gemv", "share_gemv", {"gemv_unroll", "gemv_rows", "gemv_split_k", "weights", "drafter", "k"}},
      {"attention", "share_attention", {"attn_splits", "attn_unroll"}},
      {"draft", "share_draft", {"drafter", "k", "ngram", "draft_layers"}},
      {"other", "share_other", {}},
  };
  return list;
}

namespace {

std::string percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", 100.0 * fraction);
  return text;
}

}  // namespace

StageDecision next_stage(const std::map<std::string, double>& shares, const std::vector<StageRecord>& history,
                         double threshold) {
  if (!history.empty()) {
    const StageRecord& last = history.back();
    const double gain = last.before > 0 ? last.after / last.before - 1.0 : 0.0;
    if (gain < threshold) {
      return {true, "", "stage " + last.component + " gained " + percent(gain) + " < threshold " + percent(threshold)};
    }
  }
  const DecodeComponent* best = nullptr;
  double best_share = -1;
  for (const DecodeComponent& c : decode_components()) {
    const bool tuned = std::any_of(history.begin(), history.end(),
                                   [&](const StageRecord& r) { return r.component == c.name; });
    const auto it = shares.find(c.share_metric);
    if (c.params.empty() || tuned || it == shares.end()) continue;
    if (it->second > best_share) {
      best = &c;
      best_share = it->second;
    }
  }
  if (!best) return {true, "", "every tunable component has had its stage"};
  const double bound = best_share < 1.0 ? 1.0 / (1.0 - best_share) - 1.0 : 1e300;
  if (bound < threshold) {
    return {true, "", "largest untuned component " + best->name + " has " + percent(best_share) +
                          " of the time: removing it entirely would gain " + percent(bound) + " < threshold " +
                          percent(threshold)};
  }
  return {false, best->name, best->name + " has the largest untuned share, " + percent(best_share)};
}

}  // namespace flotilla::kernels

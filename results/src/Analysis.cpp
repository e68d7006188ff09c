// Analysis.cpp — candidate status and campaign summary from recorded trials (pure functions).
#include "flotilla/results/Analysis.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace flotilla::results {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  auto n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The last line of output that is not a metrics line: usually the program's own verdict.
std::string last_message_line(const std::string& text) {
  std::string found;
  std::size_t begin = 0;
  while (begin < text.size()) {
    auto end = text.find('\n', begin);
    auto line = text.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    const bool metrics = line.starts_with("flotilla-metric:") || line.starts_with("{");
    if (!line.empty() && !metrics) found = line;
    if (end == std::string::npos) break;
    begin = end + 1;
  }
  return found;
}

// Latest attempt of each index of one kind.
std::map<int, const TrialRecord*> latest(const std::vector<const TrialRecord*>& trials, TrialKind kind) {
  std::map<int, const TrialRecord*> by_index;
  for (const auto* t : trials) {
    if (t->kind != kind) continue;
    auto& slot = by_index[t->index];
    if (!slot || t->attempt >= slot->attempt) slot = t;
  }
  return by_index;
}

void summarize_explore(CandidateSummary& s, const std::map<int, const TrialRecord*>& explore, int repeats) {
  std::vector<double> objectives;
  std::map<std::string, std::vector<double>> metrics;
  for (const auto& [index, t] : explore) {
    if (index >= repeats) continue;
    ++s.repeats_done;
    if (t->status != TrialStatus::ok) {
      if (s.reason.empty()) s.reason = fmt::format("repeat {}: {}", index, t->reason);
      continue;
    }
    objectives.push_back(t->objective);
    for (const auto& m : t->metrics) metrics[m.name].push_back(m.value);
  }
  if (!s.reason.empty()) {
    s.status = CandidateStatus::explore_failed;
    return;
  }
  if (s.repeats_done < repeats) return;  // still pending
  s.status = CandidateStatus::explored;
  s.objective = median(objectives);
  auto [lo, hi] = std::minmax_element(objectives.begin(), objectives.end());
  s.spread = *s.objective != 0 ? (*hi - *lo) / std::abs(*s.objective) : 0;
  for (auto& [name, values] : metrics) s.metrics[name] = median(values);
}

}  // namespace

std::string_view to_string(CandidateStatus status) {
  switch (status) {
    case CandidateStatus::pending: return "pending";
    case CandidateStatus::explore_failed: return "explore_failed";
    case CandidateStatus::explored: return "explored";
    case CandidateStatus::verified: return "verified";
    case CandidateStatus::rolled_back: return "rolled_back";
  }
  return "unknown";
}

CandidateSummary summarize_candidate(const CandidateRecord& candidate, const std::vector<const TrialRecord*>& trials,
                                     int repeats, int shards, bool test_gate) {
  CandidateSummary s{.record = candidate};
  summarize_explore(s, latest(trials, TrialKind::explore), repeats);
  if (s.status != CandidateStatus::explored || shards == 0) return s;
  const int required = shards + (test_gate ? 1 : 0);
  for (const auto& [index, t] : latest(trials, TrialKind::evaluate)) {
    if (index >= required) continue;
    ++s.shards_done;
    if (t->status == TrialStatus::ok) {
      ++s.shards_passed;
    } else if (s.reason.empty() && index == shards) {
      s.reason = fmt::format("test gate: {}", t->reason);
    } else if (s.reason.empty()) {
      auto detail = last_message_line(t->output_tail);
      s.reason = fmt::format("shard {}/{}: {}{}{}", index, shards, t->reason, detail.empty() ? "" : ": ", detail);
    }
  }
  if (s.shards_passed == required) s.status = CandidateStatus::verified;
  else if (s.shards_done > s.shards_passed) s.status = CandidateStatus::rolled_back;
  return s;
}

std::size_t CampaignSummary::count(CandidateStatus status) const {
  return static_cast<std::size_t>(std::count_if(candidates.begin(), candidates.end(),
                                                [&](const CandidateSummary& c) { return c.status == status; }));
}

std::vector<std::size_t> CampaignSummary::ranking() const {
  const bool maximize = campaign.direction != "minimize";
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < candidates.size(); ++i)
    if (candidates[i].objective && candidates[i].status != CandidateStatus::rolled_back) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return better(*candidates[a].objective, *candidates[b].objective, maximize);
  });
  return order;
}

CampaignSummary summarize(const CampaignInfo& campaign, const std::vector<CandidateRecord>& candidates,
                          const std::vector<TrialRecord>& trials) {
  CampaignSummary summary{.campaign = campaign};
  std::vector<std::vector<const TrialRecord*>> by_candidate(candidates.size());
  for (const auto& t : trials) {
    ++summary.trials;
    if (t.status != TrialStatus::ok) {
      ++summary.failed_trials;
      ++summary.failures_by_reason[fmt::format("{}: {}", to_string(t.kind), t.reason)];
    }
    if (t.candidate >= 0 && static_cast<std::size_t>(t.candidate) < candidates.size())
      by_candidate[static_cast<std::size_t>(t.candidate)].push_back(&t);
  }
  const bool maximize = campaign.direction != "minimize";
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    summary.candidates.push_back(summarize_candidate(candidates[i], by_candidate[i], campaign.repeats, campaign.shards,
                                                     !campaign.test_gate.empty()));
    const auto& c = summary.candidates.back();
    if (c.record.origin == "baseline" && !summary.baseline) summary.baseline = i;
    const bool eligible = campaign.shards > 0 ? c.status == CandidateStatus::verified : c.status == CandidateStatus::explored;
    if (eligible && (!summary.best || better(*c.objective, *summary.candidates[*summary.best].objective, maximize)))
      summary.best = i;
  }
  summary.best_verified = summary.best && campaign.shards > 0;
  return summary;
}

CampaignSummary summarize(const Store& store) {
  return summarize(store.campaign(), store.candidates(), store.trials());
}

}  // namespace flotilla::results

// Analysis.cpp — candidate status and campaign summary from recorded trials (pure functions).
#include "flotilla/results/Analysis.h"

#include "flotilla/results/Lineage.h"
#include "flotilla/results/Columns.h"
#include "flotilla/results/Pareto.h"
#include "flotilla/results/Printable.h"

#include <ext/pb_ds/assoc_container.hpp>
#include <ext/pb_ds/tree_policy.hpp>

#include <algorithm>
#include <limits>
#include <cctype>
#include <cmath>
#include <set>
#include <sstream>
#include <string_view>
#include <tuple>

#include <fmt/format.h>

namespace flotilla::results {
namespace {

// How the build stage's note naming a build's log starts (build_log_note).
constexpr std::string_view kLogNoteStart = "[flotilla: the build's full log: ";

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

void summarize_explore(CandidateSummary& s, const std::map<int, const TrialRecord*>& explore, int repeats,
                       double confidence) {
  std::vector<double> objectives;
  std::map<std::string, std::vector<double>> metrics;
  for (const auto& [index, t] : explore) {
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
  s.interval = stats::median_interval(objectives, confidence);
  s.objective = s.interval->estimate;
  auto [lo, hi] = std::minmax_element(objectives.begin(), objectives.end());
  s.spread = *s.objective != 0 ? (*hi - *lo) / std::abs(*s.objective) : 0;
  for (auto& [name, values] : metrics) s.metrics[name] = stats::median(std::move(values));
}

double metric_of(const TrialRecord& t, std::string_view name, double otherwise) {
  for (const auto& m : t.metrics)
    if (m.name == name) return m.value;
  return otherwise;
}

// The pairs of one confirmation's latest attempt, in order, and its verdict.
ConfirmationSummary decide_pairs(CandidateSummary& s, const std::vector<const TrialRecord*>& trials,
                                 const stats::ConfirmSettings& settings) {
  int attempt = -1;
  for (const auto* t : trials) attempt = std::max(attempt, t->attempt);
  std::map<int, const TrialRecord*> pairs;
  for (const auto* t : trials)
    if (t->attempt == attempt) pairs[t->index] = t;
  ConfirmationSummary c;
  std::vector<double> log_ratios;
  std::vector<stats::PairRun> runs;  // metric order: 0 candidate first, 1 reference first
  for (const auto& [index, t] : pairs) {
    c.reference = static_cast<std::int64_t>(metric_of(*t, "reference_candidate", -1));
    if (t->status != TrialStatus::ok || !(t->objective > 0)) {
      c.result.verdict = stats::Verdict::failed;
      const int pair = index >= kHeadToHeadIndex ? (index - kHeadToHeadIndex) % kHeadToHeadStride : index;
      c.reason = fmt::format("pair {}: {}", pair, t->reason.empty() ? "no ratio" : t->reason);
      s.confirm_runs += 1;
      break;
    }
    log_ratios.push_back(std::log(t->objective));
    const double candidate = metric_of(*t, "candidate", 1), reference = metric_of(*t, "reference", 1);
    runs.push_back({.candidate_first = metric_of(*t, "order", -1) == 0,
                    .log_candidate = candidate > 0 ? std::log(candidate) : 0,
                    .log_reference = reference > 0 ? std::log(reference) : 0});
    s.confirm_runs += 2;
  }
  if (c.result.verdict != stats::Verdict::failed) {
    c.result = stats::decide_confirmation(log_ratios, settings, runs);
    if (c.result.verdict == stats::Verdict::unreliable) c.reason = c.result.reason;
  } else if (!log_ratios.empty()) {
    auto partial = stats::decide_confirmation(log_ratios, settings);
    c.result.pairs = partial.pairs, c.result.ratio = partial.ratio, c.result.low = partial.low,
    c.result.high = partial.high, c.result.looks = partial.looks, c.result.look_level = partial.look_level;
  }
  return c;
}

// The candidate's confirmations, one per reference (the reference_candidate metric of its
// trials): against the baseline (or no reference recorded: files before head-to-head) its
// confirmation, against another candidate a head-to-head one.
void summarize_confirmation(CandidateSummary& s, const std::vector<const TrialRecord*>& trials,
                            const stats::ConfirmSettings& settings, std::int64_t baseline) {
  std::map<std::int64_t, std::vector<const TrialRecord*>> by_reference;
  for (const auto* t : trials)
    if (t->kind == TrialKind::confirm) {
      const auto reference = static_cast<std::int64_t>(metric_of(*t, "reference_candidate", -1));
      by_reference[reference == -1 ? baseline : reference].push_back(t);
    }
  for (const auto& [reference, group] : by_reference) {
    auto c = decide_pairs(s, group, settings);
    c.reference = reference;
    if (reference == baseline) s.confirmation = std::move(c);
    else s.head_to_head[reference] = std::move(c);
  }
}

stats::Verdict reversed(stats::Verdict verdict) {
  if (verdict == stats::Verdict::faster) return stats::Verdict::slower;
  if (verdict == stats::Verdict::slower) return stats::Verdict::faster;
  return verdict;
}

// The winner among the candidates confirmed faster than the baseline (docs/verdicts.md, "Ties"):
// the best ratio over the baseline, unless a finalist (its interval overlapping the holder's)
// beat the holder head to head, in which case it holds, and so on (each at most once, so noisy
// cycles end). Head-to-head confirmations still missing against the final holder are wanted.
std::size_t settle_finalists(CampaignSummary& summary, const std::vector<std::size_t>& confirmed) {
  const auto ratio = [&](std::size_t i) { return summary.candidates[i].confirmation->result; };
  std::vector<std::size_t> order = confirmed;
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return ratio(a).ratio > ratio(b).ratio; });
  std::size_t holder = order.front();
  std::set<std::size_t> held = {holder};
  const auto overlaps = [&](std::size_t other) { return ratio(other).high >= ratio(holder).low; };
  for (bool changed = true; changed;) {
    changed = false;
    for (auto other : order) {
      if (other == holder || !overlaps(other) || held.contains(other)) continue;
      const auto duel = head_to_head(summary, other, holder);
      if (duel && duel->result.verdict == stats::Verdict::faster) {
        holder = other;
        held.insert(other);
        changed = true;
        break;
      }
    }
  }
  for (auto other : order) {
    if (other == holder || !overlaps(other)) continue;
    if (auto duel = head_to_head(summary, holder, other))
      summary.finals.push_back({other, std::move(*duel)});
    else
      summary.duels_wanted.push_back({summary.candidates[other].record.id, summary.candidates[holder].record.id});
  }
  if (holder != order.front()) summary.dethroned = order.front();
  return holder;
}

}  // namespace

std::optional<ConfirmationSummary> head_to_head(const CampaignSummary& summary, std::size_t a, std::size_t b) {
  const auto& ca = summary.candidates[a];
  const auto& cb = summary.candidates[b];
  if (auto it = ca.head_to_head.find(cb.record.id); it != ca.head_to_head.end() &&
                                                    it->second.result.verdict != stats::Verdict::pending)
    return it->second;
  auto it = cb.head_to_head.find(ca.record.id);
  if (it == cb.head_to_head.end() || it->second.result.verdict == stats::Verdict::pending) return std::nullopt;
  ConfirmationSummary inverted = it->second;
  inverted.reference = cb.record.id;
  auto& r = inverted.result;
  r.verdict = reversed(r.verdict);
  r.ratio = 1 / r.ratio;
  std::tie(r.low, r.high) = std::pair(1 / r.high, 1 / r.low);
  return inverted;
}

std::vector<std::size_t> CampaignSummary::tied() const {
  std::vector<std::size_t> out;
  for (const auto& f : finals)
    if (f.result.result.verdict == stats::Verdict::no_difference) out.push_back(f.other);
  return out;
}

std::string_view to_string(CandidateStatus status) {
  switch (status) {
    case CandidateStatus::pending: return "pending";
    case CandidateStatus::explore_failed: return "explore_failed";
    case CandidateStatus::explored: return "explored";
    case CandidateStatus::verified: return "verified";
    case CandidateStatus::rolled_back: return "rolled_back";
    case CandidateStatus::build_failed: return "build_failed";
    case CandidateStatus::screened: return "screened";
  }
  return "unknown";
}

bool below_full_fidelity(const CandidateRecord& candidate, const CampaignInfo& campaign) {
  if (campaign.fidelity.empty()) return false;
  const auto eq = campaign.fidelity.find('=');
  const std::string_view name = std::string_view(campaign.fidelity).substr(0, eq);
  const std::string_view full = std::string_view(campaign.fidelity).substr(eq + 1);
  for (const auto& [key, value] : split_config(candidate.config))
    if (key == name) return value != full;
  return false;
}

stats::ConfirmSettings confirm_settings(const CampaignInfo& campaign) {
  return {.confidence = campaign.confirm_confidence, .min_effect = campaign.confirm_min_effect,
          .max_pairs = campaign.confirm_max_pairs};
}

CandidateSummary summarize_candidate(const CandidateRecord& candidate, const std::vector<const TrialRecord*>& trials,
                                     const CampaignInfo& campaign, std::int64_t baseline) {
  CandidateSummary s{.record = candidate};
  const int shards = campaign.shards;
  // A failed build is final: nothing else of the candidate was run (docs/build.md).
  if (const auto builds = latest(trials, TrialKind::build); !builds.empty() && builds.rbegin()->second->status != TrialStatus::ok) {
    s.status = CandidateStatus::build_failed;
    s.reason = first_error_line(*builds.rbegin()->second);
    auto output = build_output(builds.rbegin()->second->output_tail);
    s.build_lines = std::move(output.last_lines);
    s.build_log = std::move(output.log);
    return s;
  }
  if (campaign.repeats > 0)
    summarize_explore(s, latest(trials, TrialKind::explore), campaign.repeats, campaign.confirm_confidence);
  else
    s.status = CandidateStatus::explored;  // nothing to explore: its objective comes from its tests
  if (s.status == CandidateStatus::explored && below_full_fidelity(candidate, campaign)) {
    s.status = CandidateStatus::screened;
    return s;
  }
  if (campaign.confirm_max_pairs > 0) summarize_confirmation(s, trials, confirm_settings(campaign), baseline);
  if (s.status != CandidateStatus::explored || shards == 0) return s;
  const int required = shards + (campaign.test_gate.empty() ? 0 : 1);
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
  // intent.objective = tests.passed or tests.GROUP (docs/propose.md): the suite's verdict says it.
  if (is_tests_objective(campaign.objective))
    if (const auto verdicts = latest(trials, TrialKind::evaluate); verdicts.contains(shards))
      for (const auto& m : verdicts.at(shards)->metrics)
        if (m.name == campaign.objective && std::isfinite(m.value)) s.objective = m.value;
  return s;
}

std::size_t CampaignSummary::count(CandidateStatus status) const {
  return static_cast<std::size_t>(std::count_if(candidates.begin(), candidates.end(),
                                                [&](const CandidateSummary& c) { return c.status == status; }));
}

std::size_t CampaignSummary::confirmed_count(stats::Verdict verdict) const {
  return static_cast<std::size_t>(std::count_if(candidates.begin(), candidates.end(), [&](const CandidateSummary& c) {
    return c.confirmation && c.confirmation->result.verdict == verdict;
  }));
}

std::vector<std::size_t> CampaignSummary::ranking() const {
  const bool maximize = campaign.direction != "minimize";
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < candidates.size(); ++i)
    if (candidates[i].objective && candidates[i].status != CandidateStatus::rolled_back &&
        candidates[i].status != CandidateStatus::screened)
      order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return better(*candidates[a].objective, *candidates[b].objective, maximize);
  });
  return order;
}

namespace {

// The median of how many benchmark runs were running at the midpoint of each of a candidate's
// latest explore runs (at least 1); `running_at(time)` counts the runs with start <= time < end.
template <typename RunningAt>
double concurrency_of(const std::vector<const TrialRecord*>& trials, const RunningAt& running_at) {
  std::vector<double> counts;
  for (const auto& [index, t] : latest(trials, TrialKind::explore))
    if (t->start > 0 && t->end >= t->start) counts.push_back(std::max(1.0, running_at((t->start + t->end) / 2)));
  return counts.empty() ? 0.0 : stats::median(std::move(counts));
}

// A benchmark run (explore or warm-up) with times that can place it.
bool placed_run(const TrialRecord& t) {
  return (t.kind == TrialKind::explore || t.kind == TrialKind::warmup) && t.start > 0 && t.end >= t.start;
}

// most_at_once and unlike_placement, from the candidates' concurrency.
void placement_flags(CampaignSummary& summary) {
  summary.most_at_once = 0;
  summary.unlike_placement.reset();
  for (const auto& c : summary.candidates) summary.most_at_once = std::max(summary.most_at_once, c.concurrency);
  if (!summary.baseline) return;
  const double baseline = summary.candidates[*summary.baseline].concurrency;
  double candidates = 0;
  for (const auto& c : summary.candidates)
    if (c.record.origin != "baseline" && c.objective) candidates = std::max(candidates, c.concurrency);
  // Two runs more at once, and half again as many: one more run beside two is ordinary jitter.
  if (baseline > 0 && candidates >= baseline + 2 && candidates >= 1.5 * baseline)
    summary.unlike_placement = {baseline, candidates};
}

// Each candidate's concurrency (CandidateSummary::concurrency): a sweep over the start and end
// times of every benchmark run, O(n log n) in the trials.
void summarize_placement(CampaignSummary& summary, const std::vector<std::vector<const TrialRecord*>>& by_candidate) {
  std::vector<double> starts, ends;
  for (const auto& trials : by_candidate)
    for (const auto* t : trials)
      if (placed_run(*t)) starts.push_back(t->start), ends.push_back(t->end);
  std::sort(starts.begin(), starts.end());
  std::sort(ends.begin(), ends.end());
  const auto running_at = [&](double time) {  // runs with start <= time < end
    const auto started = std::upper_bound(starts.begin(), starts.end(), time) - starts.begin();
    const auto ended = std::upper_bound(ends.begin(), ends.end(), time) - ends.begin();
    return static_cast<double>(started - ended);
  };
  if (!starts.empty())
    for (std::size_t i = 0; i < summary.candidates.size(); ++i)
      summary.candidates[i].concurrency = concurrency_of(by_candidate[i], running_at);
  placement_flags(summary);
}

// The baseline's noise; no trials (no baseline yet): none.
void summarize_noise(CampaignSummary& summary, const std::vector<const TrialRecord*>& baseline_trials) {
  summary.noise_cv.reset();
  summary.resolvable_gain.reset();
  summary.too_noisy = false;
  std::vector<double> repeats;
  for (const auto& [index, t] : latest(baseline_trials, TrialKind::explore))
    if (t->status == TrialStatus::ok) repeats.push_back(t->objective);
  if (repeats.size() < 2) return;
  summary.noise_cv = stats::robust_cv(repeats);
  if (!summary.confirming) return;
  const auto settings = confirm_settings(summary.campaign);
  const double half_width = stats::expected_half_width(*summary.noise_cv, settings);
  summary.resolvable_gain = (1 + settings.min_effect) * std::exp(half_width);
  summary.too_noisy = half_width > std::log1p(settings.min_effect);
}

// Several objectives: the front, and the pick from the eligible candidates' front.
void summarize_front(CampaignSummary& summary) {
  summary.goals = parse_objectives(summary.campaign.objectives);
  summary.pick = parse_pick(summary.campaign.pick.empty() ? "knee" : summary.campaign.pick, summary.goals.size());
  for (const auto& p : pareto_fronts(summary, summary.goals, false))
    if (p.front == 1) summary.front.push_back(p.candidate);
  const bool verifies = summary.campaign.shards > 0;
  std::vector<std::vector<double>> members;
  for (const auto& p : pareto_fronts(summary, summary.goals, verifies)) {
    if (p.front != 1) break;
    if (summary.candidates[p.candidate].status != (verifies ? CandidateStatus::verified : CandidateStatus::explored))
      continue;
    summary.eligible_front.push_back(p.candidate);
    members.push_back(p.values);
  }
  summary.best_unconfirmed.reset();
  summary.best_confirmed = false;
  summary.best.reset();
  if (!members.empty()) summary.best = summary.eligible_front[pick_member(members, summary.goals, summary.pick)];
}

}  // namespace

std::string_view failure_kind(const TrialRecord& trial) {
  if (trial.status == TrialStatus::build_failed || trial.kind == TrialKind::build) return "build";
  if (trial.status == TrialStatus::timeout) return "timeout";
  if (trial.kind == TrialKind::evaluate) return "verification";
  return "crash";
}

std::string first_error_line(const TrialRecord& trial) {
  std::size_t begin = 0;
  const auto& text = trial.output_tail;
  while (begin < text.size()) {
    auto end = text.find('\n', begin);
    auto line = text.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    std::string lower = line;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower.find("error") != std::string::npos && !line.starts_with(kLogNoteStart)) {
      while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
      return line;
    }
    if (end == std::string::npos) break;
    begin = end + 1;
  }
  return trial.reason;
}

std::string build_log_note(const std::string& log) { return fmt::format("\n{}{}]\n", kLogNoteStart, log); }

BuildOutput build_output(const std::string& output_tail, std::size_t lines) {
  BuildOutput out;
  std::vector<std::string> kept;
  std::istringstream in(output_tail);
  for (std::string line; std::getline(in, line);) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (line.starts_with(kLogNoteStart) && line.ends_with(']')) {
      out.log = line.substr(kLogNoteStart.size(), line.size() - kLogNoteStart.size() - 1);
    } else if (line.find_first_not_of(" \t") != std::string::npos) {
      kept.push_back(printable(line));
    }
  }
  const std::size_t first = kept.size() > lines ? kept.size() - lines : 0;
  out.last_lines.assign(kept.begin() + static_cast<std::ptrdiff_t>(first), kept.end());
  return out;
}

namespace {

// The counts of the trials a summary reports, one trial at a time.
void count_trial(CampaignSummary& summary, const TrialRecord& t) {
  if (t.kind == TrialKind::warmup) {
    ++summary.warmups;
    return;
  }
  if (t.kind == TrialKind::confirm) return;
  ++summary.trials;
  if (t.status != TrialStatus::ok) {
    ++summary.failed_trials;
    ++summary.failures_by_reason[fmt::format("{}: {}", to_string(t.kind), t.reason)];
    auto& group = summary.failures_by_kind[std::string(failure_kind(t))];
    if (group.count++ == 0) group.first_error = first_error_line(t);
  }
  if (t.kind == TrialKind::explore && t.index >= summary.campaign.repeats && t.attempt == 0) ++summary.repeats_extra;
}

std::int64_t first_baseline_id(const std::vector<CandidateRecord>& candidates) {
  const auto first = std::find_if(candidates.begin(), candidates.end(),
                                  [](const CandidateRecord& c) { return c.origin == "baseline"; });
  return first == candidates.end() ? -1 : first->id;
}

// One candidate's summary with its proposal's name, parent and chain.
CandidateSummary candidate_summary(std::size_t i, const std::vector<CandidateRecord>& candidates,
                                   const std::vector<const TrialRecord*>& trials, const CampaignInfo& campaign,
                                   std::int64_t baseline_id, const std::vector<ProposalRecord>& proposals) {
  auto s = summarize_candidate(candidates[i], trials, campaign, baseline_id);
  if (const auto proposal = proposal_of(candidates[i]); proposal && static_cast<std::size_t>(*proposal) < proposals.size()) {
    s.proposal = proposals[static_cast<std::size_t>(*proposal)].name;
    s.parent = proposals[static_cast<std::size_t>(*proposal)].parent;
    for (auto id : chain_of(static_cast<std::int64_t>(i), candidates, proposals))
      s.chain.push_back(proposals[static_cast<std::size_t>(id)].name);
  }
  return s;
}

// What follows from the candidates' summaries: the baseline, the winner, the front. The fields it
// sets start empty (the incremental summary reuses its CampaignSummary).
void decide(CampaignSummary& summary) {
  summary.baseline.reset();
  summary.best.reset();
  summary.best_unconfirmed.reset();
  summary.best_confirmed = summary.best_verified = false;
  summary.confirm_runs = 0;
  summary.finals.clear();
  summary.duels_wanted.clear();
  summary.dethroned.reset();
  summary.goals.clear();
  summary.front.clear();
  summary.eligible_front.clear();
  const auto& campaign = summary.campaign;
  const bool maximize = campaign.direction != "minimize";
  std::optional<std::size_t> by_objective;
  std::vector<std::size_t> confirmed;
  for (std::size_t i = 0; i < summary.candidates.size(); ++i) {
    const auto& c = summary.candidates[i];
    summary.confirm_runs += c.confirm_runs;
    if (c.record.origin == "baseline" && !summary.baseline) summary.baseline = i;
    const bool eligible = campaign.shards > 0 ? c.status == CandidateStatus::verified : c.status == CandidateStatus::explored;
    if (!eligible) continue;
    if (!by_objective || better(*c.objective, *summary.candidates[*by_objective].objective, maximize)) by_objective = i;
    if (c.record.origin != "baseline" && c.confirmed_faster()) confirmed.push_back(i);
  }
  summary.confirming = campaign.confirm_max_pairs > 0 && summary.baseline.has_value();
  if (!summary.confirming) {
    summary.best = by_objective;
  } else if (!confirmed.empty()) {
    summary.best = settle_finalists(summary, confirmed);
    summary.best_confirmed = true;
  } else {
    const auto& b = summary.candidates[*summary.baseline];
    const bool eligible = campaign.shards > 0 ? b.status == CandidateStatus::verified : b.status == CandidateStatus::explored;
    if (eligible) summary.best = summary.baseline;
  }
  if (summary.confirming && by_objective && by_objective != summary.best && by_objective != summary.baseline)
    summary.best_unconfirmed = by_objective;
  if (!campaign.objectives.empty()) summarize_front(summary);
  summary.best_verified = summary.best && campaign.shards > 0;
}

}  // namespace

CampaignSummary summarize(const CampaignInfo& campaign, const std::vector<CandidateRecord>& candidates,
                          const std::vector<TrialRecord>& trials, const std::vector<ProposalRecord>& proposals) {
  CampaignSummary summary{.campaign = campaign};
  std::vector<std::vector<const TrialRecord*>> by_candidate(candidates.size());
  for (const auto& t : trials) {
    count_trial(summary, t);
    if (t.candidate >= 0 && static_cast<std::size_t>(t.candidate) < candidates.size())
      by_candidate[static_cast<std::size_t>(t.candidate)].push_back(&t);
  }
  const std::int64_t baseline_id = first_baseline_id(candidates);
  for (std::size_t i = 0; i < candidates.size(); ++i)
    summary.candidates.push_back(candidate_summary(i, candidates, by_candidate[i], campaign, baseline_id, proposals));
  decide(summary);
  summarize_placement(summary, by_candidate);
  if (summary.baseline) summarize_noise(summary, by_candidate[*summary.baseline]);
  return summary;
}

struct SummaryCache::Impl {
  // Times in order with the count of those at or before a time in O(log n) (an order-statistics
  // tree; the sequence number makes equal times distinct keys).
  class OrderedTimes {
   public:
    void insert(double time) { m_tree.insert({time, m_next++}); }
    double count_at_or_before(double time) const {
      return static_cast<double>(m_tree.order_of_key({time, std::numeric_limits<std::uint64_t>::max()}));
    }

   private:
    __gnu_pbds::tree<std::pair<double, std::uint64_t>, __gnu_pbds::null_type, std::less<>, __gnu_pbds::rb_tree_tag,
                     __gnu_pbds::tree_order_statistics_node_update>
        m_tree;
    std::uint64_t m_next = 0;
  };

  CampaignSummary summary;
  bool started = false;
  std::size_t trials_seen = 0, candidates_seen = 0, proposals_seen = 0;
  std::int64_t baseline_id = -1;
  std::vector<std::vector<std::size_t>> by_candidate;  // positions in the trials, per recorded candidate
  std::vector<std::size_t> waiting;                    // positions of trials whose candidate is not recorded yet
  std::vector<char> stale, stale_placement;            // per candidate: its summary, its concurrency
  std::vector<std::size_t> stale_ids;                  // the candidates either flag is set for
  OrderedTimes starts, ends;                           // of every placed run
  std::multimap<double, std::size_t> midpoints;        // of every placed explore run: its candidate
  std::uint64_t reads = 0;

  void mark(std::size_t id, bool whole) {
    if (!stale[id] && !stale_placement[id]) stale_ids.push_back(id);
    (whole ? stale[id] : stale_placement[id]) = 1;
  }

  // A trial of a recorded candidate: its candidate is stale, and so is the concurrency of every
  // candidate with an explore run whose midpoint the new run covers (start <= midpoint < end:
  // exactly the counts it changes).
  void add(const TrialRecord& t, std::size_t position) {
    const auto id = static_cast<std::size_t>(t.candidate);
    auto& own = by_candidate[id];  // in the table's order, as summarize() sees them (a waiting trial comes late)
    own.insert(std::upper_bound(own.begin(), own.end(), position), position);
    ++reads;
    mark(id, true);
    if (!placed_run(t)) return;
    for (auto it = midpoints.lower_bound(t.start); it != midpoints.end() && it->first < t.end; ++it)
      mark(it->second, false);
    starts.insert(t.start);
    ends.insert(t.end);
    if (t.kind == TrialKind::explore) midpoints.emplace((t.start + t.end) / 2, id);
  }

  std::vector<const TrialRecord*> trials_of(std::size_t id, const std::vector<TrialRecord>& trials) {
    std::vector<const TrialRecord*> out;
    out.reserve(by_candidate[id].size());
    for (auto position : by_candidate[id]) out.push_back(&trials[position]);
    reads += out.size();
    return out;
  }
};

SummaryCache::SummaryCache() : m(std::make_unique<Impl>()) {}
SummaryCache::~SummaryCache() = default;
SummaryCache::SummaryCache(SummaryCache&&) noexcept = default;
SummaryCache& SummaryCache::operator=(SummaryCache&&) noexcept = default;

std::uint64_t SummaryCache::trials_read() const { return m->reads; }

const CampaignSummary& SummaryCache::update(const CampaignInfo& campaign, const std::vector<CandidateRecord>& candidates,
                                            const std::vector<TrialRecord>& trials,
                                            const std::vector<ProposalRecord>& proposals) {
  Impl& c = *m;
  auto& summary = c.summary;
  if (!c.started) summary.campaign = campaign, c.started = true;
  // New candidates; a baseline recorded after others changes every confirmation's reference.
  for (std::size_t i = c.candidates_seen; i < candidates.size(); ++i) {
    c.by_candidate.emplace_back();
    c.stale.push_back(0), c.stale_placement.push_back(0);
    summary.candidates.emplace_back();
    c.mark(i, true);
    if (c.baseline_id < 0 && candidates[i].origin == "baseline") {
      c.baseline_id = candidates[i].id;
      for (std::size_t j = 0; j < i; ++j) c.mark(j, true);
    }
  }
  c.candidates_seen = candidates.size();
  // New proposals: the candidates that name one take its name and chain again.
  if (proposals.size() != c.proposals_seen)
    for (std::size_t i = 0; i < candidates.size(); ++i)
      if (proposal_of(candidates[i])) c.mark(i, true);
  c.proposals_seen = proposals.size();
  // Trials: counted once each; indexed once their candidate is recorded.
  for (auto position : std::exchange(c.waiting, {}))
    if (static_cast<std::size_t>(trials[position].candidate) < candidates.size()) c.add(trials[position], position);
    else c.waiting.push_back(position);
  for (std::size_t position = c.trials_seen; position < trials.size(); ++position) {
    const auto& t = trials[position];
    count_trial(summary, t);
    if (t.candidate < 0) continue;
    if (static_cast<std::size_t>(t.candidate) >= candidates.size()) c.waiting.push_back(position);
    else c.add(t, position);
  }
  c.trials_seen = trials.size();
  const auto running_at = [&](double time) { return c.starts.count_at_or_before(time) - c.ends.count_at_or_before(time); };
  for (auto id : std::exchange(c.stale_ids, {})) {
    const auto own = c.trials_of(id, trials);
    if (c.stale[id]) summary.candidates[id] = candidate_summary(id, candidates, own, campaign, c.baseline_id, proposals);
    summary.candidates[id].concurrency = concurrency_of(own, running_at);
    c.stale[id] = c.stale_placement[id] = 0;
  }
  decide(summary);
  placement_flags(summary);
  summarize_noise(summary, summary.baseline ? c.trials_of(*summary.baseline, trials) : std::vector<const TrialRecord*>{});
  return summary;
}

CampaignSummary summarize(const Store& store) {
  const auto candidates = store.candidates();
  auto proposals = store.proposals();
  CampaignSummary summary =
      summarize(store.campaign(), candidates, store.trials(Store::TrialFields::outcomes), proposals);
  summary.provenance = provenance_of(store.events());
  add_proposals(summary, candidates, std::move(proposals));
  return summary;
}

void add_proposals(CampaignSummary& summary, const std::vector<CandidateRecord>& candidates,
                   std::vector<ProposalRecord> proposals) {
  for (auto& p : proposals) p.patch.clear(), p.rationale.clear();
  summary.proposals = std::move(proposals);
  summary.lineage.clear();
  if (summary.best) summary.lineage = lineage_of(static_cast<std::int64_t>(*summary.best), candidates, summary.proposals);
}

std::string candidate_label(const CandidateSummary& candidate) {
  if (candidate.chain.empty()) return candidate.record.config;
  std::string label;
  for (const auto& name : candidate.chain) label += (label.empty() ? "" : "+") + name;
  return label + " " + candidate.record.config;
}

}  // namespace flotilla::results

// Planning.cpp — pure decisions of the campaign loop.
#include "flotilla/scheduler/Planning.h"

#include "flotilla/results/Columns.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

namespace flotilla::scheduler {

std::uint64_t encode_task_id(const TaskKey& key) {
  return static_cast<std::uint64_t>(key.candidate) << 24 | static_cast<std::uint64_t>(key.kind) << 22 |
         static_cast<std::uint64_t>(key.index);
}

TaskKey decode_task_id(std::uint64_t id) {
  return TaskKey{.candidate = static_cast<std::int64_t>(id >> 24),
                 .kind = static_cast<results::TrialKind>((id >> 22) & 3),
                 .index = static_cast<int>(id & ((1u << 22) - 1))};
}

std::optional<search::Failure> failure_of(const results::CandidateSummary& c,
                                          const std::vector<results::TrialRecord>& trials) {
  std::vector<const results::TrialRecord*> all;
  for (const auto& t : trials) all.push_back(&t);
  return failure_of(c, all);
}

std::optional<search::Failure> failure_of(const results::CandidateSummary& c,
                                          const std::vector<const results::TrialRecord*>& trials) {
  using results::CandidateStatus;
  switch (c.status) {
    case CandidateStatus::build_failed: return search::Failure::build;
    case CandidateStatus::rolled_back: return search::Failure::verification;
    case CandidateStatus::explore_failed: {
      const bool timed_out = std::any_of(trials.begin(), trials.end(), [&](const results::TrialRecord* t) {
        return t->candidate == c.record.id && t->kind == results::TrialKind::explore &&
               results::failure_kind(*t) == "timeout";
      });
      return timed_out ? search::Failure::timeout : search::Failure::crash;
    }
    default: return std::nullopt;
  }
}

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

std::vector<std::int64_t> next_evaluations(const std::vector<results::CandidateSummary>& round, const Gate& gate,
                                           bool maximize, std::optional<double> incumbent) {
  using results::CandidateStatus;
  std::vector<const results::CandidateSummary*> ranked;
  for (const auto& c : round)
    if (c.objective && c.record.origin != "baseline") ranked.push_back(&c);
  std::stable_sort(ranked.begin(), ranked.end(), [&](const auto* a, const auto* b) {
    return results::better(*a->objective, *b->objective, maximize);
  });
  std::vector<std::int64_t> ids;
  if (gate.kind == Gate::Kind::all) {
    for (const auto* c : ranked)
      if (c->status == CandidateStatus::explored) ids.push_back(c->record.id);
    // An objective counted from tests is known only after the evaluation: every candidate goes.
    for (const auto& c : round)
      if (!c.objective && c.status == CandidateStatus::explored && c.record.origin != "baseline")
        ids.push_back(c.record.id);
    return ids;
  }
  auto verified = std::count_if(ranked.begin(), ranked.end(),
                                [](const auto* c) { return c->status == CandidateStatus::verified; });
  for (const auto* c : ranked) {
    if (static_cast<int>(verified + static_cast<long>(ids.size())) >= gate.top) break;
    if (c->status != CandidateStatus::explored) continue;
    if (incumbent && !results::better(*c->objective, *incumbent, maximize)) break;  // ranked: the rest are worse
    ids.push_back(c->record.id);
  }
  return ids;
}

std::vector<MoreRepeats> more_repeats(const std::vector<results::CandidateSummary>& round,
                                      std::optional<double> incumbent, int step, int max_repeats) {
  std::vector<MoreRepeats> more;
  if (!incumbent) return more;
  for (const auto& c : round) {
    if (c.record.origin == "baseline" || c.status != results::CandidateStatus::explored || !c.interval) continue;
    if (c.repeats_done >= max_repeats) continue;
    const bool undecided = c.interval->low <= *incumbent && *incumbent <= c.interval->high;
    if (undecided) more.push_back({c.record.id, std::min(max_repeats, c.repeats_done + step)});
  }
  return more;
}

std::optional<std::string> oversubscription_warning(const jobs::BackendCapabilities& backend, unsigned cores,
                                                    bool exclusive) {
  if (backend.tasks_per_host <= cores || cores == 0) return std::nullopt;
  if (exclusive && backend.runs_exclusive_alone) return std::nullopt;
  const bool dispatcher_rank = backend.tasks_per_host_setting == "resources.ranks";  // rank 0 runs no task
  return fmt::format("up to {} benchmark runs at once on a host with {} cores: they slow each other down, and their "
                     "medians are not comparable with runs made alone; set {} to at most {}{}",
                     backend.tasks_per_host, cores,
                     backend.tasks_per_host_setting.empty() ? "the backend's concurrency" : backend.tasks_per_host_setting,
                     dispatcher_rank ? cores + 1 : cores,
                     backend.runs_exclusive_alone ? ", or explore.exclusive = true" : "");
}

std::optional<double> incumbent_objective(const results::CampaignSummary& summary) {
  std::optional<std::size_t> holder = summary.best && summary.candidates[*summary.best].objective ? summary.best
                                                                                                  : summary.baseline;
  if (!holder) return std::nullopt;
  if (holder == summary.baseline && summary.unlike_placement) return std::nullopt;
  return summary.candidates[*holder].objective;
}

std::vector<std::int64_t> confirmation_candidates(const results::CampaignSummary& summary,
                                                  std::optional<double> threshold, int tries, int max_repeats) {
  using results::CandidateStatus;
  const bool maximize = summary.campaign.direction != "minimize";
  const bool evaluated = summary.campaign.shards > 0;
  std::vector<const results::CandidateSummary*> beating, undecided;
  for (const auto& c : summary.candidates) {
    if (c.record.origin == "baseline" || c.confirmation || !c.objective) continue;
    if (c.status != (evaluated ? CandidateStatus::verified : CandidateStatus::explored)) continue;
    if (!threshold || results::better(*c.objective, *threshold, maximize)) {
      beating.push_back(&c);
    } else if (c.interval && c.repeats_done >= max_repeats && c.interval->low <= *threshold &&
               *threshold <= c.interval->high) {
      undecided.push_back(&c);
    }
  }
  const auto best_first = [&](const auto* a, const auto* b) { return results::better(*a->objective, *b->objective, maximize); };
  std::stable_sort(beating.begin(), beating.end(), best_first);
  std::stable_sort(undecided.begin(), undecided.end(), best_first);
  beating.insert(beating.end(), undecided.begin(), undecided.end());
  std::vector<std::int64_t> ids;
  for (const auto* c : beating)
    if (static_cast<int>(ids.size()) < tries) ids.push_back(c->record.id);
  return ids;
}

std::optional<std::string> baseline_failure(const results::CampaignSummary& summary) {
  if (!summary.baseline) return std::nullopt;
  const auto& baseline = summary.candidates[*summary.baseline];
  const auto because = baseline.reason.empty() ? std::string() : ": " + baseline.reason;
  switch (baseline.status) {
    case results::CandidateStatus::build_failed:
      return fmt::format("the baseline ({}) failed to build{}", baseline.record.config, because);
    case results::CandidateStatus::explore_failed:
      return fmt::format("the baseline ({}) failed to explore{}", baseline.record.config, because);
    case results::CandidateStatus::rolled_back:
      return fmt::format("the baseline ({}) failed verification{}", baseline.record.config, because);
    default:
      return std::nullopt;
  }
}

WarmStart warm_start_from(const results::CampaignSummary& other, const Settings& settings, const std::string& file) {
  using results::CandidateStatus;
  const bool maximize = other.campaign.direction != "minimize";
  const auto objectives = results::objectives_text(settings.objectives);
  if (other.campaign.objectives != objectives)
    throw ConfigError(fmt::format("{}: [search] warm_start: its objectives are '{}', this campaign's '{}': a warm start "
                                  "needs the same objectives",
                                  file, other.campaign.objectives.empty() ? other.campaign.objective : other.campaign.objectives,
                                  objectives.empty() ? settings.objective : objectives));
  if (other.campaign.objective != settings.objective || maximize != settings.maximize)
    throw ConfigError(fmt::format("{}: [search] warm_start: it optimises {} ({}), this campaign {} ({}): a warm start "
                                  "needs the same objective",
                                  file, other.campaign.objective, other.campaign.direction, settings.objective,
                                  settings.maximize ? "maximize" : "minimize"));
  WarmStart warm;
  for (const auto& c : other.candidates) {
    std::optional<search::Failure> failure;
    switch (c.status) {
      case CandidateStatus::explored:
      case CandidateStatus::verified: break;
      case CandidateStatus::build_failed: failure = search::Failure::build; break;
      case CandidateStatus::explore_failed: failure = search::Failure::crash; break;
      case CandidateStatus::rolled_back: failure = search::Failure::verification; break;
      default: continue;  // pending or screened: no outcome at this fidelity
    }
    search::Observation o;
    try {
      o.config = settings.space.parse_configuration(c.record.config);
      if (!settings.space.feasible(o.config)) throw search::SpaceError("it breaks a [space] constraint");
    } catch (const search::SpaceError& e) {
      if (warm.off_space++ == 0) warm.first_off_space = fmt::format("'{}': {}", c.record.config, e.what());
      continue;
    }
    if (failure) {
      o.failure = *failure;
      ++warm.failed;
    } else if (settings.objectives.empty()) {
      o.loss = {maximize ? -*c.objective : *c.objective};
    } else {  // several objectives: each one's loss (other.goals are this campaign's, checked above)
      for (const auto& goal : other.goals)
        if (const auto v = results::goal_value(c, goal, other.campaign)) o.loss.push_back(goal.maximize ? -*v : *v);
      if (o.loss.size() != other.goals.size()) continue;  // explored without every objective: says nothing
    }
    warm.observations.push_back(std::move(o));
  }
  if (warm.observations.empty() && warm.off_space > 0)
    throw ConfigError(fmt::format("{}: [search] warm_start: none of its {} candidates with an outcome is a "
                                  "configuration of this campaign's space (the first, {})",
                                  file, warm.off_space, warm.first_off_space));
  return warm;
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

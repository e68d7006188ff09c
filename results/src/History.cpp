// History.cpp — best-so-far curves per evaluation and per round, and the campaign's run state.
#include "flotilla/results/History.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>

namespace flotilla::results {
namespace {

bool evaluated(CandidateStatus status) { return status != CandidateStatus::pending; }

// A candidate whose objective may count as "best so far": rolled-back values never do.
std::optional<double> usable(const CandidateSummary& c) {
  return c.status == CandidateStatus::rolled_back ? std::nullopt : c.objective;
}

void keep_best(std::optional<double>& best, std::optional<double> value, bool maximize) {
  if (value && (!best || better(*value, *best, maximize))) best = value;
}

}  // namespace

History history(const CampaignSummary& summary, const std::vector<TrialRecord>& trials) {
  const bool maximize = summary.campaign.direction != "minimize";
  const auto n = summary.candidates.size();
  // When each candidate finished exploring: the end of its last explore repeat; for one with
  // none (a campaign whose objective its tests count, or a failed build), the end of its last
  // trial, so evaluations still come in the order they were judged.
  std::vector<double> explored_at(n, 0), last_end(n, 0);
  double first_start = std::numeric_limits<double>::infinity();
  for (const auto& t : trials) {
    first_start = std::min(first_start, t.start);
    if (t.candidate < 0 || static_cast<std::size_t>(t.candidate) >= n) continue;
    const auto i = static_cast<std::size_t>(t.candidate);
    if (t.kind == TrialKind::explore) explored_at[i] = std::max(explored_at[i], t.end);
    if (t.kind != TrialKind::confirm && t.kind != TrialKind::warmup) last_end[i] = std::max(last_end[i], t.end);
  }
  for (std::size_t i = 0; i < n; ++i)
    if (explored_at[i] == 0) explored_at[i] = last_end[i];
  if (trials.empty()) first_start = 0;

  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < n; ++i)
    if (evaluated(summary.candidates[i].status)) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return explored_at[a] < explored_at[b]; });

  History h;
  std::optional<double> best, best_verified;
  for (auto i : order) {
    const auto& c = summary.candidates[i];
    const auto before = best;
    keep_best(best, usable(c), maximize);
    if (c.status == CandidateStatus::verified) keep_best(best_verified, c.objective, maximize);
    h.evaluations.push_back({.evaluation = h.evaluations.size() + 1,
                             .candidate = i,
                             .elapsed = explored_at[i] - first_start,
                             .objective = c.objective,
                             .best_so_far = best,
                             .best_verified_so_far = best_verified,
                             .improved = best != before});
  }

  // Rounds in order; best-so-far carries over from round to round.
  std::map<std::int32_t, std::vector<std::size_t>> by_round;
  for (std::size_t i = 0; i < n; ++i) by_round[summary.candidates[i].record.round].push_back(i);
  std::optional<double> round_carry, verified_carry;
  std::optional<std::size_t> best_index, best_verified_index;
  for (const auto& [round, members] : by_round) {
    RoundHistory r{.round = round, .candidates = members.size()};
    for (auto i : members) {
      const auto& c = summary.candidates[i];
      r.failed += c.status == CandidateStatus::explore_failed || c.status == CandidateStatus::build_failed;
      r.verified += c.status == CandidateStatus::verified;
      r.rolled_back += c.status == CandidateStatus::rolled_back;
      r.pending += c.status == CandidateStatus::pending;
      keep_best(r.round_best, usable(c), maximize);
      if (auto v = usable(c); v && (!round_carry || better(*v, *round_carry, maximize))) {
        round_carry = v;
        best_index = i;
      }
      if (c.status == CandidateStatus::verified &&
          (!verified_carry || better(*c.objective, *verified_carry, maximize))) {
        verified_carry = c.objective;
        best_verified_index = i;
      }
    }
    r.best_so_far = round_carry;
    r.best_verified_so_far = verified_carry;
    r.best_candidate = best_verified_index ? best_verified_index : best_index;
    h.rounds.push_back(r);
  }
  return h;
}

std::string_view to_string(RunState state) {
  switch (state) {
    case RunState::finished:
      return "finished";
    case RunState::interrupted:
      return "interrupted";
    case RunState::running:
      return "running";
    case RunState::stopped:
      return "stopped";
    case RunState::cancelled:
      return "cancelled";
  }
  return "unknown";
}

RunStatus run_status(const std::vector<EventRecord>& events, const CampaignSummary& summary, bool writer_active) {
  RunStatus s{.pending = summary.count(CandidateStatus::pending), .candidates = summary.candidates.size()};
  // The last lifecycle event decides; other events (batch_proposed, verified, ...) say nothing
  // about whether the writer is still there.
  std::string last;
  for (const auto& e : events)
    if (e.kind == "campaign_started" || e.kind == "campaign_resumed" || e.kind == "campaign_finished" ||
        e.kind == "interrupted" || e.kind == "cancelled")
      last = e.kind;
  // Finished wins over a live writer: the writer keeps its lock until its process exits.
  if (last == "campaign_finished")
    s.state = RunState::finished;
  else if (writer_active)
    s.state = RunState::running;
  else if (last == "interrupted")
    s.state = RunState::interrupted;
  else if (last == "cancelled")
    s.state = RunState::cancelled;
  else
    s.state = RunState::stopped;
  return s;
}

std::string RunStatus::note() const {
  if (complete()) return {};
  const auto pending_text =
      pending ? fmt::format(" with {} of {} candidates pending", pending, candidates) : std::string();
  switch (state) {
    case RunState::running:
      return fmt::format("incomplete: the campaign is still running{}; these are its results so far", pending_text);
    case RunState::interrupted:
      return fmt::format("incomplete: the campaign was interrupted{}; run it again to resume", pending_text);
    case RunState::stopped:
      return fmt::format(
          "incomplete: the campaign stopped without finishing (crashed or killed){}; run it again "
          "to resume",
          pending_text);
    case RunState::cancelled:
      return fmt::format("incomplete: the campaign was stopped by `flotilla cancel`{}; run it again to resume",
                         pending_text);
    case RunState::finished:
      return fmt::format("incomplete: the campaign finished{}", pending_text);
  }
  return {};
}

}  // namespace flotilla::results

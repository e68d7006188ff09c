// Round.cpp — one round of a campaign (Runner.h): propose -> build -> explore -> evaluate ->
// confirm.
//
// Round 0 holds the baseline (when one is given); every later round holds one batch asked from
// the strategy, and the proposers' candidates. Each round explores its candidates (repeats),
// gates the best of them and evaluates those (shards), then confirms the best against the
// baseline. On resume the same rounds run over what is recorded, running only the tasks without
// a recorded result.
#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "../Clock.h"
#include "flotilla/results/Events.h"
#include "flotilla/results/Lineage.h"
#include "flotilla/scheduler/Planning.h"
#include "flotilla/scheduler/Proposals.h"
#include "Runner.h"

namespace flotilla::scheduler {

using results::proposal_of;

RoundEnd CampaignRunner::run_round(int round) {
  // A round every proposer answered was recorded in one flush; a stop part-way through that
  // flush can leave accepted proposals without their candidates: they get them now. A round
  // only some answered (the flush stopped between two proposers' rows) is asked again of the
  // others below, and completed with their answers.
  if (m_propose.active() && fleet_answered(round)) complete_proposals(round);
  auto ids = m_ledger.round_ids(round);
  if (ids.empty() && m_propose.active() && fleet_answered(round)) return RoundEnd::next();  // answered with nothing to run
  if (ids.empty()) {
    if (auto end = new_batch(round)) return *end;
    ids = m_ledger.round_ids(round);
    if (ids.empty()) return RoundEnd::next();  // the proposers' answers were all refused: the next round asks again
  }
  if (auto halt = run_builds(round, ids)) return RoundEnd::stopped(*halt);
  // gate = all on Slurm: the round's evaluations do not depend on the explore results, so they
  // are submitted with the explore job and start when it completes (afterok), without a round
  // trip through the scheduler. Evaluations of a candidate whose exploration failed are dropped.
  // Not with a fidelity: screened candidates are never verified, and a pipelined round would
  // submit their evaluations before knowing which are screened.
  const bool pipelined = m_dispatch.backend().capabilities().dependencies && m_s.gate.kind == Gate::Kind::all &&
                         !m_s.evaluate_command.empty() && m_s.fidelity.empty();
  if (auto halt = explore(round, ids, pipelined)) return RoundEnd::stopped(*halt);
  if (auto halt = evaluate_round(round, ids, pipelined)) return RoundEnd::stopped(*halt);
  if (auto halt = confirm_round(round)) return RoundEnd::stopped(*halt);
  return RoundEnd::next();
}

// A fresh round: the strategy's batch and the proposers' candidates, or the campaign's end.
// Returns how the round ends when it adds nothing to run.
std::optional<RoundEnd> CampaignRunner::new_batch(int round) {
  auto summary = m_ledger.summarize();
  std::optional<double> best;
  if (summary.best && summary.best_verified) best = summary.candidates[*summary.best].objective;
  if (m_s.stop_on_baseline_failure)
    if (auto failure = baseline_failure(summary))
      return RoundEnd::finished(
          fmt::format("stopped: {}; intent.on_baseline_failure = continue searches anyway", *failure));
  const auto explored = m_ledger.explored_count();
  auto reason = stop_reason(m_s, explored, best);
  const bool target = reason && m_s.target && reason->starts_with("target");
  std::vector<search::Configuration> configs;
  if (!reason) {
    configs = m_strategy->ask(std::min(m_s.batch, m_s.budget - explored));
    if (configs.empty())
      reason = fmt::format("search space exhausted after {} candidates (budget {})", explored, m_s.budget);
  }
  // A campaign never ends on a pick measured below full fidelity (a target is reached only
  // at full fidelity, so it needs none).
  if (reason && !target) {
    if (auto twin = full_fidelity_twin(summary)) {
      m_progress.note(fmt::format("measuring the best screened candidate at full fidelity: {}",
                                  m_s.space.to_text(*twin)));
      m_strategy->reserve(*twin);  // the strategy did not propose it, and must not propose it again
      add_candidates(round, {*twin}, "fidelity");
      reason.reset();
    }
  }
  // Proposers (docs/propose.md): they add code candidates while their budget lasts, and
  // once the declared candidates are spent they are what the campaign goes on with.
  const auto& proposals = m_ledger.proposals();
  const int made = proposals_made(proposals);
  int retired_now = 0;
  for (int i = 0; i < m_s.propose.parallel; ++i) retired_now += retired(proposals, i);
  const bool proposing = !target && m_propose.active() && made < m_s.propose.budget &&
                         retired_now < m_s.propose.parallel &&
                         proposer_runs(m_s.propose, reason.has_value(), rounds_without_gain(summary, round));
  if (reason && !proposing) {
    if (!m_propose.active() || target) return RoundEnd::finished(*reason);
    return RoundEnd::finished(fmt::format("{}; {} proposals made (propose.budget {}){}", *reason, made,
                                          m_s.propose.budget,
                                          retired_now == m_s.propose.parallel ? ", and the proposers are done" : ""));
  }
  if (proposing) {
    if (auto halt = propose(round, summary, configs, reason.has_value())) return RoundEnd::stopped(*halt);
  } else {
    if (!configs.empty()) add_candidates(round, configs, std::string(m_strategy->name()));
    complete_proposals(round);  // the answers of a partly answered round, if any
  }
  return std::nullopt;
}

// The build stage (BuildStage.h): the round's candidates are built, once per build key, before
// any of their tasks is submitted; each build trial is recorded as soon as it is known.
Halt CampaignRunner::run_builds(int round, const std::vector<std::int64_t>& ids) {
  if (!m_builds.active()) return std::nullopt;
  m_progress.update(progress(round, "build"));
  m_detached_builds += m_builds.run(
      ids, m_ledger.trials(), [this](std::int64_t id) { return m_tasks.parameter_values(id); },
      [this](results::TrialRecord t) { m_ledger.add_trial(std::move(t)); }, [this] { return m_stops.any(); },
      [this] { return !(m_stops.signalled() && m_o.cancel_on_interrupt); });
  if (m_builds.held()) return Stop::held;
  if (m_stops.any()) return m_dispatch.obey_stop();
  m_progress.update(progress(round, "build"), true);
  return std::nullopt;
}

// The round's benchmark repeats (with their evaluations, pipelined), then more repeats where
// the intervals are not decided yet; each explored candidate is told to the strategy.
Halt CampaignRunner::explore(int round, const std::vector<std::int64_t>& ids, bool pipelined) {
  if (pipelined) {
    m_dispatch.begin_speculative();
    if (auto halt = run_phases(round, "explore+evaluate", {{ids, results::TrialKind::explore, m_s.repeats},
                                                            {ids, results::TrialKind::evaluate, m_s.shards}}))
      return halt;
    m_dispatch.end_speculative();
  } else {
    if (auto halt = run_phases(round, "explore", {{ids, results::TrialKind::explore, m_s.repeats}})) return halt;
  }
  if (auto halt = run_adaptive_repeats(round, ids)) return halt;
  const auto& summary = m_ledger.summary();
  record_estimates(summary, ids);
  // An objective counted from tests is known once the candidate is evaluated: told then.
  for (auto id : ids) {
    const auto& c = summary.candidates[static_cast<std::size_t>(id)];
    if (!proposal_of(c.record) && !m_s.tests_objective()) tell(c);
  }
  return std::nullopt;
}

// Racing (Planning.h, more_repeats): waves of `repeats` more repeats for the candidates whose interval
// still contains the incumbent's objective, until none does or they reach max_repeats.
Halt CampaignRunner::run_adaptive_repeats(int round, const std::vector<std::int64_t>& ids) {
  if (m_s.repeats == 0) return std::nullopt;  // nothing is explored (an objective counted from tests)
  for (;;) {
    const auto& summary = m_ledger.summary();
    std::vector<results::CandidateSummary> in_round;
    for (auto id : ids) in_round.push_back(summary.candidates[static_cast<std::size_t>(id)]);
    const auto more = more_repeats(in_round, incumbent_objective(summary), m_s.repeats, m_s.max_repeats);
    if (more.empty()) return std::nullopt;
    std::vector<jobs::TaskSpec> specs;
    std::vector<std::string> named;
    for (const auto& m : more) {
      for (int index : missing_indices(m_ledger.trials_of(m.candidate), results::TrialKind::explore, m.total))
        specs.push_back(m_tasks.make(m.candidate, results::TrialKind::explore, index));
      named.push_back(fmt::format("{}", m.candidate));
    }
    m_ledger.event("repeats_added", fmt::format("round {}: candidates {}: their intervals contain the incumbent's {}",
                                                round, fmt::join(named, " "), m_s.objective));
    if (auto halt = m_dispatch.run(std::move(specs), show(round, "explore (adaptive repeats)"))) return halt;
  }
}

// The test half of verification: the gate's choice of the round's candidates is evaluated in
// waves (each rollback makes room for the next best), and each decision is recorded.
Halt CampaignRunner::evaluate_round(int round, const std::vector<std::int64_t>& ids, bool pipelined) {
  if (m_s.evaluate_command.empty()) return std::nullopt;
  if (pipelined) {
    if (auto halt = run_test_gates(round, ids)) return halt;
    record_decisions(ids);
  }
  for (const auto& c : m_ledger.summarize_ids(ids))
    if (c.record.origin == "baseline" && (c.objective || m_s.tests_objective()))
      if (auto halt = evaluate(round, {c.record.id})) return halt;
  // An evaluation a killed run started is finished, whatever the gate says now: the gate
  // may have moved (a better incumbent), but a candidate is never left half-verified.
  std::vector<std::int64_t> started;
  for (const auto& c : m_ledger.summarize_ids(ids))
    if (c.status == results::CandidateStatus::explored && c.shards_done > 0 && c.record.origin != "baseline")
      started.push_back(c.record.id);
  if (!started.empty())
    if (auto halt = evaluate(round, started)) return halt;
  if (!m_s.objectives.empty()) {
    if (m_s.gate.kind == Gate::Kind::all) {  // every explored candidate of the round, then the front
      std::vector<std::int64_t> all;
      for (const auto& c : m_ledger.summarize_ids(ids))
        if (c.status == results::CandidateStatus::explored) all.push_back(c.record.id);
      if (!all.empty())
        if (auto halt = evaluate(round, all)) return halt;
    }
    if (auto halt = evaluate_front(round)) return halt;
    record_decisions(ids);
    return std::nullopt;
  }
  // Waves: each rollback makes room for the next best candidate of the round.
  for (;;) {
    const auto& summary = m_ledger.summary();
    std::vector<results::CandidateSummary> current;
    for (auto id : ids) current.push_back(summary.candidates[static_cast<std::size_t>(id)]);
    std::optional<double> incumbent;
    if (summary.best && summary.best_verified) incumbent = incumbent_objective(summary);
    auto chosen = next_evaluations(current, m_s.gate, m_s.maximize, incumbent);
    if (chosen.empty()) break;
    if (auto halt = evaluate(round, chosen)) return halt;
  }
  record_decisions(ids);  // a decision a killed run recorded no event for
  if (m_s.tests_objective())
    for (const auto& c : m_ledger.summarize_ids(ids))
      if (!proposal_of(c.record) && c.status == results::CandidateStatus::verified) tell(c);
  return std::nullopt;
}

// Several objectives (docs/objectives.md): every member of the Pareto front of the explored
// candidates is verified, from whichever round it came. Waves: a rolled-back member leaves the
// front, and the candidates it alone dominated join it and are verified in turn.
Halt CampaignRunner::evaluate_front(int round) {
  std::set<std::int64_t> tried;
  for (;;) {
    const auto& summary = m_ledger.summary();
    std::vector<std::int64_t> chosen;
    for (auto i : summary.front) {
      const auto& c = summary.candidates[i];
      if (c.status == results::CandidateStatus::explored && tried.insert(c.record.id).second)
        chosen.push_back(c.record.id);
    }
    if (chosen.empty()) return std::nullopt;
    if (auto halt = evaluate(round, chosen)) return halt;
  }
}

Halt CampaignRunner::evaluate(int round, const std::vector<std::int64_t>& ids) {
  if (auto halt = run_phases(round, "evaluate", {{ids, results::TrialKind::evaluate, m_s.shards}})) return halt;
  if (auto halt = run_test_gates(round, ids)) return halt;
  record_decisions(ids);
  return std::nullopt;
}

// Suites (SuiteStage.h): once a candidate's shards are in, one re-run of its failures, then
// its outcomes and the gate's verdict are recorded.
Halt CampaignRunner::run_test_gates(int round, const std::vector<std::int64_t>& ids) {
  if (!m_suite.active()) return std::nullopt;
  std::vector<jobs::TaskSpec> reruns;
  for (auto id : ids)
    if (m_suite.awaits_verdict(id, m_ledger.trials_of(id)))
      if (auto spec = m_suite.rerun_task(id, m_tasks.suite_argv(id), m_ledger.trials_of(id))) reruns.push_back(std::move(*spec));
  if (auto halt = m_dispatch.run(std::move(reruns), show(round, "re-run failures"))) return halt;
  for (auto id : ids) {
    if (!m_suite.awaits_verdict(id, m_ledger.trials_of(id))) continue;
    auto verdict = m_suite.verdict(m_ledger.store(), id, m_tasks.suite_argv(id), m_ledger.trials_of(id), m_ledger.baseline_id());
    m_ledger.evaluated_now(id);
    m_ledger.add_trial(std::move(verdict));
  }
  return std::nullopt;
}

// The journal's verified / rolled_back event of each decided candidate, once: the ledger knows
// those the journal already has (read on resume), so a run killed between a candidate's last
// shard and its event records the event when it resumes.
void CampaignRunner::record_decisions(const std::vector<std::int64_t>& chosen) {
  const auto& summary = m_ledger.summary();
  // One append and flush for the batch's decisions, not one each (a quarter of flotilla's CPU in
  // an mpi campaign of 4x10^4 tasks, bench/scale). A run killed before the group commits loses
  // them, and the resumed run records them again: a decision is made from trials, and
  // first_decision reads which events exist.
  results::Store::Group group(m_ledger.store());
  for (auto id : chosen) {
    const auto& c = summary.candidates[static_cast<std::size_t>(id)];
    if (c.status != results::CandidateStatus::verified && c.status != results::CandidateStatus::rolled_back) continue;
    if (!m_ledger.first_decision(id)) continue;
    if (c.status == results::CandidateStatus::verified) {
      m_ledger.store().add_event(results::candidate_event(now_seconds(), "verified", id, c.record.config));
    } else {
      m_ledger.store().add_event(results::candidate_event(now_seconds(), "rolled_back", id, c.reason));
      // The replay on resume told the strategy of rollbacks already recorded; only one this
      // run saw happen is news to it.
      if (m_ledger.was_evaluated_now(id) && !proposal_of(c.record))
        m_strategy->tell(m_ledger.config(id), search::Failure::verification);
    }
  }
}

// The performance half of verification (docs/verdicts.md): the best candidates that would
// beat the winner are measured against the baseline in interleaved pairs, one at a time, until
// one is confirmed faster.
Halt CampaignRunner::confirm_round(int round) {
  if (!m_s.confirm) return std::nullopt;
  const auto reference = m_ledger.baseline_id();
  if (!reference) return std::nullopt;
  auto summary = m_ledger.summarize();
  if (!summary.candidates[static_cast<std::size_t>(*reference)].objective) return std::nullopt;  // nothing to compare with
  for (auto id : confirmation_candidates(summary, incumbent_objective(summary), m_s.confirm_tries, m_s.max_repeats)) {
    if (auto halt = m_dispatch.run({m_tasks.make(id, results::TrialKind::confirm, 0)}, show(round, "confirm")))
      return halt;
    summary = m_ledger.summarize();
    const auto& c = summary.candidates[static_cast<std::size_t>(id)];
    if (c.confirmation) record_confirmation(c, *c.confirmation);
    if (c.confirmed_faster()) break;
  }
  return head_to_head_round(round);
}

// Candidates confirmed faster whose intervals over the baseline overlap the winner's cannot be
// told apart by them: each is measured against the winner in interleaved pairs, one at a time,
// until the winner is one no finalist beat (docs/verdicts.md, "Ties"). Each pair of candidates
// meets at most once, so the loop ends.
Halt CampaignRunner::head_to_head_round(int round) {
  if (!m_s.confirm_head_to_head) return std::nullopt;
  for (auto summary = m_ledger.summarize(); !summary.duels_wanted.empty();) {
    const auto [challenger, opponent] = summary.duels_wanted.front();
    if (auto halt = m_dispatch.run({m_tasks.make(challenger, results::TrialKind::confirm, static_cast<int>(opponent + 1))},
                                   show(round, "head to head")))
      return halt;
    summary = m_ledger.summarize();  // the next duel is decided from this one too
    const auto& c = summary.candidates[static_cast<std::size_t>(challenger)];
    auto it = c.head_to_head.find(opponent);
    if (it == c.head_to_head.end() || it->second.result.verdict == results::stats::Verdict::pending)
      break;  // not measured (lost and out of attempts): a resumed run tries again
    record_confirmation(c, it->second);
  }
  return std::nullopt;
}

// A confirmation's /confirmations row and event, once per (candidate, reference): against the
// baseline ("confirmed" / "not_confirmed") or head to head against another finalist.
void CampaignRunner::record_confirmation(const results::CandidateSummary& c, const results::ConfirmationSummary& done) {
  const auto& r = done.result;
  if (r.verdict == results::stats::Verdict::pending || !m_ledger.first_confirmation(c.record.id, done.reference)) return;
  const bool head_to_head = done.reference != m_ledger.baseline_id();
  results::Store::Group group(m_ledger.store());
  m_ledger.store().add_confirmation({.candidate = c.record.id, .reference = done.reference,
                                     .verdict = std::string(results::stats::verdict_key(r.verdict)),
                                     .pairs = r.pairs, .looks = r.looks, .ratio = r.ratio, .low = r.low,
                                     .high = r.high, .confidence = m_s.confirm_confidence,
                                     .min_effect = m_s.confirm_min_effect, .time = now_seconds(),
                                     .reason = done.reason});
  const auto against = head_to_head ? fmt::format("candidate {} head to head", done.reference) : "the baseline";
  const auto words = r.verdict == results::stats::Verdict::failed || r.verdict == results::stats::Verdict::unreliable
                         ? fmt::format("{}: {}", results::stats::to_string(r.verdict), done.reason)
                         : fmt::format("{}: {:.4g}x [{:.4g}, {:.4g}] over {} in {} pairs",
                                       results::stats::to_string(r.verdict), r.ratio, r.low, r.high, against, r.pairs);
  const auto kind = head_to_head                                         ? "head_to_head"
                    : r.verdict == results::stats::Verdict::faster ? "confirmed"
                                                                          : "not_confirmed";
  m_ledger.store().add_event(results::candidate_event(now_seconds(), kind, c.record.id, words));
  group.commit();
  m_progress.note(fmt::format("candidate {}: {}", c.record.id, words));
}

// Each explored candidate's estimate, once its exploration is final (recorded again only if a
// resumed campaign added repeats).
void CampaignRunner::record_estimates(const results::CampaignSummary& summary, const std::vector<std::int64_t>& ids) {
  results::Store::Group group(m_ledger.store());
  for (auto id : ids) {
    const auto& c = summary.candidates[static_cast<std::size_t>(id)];
    if (!c.interval || !m_ledger.first_estimate(id, c.repeats_done)) continue;
    m_ledger.store().add_estimate({.candidate = id, .repeats = c.repeats_done, .estimate = c.interval->estimate,
                                   .low = c.interval->low, .high = c.interval->high,
                                   .coverage = c.interval->coverage, .time = now_seconds()});
  }
  group.commit();
}

// Runs the missing tasks of every part together, until each has come back.
Halt CampaignRunner::run_phases(int round, const char* phase, const std::vector<PhasePart>& parts) {
  std::vector<jobs::TaskSpec> specs;
  for (const auto& part : parts)
    for (auto id : part.ids) {
      if (part.kind == results::TrialKind::evaluate && m_ledger.explore_outcome(id) == false) continue;
      if (m_builds.active() && m_ledger.build_failed(id)) continue;  // never explored, never evaluated
      const auto recorded = m_ledger.trials_of(id);
      // Warm-ups first: the local backend starts tasks in submission order.
      if (part.kind == results::TrialKind::explore)
        for (int index : missing_indices(recorded, results::TrialKind::warmup, m_s.warmup))
          specs.push_back(m_tasks.make(id, results::TrialKind::warmup, index));
      for (int index : missing_indices(recorded, part.kind, part.count))
        specs.push_back(m_tasks.make(id, part.kind, index));
    }
  return m_dispatch.run(std::move(specs), show(round, phase));
}

// search.fidelity: the configuration, at full fidelity, of the best candidate screened at the
// highest fidelity below full, when no candidate has that configuration yet (so a campaign
// adds it once, at its end).
std::optional<search::Configuration> CampaignRunner::full_fidelity_twin(const results::CampaignSummary& summary) const {
  if (m_s.fidelity.empty()) return std::nullopt;
  const auto& params = m_s.space.parameters();
  const auto d = static_cast<std::size_t>(
      std::find_if(params.begin(), params.end(), [&](const auto& p) { return p.name == m_s.fidelity; }) -
      params.begin());
  const double full = params[d].grid_value(params[d].grid_size() - 1);
  const auto& configs = m_ledger.configs();
  const results::CandidateSummary* best = nullptr;
  for (const auto& c : summary.candidates) {
    if (c.status != results::CandidateStatus::screened || !c.objective) continue;
    const double level = configs[static_cast<std::size_t>(c.record.id)][d];
    const double best_level = best ? configs[static_cast<std::size_t>(best->record.id)][d] : -INFINITY;
    if (!best || level > best_level ||
        (level == best_level && results::better(*c.objective, *best->objective, m_s.maximize)))
      best = &c;
  }
  if (!best) return std::nullopt;
  auto twin = configs[static_cast<std::size_t>(best->record.id)];
  twin[d] = full;
  if (!m_s.space.feasible(twin) || std::find(configs.begin(), configs.end(), twin) != configs.end())
    return std::nullopt;
  return twin;
}


}  // namespace flotilla::scheduler

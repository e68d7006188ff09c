// Proposing.cpp — the proposers' part of a round (Runner.h; docs/propose.md): they read a
// context of what the campaign has shown, write proposals, and the accepted ones become the
// round's code candidates, recorded with the proposals in one flush.
#include <set>

#include <fmt/format.h>

#include "flotilla/results/Lineage.h"
#include "flotilla/scheduler/Proposals.h"
#include "Runner.h"

namespace flotilla::scheduler {

// Whether every proposer of the fleet answered `round` (or had retired before it).
bool CampaignRunner::fleet_answered(int round) const {
  bool any = false;
  for (int i = 0; i < m_s.propose.parallel; ++i) {
    if (answered(m_ledger.proposals(), round, i)) any = true;
    else if (!retired(m_ledger.proposals(), i)) return false;
  }
  return any;
}

// Accepted proposals of `round` whose candidate a killed run did not record: their candidates
// now, so an accepted proposal is never lost (and never added twice: origins are checked).
void CampaignRunner::complete_proposals(int round) {
  const auto missing = m_ledger.proposals_without_candidates(round);
  if (missing.empty()) return;
  results::Store::Group group(m_ledger.store());
  for (const auto* p : missing)  // the configuration is the parent's, with the proposal's parameters
    m_ledger.add_candidate(round, m_s.space.parse_configuration(m_ledger.accepted_config(*p)),
                           fmt::format("proposal {}", p->id));
  m_ledger.event("proposals_completed",
                 fmt::format("round {}: {} accepted proposals got the candidates a stopped run had not recorded", round,
                             missing.size()));
  group.commit();
}

// The per-test view a proposer reads of each candidate it is shown.
std::map<std::int64_t, ContextTests> CampaignRunner::context_tests(const std::vector<std::int64_t>& ids) const {
  const auto& store = m_ledger.store();
  std::map<std::int64_t, ContextTests> out;
  const auto reference = m_ledger.baseline_id();
  std::optional<results::CandidateTests> base;
  std::optional<results::TestSuite> base_suite;
  if (reference) base = store.test_results(*reference);
  if (base) base_suite = store.test_suite(base->suite);
  for (auto id : ids) {
    if (out.contains(id)) continue;
    auto tests = store.test_results(id);
    if (!tests) continue;
    const auto suite = store.test_suite(tests->suite);
    ContextTests view;
    const auto sum = results::summarize(tests->outcomes);
    view.passed = sum.pass;
    view.total = sum.total;
    for (std::size_t i = 0; i < tests->outcomes.size() && view.failing.size() < kContextFailingTests; ++i)
      if (results::effective_outcome(tests->outcomes[i]) != results::TestOutcome::pass &&
          results::effective_outcome(tests->outcomes[i]) != results::TestOutcome::skip)
        view.failing.push_back(suite.names.at(i));
    if (base && base_suite && id != *reference) {
      const auto diff = results::diff_outcomes(*base_suite, base->outcomes, suite, tests->outcomes);
      for (auto i : diff.fixes)
        if (view.fixed.size() < kContextFailingTests) view.fixed.push_back(suite.names.at(static_cast<std::size_t>(i)));
      for (auto i : diff.regressions)
        if (view.broken.size() < kContextFailingTests) view.broken.push_back(suite.names.at(static_cast<std::size_t>(i)));
    }
    out.emplace(id, std::move(view));
  }
  return out;
}

// Runs the proposers for a fresh round and records, in one flush, what they proposed (accepted
// and refused), the candidates of the accepted ones after the round's declared `configs`, and
// each proposer's `answered` row.
Halt CampaignRunner::propose(int round, const results::CampaignSummary& summary,
                             const std::vector<search::Configuration>& configs, bool declared_spent) {
  const auto& proposals = m_ledger.proposals();
  const int made = proposals_made(proposals);
  const auto best = resolve_parent("best", summary).id;
  const auto plain = m_propose.trees().ensure({}, proposals);
  const auto best_tree = best ? tree_of(*best) : plain;
  std::vector<std::int64_t> shown;
  if (best) shown.push_back(*best);
  if (auto base = m_ledger.baseline_id()) shown.push_back(*base);
  for (auto index : summary.ranking())
    if (shown.size() < kContextOthers + 2) shown.push_back(summary.candidates[index].record.id);
  for (const auto& c : m_ledger.candidates())
    if (c.round >= round - 2) shown.push_back(c.id);
  const auto tests = context_tests(shown);
  const int left = std::max(0, m_s.propose.budget - made);
  const auto declared_left =
      declared_spent ? 0 : static_cast<int>(m_s.budget - std::min(m_s.budget, m_ledger.explored_count()));
  const int stall = rounds_without_gain(summary, round);
  std::vector<int> indices;
  for (int i = 0; i < m_s.propose.parallel; ++i)
    if (!answered(proposals, round, i) && !retired(proposals, i)) indices.push_back(i);
  m_progress.update(progress(round, "propose"));
  const auto runs = m_propose.run(
      round, indices,
      [&](int index) {
        ContextInputs in{.settings = m_s, .summary = summary, .candidates = m_ledger.candidates(),
                         .trials = m_ledger.trials(), .proposals = proposals, .round = round, .index = index,
                         .seed = m_propose.seed(round, index),
                         .out = m_propose.folder() / fmt::format("r{}", round) / fmt::format("out{}", index),
                         .plain_tree = plain, .best_tree = best_tree, .best = best, .tests = tests,
                         .proposals_left = left, .declared_left = declared_left, .rounds_without_gain = stall};
        return proposal_context(in).dump(2);
      },
      [this] { return m_stops.any(); }, {plain, best_tree});
  if (m_stops.any()) return m_dispatch.obey_stop();  // nothing they wrote counts: asked again on resume
  auto judged = m_propose.judge(round, runs, summary, m_ledger.candidates(), proposals, made);
  results::Store::Group group(m_ledger.store());
  for (const auto& a : judged.accepted)  // the configuration an accepted proposal's candidate gets
    judged.records[a.record].reason = "configuration: " + a.config;
  for (auto& record : judged.records) record.id = m_ledger.add_proposal(record);
  for (const auto& config : configs) m_ledger.add_candidate(round, config, std::string(m_strategy->name()));
  // Every accepted proposal of the round without its candidate, in the journal's order: those a
  // stopped flush left (answers of proposers that are not asked again) and today's.
  for (const auto* p : m_ledger.proposals_without_candidates(round))
    m_ledger.add_candidate(round, m_s.space.parse_configuration(m_ledger.accepted_config(*p)),
                           fmt::format("proposal {}", p->id));
  std::vector<std::string> said;
  for (const auto& r : judged.records)
    if (r.status == results::ProposalStatus::answered) said.push_back(fmt::format("proposer {}: {}", r.proposer, r.reason));
  m_ledger.event("proposals", fmt::format("round {}: {}", round, fmt::join(said, "; ")));
  if (!configs.empty())
    m_ledger.event("batch_proposed",
                   fmt::format("round {}: {} candidates ({})", round, configs.size(), m_strategy->name()));
  group.commit();
  for (const auto& line : said) m_progress.note(fmt::format("round {}: {}", round, line));
  for (const auto& r : judged.records)
    if (r.status == results::ProposalStatus::refused)
      m_progress.note(fmt::format("round {}: proposal '{}' refused: {}", round, r.name.empty() ? "-" : r.name, r.reason));
  return std::nullopt;
}

}  // namespace flotilla::scheduler

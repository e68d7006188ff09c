// Ledger.cpp — see Ledger.h.
#include "Ledger.h"

#include "../Clock.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <ostream>

#include <fmt/format.h>

#include "flotilla/results/Events.h"
#include "flotilla/results/Lineage.h"
#include "flotilla/results/Printable.h"

namespace flotilla::scheduler {

bool Ledger::open(const results::CampaignInfo& info, std::ostream& err) {
  if (std::filesystem::exists(m_s.results)) {
    resume(err);
    return true;
  }
  try {
    m_store.emplace(results::Store::create(m_s.results, info));
  } catch (const results::StoreError&) {
    if (!std::filesystem::exists(m_s.results)) throw;
    // Two first runs at the same moment: the other one made the file and runs the campaign.
    throw ConfigError(fmt::format("{}: another run of this campaign created it a moment ago and is running it; "
                                  "wait for it to finish, or stop it, then run the same command again to resume",
                                  m_s.results.string()));
  }
  event("campaign_started", fmt::format("pid {}", getpid()));
  return false;
}

void Ledger::resume(std::ostream& err) {
  m_store.emplace(results::Store::open_for_append(m_s.results));
  if (const auto change = fingerprint_change(m_store->campaign().fingerprint, m_s.fingerprint()))
    throw ConfigError(fmt::format(
        "{}: recorded by a different campaign, so its results cannot be resumed: {}. Restore the setting, or "
        "give a new results file (--campaign.results=FILE)",
        m_s.results.string(), *change));
  m_candidates = m_store->candidates();
  m_trials = m_store->trials();
  for (std::size_t i = 0; i < m_trials.size(); ++i) index_trial(i);
  m_proposals = m_store->proposals();
  for (const auto& e : m_store->estimates()) m_estimated.insert({e.candidate, e.repeats});
  const auto events = m_store->events();
  m_decided = results::decided_candidates(events);
  for (const auto& c : m_store->confirmations()) m_confirmed.insert({c.candidate, c.reference});
  for (const auto& c : m_candidates) m_configs.push_back(m_s.space.parse_configuration(c.config));
  err << fmt::format("resuming {}: {} candidates and {} trials recorded\n", m_s.results.string(), m_candidates.size(),
                     m_trials.size());
  if (!events.empty() && events.back().kind == "disk_full")
    err << fmt::format("{}: the last run {}\n", m_s.results.string(), events.back().detail);
  for (const auto& repair : m_store->repairs()) {
    err << results::printable(fmt::format("{}: repaired: {}\n", m_s.results.string(), repair));
    event("file_repaired", repair);
  }
  event("campaign_resumed", fmt::format("pid {}", getpid()));
}

void Ledger::event(std::string kind, std::string detail) {
  m_store->add_event({now_seconds(), std::move(kind), std::move(detail)});
}

// A trial whose candidate is not recorded (a negative id) is in no candidate's list, as
// results::summarize leaves it out of every candidate's summary.
void Ledger::index_trial(std::size_t position) {
  const auto id = m_trials[position].candidate;
  if (id < 0) return;
  const auto at = static_cast<std::size_t>(id);
  if (at >= m_trials_by_candidate.size()) m_trials_by_candidate.resize(at + 1);
  m_trials_by_candidate[at].push_back(position);
}

std::vector<const results::TrialRecord*> Ledger::trials_of(std::int64_t id) const {
  std::vector<const results::TrialRecord*> out;
  if (id < 0 || static_cast<std::size_t>(id) >= m_trials_by_candidate.size()) return out;
  for (auto position : m_trials_by_candidate[static_cast<std::size_t>(id)]) out.push_back(&m_trials[position]);
  m_trial_reads += out.size();
  return out;
}

const results::CampaignSummary& Ledger::summary() const {
  if (!m_summary) {
    const auto before = m_summary_cache.trials_read();
    m_summary = &m_summary_cache.update(m_store->campaign(), m_candidates, m_trials, m_proposals);
    m_trial_reads += m_summary_cache.trials_read() - before;
  }
  return *m_summary;
}

std::vector<results::CandidateSummary> Ledger::summarize_ids(const std::vector<std::int64_t>& ids) const {
  const auto& all = summary();
  std::vector<results::CandidateSummary> out;
  for (auto id : ids) out.push_back(all.candidates[static_cast<std::size_t>(id)]);
  return out;
}

std::vector<std::int64_t> Ledger::round_ids(int round) const {
  std::vector<std::int64_t> ids;
  for (const auto& c : m_candidates)
    if (c.round == round) ids.push_back(c.id);
  return ids;
}

std::optional<std::int64_t> Ledger::baseline_id() const {
  for (const auto& c : m_candidates)
    if (c.origin == "baseline") return c.id;
  return std::nullopt;
}

std::size_t Ledger::explored_count() const {
  return static_cast<std::size_t>(std::count_if(m_candidates.begin(), m_candidates.end(), [](const auto& c) {
    return c.origin != "baseline" && !results::proposal_of(c);
  }));
}

bool Ledger::build_failed(std::int64_t id) const {
  const results::TrialRecord* latest = nullptr;
  for (const auto* t : trials_of(id))
    if (t->kind == results::TrialKind::build && (!latest || t->attempt >= latest->attempt)) latest = t;
  return latest && latest->status != results::TrialStatus::ok;
}

std::optional<bool> Ledger::explore_outcome(std::int64_t id) const {
  std::set<int> ok, failed;
  for (const auto* t : trials_of(id))
    if (t->kind == results::TrialKind::explore)
      (t->status == results::TrialStatus::ok && !std::isnan(t->objective) ? ok : failed).insert(t->index);
  if (!failed.empty()) return false;
  if (static_cast<int>(ok.size()) < m_s.repeats) return std::nullopt;
  return true;
}

std::vector<const results::ProposalRecord*> Ledger::proposals_without_candidates(int round) const {
  std::set<std::int64_t> have;
  for (const auto& c : m_candidates)
    if (auto p = results::proposal_of(c)) have.insert(*p);
  std::vector<const results::ProposalRecord*> missing;
  for (const auto& p : m_proposals)
    if (p.round == round && p.status == results::ProposalStatus::accepted && !have.contains(p.id)) missing.push_back(&p);
  return missing;
}

std::string Ledger::accepted_config(const results::ProposalRecord& p) const {
  constexpr std::string_view kPrefix = "configuration: ";
  if (p.reason.starts_with(kPrefix)) return p.reason.substr(kPrefix.size());
  return m_candidates.at(static_cast<std::size_t>(p.parent)).config;
}

std::int64_t Ledger::add_candidate(int round, const search::Configuration& config, std::string origin) {
  results::CandidateRecord record{.id = static_cast<std::int64_t>(m_candidates.size()), .round = round,
                                  .config = m_s.space.to_text(config), .origin = std::move(origin)};
  m_store->add_candidate(record);
  m_candidates.push_back(std::move(record));
  m_configs.push_back(config);
  m_summary = nullptr;
  return m_candidates.back().id;
}

bool Ledger::add_trial(results::TrialRecord trial) {
  if (!m_store->add_trial(trial)) return false;
  m_trials.push_back(std::move(trial));
  index_trial(m_trials.size() - 1);
  m_summary = nullptr;
  return true;
}

std::int64_t Ledger::add_proposal(results::ProposalRecord proposal) {
  proposal.id = m_store->add_proposal(proposal);
  m_proposals.push_back(std::move(proposal));
  m_summary = nullptr;
  return m_proposals.back().id;
}

}  // namespace flotilla::scheduler

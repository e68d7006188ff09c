// Ledger.h — what a campaign has recorded: its results file, the tables read from it kept in step
// with it (each change goes to the file, then to memory), and the resume state derived from them.
//
// The campaign's parts read the candidates, trials and proposals from here and record through
// here; nothing else writes the file. Every question about recorded work (a round's candidates,
// the baseline, whether a build failed) is answered from these tables, so a resumed run answers
// it as the run it continues would have.
//
// Scale (issue 35): a question about one candidate reads that candidate's trials only, through
// an index of the trials by candidate kept in step with the table; the campaign's summary is
// brought up to date once per change of the tables (results::SummaryCache: the new records and
// the candidates they change, not every trial) and kept until the next one. trial_reads() counts
// the trial records the answers have read, so tests can hold both to that.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "flotilla/results/Analysis.h"
#include "flotilla/results/Store.h"
#include "flotilla/scheduler/Settings.h"
#include "flotilla/search/Space.h"

namespace flotilla::scheduler {

class Ledger {
 public:
  explicit Ledger(const Settings& settings) : m_s(settings) {}

  // Opens the settings' results file: resumed when it exists (true; a file another campaign
  // recorded is refused, naming the setting that differs), else created with `info` (false).
  // Throws ConfigError, or results::StoreError for a file that cannot be read or written.
  bool open(const results::CampaignInfo& info, std::ostream& err);

  bool is_open() const { return m_store.has_value(); }
  results::Store& store() { return *m_store; }
  const results::Store& store() const { return *m_store; }
  void event(std::string kind, std::string detail);  // stamped now

  const std::vector<results::CandidateRecord>& candidates() const { return m_candidates; }
  const std::vector<search::Configuration>& configs() const { return m_configs; }
  const search::Configuration& config(std::int64_t id) const { return m_configs.at(static_cast<std::size_t>(id)); }
  const std::vector<results::TrialRecord>& trials() const { return m_trials; }
  // The candidate's trials in the order they were recorded (none for an unknown id).
  std::vector<const results::TrialRecord*> trials_of(std::int64_t id) const;
  const std::vector<results::ProposalRecord>& proposals() const { return m_proposals; }

  // The summary of what is recorded (equal to results::summarize of the tables): brought up to
  // date when the tables changed since the last one, else the same summary again. It is one
  // object, updated in place by the first call after a change, so a reference (or one into its
  // candidates) is only good until then; summarize() is a copy to keep across changes.
  const results::CampaignSummary& summary() const;
  results::CampaignSummary summarize() const { return summary(); }
  std::vector<results::CandidateSummary> summarize_ids(const std::vector<std::int64_t>& ids) const;
  std::vector<std::int64_t> round_ids(int round) const;
  std::optional<std::int64_t> baseline_id() const;
  // Declared candidates (search.budget counts them): the baseline and proposals are not.
  std::size_t explored_count() const;
  // Whether the candidate's build is recorded as failed: none of its tasks runs.
  bool build_failed(std::int64_t id) const;
  // Whether every repeat of the candidate's exploration succeeded; nullopt while some are missing.
  std::optional<bool> explore_outcome(std::int64_t id) const;
  // Accepted proposals of `round` whose candidate is not recorded yet, in the journal's order.
  std::vector<const results::ProposalRecord*> proposals_without_candidates(int round) const;
  // An accepted proposal's configuration: its parameters were applied to its parent's when it
  // was judged, and the journal keeps the result in its reason ("configuration: TEXT").
  std::string accepted_config(const results::ProposalRecord& p) const;
  // Trial records read so far by the answers above (summaries and per-candidate questions).
  std::uint64_t trial_reads() const { return m_trial_reads; }

  // Writes; the caller groups them into one flush (results::Store::Group) where they belong together.
  std::int64_t add_candidate(int round, const search::Configuration& config, std::string origin);
  bool add_trial(results::TrialRecord trial);  // false: already recorded (Store::add_trial)
  std::int64_t add_proposal(results::ProposalRecord proposal);

  // Resume state: each is true the first time it is asked for a candidate in the whole campaign
  // (this run and those it resumes), so its record or event is written once.
  bool first_decision(std::int64_t id) { return m_decided.insert(id).second; }
  bool first_estimate(std::int64_t id, int repeats) { return m_estimated.insert({id, repeats}).second; }
  // Once per (candidate, reference): its baseline's, and each head-to-head one (docs/verdicts.md).
  bool first_confirmation(std::int64_t id, std::int64_t reference) { return m_confirmed.insert({id, reference}).second; }
  // Candidates this run ran evaluate tasks for (a rollback among them is news to the strategy).
  void evaluated_now(std::int64_t id) { m_evaluated_now.insert(id); }
  bool was_evaluated_now(std::int64_t id) const { return m_evaluated_now.contains(id); }

 private:
  void resume(std::ostream& err);
  void index_trial(std::size_t position);

  const Settings& m_s;
  std::optional<results::Store> m_store;
  std::vector<results::CandidateRecord> m_candidates;
  std::vector<search::Configuration> m_configs;
  std::vector<results::TrialRecord> m_trials;
  std::vector<results::ProposalRecord> m_proposals;
  std::vector<std::vector<std::size_t>> m_trials_by_candidate;  // positions in m_trials, per candidate id
  mutable results::SummaryCache m_summary_cache;
  mutable const results::CampaignSummary* m_summary = nullptr;  // of the tables as they are; reset by each add
  mutable std::uint64_t m_trial_reads = 0;
  std::set<std::pair<std::int64_t, int>> m_estimated;  // (candidate, repeats) with an estimate recorded
  std::set<std::pair<std::int64_t, std::int64_t>> m_confirmed;  // (candidate, reference) with a confirmation recorded
  std::set<std::int64_t> m_decided;                    // candidates with a verified/rolled_back event
  std::set<std::int64_t> m_evaluated_now;
};

}  // namespace flotilla::scheduler

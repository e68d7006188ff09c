// Analysis.h — what the recorded trials mean: each candidate's status and objective, the best
// verified candidate, failures by reason. Pure functions over records; the scheduler's
// decisions and `flotilla results summary` both use these, so they cannot disagree.
//
// Rules:
//  - For each (candidate, kind, index) only the latest attempt counts.
//  - A candidate's objective is the median over its explore repeats (the campaign's `repeats`
//    and any adaptive ones after them), defined only when at least `repeats` are recorded and
//    every recorded one is ok; its interval is the order-statistic interval of the median at
//    the campaign's confirm confidence (Stats.h); spread is (max - min) / |median|. Warm-up
//    runs never count.
//  - A confirmation (confirm trials, one per interleaved pair; the latest attempt) gives the
//    candidate's verdict against its reference: stats::decide_confirmation over the pairs'
//    log ratios with the campaign's recorded settings; a failed pair makes it `failed`.
//  - The winner (CampaignSummary::best): with confirmation on, the eligible candidate (verified,
//    or explored when there is no evaluate stage) confirmed faster than the baseline with the
//    highest confirmed ratio; when none is, the baseline itself if it is eligible. So a
//    candidate never beats the baseline on a median alone. With confirmation off, or without a
//    baseline, the eligible candidate with the best objective.
//  - A candidate whose latest build trial is not ok is build_failed, whatever else is recorded.
//  - With a fidelity parameter (CampaignInfo::fidelity), an explored candidate at a value other
//    than the full one is screened: it ranks, is verified and wins nowhere.
//  - verified: every evaluate shard recorded and ok. rolled_back: some shard recorded and not ok.
//  - With a test gate (CampaignInfo::test_gate), the gate's verdict is one more required evaluate
//    trial, at index `shards`, so a candidate is not verified between its last shard and its
//    verdict. Evaluate trials beyond it (the re-run of failures, index shards + 1) never count.
//  - A campaign without an evaluate stage (shards == 0) verifies nothing; its best is the best
//    explored candidate, reported as unverified.
//  - Several objectives (CampaignInfo::objectives, Objectives.h): the front is every candidate
//    with a value for each objective, not rolled back, that no other such candidate dominates
//    (Pareto.h); the winner is the one the campaign's pick rule picks from the front of the
//    eligible candidates (verified, or explored without an evaluate stage). Confirmation is off
//    for such campaigns, so no speed-up is claimed for the pick.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "flotilla/results/Objectives.h"
#include "flotilla/results/Provenance.h"
#include "flotilla/results/Stats.h"
#include "flotilla/results/Store.h"

namespace flotilla::results {

// build_failed: its build (a build trial) did not succeed, so it was never explored.
// screened: explored below full fidelity (CampaignInfo::fidelity); never verified, confirmed or
// the winner, because its objective is of a smaller (cheaper) evaluation.
enum class CandidateStatus { pending, explore_failed, explored, verified, rolled_back, build_failed, screened };
std::string_view to_string(CandidateStatus status);

// The trial index of a head-to-head confirmation's pairs (docs/verdicts.md, "Ties"): its pair
// number past kHeadToHeadIndex + slot * kHeadToHeadStride, the slot numbering the challenger's
// head-to-head confirmations (a trial's key, candidate-kind-index-attempt, is recorded once);
// the opponent is the trials' reference_candidate metric. Pairs against the baseline count from 0.
inline constexpr std::int32_t kHeadToHeadIndex = 1 << 30;
inline constexpr std::int32_t kHeadToHeadStride = 1 << 17;  // more than confirm.max_pairs (100,000) + 1

// A candidate's confirmation against its reference, as its pairs say.
struct ConfirmationSummary {
  std::int64_t reference = -1;
  stats::Confirmation result;   // verdict, pairs, ratio and its interval
  std::string reason;           // why it failed
};

struct CandidateSummary {
  CandidateRecord record;
  CandidateStatus status = CandidateStatus::pending;
  std::optional<double> objective;
  std::optional<stats::Interval> interval;  // of the objective (the median), once explored
  double spread = 0;
  int repeats_done = 0;
  int shards_done = 0;
  int shards_passed = 0;
  std::string reason;                     // why it failed or was rolled back
  // build_failed: the build's last output lines and where its whole log is (build_output).
  std::vector<std::string> build_lines;
  std::string build_log;
  std::map<std::string, double> metrics;  // median of each metric over the explore repeats
  std::optional<ConfirmationSummary> confirmation;
  int confirm_runs = 0;                    // runs its confirmation took (2 per pair)
  // Written by a proposer (Lineage.h): its proposal's name, and the names of its chain of
  // patches root first (its own last); empty for the baseline and declared candidates.
  std::string proposal;
  std::vector<std::string> chain;
  std::int64_t parent = -1;               // the candidate its proposal built on
  // How many benchmark runs (any candidate's explore repeats and warm-ups) ran at once while
  // its repeats ran: the median over its repeats of the runs in progress at each one's midpoint
  // (itself included); 0 when its repeats have no times.
  double concurrency = 0;
  // Head-to-head confirmations against other finalists (CampaignSummary::finals), by opponent:
  // the same interleaved pairs, the opponent's benchmark in the baseline's place.
  std::map<std::int64_t, ConfirmationSummary> head_to_head;
  bool confirmed_faster() const {
    return confirmation && confirmation->result.verdict == stats::Verdict::faster;
  }
};

// `baseline`: the baseline's id, whose confirmations are the candidate's `confirmation` (those
// against other candidates are head to head); -1: confirmations that name no reference.
CandidateSummary summarize_candidate(const CandidateRecord& candidate, const std::vector<const TrialRecord*>& trials,
                                     const CampaignInfo& campaign, std::int64_t baseline = -1);
// Whether the candidate's configuration has the campaign's fidelity parameter at a value other
// than its full one (CampaignInfo::fidelity).
bool below_full_fidelity(const CandidateRecord& candidate, const CampaignInfo& campaign);
// The confirmation settings a campaign file records.
stats::ConfirmSettings confirm_settings(const CampaignInfo& campaign);

// An objective counted from the evaluate stage's tests (tests.passed, tests.GROUP) rather than
// measured by explore runs: it is a metric of the test gate's verdict trial.
inline bool is_tests_objective(std::string_view objective) { return objective.starts_with("tests."); }

// True when objective a is strictly better than b.
inline bool better(double a, double b, bool maximize) { return maximize ? a > b : a < b; }

struct CampaignSummary {
  CampaignInfo campaign;
  std::vector<CandidateSummary> candidates;  // by id
  std::optional<std::size_t> baseline;        // index into candidates
  std::optional<std::size_t> best;            // the winner (see the rules above)
  bool best_verified = false;                 // the winner passed its tests (an evaluate stage exists)
  bool best_confirmed = false;                // the winner is confirmed faster than the baseline
  bool confirming = false;                    // confirmation is on and there is a baseline
  // The best eligible candidate by its median when that is not the winner: it was not
  // confirmed faster (or not confirmed yet). The report says why it did not win.
  std::optional<std::size_t> best_unconfirmed;
  int repeats_extra = 0;                      // adaptive explore repeats beyond `repeats`
  int confirm_runs = 0;                       // runs all confirmations took
  int warmups = 0;                            // discarded warm-up runs
  // The noise: the baseline's robust coefficient of variation over its repeats, and the
  // smallest gain its confirmation could resolve with the allowed pairs (Stats.h).
  std::optional<double> noise_cv;
  std::optional<double> resolvable_gain;      // e.g. 1.06: gains below about 6% are unlikely to be confirmed
  bool too_noisy = false;                     // resolvable_gain above (1 + min_effect)^2
  // The most benchmark runs that ran at once (CandidateSummary::concurrency, the largest).
  double most_at_once = 0;
  // Set when the candidates' repeats ran more at once than the baseline's (two runs more, and
  // half again as many, at least): their medians are not like with like, and the baseline's cannot gate them; the
  // verdicts then rest on confirmations, which run both in interleaved pairs, one at a time.
  struct UnlikePlacement {
    double baseline = 0;    // the baseline's concurrency
    double candidates = 0;  // the largest of the other candidates'
  };
  std::optional<UnlikePlacement> unlike_placement;
  // Finalists: candidates confirmed faster than the baseline whose intervals overlap the winner's,
  // so that their ratios over the baseline cannot tell them apart. Each is measured against the
  // winner head to head (docs/verdicts.md, "Ties"); the winner is the one no finalist beat.
  struct Final {
    std::size_t other = 0;          // the finalist measured against the winner
    ConfirmationSummary result;     // the winner over it (> 1: the winner is better)
  };
  std::vector<Final> finals;                  // the finalists with a head-to-head verdict
  // Head-to-head confirmations still to run: (challenger, opponent) candidate ids.
  std::vector<std::pair<std::int64_t, std::int64_t>> duels_wanted;
  // The candidate with the best ratio over the baseline, when a finalist beat it head to head.
  std::optional<std::size_t> dethroned;
  std::size_t trials = 0;
  std::size_t failed_trials = 0;
  std::map<std::string, std::size_t> failures_by_reason;
  std::vector<RunProvenance> provenance;       // one per run that recorded it (Provenance.h)
  // Failed trials grouped by failure_kind(), with the first error line of the first of each.
  struct FailureGroup {
    std::size_t count = 0;
    std::string first_error;
  };
  std::map<std::string, FailureGroup> failures_by_kind;
  // Several objectives: the goals (empty: one objective), the front (candidates, best first by
  // the first goal) and how many of its members are verified; `best` is the pick.
  std::vector<Goal> goals;
  std::vector<std::size_t> front;
  std::vector<std::size_t> eligible_front;  // the front of the eligible candidates, the pick among them
  PickRule pick;
  // The proposal journal (docs/propose.md): every proposal, accepted or refused, and each
  // proposer's answer; its patch and rationale texts are left out here.
  std::vector<ProposalRecord> proposals;
  // The winner's lineage when a proposer wrote it: candidate ids from the root to the winner.
  std::vector<std::int64_t> lineage;
  std::size_t count(CandidateStatus status) const;
  std::size_t confirmed_count(stats::Verdict verdict) const;
  // Finalists that tie with the winner: no significant difference head to head.
  std::vector<std::size_t> tied() const;
  // Candidates with an objective, best first (verified and explored; rolled-back excluded).
  std::vector<std::size_t> ranking() const;
};

// What kind of failure a failed trial is: "build" (build_failed), "timeout", "verification" (an
// evaluate trial) or "crash" (any other failed run). The same words as search::Failure.
std::string_view failure_kind(const TrialRecord& trial);
// The line of a failed trial that says what went wrong: the first line of its output tail that
// holds "error" (a compiler's first error), else its reason.
std::string first_error_line(const TrialRecord& trial);

// Candidate a's head-to-head confirmation over b, from either one's pairs (b's against a, inverted:
// faster and slower swap, the ratio and its interval are reciprocals); none when they never met.
std::optional<ConfirmationSummary> head_to_head(const CampaignSummary& summary, std::size_t a, std::size_t b);

// A build trial's output as reports show it. The build stage keeps a build's whole output in a
// log file beside its folder and ends the trial's output tail with build_log_note(LOG), which
// build_output reads back. `last_lines`: the tail's last non-blank lines (at most `lines`), the
// note left out, made printable; `log`: the log's path, empty when the tail names none (a build
// recorded before flotilla kept logs, or one whose tail lost the note).
struct BuildOutput {
  std::vector<std::string> last_lines;
  std::string log;
};
std::string build_log_note(const std::string& log);
BuildOutput build_output(const std::string& output_tail, std::size_t lines = 3);

CampaignSummary summarize(const CampaignInfo& campaign, const std::vector<CandidateRecord>& candidates,
                          const std::vector<TrialRecord>& trials, const std::vector<ProposalRecord>& proposals = {});

// summarize() for tables that only grow, as the campaign loop's ledger keeps them: each update is
// given the same vectors with records appended since the last (never changed or removed) and the
// same campaign. It recomputes the summaries of the candidates that gained a trial, and the
// concurrency of those whose runs a newly added run overlaps; the rest (the winner, the front,
// the counts) follows as in summarize(), whose result it equals on the same tables. Its cost is
// the new records and the changed candidates, plus a pass over the candidates' summaries,
// instead of every trial at every call.
class SummaryCache {
 public:
  SummaryCache();
  ~SummaryCache();
  SummaryCache(SummaryCache&&) noexcept;
  SummaryCache& operator=(SummaryCache&&) noexcept;

  const CampaignSummary& update(const CampaignInfo& campaign, const std::vector<CandidateRecord>& candidates,
                                const std::vector<TrialRecord>& trials, const std::vector<ProposalRecord>& proposals);
  // The trial records the updates have read so far: each new one once, and every trial of a
  // candidate whose summary was recomputed.
  std::uint64_t trials_read() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> m;
};

// The journal and the winner's lineage (summary.proposals, summary.lineage), patch texts left out.
void add_proposals(CampaignSummary& summary, const std::vector<CandidateRecord>& candidates,
                   std::vector<ProposalRecord> proposals);

// "interchange+row_pointers opt=1" for a proposer's candidate (its chain, then its parameters);
// the configuration alone otherwise.
std::string candidate_label(const CandidateSummary& candidate);
CampaignSummary summarize(const Store& store);

std::string summary_text(const CampaignSummary& summary, std::size_t top_k);
// The report's prose lines ("best       ...": a label padded to 10 columns, a space, the text)
// wrapped at `width` columns on word boundaries, continued under the text (11 columns in), so
// an 80-column terminal reads them whole; tables and other lines are left as they are (a table
// cut in the middle is worse than a wide one). width 0: unchanged.
std::string wrap_report(std::string_view text, std::size_t width);
std::string summary_json(const CampaignSummary& summary, std::size_t top_k);

}  // namespace flotilla::results

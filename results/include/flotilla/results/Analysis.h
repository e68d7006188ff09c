// Analysis.h — what the recorded trials mean: each candidate's status and objective, the best
// verified candidate, failures by reason. Pure functions over records; the scheduler's
// decisions and `flotilla results summary` both use these, so they cannot disagree.
//
// Rules:
//  - For each (candidate, kind, index) only the latest attempt counts.
//  - A candidate's objective is the median over its explore repeats, defined only when every
//    repeat is recorded and ok; spread is (max - min) / |median|.
//  - verified: every evaluate shard recorded and ok. rolled_back: some shard recorded and not ok.
//  - With a test gate (CampaignInfo::test_gate), the gate's verdict is one more required evaluate
//    trial, at index `shards`, so a candidate is not verified between its last shard and its
//    verdict. Evaluate trials beyond it (the re-run of failures, index shards + 1) never count.
//  - A campaign without an evaluate stage (shards == 0) verifies nothing; its best is the best
//    explored candidate, reported as unverified.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "flotilla/results/Store.h"

namespace flotilla::results {

enum class CandidateStatus { pending, explore_failed, explored, verified, rolled_back };
std::string_view to_string(CandidateStatus status);

struct CandidateSummary {
  CandidateRecord record;
  CandidateStatus status = CandidateStatus::pending;
  std::optional<double> objective;
  double spread = 0;
  int repeats_done = 0;
  int shards_done = 0;
  int shards_passed = 0;
  std::string reason;                     // why it failed or was rolled back
  std::map<std::string, double> metrics;  // median of each metric over the explore repeats
};

CandidateSummary summarize_candidate(const CandidateRecord& candidate, const std::vector<const TrialRecord*>& trials,
                                     int repeats, int shards, bool test_gate = false);

// True when objective a is strictly better than b.
inline bool better(double a, double b, bool maximize) { return maximize ? a > b : a < b; }

struct CampaignSummary {
  CampaignInfo campaign;
  std::vector<CandidateSummary> candidates;  // by id
  std::optional<std::size_t> baseline;        // index into candidates
  std::optional<std::size_t> best;            // best verified (or best explored when nothing is verified by design)
  bool best_verified = false;
  std::size_t trials = 0;
  std::size_t failed_trials = 0;
  std::map<std::string, std::size_t> failures_by_reason;
  std::size_t count(CandidateStatus status) const;
  // Candidates with an objective, best first (verified and explored; rolled-back excluded).
  std::vector<std::size_t> ranking() const;
};

CampaignSummary summarize(const CampaignInfo& campaign, const std::vector<CandidateRecord>& candidates,
                          const std::vector<TrialRecord>& trials);
CampaignSummary summarize(const Store& store);

std::string summary_text(const CampaignSummary& summary, std::size_t top_k);
std::string summary_json(const CampaignSummary& summary, std::size_t top_k);

}  // namespace flotilla::results

// Proposals.h — the proposer protocol's decisions as pure functions (docs/propose.md).
//
// A proposer is a program flotilla runs while the campaign goes on: it reads a context (what the
// last round showed) and writes proposals, each a unified diff NAME.patch (applied with -p1 to its
// parent's tree) with an optional NAME.json ({"parent": "best"|"baseline"|ID, "rationale": "...",
// "parameters": {"name": value}}). Every proposal is journalled in /proposals, accepted or refused
// with its reason; an accepted one becomes a candidate (origin "proposal ID") that is built,
// explored, verified and confirmed like a declared one. Its chain is its parent's chain and its
// own patch: success is built upon, and a rolled-back candidate is never a parent.
//
// Invariants (also model-checked, tests/model):
//  - a round a proposer answered (an `answered` row) is never asked of it again;
//  - an accepted proposal gets exactly one candidate, also across a kill between the two;
//  - a proposal repeating an earlier one (the same parent chain, parameters and patch bytes)
//    is refused, never a second candidate;
//  - a parent is the baseline or a verified candidate, never a rolled-back or pending one.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flotilla/results/Analysis.h"
#include "flotilla/results/Lineage.h"
#include "flotilla/results/Store.h"
#include "flotilla/scheduler/Settings.h"

namespace flotilla::scheduler {

// What a proposer may write: at most this many bytes per patch, and so many files per run.
inline constexpr std::size_t kMaxPatchBytes = 1 << 20;
inline constexpr std::size_t kMaxProposalFiles = 256;

// The files a unified diff touches (paths after -p1), or why it cannot be applied safely: no
// hunk at all, binary content (a NUL byte, "GIT binary patch", "Binary files ... differ"), more
// than `max_bytes`, or a path that leaves the tree (absolute, a ".." component, empty after -p1).
struct PatchCheck {
  std::vector<std::string> files;  // as written after -p1, in order, without duplicates
  std::string error;               // empty when the patch may be applied
};
PatchCheck check_patch(std::string_view text, std::size_t max_bytes = kMaxPatchBytes);

// A proposal's metadata (NAME.json), or the reason it cannot be read.
struct ProposalMeta {
  std::string parent = "best";                  // "best", "baseline" or a candidate id
  std::string rationale;
  std::map<std::string, std::string> parameters;  // parameter values that replace the parent's
  std::string error;
};
ProposalMeta parse_proposal_meta(std::string_view json_text);

// The candidate a proposal builds on: `wanted` is "best" (the winner, or the baseline when none
// is confirmed), "baseline", or a candidate id. Refused (nullopt, with the reason) when the
// candidate does not exist, was rolled back, failed, or is not verified yet.
struct ParentChoice {
  std::optional<std::int64_t> id;
  std::string refusal;
};
ParentChoice resolve_parent(std::string_view wanted, const results::CampaignSummary& summary);

using results::chain_of;     // Lineage.h: a candidate's chain of proposals, root first
using results::proposal_of;  // Lineage.h: the proposal a candidate is, from its origin
// A chain's key (hex FNV-1a of its proposals' content hashes): names its tree's folder.
std::string chain_key(const std::vector<std::int64_t>& chain, const std::vector<results::ProposalRecord>& proposals);

// The duplicate key of a proposal: FNV-1a over its parent's chain key, its parameters text and
// its patch bytes.
std::uint64_t proposal_hash(std::string_view parent_chain, std::string_view parameters, std::string_view patch);

// Whether the proposer runs this round (propose.when): every round; once the declared space is
// spent (exhausted); after `stall_rounds` rounds without a confirmed gain (stall N). Once the
// declared candidates are spent it runs whatever `when` says, since nothing else can.
bool proposer_runs(const Settings::Propose& propose, bool declared_spent, int rounds_without_gain);

// Completed rounds since the winner last changed: the rounds after the round of the current
// winner's candidate (the baseline's round 0 when nothing is confirmed), before `round`.
int rounds_without_gain(const results::CampaignSummary& summary, int round);

// Proposals made so far that count against propose.budget (accepted and refused; not the
// `answered` journal rows).
int proposals_made(const std::vector<results::ProposalRecord>& proposals);

// Whether proposer `index` answered `round` (its `answered` row is recorded).
bool answered(const std::vector<results::ProposalRecord>& proposals, int round, int index);

// Whether proposer `index` said it is done (an answered row named "done"): it is not run again.
bool retired(const std::vector<results::ProposalRecord>& proposals, int index);

}  // namespace flotilla::scheduler

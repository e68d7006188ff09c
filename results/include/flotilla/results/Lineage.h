// Lineage.h — candidates that proposers wrote (docs/propose.md): which proposal a candidate is,
// the chain of patches its tree applies, and the line of candidates it descends from. Pure.
//
// A candidate written by a proposer has the origin "proposal ID" (ID: its row in /proposals);
// its parent is the proposal's `parent` candidate. Its chain is its parent's chain and its own
// proposal; its lineage is the candidates from the root (the baseline, or the declared candidate
// the first patch applied to) down to itself.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "flotilla/results/Store.h"

namespace flotilla::results {

// The proposal id in a candidate's origin ("proposal 12" -> 12), or nullopt.
std::optional<std::int64_t> proposal_of(const CandidateRecord& candidate);

// The proposals a candidate's tree applies, root first; empty for a candidate no proposer wrote.
std::vector<std::int64_t> chain_of(std::int64_t candidate, const std::vector<CandidateRecord>& candidates,
                                   const std::vector<ProposalRecord>& proposals);

// The candidates from the root down to `candidate` (itself last); just itself when no proposer
// wrote it.
std::vector<std::int64_t> lineage_of(std::int64_t candidate, const std::vector<CandidateRecord>& candidates,
                                     const std::vector<ProposalRecord>& proposals);

}  // namespace flotilla::results

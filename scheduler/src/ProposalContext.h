// ProposalContext.h — what a proposer reads: the context file, as JSON (docs/propose.md; its
// JSON Schema is docs/propose-context.schema.json, "flotilla.propose.context/1").
//
// The context is a pure function of what is recorded, so two proposers of a fleet (or a
// resumed campaign asking again) read the same facts; only `proposer` differs between them.
// It holds: the intent (objective, direction, baseline, the test gate); the stage and its
// profile when the intent is staged; the best verified candidate and a few other verified ones
// that differ from it (each with its parameters, chain of patches, metrics, interval and
// confirmation), so proposers can build on more than one parent; the outcomes since this
// proposer last ran (verified, rolled back with the first failing tests and the output's tail,
// build_failed with the compiler's error, confirmation verdicts, refused proposals with their
// reasons); per-test differences from the baseline for suites; the budget left; and the trees
// to read and diff against.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "flotilla/results/Analysis.h"
#include "flotilla/results/Store.h"
#include "flotilla/scheduler/Settings.h"

namespace flotilla::scheduler {

inline constexpr const char* kContextSchema = "flotilla.propose.context/1";

// A candidate's test outcomes as a proposer needs them (suites only).
struct ContextTests {
  std::int64_t passed = 0, total = 0;
  std::vector<std::string> failing;  // the first ones, by name
  std::vector<std::string> fixed;    // against the baseline: failed there, pass here
  std::vector<std::string> broken;   // passed there, not here
};

struct ContextInputs {
  const Settings& settings;
  const results::CampaignSummary& summary;
  const std::vector<results::CandidateRecord>& candidates;
  const std::vector<results::TrialRecord>& trials;
  const std::vector<results::ProposalRecord>& proposals;
  int round = 0;
  int index = 0;                   // this proposer's, in the fleet
  std::uint64_t seed = 0;
  std::filesystem::path out;       // the folder it fills
  std::filesystem::path plain_tree, best_tree;  // clean copies to read and diff against
  std::optional<std::int64_t> best;             // the candidate "best" means now
  std::map<std::int64_t, ContextTests> tests;   // candidates with per-test outcomes
  int proposals_left = 0;
  int declared_left = 0;           // declared candidates the search budget still allows
  int rounds_without_gain = 0;
};

nlohmann::json proposal_context(const ContextInputs& in);

// How many proposals each list of the context holds at most.
inline constexpr std::size_t kContextOthers = 4, kContextFailingTests = 20, kContextLatest = 50,
                             kContextProposals = 200;

}  // namespace flotilla::scheduler

// Compare.h — the same configurations across campaigns (after a cluster upgrade, with another
// compiler, on another GPU): a per-configuration table and geometric-mean ratios, the way
// ReFrame compares performance between two sets of runs.
//
// Rules:
//  - Configurations are matched by their canonical text; the first campaign is the reference.
//  - A value is the candidate's median objective, whatever its verification status (the
//    comparison is about speed; the status is shown next to it).
//  - A ratio is oriented so that > 1 means better than the reference: value / reference when
//    maximizing, reference / value when minimizing. Ratios need positive values on both sides.
//  - The geometric mean of a campaign's ratios is taken over the configurations it shares with
//    the reference; campaigns must have the same objective and direction.
//  - Each campaign's own verdict comes along: its winner, the verdict word, and the confirmed
//    speed-up over its baseline with its interval (Analysis.h), so a table of medians is never
//    read as a confirmed result.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "flotilla/results/Columns.h"

namespace flotilla::results {

struct CompareCell {
  std::optional<double> value;            // none: not in that campaign, or no objective
  std::optional<double> low, high;        // the median's interval
  std::optional<CandidateStatus> status;  // none: not in that campaign
  std::optional<double> ratio;            // vs the reference campaign; none for the reference itself
};

struct CompareRow {
  std::string config;
  std::vector<CompareCell> cells;  // one per campaign
};

struct CompareColumn {
  std::string name;  // the campaign's name
  std::size_t candidates = 0;
  std::size_t shared = 0;  // configurations with a ratio against the reference
  std::optional<double> geomean_ratio;
  std::optional<double> min_ratio, max_ratio;
  std::string winner;                     // its winner's configuration; empty: none
  std::string verdict;                    // "confirmed faster", "baseline", "median" or "none"
  std::optional<double> gain, gain_low, gain_high;  // the winner over its baseline (confirmed: with interval)
};

struct Comparison {
  Goal goal;
  std::vector<CompareColumn> columns;
  std::vector<CompareRow> rows;  // reference order first, then new configurations
};

// Throws AnalysisError when the campaigns optimise different objectives or directions.
Comparison compare(const std::vector<const CampaignSummary*>& campaigns);

// > 1 when `value` is better than `reference` under `maximize`; none unless both are > 0.
std::optional<double> oriented_ratio(std::optional<double> value, std::optional<double> reference, bool maximize);

}  // namespace flotilla::results

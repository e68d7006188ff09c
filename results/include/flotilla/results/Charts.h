// Charts.h — what each chart of `flotilla results plot` shows, decided from the records: which
// points are outliers and where the axes end, which points carry labels, what the importance
// shares may claim, and each tested candidate's regressions and fixes against the baseline.
// Pure functions, unit-tested on their content; the plot command only turns them into gnuplot
// (cli/src/results/PlotCommand.cpp), so every decision here can be checked without pixels.
//
// Rules:
//  - Convergence: a point is an outlier when it lies beyond 3 interquartile ranges of the quartiles
//    of all the plotted objectives (Tukey's far-out fence). Outliers leave the y range and are
//    drawn at its edge, marked and labelled with their value, so one wild candidate cannot squash
//    the rest into a sliver. A point that set a best-so-far value, or the winner's, is never
//    clipped: the curves show what the campaign could deliver, and the winner stays on the chart.
//    With no spread between the quartiles nothing is clipped. The curves are best so far by
//    median; the winner is the summary's (Analysis.h), confirmed faster when confirmation is on,
//    so it is marked on its own and the caption names both when they differ. Every evaluation
//    has its place on the x axis, from 1, those that failed (no value) as marks of their own.
//    Objectives that are whole numbers (counts such as tests.passed) get whole-number ticks.
//  - Pareto: the axes span every point with a margin, so no point sits on the border; front 1
//    is always labelled with candidate ids, the others unless crowded. Each label goes to one of
//    the four corners beside its point, clear of the point's own marker: the first (front first)
//    in which it covers no point, meets no label placed before it and stays inside the axes, else
//    the one with the fewest of those faults; points in the right half try the left corners
//    first, so labels stay inside the border.
//  - Params: the first-order shares are honest only when they leave something for interactions
//    and noise; when they add up to more than 100% (parameters that varied together share credit)
//    or a parameter has nearly one candidate per value (its share fits noise), the chart says so;
//    each share comes with the level noise alone would reach.
//  - Tests: regressions and fixes against the baseline, test by test (diff_outcomes), per
//    candidate with its status, so a candidate rolled back for one broken test stands out among
//    thousands of passes.
//  - Lineage: the tree of proposals (docs/propose.md): a node per candidate a proposer wrote and
//    per root its patches applied to (the baseline always), an edge from each parent; a node's
//    column is its generation (patches above its root), and the winner's line runs straight
//    along the top row, each other branch on rows of its own, so no two nodes share a place.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flotilla/results/Analysis.h"
#include "flotilla/results/History.h"
#include "flotilla/results/Importance.h"
#include "flotilla/results/Pareto.h"
#include "flotilla/results/TestOutcomes.h"

namespace flotilla::results {

struct AxisRange {
  double low = 0;
  double high = 1;
  bool contains(double v) const { return v >= low && v <= high; }
};

// Values within [Q1 - k·IQR, Q3 + k·IQR] (quartiles by linear interpolation); nullopt when
// fewer than 4 values or the quartiles coincide (no spread to judge by).
std::optional<AxisRange> tukey_fence(std::vector<double> values, double k = 3.0);

// ---- convergence ----
enum class PointKind { explored, verified, rolled_back };
std::string_view to_string(PointKind kind);

struct ConvergencePoint {
  std::size_t evaluation = 0;
  std::int64_t candidate = 0;
  PointKind kind = PointKind::explored;
  double value = 0, low = 0, high = 0;  // the median and its interval
  int clipped = 0;                      // -1 below the y range, +1 above it, 0 inside
};

struct ConvergenceChart {
  std::vector<ConvergencePoint> points;
  std::vector<std::pair<std::size_t, double>> best, best_verified;  // (evaluation, value) steps
  std::vector<std::pair<std::size_t, std::int64_t>> failed;        // (evaluation, candidate) with no value
  AxisRange x, y;
  std::optional<double> y_step;  // a whole-number tick step, when every value is a whole number
  std::size_t clipped = 0;
  bool best_differs = false;  // best so far is not verified somewhere: the two curves part
  std::optional<std::size_t> winner;       // index into points of the summary's winner
  std::optional<std::int64_t> best_median;  // the candidate holding the final best so far
  std::string caption;                     // one line: the winner, and the best median when it differs
};

ConvergenceChart convergence_chart(const CampaignSummary& summary, const History& history);

// A tick step for whole numbers over `range`: 1, 2, 5, 10, 20, 50, ... giving at most 10 ticks.
double whole_number_step(const AxisRange& range);

// ---- pareto ----
// Where a label sits: beside its point, above or below it, to its right or its left.
enum class LabelPlace { right_above, left_above, right_below, left_below };
std::string_view to_string(LabelPlace place);

// The size of a character, and of a point's marker (half its width and height), as fractions of
// the plot area's width and height: what the chart needs to place labels. The defaults are
// DejaVu Sans 10 (7 x 15 px) and a marker of 1.2 (about 10 px) on the plot area of a 1000x600
// chart.
struct LabelMetrics {
  double char_x = 7.0 / 860, char_y = 15.0 / 450;
  double marker_x = 5.0 / 860, marker_y = 5.0 / 450;
  // The label's offset from its point in characters: a character across, 0.9 of a line up or down.
  static constexpr double kOffsetX = 1.0, kOffsetY = 0.9;
};

struct ParetoChartPoint {
  std::int64_t candidate = 0;
  double x = 0, y = 0;
  std::size_t front = 0;
  std::string label;  // "#12" (front 1 with few points: "#12 x=4 y=a"); empty: unlabelled
  LabelPlace place = LabelPlace::right_above;
  AxisRange label_x, label_y;  // the label's extent in axis units (estimated from LabelMetrics)
};

struct ParetoChart {
  std::vector<ParetoChartPoint> points;  // front 1 first, sorted by x
  AxisRange x, y;
  std::size_t on_front = 0;
  double marker_x = 0, marker_y = 0;  // a marker's half width and height in axis units
};

ParetoChart pareto_chart(const CampaignSummary& summary, const std::vector<ParetoPoint>& fronts,
                         const LabelMetrics& metrics = {});

// ---- params ----
struct ImportanceBar {
  std::string label;
  double percent = 0;       // NaN: cannot be told (the remainder when the shares overlap)
  bool remainder = false;   // the "interactions + noise" bar
  bool unreliable = false;  // about one candidate per value: the share fits noise
  // The share a parameter with this many values gets on average from noise alone, (k - 1) / (n - 1)
  // for k values over n candidates: a share near it says nothing.
  double chance_percent = 0;
};

struct ImportanceChart {
  std::vector<ImportanceBar> bars;
  double sum_percent = 0;  // of the parameters' shares
  bool warning = false;    // the shares do not explain the variance plainly
  std::string verdict;     // one line for the chart, e.g. "the shares add up to 143%: ..."
};

ImportanceChart importance_chart(const ImportanceReport& report);

// ---- tests ----
struct TestsChartRow {
  std::int64_t candidate = 0;
  CandidateStatus status = CandidateStatus::pending;
  bool baseline = false;
  std::int64_t tests = 0, passed = 0, failed = 0;  // failed: fail, error, timeout (per-test) or failed shards
  std::optional<std::int64_t> regressions, fixes;  // against the baseline; none without one
};

struct TestsChart {
  bool per_test = false;  // per-test outcomes (evaluate.suite); else evaluate shards
  std::optional<std::int64_t> baseline;
  std::vector<TestsChartRow> rows;          // by candidate id
  std::int64_t regressions = 0, fixes = 0;  // totals
};

// One tested candidate's recorded outcomes with its suite (shared: a suite may hold millions of
// names, and candidates with the same discovery share one).
struct TestedCandidate {
  const TestSuite* suite = nullptr;
  CandidateTests tests;
};

// Per-test: every tested candidate against the baseline's outcomes (when it was tested).
TestsChart tests_chart(const CampaignSummary& summary, const std::vector<TestedCandidate>& tested);
// Shards only: a shard the baseline passed and the candidate failed is a regression, the reverse a
// fix (latest attempt of each shard; the test gate's verdict trial does not count).
TestsChart shard_tests_chart(const CampaignSummary& summary, const std::vector<TrialRecord>& trials);

// ---- lineage ----
struct LineageNode {
  std::int64_t candidate = 0;
  std::int64_t parent = -1;                // the parent node's candidate; -1 for a root
  std::optional<std::int64_t> proposal;    // the proposal it is; none for a root
  std::string name;                        // the proposal's name; "baseline" or "candidate N" for a root
  CandidateStatus status = CandidateStatus::pending;
  std::optional<double> value;             // its objective
  std::optional<double> ratio;             // its speed-up over the baseline, when confirmed faster
  std::size_t depth = 0;                   // its column: patches above its root
  std::size_t row = 0;                     // its row, from 0 at the top
  bool on_path = false;                    // on the winner's lineage
  std::size_t refused = 0;                 // refused proposals that named it as their parent
};

struct LineageChart {
  std::vector<LineageNode> nodes;          // each parent before its children
  std::optional<std::size_t> winner;       // index into nodes
  std::size_t columns = 0, rows = 0;       // the grid the nodes take
  std::size_t accepted = 0, refused = 0;   // proposals in the journal (refused: all, placed or not)
};

// Empty (no nodes) when no proposer wrote a candidate.
LineageChart lineage_chart(const CampaignSummary& summary);

}  // namespace flotilla::results

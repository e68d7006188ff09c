// charts_test.cpp — what each chart shows, checked from its data (results/Charts.h): outliers
// and axis ranges, importance warnings, Pareto labels and ranges, regressions per candidate.
#include <flotilla/results/Charts.h>
#include <flotilla/results/Timeline.h>
#include <gtest/gtest.h>

#include <cmath>

#include "campaign_builder.h"

namespace flotilla::results {
namespace {

using testing::CampaignBuilder;
using testing::Verdict;

TEST(Charts, TukeyFenceNeedsSpread) {
  EXPECT_FALSE(tukey_fence({1, 2, 3}));             // too few values
  EXPECT_FALSE(tukey_fence({5, 5, 5, 5, 9}));       // quartiles coincide
  const auto fence = tukey_fence({1, 2, 3, 4, 5});  // Q1 2, Q3 4
  ASSERT_TRUE(fence);
  EXPECT_DOUBLE_EQ(fence->low, -4);
  EXPECT_DOUBLE_EQ(fence->high, 10);
}

// Rolled-back candidate 5 measured 500 next to scores of 1..6: it leaves the axis, marked above;
// the winner (6) stays on it, and the range fits the others.
TEST(Charts, ConvergenceClipsAnOutlierButNeverABest) {
  CampaignBuilder b;
  b.add("x=1", 0, 1, Verdict::pass);
  b.add("x=2", 0, 2, Verdict::pass);
  b.add("x=3", 0, 3, Verdict::pass);
  b.add("x=4", 0, 4, Verdict::pass);
  b.add("x=9", 0, 500, Verdict::fail);
  b.add("x=6", 0, 6, Verdict::pass);
  const auto summary = b.summary();
  const auto chart = convergence_chart(summary, history(summary, b.trials));
  ASSERT_EQ(chart.points.size(), 6u);
  EXPECT_EQ(chart.clipped, 1u);
  EXPECT_EQ(chart.points[4].candidate, 4);
  EXPECT_EQ(chart.points[4].clipped, 1);
  EXPECT_EQ(chart.points[4].kind, PointKind::rolled_back);
  EXPECT_LT(chart.y.high, 10);
  EXPECT_TRUE(chart.y.contains(1) && chart.y.contains(6));
  EXPECT_GT(chart.y.low, 0);  // 8% margins, not from zero
  EXPECT_EQ(chart.points[5].clipped, 0);
  EXPECT_EQ(chart.points[5].kind, PointKind::verified);
  EXPECT_FALSE(chart.best_differs);
}

// A best that is far above the rest is the point of the chart: it is never clipped.
TEST(Charts, ConvergenceKeepsAFarBestOnTheAxis) {
  CampaignBuilder b;
  for (int x = 1; x <= 5; ++x) b.add("x=" + std::to_string(x), 0, x, Verdict::pass);
  b.add("x=99", 0, 99, Verdict::pass);
  const auto summary = b.summary();
  const auto chart = convergence_chart(summary, history(summary, b.trials));
  EXPECT_EQ(chart.clipped, 0u);
  EXPECT_TRUE(chart.y.contains(99) && chart.y.contains(1));
}

// An explored (never evaluated) candidate leads: best so far parts from best verified.
TEST(Charts, ConvergenceTellsBestFromBestVerified) {
  CampaignBuilder b;
  b.add("x=1", 0, 1, Verdict::pass);
  b.add("x=5", 0, 5);
  const auto summary = b.summary();
  const auto chart = convergence_chart(summary, history(summary, b.trials));
  EXPECT_TRUE(chart.best_differs);
  ASSERT_EQ(chart.best.size(), 2u);
  EXPECT_EQ(chart.best.back().second, 5);
  EXPECT_EQ(chart.best_verified.back().second, 1);
  EXPECT_EQ(chart.points[1].kind, PointKind::explored);
}

// The curves end on candidate 3's median, but candidate 1 is the one confirmed faster: the winner
// is marked on its own and the caption names both.
TEST(Charts, ConvergenceMarksTheWinnerApartFromTheBestMedian) {
  CampaignBuilder b;
  b.add("x=1", 0, 1, Verdict::pass);
  b.add("x=3", 0, 3, Verdict::pass);
  b.add("x=2", 0, 2, Verdict::pass);
  b.add("x=5", 0, 5, Verdict::pass);
  auto summary = b.summary();
  summary.candidates[1].confirmation =
      ConfirmationSummary{.reference = 0, .result = {.verdict = stats::Verdict::faster, .ratio = 1.4, .low = 1.2, .high = 1.6}};
  summary.best = 1, summary.best_confirmed = true, summary.confirming = true;
  const auto chart = convergence_chart(summary, history(summary, b.trials));
  ASSERT_TRUE(chart.winner);
  EXPECT_EQ(chart.points[*chart.winner].candidate, 1);
  EXPECT_EQ(chart.best_median, 3);
  EXPECT_EQ(chart.caption,
            "winner (ringed): candidate 1, 1.4x [1.2, 1.6] over the baseline, confirmed faster; the curves end on "
            "candidate 3 (verified, not confirmed)");
}

// A first evaluation that failed keeps its place: the axis starts at 1, where it is marked.
TEST(Charts, ConvergenceKeepsFailedEvaluationsOnTheAxis) {
  CampaignBuilder b;
  b.add("x=1", 0, std::nullopt);
  b.add("x=2", 0, 2, Verdict::pass);
  b.add("x=3", 0, 3, Verdict::pass);
  const auto summary = b.summary();
  const auto chart = convergence_chart(summary, history(summary, b.trials));
  EXPECT_EQ(chart.failed, (std::vector<std::pair<std::size_t, std::int64_t>>{{1, 0}}));
  EXPECT_EQ(chart.points.front().evaluation, 2u);
  EXPECT_EQ(chart.x.low, 0.5);
  EXPECT_EQ(chart.x.high, 3.5);
}

// Counts get whole-number ticks; measurements do not.
TEST(Charts, ConvergenceTicksCountsInWholeNumbers) {
  CampaignBuilder counts;
  for (int passed : {38, 39, 40}) counts.add("x=" + std::to_string(passed), 0, passed, Verdict::pass);
  const auto summary = counts.summary();
  const auto chart = convergence_chart(summary, history(summary, counts.trials));
  EXPECT_EQ(chart.y_step, 1.0);
  EXPECT_GT(chart.y.high, 40 + 0.15 * (chart.y.high - chart.y.low));  // room for the winner's label above it
  CampaignBuilder measured;
  for (double gflops : {1.5, 2.25, 2.0}) measured.add("x=1", 0, gflops, Verdict::pass);
  const auto other = measured.summary();
  EXPECT_FALSE(convergence_chart(other, history(other, measured.trials)).y_step);
  EXPECT_EQ(whole_number_step({0, 2.5}), 1);
  EXPECT_EQ(whole_number_step({5, 45}), 5);
  EXPECT_EQ(whole_number_step({0, 250}), 50);
}

TEST(Charts, ImportanceWarnsWhenSharesOverlap) {
  ImportanceReport report;
  report.samples = 20;
  report.variance = 1;
  report.parameters = {{.name = "a", .importance = 0.9, .values = {{"1"}, {"2"}}},
                       {.name = "b", .importance = 0.53, .values = {{"x"}, {"y"}, {"z"}}}};
  report.interactions = 0;
  const auto chart = importance_chart(report);
  EXPECT_NEAR(chart.sum_percent, 143, 1e-9);
  EXPECT_TRUE(chart.warning);
  EXPECT_EQ(chart.verdict,
            "the shares add up to 143%: parameters that varied together share credit, so the shares overlap and "
            "what is left to interactions and noise cannot be told");
  ASSERT_EQ(chart.bars.size(), 3u);
  EXPECT_TRUE(chart.bars[2].remainder);
  EXPECT_TRUE(std::isnan(chart.bars[2].percent));  // not "0.0%"
  EXPECT_NEAR(chart.bars[0].chance_percent, 100.0 / 19, 1e-9);
  EXPECT_NEAR(chart.bars[1].chance_percent, 200.0 / 19, 1e-9);
}

TEST(Charts, ImportanceSaysWhenMainEffectsExplainLittleOrFitNoise) {
  ImportanceReport report;
  report.samples = 6;
  report.variance = 1;
  report.parameters = {{.name = "tile", .importance = 0.3, .values = {{"1"}, {"2"}, {"4"}, {"8"}}}};
  report.interactions = 0.7;
  const auto chart = importance_chart(report);
  EXPECT_TRUE(chart.warning);
  EXPECT_EQ(chart.verdict,
            "the parameters alone explain only 30% of the variance: the rest is interactions or noise; tile: about one "
            "candidate per value, so the share mostly fits noise");
  EXPECT_TRUE(chart.bars[0].unreliable);
  EXPECT_NEAR(chart.bars[1].percent, 70, 1e-9);

  report.samples = 40;
  report.parameters[0].importance = 0.95;
  report.interactions = 0.05;
  const auto plain = importance_chart(report);
  EXPECT_FALSE(plain.warning);
  EXPECT_EQ(plain.verdict, "the parameters alone explain 95% of the variance");
}

TEST(Charts, ParetoLabelsPointsAndKeepsThemInsideTheAxes) {
  CampaignBuilder b;
  b.add("x=1", 0, 10, Verdict::pass, {{"mem", 1}});
  b.add("x=2", 0, 20, Verdict::pass, {{"mem", 5}});
  b.add("x=3", 0, 15, Verdict::pass, {{"mem", 9}});  // dominated by x=2
  const auto summary = b.summary();
  const std::vector<Goal> goals{{"score", true}, {"mem", false}};
  const auto chart = pareto_chart(summary, pareto_fronts(summary, goals, false));
  ASSERT_EQ(chart.points.size(), 3u);
  EXPECT_EQ(chart.on_front, 2u);
  EXPECT_EQ(chart.points[0].label, "#0 x=1");  // front first, by x; short fronts carry their configuration
  EXPECT_EQ(chart.points[1].label, "#1 x=2");
  EXPECT_EQ(chart.points[2].label, "#2");
  EXPECT_EQ(chart.points[2].front, 2u);
  for (const auto& p : chart.points) {
    EXPECT_GT(p.x, chart.x.low);  // strictly inside: no point half-clipped on the border
    EXPECT_LT(p.x, chart.x.high);
    EXPECT_GT(p.y, chart.y.low);
    EXPECT_LT(p.y, chart.y.high);
  }
}

// A dominated point sits where the front point's label would go by default (right of it, above):
// the label moves to another corner, and no label covers a point or another label.
TEST(Charts, ParetoLabelsGoWhereTheyCoverNoPoint) {
  CampaignBuilder b;
  b.add("x=1", 0, 10, Verdict::pass, {{"mem", 1}});
  b.add("x=2", 0, 30, Verdict::pass, {{"mem", 9}});
  b.add("x=3", 0, 11.5, Verdict::pass, {{"mem", 1.6}});  // dominated by x=1, just right of it and above
  const auto summary = b.summary();
  const auto chart = pareto_chart(summary, pareto_fronts(summary, {{"score", true}, {"mem", false}}, false));
  ASSERT_EQ(chart.points.size(), 3u);
  const auto& first = chart.points[0];
  ASSERT_EQ(first.candidate, 0);
  EXPECT_NE(first.place, LabelPlace::right_above);
  for (const auto& p : chart.points) {
    if (p.label.empty()) continue;
    EXPECT_GT(p.label_x.high, p.label_x.low);
    for (const auto& q : chart.points) {
      const bool covered = q.x + chart.marker_x > p.label_x.low && q.x - chart.marker_x < p.label_x.high &&
                           q.y + chart.marker_y > p.label_y.low && q.y - chart.marker_y < p.label_y.high;
      EXPECT_FALSE(covered) << "the label of #" << p.candidate << " covers #" << q.candidate;
    }
  }
}

TEST(Charts, ParetoPointsAtOnePlaceShareALabel) {
  CampaignBuilder b;
  b.add("x=1 y=a", 0, 10, Verdict::pass, {{"mem", 1}});
  b.add("x=1 y=b", 0, 10, Verdict::pass, {{"mem", 1}});
  const auto summary = b.summary();
  const auto chart = pareto_chart(summary, pareto_fronts(summary, {{"score", true}, {"mem", false}}, false));
  ASSERT_EQ(chart.points.size(), 2u);
  EXPECT_EQ(chart.points[0].label, "#0, #1");
  EXPECT_EQ(chart.points[1].label, "");
}

TEST(Charts, ParetoOfOnePointStillHasARange) {
  CampaignBuilder b;
  b.add("x=1", 0, 10, Verdict::pass, {{"mem", 0}});
  const auto summary = b.summary();
  const auto chart = pareto_chart(summary, pareto_fronts(summary, {{"score", true}, {"mem", false}}, false));
  EXPECT_LT(chart.x.low, 10);
  EXPECT_GT(chart.x.high, 10);
  EXPECT_LT(chart.y.low, 0);
  EXPECT_GT(chart.y.high, 0);
}

// Four tests; the baseline fails test 3. Candidate 1 keeps everything; candidate 2 breaks test 0
// and fixes test 3, so it is rolled back although its counts equal the baseline's.
TEST(Charts, TestsChartCountsRegressionsAndFixesAgainstTheBaseline) {
  CampaignBuilder b("maximize", 1);
  b.add("v=a", 0, 1, Verdict::pass);
  b.add("v=b", 0, 2, Verdict::pass);
  b.add("v=c", 0, 3, Verdict::fail);
  const auto summary = b.summary();
  const TestSuite suite{{"t0", "t1", "t2", "t3"}};
  const auto pass = encode_outcome(TestOutcome::pass), fail = encode_outcome(TestOutcome::fail);
  std::vector<TestedCandidate> tested{{&suite, {.candidate = 0, .outcomes = {pass, pass, pass, fail}}},
                                      {&suite, {.candidate = 1, .outcomes = {pass, pass, pass, fail}}},
                                      {&suite, {.candidate = 2, .outcomes = {fail, pass, pass, pass}}}};
  const auto chart = tests_chart(summary, tested);
  ASSERT_EQ(chart.baseline, 0);
  ASSERT_EQ(chart.rows.size(), 3u);
  EXPECT_TRUE(chart.rows[0].baseline);
  EXPECT_EQ(chart.rows[1].regressions, 0);
  EXPECT_EQ(chart.rows[1].fixes, 0);
  EXPECT_EQ(chart.rows[2].regressions, 1);
  EXPECT_EQ(chart.rows[2].fixes, 1);
  EXPECT_EQ(chart.rows[2].failed, chart.rows[0].failed);  // same counts: only the diff tells them apart
  EXPECT_EQ(chart.rows[2].status, CandidateStatus::rolled_back);
  EXPECT_EQ(chart.regressions, 1);
  EXPECT_EQ(chart.fixes, 1);

  // Without the baseline's outcomes there is nothing to compare against.
  tested.erase(tested.begin());
  const auto alone = tests_chart(summary, tested);
  EXPECT_FALSE(alone.baseline);
  EXPECT_FALSE(alone.rows[1].regressions);
}

TEST(Charts, ShardChartComparesShardByShard) {
  CampaignBuilder b("maximize", 3);
  b.add("x=1", 0, 1, Verdict::pass);
  b.add("x=2", 0, 2, Verdict::fail);
  const auto summary = b.summary();
  const auto chart = shard_tests_chart(summary, b.trials);
  EXPECT_FALSE(chart.per_test);
  ASSERT_EQ(chart.rows.size(), 2u);
  EXPECT_EQ(chart.rows[0].regressions, 0);
  EXPECT_EQ(chart.rows[1].regressions, 3);
  EXPECT_EQ(chart.rows[1].failed, 3);
  EXPECT_EQ(chart.rows[1].status, CandidateStatus::rolled_back);
}

// A confirmation of three pairs records three rows with one span: one bar, one lane.
TEST(Charts, TimelineFoldsAConfirmationsPairsIntoOneBar) {
  std::vector<TrialRecord> trials(5);
  trials[0] = {.candidate = 1, .kind = TrialKind::explore, .start = 100, .end = 101};
  for (int pair = 0; pair < 3; ++pair)
    trials[1 + pair] = {.candidate = 1, .kind = TrialKind::confirm, .index = pair, .start = 101, .end = 110};
  trials[4] = {.candidate = 2, .kind = TrialKind::confirm, .start = 101, .end = 105};  // another candidate's
  const auto tl = build_timeline(trials);
  ASSERT_EQ(tl.bars.size(), 3u);
  EXPECT_EQ(tl.bars[1].runs, 3u);
  EXPECT_EQ(tl.bars[1].kind, TrialKind::confirm);
  EXPECT_EQ(tl.bars[2].runs, 1u);
  EXPECT_EQ(tl.lanes.size(), 2u);  // the two confirmations overlap; the pairs do not add lanes
}

// Round 1 was proposed at 110 and its first task started at 125 (queued 15 s); round 0 at once.
// Candidate 2 shares candidate 0's build: its copy carries that build's time, 100, from round 0,
// and must not make round 1's wait 0.
TEST(Charts, TimelineRoundsMeasureTheWaitFromProposalToFirstStart) {
  const std::vector<CandidateRecord> candidates{
      {0, 0, "x=1", "baseline"}, {1, 1, "x=2", "grid"}, {2, 1, "x=3", "grid"}};
  const std::vector<TrialRecord> trials{{.candidate = 0, .start = 100, .end = 108},
                                        {.candidate = 2, .start = 126, .end = 130},
                                        {.candidate = 1, .start = 125, .end = 129},
                                        {.candidate = 2, .kind = TrialKind::build, .start = 100, .end = 100.5,
                                         .metrics = {{"built_by", 0}}}};
  const std::vector<EventRecord> events{{99, "campaign_started", ""},
                                        {100, "batch_proposed", "round 0: 1 candidates (baseline)"},
                                        {110, "batch_proposed", "round 1: 2 candidates (grid)"},
                                        {140, "batch_proposed", "round 2: 2 candidates (grid)"}};
  const auto tl = build_timeline(trials);
  const auto rounds = timeline_rounds(tl, candidates, events);
  ASSERT_EQ(rounds.size(), 3u);
  EXPECT_EQ(rounds[0].wait, 0);
  EXPECT_EQ(rounds[1].round, 1);
  EXPECT_EQ(rounds[1].proposed, 10);
  EXPECT_EQ(rounds[1].first_start, 25);
  EXPECT_EQ(rounds[1].wait, 15);
  EXPECT_FALSE(rounds[2].first_start);  // proposed, nothing started yet
}

// A small tree: the baseline (10), proposal a on it (12) with c on top (14, the winner), b on the
// baseline rolled back, and a proposal on a refused. The winner's line is the top row, the
// branch its own row below.
TEST(Charts, LineageLaysTheWinnersLineOnTheTopRow) {
  CampaignBuilder b;
  b.add("x=1", 0, 10, Verdict::pass);
  b.add("x=1", 1, 12, Verdict::pass);
  b.add("x=1", 1, 15, Verdict::fail);
  b.add("x=1", 2, 14, Verdict::pass);
  const std::vector<ProposalRecord> proposals{
      {.id = 0, .round = 1, .parent = 0, .status = ProposalStatus::accepted, .name = "a"},
      {.id = 1, .round = 1, .parent = 0, .status = ProposalStatus::accepted, .name = "b"},
      {.id = 2, .round = 2, .parent = 1, .status = ProposalStatus::accepted, .name = "c"},
      {.id = 3, .round = 2, .parent = 1, .status = ProposalStatus::refused, .name = "d", .reason = "no hunk"},
      {.id = 4, .round = 2, .status = ProposalStatus::answered}};
  auto candidates = b.candidates;
  candidates[1].origin = "proposal 0", candidates[2].origin = "proposal 1", candidates[3].origin = "proposal 2";
  auto summary = summarize(b.info, candidates, b.trials, proposals);
  add_proposals(summary, candidates, proposals);
  const auto chart = lineage_chart(summary);
  ASSERT_EQ(chart.nodes.size(), 4u);
  const auto at = [&](std::size_t i) {
    const auto& n = chart.nodes[i];
    return std::tuple(n.candidate, n.depth, n.row, n.on_path);
  };
  EXPECT_EQ(at(0), std::tuple(0, 0u, 0u, true));
  EXPECT_EQ(at(1), std::tuple(1, 1u, 0u, true));
  EXPECT_EQ(at(2), std::tuple(3, 2u, 0u, true));
  EXPECT_EQ(at(3), std::tuple(2, 1u, 1u, false));
  EXPECT_EQ(chart.nodes[0].name, "baseline");
  EXPECT_FALSE(chart.nodes[0].proposal);
  EXPECT_EQ(chart.nodes[2].name, "c");
  EXPECT_EQ(chart.nodes[2].parent, 1);
  EXPECT_EQ(chart.nodes[2].proposal, 2);
  EXPECT_EQ(chart.nodes[3].status, CandidateStatus::rolled_back);
  EXPECT_EQ(chart.nodes[3].value, 15);
  EXPECT_EQ(chart.nodes[1].refused, 1u);
  EXPECT_EQ(chart.winner, 2u);
  EXPECT_EQ(chart.columns, 3u);
  EXPECT_EQ(chart.rows, 2u);
  EXPECT_EQ(chart.accepted, 3u);
  EXPECT_EQ(chart.refused, 1u);
}

// Without proposals there is no tree; a parent link that points forward (a damaged file) is not
// followed, so its node is a root and nothing loops.
TEST(Charts, LineageIsEmptyWithoutProposalsAndSurvivesBadLinks) {
  CampaignBuilder b;
  b.add("x=1", 0, 10, Verdict::pass);
  b.add("x=2", 1, 11, Verdict::pass);
  EXPECT_TRUE(lineage_chart(b.summary()).nodes.empty());
  auto candidates = b.candidates;
  candidates[1].origin = "proposal 0";
  const std::vector<ProposalRecord> proposals{
      {.id = 0, .round = 1, .parent = 1, .status = ProposalStatus::accepted, .name = "self"}};
  const auto chart = lineage_chart(summarize(b.info, candidates, b.trials, proposals));
  ASSERT_EQ(chart.nodes.size(), 2u);
  EXPECT_EQ(chart.nodes[1].candidate, 1);
  EXPECT_EQ(chart.nodes[1].parent, -1);
  EXPECT_EQ(chart.nodes[1].depth, 0u);
  EXPECT_EQ(chart.rows, 2u);
}

}  // namespace
}  // namespace flotilla::results

// Columns, Pareto fronts, parameter importance and cross-campaign comparison.
#include <flotilla/results/Columns.h>
#include <flotilla/results/Compare.h>
#include <flotilla/results/Importance.h>
#include <flotilla/results/Pareto.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>

#include "campaign_builder.h"

using namespace flotilla::results;
using namespace flotilla::results::testing;

namespace {

std::string fmt_config(int x, const char* y, int z) {
  return "x=" + std::to_string(x) + " y=" + y + " z=" + std::to_string(z);
}

TEST(Columns, SplitConfigKeepsOrder) {
  using P = std::pair<std::string, std::string>;
  EXPECT_EQ(split_config("tile_x=8 precision=float"), (std::vector<P>{{"tile_x", "8"}, {"precision", "float"}}));
  EXPECT_TRUE(split_config("").empty());
}

TEST(Columns, GoalsNeedAKnownMetricAndADirection) {
  CampaignBuilder b;
  b.add("x=1", 0, 1.0, Verdict::none, {{"time_s", 0.5}});
  const auto s = b.summary();
  EXPECT_EQ(parse_goal("score", s).text(), "score:max");  // the objective's own direction
  EXPECT_EQ(parse_goal("time_s:min", s).text(), "time_s:min");
  auto message = [&](const char* text) {
    try {
      parse_goals(text, s);
    } catch (const AnalysisError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message("time_s"), "say whether 'time_s' is better high or low: time_s:max or time_s:min");
  EXPECT_EQ(message("gflops:max"), "no metric 'gflops' in this campaign (recorded: score, time_s)");
  EXPECT_EQ(message("time_s:up"), "'time_s:up': the direction must be max or min");
  EXPECT_EQ(message("score,score:max"), "metric 'score' given twice");
  EXPECT_EQ(message(","), "no metrics given");
}

TEST(Columns, UnitsFollowNamingConventions) {
  EXPECT_EQ(unit_of("gflops"), "GFLOP/s");
  EXPECT_EQ(unit_of("time_s"), "s");
  EXPECT_EQ(unit_of("kernel_ms"), "ms");
  EXPECT_EQ(unit_of("score"), "");
}

TEST(Pareto, DominanceRespectsEachDirection) {
  const std::vector<Goal> goals = {{"score", true}, {"time_s", false}};
  EXPECT_TRUE(dominates({2, 1}, {1, 1}, goals));
  EXPECT_TRUE(dominates({2, 1}, {2, 3}, goals));
  EXPECT_FALSE(dominates({2, 1}, {2, 1}, goals));  // equal: neither dominates
  EXPECT_FALSE(dominates({3, 2}, {2, 1}, goals));  // a trade-off
}

TEST(Pareto, FrontsRankCandidatesAndSkipRolledBack) {
  CampaignBuilder b;
  b.add("x=1", 0, 1.0, Verdict::pass, {{"time_s", 1.0}});  // front 1: fastest time
  b.add("x=2", 1, 3.0, Verdict::none, {{"time_s", 2.0}});  // front 1: a trade-off
  b.add("x=3", 1, 2.0, Verdict::none, {{"time_s", 3.0}});  // front 2: beaten by x=2
  b.add("x=4", 1, 9.0, Verdict::fail, {{"time_s", 0.1}});  // would dominate all: rolled back
  b.add("x=5", 1, 1.5, Verdict::none, {});                 // no time_s: left out
  const auto s = b.summary();
  const auto points = pareto_fronts(s, {{"score", true}, {"time_s", false}}, false);
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(points[0].candidate, 1u);  // front 1, best score first
  EXPECT_EQ(points[0].front, 1u);
  EXPECT_EQ(points[1].candidate, 0u);
  EXPECT_EQ(points[1].front, 1u);
  EXPECT_EQ(points[2].candidate, 2u);
  EXPECT_EQ(points[2].front, 2u);
  EXPECT_EQ(points[2].values, (std::vector<double>{2.0, 3.0}));
  const auto verified = pareto_fronts(s, {{"score", true}, {"time_s", false}}, true);
  ASSERT_EQ(verified.size(), 1u);
  EXPECT_EQ(verified[0].candidate, 0u);
}

TEST(Importance, FullGridSplitsVarianceIntoMainEffects) {
  // score = 10 x + z: x explains 100/101 of the variance, z 1/101, y nothing, no interactions.
  CampaignBuilder b("maximize", 0);
  for (int x : {0, 1})
    for (const char* y : {"a", "b"})
      for (int z : {0, 1}) b.add(fmt_config(x, y, z), 0, 10.0 * x + z);
  const auto report = parameter_importance(b.summary(), objective_goal(b.info));
  EXPECT_EQ(report.samples, 8u);
  ASSERT_EQ(report.parameters.size(), 3u);
  EXPECT_EQ(report.parameters[0].name, "x");
  EXPECT_NEAR(report.parameters[0].importance, 100.0 / 101.0, 1e-12);
  EXPECT_EQ(report.parameters[1].name, "z");
  EXPECT_NEAR(report.parameters[1].importance, 1.0 / 101.0, 1e-12);
  EXPECT_EQ(report.parameters[2].name, "y");
  EXPECT_NEAR(report.parameters[2].importance, 0.0, 1e-12);
  EXPECT_NEAR(report.interactions, 0.0, 1e-12);
  EXPECT_EQ(report.parameters[0].values.front().value, "1");  // maximize: x=1 is the best value
  EXPECT_EQ(report.parameters[0].values.front().mean, 10.5);
}

TEST(Importance, ConstantMetricExplainsNothing) {
  CampaignBuilder b("maximize", 0);
  b.add("x=1", 0, 2.0);
  b.add("x=2", 0, 2.0);
  b.add("x=3", 0, std::nullopt);  // failed: no sample
  const auto report = parameter_importance(b.summary(), objective_goal(b.info));
  EXPECT_EQ(report.samples, 2u);
  EXPECT_EQ(report.parameters[0].importance, 0.0);
  EXPECT_EQ(report.interactions, 0.0);
}

TEST(Compare, RatiosAreOrientedAndGeometricallyAveraged) {
  CampaignBuilder a("minimize", 0), c("minimize", 0);
  a.add("x=1", 0, 4.0);
  a.add("x=2", 0, 2.0);
  a.add("x=3", 0, 1.0);
  c.add("x=2", 0, 1.0);  // twice as fast
  c.add("x=1", 0, 8.0);  // twice as slow
  c.add("x=4", 0, 1.0);  // only in the second campaign
  const auto sa = a.summary(), sc = c.summary();
  const auto cmp = compare({&sa, &sc});
  ASSERT_EQ(cmp.rows.size(), 4u);
  EXPECT_EQ(cmp.rows[0].config, "x=1");
  EXPECT_EQ(cmp.rows[0].cells[1].ratio, 0.5);
  EXPECT_EQ(cmp.rows[1].cells[1].ratio, 2.0);
  EXPECT_FALSE(cmp.rows[2].cells[1].value);
  EXPECT_EQ(cmp.rows[3].config, "x=4");
  EXPECT_FALSE(cmp.rows[3].cells[0].status);
  EXPECT_EQ(cmp.columns[1].shared, 2u);
  EXPECT_NEAR(*cmp.columns[1].geomean_ratio, 1.0, 1e-12);
  EXPECT_FALSE(cmp.columns[0].geomean_ratio);
}

TEST(Compare, DifferentObjectivesAreRefused) {
  CampaignBuilder a("maximize", 0), c("minimize", 0);
  a.add("x=1", 0, 1.0);
  c.add("x=1", 0, 1.0);
  c.info.name = "other";
  const auto sa = a.summary(), sc = c.summary();
  try {
    compare({&sa, &sc});
    FAIL() << "no error";
  } catch (const AnalysisError& e) {
    EXPECT_STREQ(e.what(),
                 "campaign 'other' optimises score (minimize) but 'test' optimises score (maximize): only "
                 "campaigns with the same objective compare");
  }
  EXPECT_EQ(oriented_ratio(2.0, 0.0, true), std::nullopt);
}

}  // namespace

TEST(Objectives, ListsAreParsedAndTheirErrorsNamed) {
  const auto goals = parse_objectives(" time_s:min , residual:minimize,gflops:max");
  ASSERT_EQ(goals.size(), 3u);
  EXPECT_EQ(objectives_text(goals), "time_s:min,residual:min,gflops:max");
  EXPECT_EQ(objectives_problem(""), "is empty: give METRIC:min or METRIC:max, separated by commas");
  EXPECT_EQ(objectives_problem("time_s"), "'time_s' has no direction: write time_s:min or time_s:max");
  EXPECT_EQ(objectives_problem("time_s:down"), "'time_s:down': the direction must be min or max");
  EXPECT_EQ(objectives_problem("time s:min"),
            "'time s' is not a metric name a task can print ([A-Za-z_][A-Za-z0-9_.]*, at most 63 bytes)");
  EXPECT_EQ(objectives_problem("a:min, a:max"), "names 'a' twice");
  EXPECT_THROW(parse_objectives("a:min,"), std::invalid_argument);  // an empty item is no metric
}

TEST(Objectives, PickRulesAreParsedAndChecked) {
  EXPECT_EQ(parse_pick("knee", 2).text(), "knee");
  EXPECT_EQ(parse_pick(" lexicographic ", 2).text(), "lexicographic");
  EXPECT_EQ(parse_pick("weighted 0.7, 0.3", 2).text(), "weighted 0.7,0.3");
  EXPECT_EQ(pick_problem("weighted 1", 2), "gives 1 weights for 2 objectives (e.g. weighted 1,1)");
  EXPECT_EQ(pick_problem("weighted 1,-1", 2), "weight '-1' is not a number of at least 0");
  EXPECT_EQ(pick_problem("weighted 0,0", 2), "has only zero weights");
  EXPECT_EQ(pick_problem("best", 2), "'best' is not knee, weighted W1,W2,... or lexicographic");
}

TEST(Objectives, EachRulePicksItsMember) {
  // time_s (min) against residual (min): a fast and rough end, a slow and exact end, a knee.
  const std::vector<Goal> goals = {{"time_s", false}, {"residual", false}};
  const std::vector<std::vector<double>> front = {{1.0, 1e-2}, {1.2, 1e-5}, {4.0, 0.0}};
  // Scaled over the front: (0, 1), (0.067, 0.001), (1, 0): the middle one is nearest (0, 0).
  EXPECT_EQ(pick_member(front, goals, parse_pick("knee", 2)), 1u);
  EXPECT_EQ(pick_member(front, goals, parse_pick("lexicographic", 2)), 0u);
  EXPECT_EQ(pick_member(front, goals, parse_pick("weighted 1,0", 2)), 0u);
  EXPECT_EQ(pick_member(front, goals, parse_pick("weighted 0,1", 2)), 2u);
  // Lexicographic ties on the first objective go to the second.
  EXPECT_EQ(pick_member({{1.0, 5.0}, {1.0, 2.0}}, goals, parse_pick("lexicographic", 2)), 1u);
  // Directions count: with residual maximised the exact end is the worst on it.
  EXPECT_EQ(pick_member(front, {{"time_s", false}, {"residual", true}}, parse_pick("weighted 0,1", 2)), 0u);
  // A constant objective scales to 0 and decides nothing.
  EXPECT_EQ(pick_member({{2.0, 7.0}, {1.0, 7.0}}, goals, parse_pick("knee", 2)), 1u);
}

TEST(Objectives, SummaryVerifiesTheFrontAndPicksFromItsVerifiedMembers) {
  CampaignBuilder b("minimize");
  b.info.objective = "score";  // time, to be minimised
  b.info.objectives = "score:min,residual:min";
  b.info.pick = "knee";
  b.add("x=0", 0, 2.0, Verdict::pass, {{"residual", 1e-3}});  // baseline: dominated by x=2
  b.add("x=1", 1, 1.0, Verdict::pass, {{"residual", 1e-2}});  // front: fast end
  b.add("x=2", 1, 1.5, Verdict::pass, {{"residual", 1e-4}});  // front: the knee
  b.add("x=3", 1, 0.5, Verdict::fail, {{"residual", 1e-6}});  // dominates all, rolled back
  b.add("x=4", 1, 5.0, Verdict::none, {{"residual", 0.0}});   // front, not verified yet
  b.add("x=5", 1, 0.8, Verdict::none, {});                    // no residual: not on the front
  b.add("x=6", 1, 4.0, Verdict::pass, {{"residual", 1e-5}});  // front: the exact end, verified
  auto s = b.summary();
  EXPECT_EQ(s.goals.size(), 2u);
  EXPECT_EQ(s.front, (std::vector<std::size_t>{1, 2, 6, 4}));
  EXPECT_EQ(s.eligible_front, (std::vector<std::size_t>{1, 2, 6}));
  ASSERT_TRUE(s.best);
  EXPECT_EQ(*s.best, 2u);
  EXPECT_TRUE(s.best_verified);
  EXPECT_FALSE(s.best_confirmed);
  const auto text = summary_text(s, 5);
  EXPECT_NE(text.find("objectives score:min, residual:min · pick knee"), std::string::npos) << text;
  EXPECT_NE(text.find("Pareto front of score:min, residual:min (4 candidates"), std::string::npos) << text;
  EXPECT_NE(text.find("*2"), std::string::npos) << text;
  EXPECT_NE(text.find("3 of 4 front members verified"), std::string::npos) << text;
  const auto json = nlohmann::json::parse(summary_json(s, 5));
  EXPECT_EQ(json["verdict"], "picked from the front");
  EXPECT_EQ(json["pick"]["candidate"], 2);
  EXPECT_EQ(json["pick"]["rule"], "knee");
  ASSERT_EQ(json["front"].size(), 4u);
  EXPECT_EQ(json["front"][1]["picked"], true);
  EXPECT_EQ(json["front"][1]["values"]["residual"], 1e-4);
  EXPECT_EQ(json["front"][3]["status"], "explored");
  // Once x=4 is verified it joins the pick's choices; the knee stays x=2.
  b.evaluate(4, true);
  s = b.summary();
  EXPECT_EQ(s.eligible_front.size(), 4u);
  EXPECT_EQ(*s.best, 2u);
  // Lexicographic on the same front picks the fastest verified member.
  b.info.pick = "lexicographic";
  EXPECT_EQ(*b.summary().best, 1u);
}

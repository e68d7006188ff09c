// The search bench's statistics (bench/search_bar.h, bench/search_random_exact.h): the verdict
// on issue 20's bar and the exact random-sampling baseline it is judged against.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "search_bar.h"
#include "search_random_exact.h"

using namespace flotilla::bench;

TEST(BenchStats, P90InterpolatesAsNumpyAndInfinityCounts) {
  std::vector<double> v(20);
  std::iota(v.begin(), v.end(), 1.0);  // 1..20: numpy.percentile(v, 90) = 18.1
  EXPECT_NEAR(statistic(v, Statistic::p90), 18.1, 1e-12);
  EXPECT_NEAR(statistic(v, Statistic::mean), 10.5, 1e-12);
  v.back() = INFINITY;  // one repeat found nothing: the worst tenth's edge is still finite ...
  EXPECT_NEAR(statistic(v, Statistic::p90), 18.1, 1e-12);
  v[18] = INFINITY;  // ... until the interpolation reaches it
  EXPECT_TRUE(std::isinf(statistic(v, Statistic::p90)));
  EXPECT_TRUE(std::isinf(statistic(v, Statistic::mean)));
}

TEST(BenchStats, BarFindsEveryCellWhereAnotherRowIsBetter) {
  BarCells cells;
  auto& by_budget = cells["space"];
  by_budget.resize(2);
  // Budget 50: the candidate has a tail (8 of 20 repeats at 1.5: mean 1.2, p90 1.5) that
  // "other" has not (half at 1.0, half at 1.05: mean 1.025, p90 1.05). (With 4 of 20 the p90's
  // miss would not be significant: a resample holds 2 or fewer of them 21% of the time.)
  std::vector<double> tailed(20, 1.0), flat(20, 1.0);
  for (int i = 12; i < 20; ++i) tailed[i] = 1.5;
  for (int i = 10; i < 20; ++i) flat[i] = 1.05;
  by_budget[0]["cand"] = {.repeats = tailed};
  by_budget[0]["other"] = {.repeats = flat};
  by_budget[0]["random-exact"] = {.exact_mean = 1.2, .exact_p90 = 1.4};
  // Budget 100: the candidate is best by both.
  by_budget[1]["cand"] = {.repeats = std::vector<double>(20, 1.0)};
  by_budget[1]["other"] = {.repeats = flat};
  by_budget[1]["random-exact"] = {.exact_mean = 1.1, .exact_p90 = 1.3};
  auto result = judge_bar(cells, {50, 100}, "cand");
  EXPECT_EQ(result.cells, 4u);
  ASSERT_EQ(result.misses.size(), 2u);  // mean and p90 at 50: 1.2 against 1.025, 1.5 against 1.05
  for (const auto& m : result.misses) {
    EXPECT_EQ(m.budget, 50u);
    EXPECT_EQ(m.best_other, "other");
    EXPECT_LE(m.low, m.value - m.other_value);
    EXPECT_GE(m.high, m.value - m.other_value);
  }
  EXPECT_EQ(result.misses[0].stat, Statistic::mean);
  EXPECT_NEAR(result.misses[0].value, 1.2, 1e-12);
  EXPECT_TRUE(result.misses[0].significant());
  EXPECT_NEAR(result.misses[1].value, 1.5, 1e-12);
  EXPECT_TRUE(result.misses[1].significant());
}

TEST(BenchStats, ExactRowIsAConstantAndEqualRowsAreNoMiss) {
  BarCells cells;
  cells["s"].resize(1);
  cells["s"][0]["cand"] = {.repeats = {1.0, 1.1, 1.2, 1.3}};
  cells["s"][0]["twin"] = {.repeats = {1.3, 1.2, 1.1, 1.0}};  // the same figures: a tie, not a miss
  cells["s"][0]["random-exact"] = {.exact_mean = 1.0, .exact_p90 = 1.5};
  auto result = judge_bar(cells, {50}, "cand");
  ASSERT_EQ(result.misses.size(), 1u);  // the mean against random-exact's exact 1.0
  EXPECT_EQ(result.misses[0].best_other, "random-exact");
  EXPECT_EQ(result.misses[0].stat, Statistic::mean);
  // Against a constant only the candidate's repeats vary: the interval is the bootstrap of its mean minus 1.0.
  EXPECT_GE(result.misses[0].low, 0.0);
  EXPECT_LE(result.misses[0].high, 0.3 + 1e-12);
  EXPECT_TRUE(result.misses[0].significant());
}

TEST(BenchStats, NoisyEqualRowsGiveAnIntervalAroundZero) {
  // Two samples of the same distribution: a miss either way, never significant.
  BarCells cells;
  cells["s"].resize(1);
  std::vector<double> a, b;
  for (int i = 0; i < 20; ++i) a.push_back(1.0 + 0.01 * ((i * 7) % 20)), b.push_back(1.0 + 0.01 * ((i * 7 + 3) % 20) - 0.0005);
  cells["s"][0]["cand"] = {.repeats = a};
  cells["s"][0]["other"] = {.repeats = b};
  auto result = judge_bar(cells, {50}, "cand");
  ASSERT_FALSE(result.misses.empty());
  for (const auto& m : result.misses) {
    EXPECT_LT(m.low, 0.0);
    EXPECT_GT(m.high, 0.0);
    EXPECT_FALSE(m.significant());
  }
}

TEST(BenchStats, RandomExactMatchesEnumeration) {
  // 7 configurations, 2 of them failed, 3 drawn: the mean of best/opt over all C(7,3) = 35
  // draws (every draw holds a success: there are only 2 failures).
  const std::vector<double> successes = {1.0, 1.2, 1.5, 2.0, 2.5};  // configurations 0..4; 5 and 6 failed
  double sum = 0;
  int draws = 0;
  for (int a = 0; a < 7; ++a)
    for (int b = a + 1; b < 7; ++b)
      for (int c = b + 1; c < 7; ++c) {
        double best = INFINITY;
        for (int k : {a, b, c})
          if (k < 5) best = std::min(best, successes[k]);
        sum += best, ++draws;
      }
  auto r = random_exact(successes, 7, 3);
  EXPECT_NEAR(r.mean, sum / draws, 1e-9);
  EXPECT_EQ(r.median, 1.2);   // P(best <= 1.2) = 1 - C(5,3)/C(7,3) = 25/35; P(best = 1.0) = 15/35
  EXPECT_EQ(r.p90, 2.0);      // P(best <= 1.5) = 31/35 < 0.9 <= P(best <= 2.0) = 34/35
  EXPECT_EQ(r.to_5pct, 4.0);  // P(configuration 0 not among m draws) = (7-m)/7: 4/7 at m = 3, 3/7 at m = 4
}

TEST(BenchStats, PeersBarFailsOnlyASignificantGapBeyondTheMargin) {
  // Three budgets on one space. At 50 the candidate is behind the best peer by 0.2% (inside the
  // 0.5% margin: not behind); at 100 by 3% in every repeat (behind, significantly); at 200 ahead.
  BarCells cells;
  auto& by_budget = cells["s"];
  by_budget.resize(3);
  auto around = [](double centre) {
    std::vector<double> v;
    for (int i = 0; i < 40; ++i) v.push_back(centre + 0.0001 * (i % 5));
    return v;
  };
  by_budget[0]["cand"] = {.repeats = around(1.012)};
  by_budget[0]["kt-a"] = {.repeats = around(1.010)};
  by_budget[0]["kt-b"] = {.repeats = around(1.050)};
  by_budget[1]["cand"] = {.repeats = around(1.040)};
  by_budget[1]["kt-a"] = {.repeats = around(1.010)};
  by_budget[1]["kt-b"] = {.repeats = around(1.020)};
  by_budget[2]["cand"] = {.repeats = around(1.000)};
  by_budget[2]["kt-a"] = {.repeats = around(1.010)};
  by_budget[2]["kt-b"] = {.repeats = around(1.001)};
  auto result = judge_peers(cells, {50, 100, 200}, "cand", {"kt-a", "kt-b"});
  ASSERT_EQ(result.cells.size(), 6u);
  EXPECT_EQ(result.cells[0].best_peer, "kt-a");
  EXPECT_EQ(result.cells[4].best_peer, "kt-b");  // at 200 kt-b is the best peer
  const auto behind = result.behind();
  ASSERT_EQ(behind.size(), 2u);  // mean and p90 at 100
  for (const auto* c : behind) EXPECT_EQ(c->budget, 100u);
  // The geometric means over the 6 cells: the candidate's is below kt-b's, above kt-a's.
  ASSERT_EQ(result.aggregates.size(), 2u);
  EXPECT_EQ(result.aggregates[0].peer, "kt-a");
  EXPECT_FALSE(result.aggregates[0].ahead());
  EXPECT_TRUE(result.aggregates[1].ahead());
  EXPECT_EQ(result.aggregates[1].cells, 6u);
  EXPECT_LT(result.aggregates[1].high, 0.0);  // ahead of kt-b in every resample
  EXPECT_LE(result.aggregates[1].low, result.aggregates[1].candidate / result.aggregates[1].other - 1);
  EXPECT_FALSE(result.met());
  // Without the cell at 100 and without kt-a: met.
  by_budget[1]["cand"] = {.repeats = around(1.019)};
  EXPECT_TRUE(judge_peers(cells, {50, 100, 200}, "cand", {"kt-b"}).met());
}

TEST(BenchStats, BootstrapOfOneStatisticBracketsIt) {
  RowSample row{.repeats = {1.0, 1.0, 1.1, 1.2, 1.0, 1.3, 1.0, 1.0, 1.05, 1.0}};
  auto [low, high] = bootstrap_statistic(row, Statistic::mean);
  EXPECT_LE(low, row.value(Statistic::mean));
  EXPECT_GE(high, row.value(Statistic::mean));
  EXPECT_LT(low, high);
  RowSample exact{.exact_mean = 1.1, .exact_p90 = 1.3};
  EXPECT_EQ(bootstrap_statistic(exact, Statistic::p90), std::make_pair(1.3, 1.3));
}

// The building blocks of the strategies (search/src, white-box): the Sobol sequence, the
// encoding and its moves, Pareto sorting, the Gaussian process and the failure model.
#include <algorithm>
#include <cmath>
#include <set>

#include <gtest/gtest.h>

#include "Encoding.h"
#include "Pareto.h"
#include "Sobol.h"
#include "Surrogate.h"
#include "search_test_util.h"

using namespace flotilla::search;

TEST(Sobol, EveryPowerOfTwoPrefixIsBalancedInEachDimension) {
  SobolSequence sequence(SobolSequence::kMaxDims, 42);
  std::vector<std::vector<double>> points;
  for (int i = 0; i < 64; ++i) points.push_back(sequence.next());
  // A (0, m, 1)-net in every single dimension: 2^k points fill the 2^k bins once each. A
  // digital shift keeps this, so it holds for every seed.
  for (std::size_t d = 0; d < SobolSequence::kMaxDims; ++d)
    for (std::size_t k : {4u, 16u, 64u}) {
      std::set<int> bins;
      for (std::size_t i = 0; i < k; ++i) bins.insert(static_cast<int>(points[i][d] * static_cast<double>(k)));
      EXPECT_EQ(bins.size(), k) << "dimension " << d << ", prefix " << k;
    }
}

TEST(Sobol, UnshiftedStartIsTheClassicSequence) {
  // With the shift undone (XOR is its own inverse), dimension 1 is van der Corput: 0, 1/2, 3/4, 1/4 (Gray order).
  SobolSequence a(2, 7), b(2, 7);
  auto p0 = a.next();
  std::vector<double> firsts;
  for (int i = 0; i < 4; ++i) firsts.push_back(b.next()[0]);
  auto unshift = [&](double v) {
    auto x = static_cast<std::uint32_t>(v * 0x1.0p32) ^ static_cast<std::uint32_t>(p0[0] * 0x1.0p32);
    return static_cast<double>(x) * 0x1.0p-32;
  };
  EXPECT_EQ(unshift(firsts[0]), 0.0);
  EXPECT_EQ(unshift(firsts[1]), 0.5);
  EXPECT_EQ(unshift(firsts[2]), 0.75);
  EXPECT_EQ(unshift(firsts[3]), 0.25);
}

TEST(Encoding, RanksIntegersAndMovesOnTheGrid) {
  Space s;
  s.add_parameter(parse_parameter("n: int: 64,8,16,32"));
  s.add_parameter(parse_parameter("p: enum: a,b,c"));
  s.add_parameter(parse_parameter("lr: real: 1e-3..1e-1 log points 3"));
  Encoding e(s);
  auto p = e.point({16, 2, 1e-2});
  EXPECT_DOUBLE_EQ(p[0], 1.0 / 3.0);  // 16 is the second of 8,16,32,64
  EXPECT_NEAR(p[2], 0.5, 1e-12);
  EXPECT_EQ(e.decode(p)[0], 16);
  EXPECT_EQ(e.decode(p)[1], 2);
  EXPECT_NEAR(e.decode(p)[2], 1e-2, 1e-12);
  auto adjacent = e.neighbours({16, 2, 1e-2}, true);
  std::set<Configuration> got(adjacent.begin(), adjacent.end());
  EXPECT_TRUE(got.contains(Configuration{8, 2, 1e-2}));
  EXPECT_TRUE(got.contains(Configuration{32, 2, 1e-2}));
  EXPECT_FALSE(got.contains(Configuration{64, 2, 1e-2}));
  EXPECT_TRUE(got.contains(Configuration{16, 0, 1e-2}));  // categorical: every other choice
  EXPECT_EQ(e.distance2(e.point({16, 0, 1e-2}), e.point({16, 1, 1e-2})), 1.0);
  Rng rng(1);
  for (int i = 0; i < 200; ++i) {
    auto m = e.mutate({64, 0, 1e-1}, 0.3, rng);
    EXPECT_NE(m, (Configuration{64, 0, 1e-1}));
    EXPECT_TRUE(s.parse_configuration(s.to_text(m)).size() == 3);
  }
}

// A long axis is arithmetic and its neighbourhood a ladder of doubling steps; an axis of
// kListedNeighbours levels or fewer still lists every other value.
TEST(Encoding, LongAxesRankByArithmeticAndOfferALadderOfNeighbours) {
  Space s;
  s.add_parameter(parse_parameter("n: int: 0..99999990 step 10"));
  s.add_parameter(parse_parameter("k: int: 1..64"));
  Encoding e(s);
  EXPECT_EQ(e.level(0, 50), 5u);
  EXPECT_EQ(e.value(0, 5), 50);
  EXPECT_EQ(e.level(0, 55), 6u);  // off the grid: where it would go, as lower_bound says
  EXPECT_DOUBLE_EQ(e.point({99999990, 1})[0], 1.0);
  std::vector<double> along_n;
  for (const auto& c : e.neighbours({50'000'000, 1}, false))
    if (c[0] != 50'000'000) along_n.push_back(c[0]);
  EXPECT_EQ(along_n.size(), 46u);  // 2^0 .. 2^22 levels either way
  EXPECT_TRUE(std::is_sorted(along_n.begin(), along_n.end()));
  EXPECT_EQ(along_n.front(), 50'000'000 - 10 * (1 << 22));
  EXPECT_EQ(along_n.back(), 50'000'000 + 10 * (1 << 22));
  EXPECT_TRUE(std::find(along_n.begin(), along_n.end(), 49'999'990) != along_n.end());
  EXPECT_EQ(e.neighbours({0, 1}, false).size(), 24u + 63u);  // from the bottom: upwards only
  auto adjacent = e.neighbours({0, 5}, true);
  std::set<Configuration> got(adjacent.begin(), adjacent.end());
  EXPECT_EQ(got, (std::set<Configuration>{{10, 5}, {0, 4}, {0, 6}}));
}

TEST(Pareto, FastNonDominatedSortAndCrowding) {
  std::vector<std::vector<double>> losses = {{1, 5}, {2, 2}, {5, 1}, {3, 3}, {4, 4}, {2, 2}};
  auto fronts = pareto_fronts(losses);
  ASSERT_EQ(fronts.size(), 3u);
  EXPECT_EQ(fronts[0], (std::vector<std::size_t>{0, 1, 2, 5}));
  EXPECT_EQ(fronts[1], (std::vector<std::size_t>{3}));
  EXPECT_EQ(fronts[2], (std::vector<std::size_t>{4}));
  auto distance = crowding(losses, fronts[0]);
  EXPECT_TRUE(std::isinf(distance[0]));
  EXPECT_TRUE(std::isinf(distance[2]));
  EXPECT_FALSE(dominates({1, 2}, {1, 2}));
}

TEST(Pareto, HypervolumeExactIn2DAnd3D) {
  // Staircase of (1,3), (2,2), (3,1) under (4,4): 3 + 2 + 1 = 6; a dominated point, a
  // duplicate and a point beyond the reference change nothing.
  EXPECT_DOUBLE_EQ(hypervolume({{1, 3}, {2, 2}, {3, 1}}, {4, 4}), 6.0);
  EXPECT_DOUBLE_EQ(hypervolume({{3, 1}, {2, 2}, {2.5, 2.5}, {1, 3}, {2, 2}, {5, 0}}, {4, 4}), 6.0);
  EXPECT_DOUBLE_EQ(hypervolume({}, {4, 4}), 0.0);
  EXPECT_DOUBLE_EQ(hypervolume({{0, 0}}, {2, 3}), 6.0);
  EXPECT_DOUBLE_EQ(hypervolume({{1}, {3}}, {4}), 3.0);
  // 3-D: one point is a box; under (2,2,2) the boxes of (0,1,1), (1,0,1) and (1,1,0) hold 2
  // each, overlap pairwise and all three in the same unit cube: 6 - 3 + 1 = 4.
  EXPECT_DOUBLE_EQ(hypervolume({{0, 0, 0}}, {1, 2, 3}), 6.0);
  EXPECT_DOUBLE_EQ(hypervolume({{0, 1, 1}, {1, 0, 1}, {1, 1, 0}}, {2, 2, 2}), 4.0);
  EXPECT_THROW(hypervolume({{1, 2}}, {1, 2, 3}), std::invalid_argument);
  EXPECT_THROW(hypervolume({{1, 2, 3, 4}}, {5, 5, 5, 5}), std::invalid_argument);
}

// The strategies' unit cube had the same fault (fuzz_space's log_range_end_point.txt): its
// ends decoded to exp(log(bound)), a hair outside the range, which Parameter::parse refuses.
TEST(Encoding, LogRealEndsDecodeToTheBoundsThemselves) {
  Space s;
  s.add_parameter(parse_parameter("lr: real: 1e-4..1e-1 log points 7"));
  Encoding e(s);
  EXPECT_EQ(e.value(0, 6), 1e-1);
  EXPECT_EQ(e.decode({1.0}), (Configuration{1e-1}));
  EXPECT_EQ(e.decode({0.0}), (Configuration{1e-4}));
}

TEST(GaussianProcess, InterpolatesAndIsUnsureFarAway) {
  Space s;
  s.add_parameter(parse_parameter("x: int: 0..20"));
  Encoding e(s);
  GaussianProcess gp(e);
  std::vector<Point> x;
  std::vector<double> y;
  for (double v : {0.0, 2.0, 4.0, 6.0}) {
    x.push_back(e.point({v}));
    y.push_back(std::sin(v / 3));
  }
  gp.fit(x, y, true);
  auto near = gp.predict(e.point({2}));
  EXPECT_NEAR(near.mean, std::sin(2.0 / 3), 0.05);
  EXPECT_LT(near.sd, gp.predict(e.point({20})).sd);
  auto k = gp.cross(e.point({17}));
  EXPECT_GE(gp.sd_bound_from(k) + 1e-12, gp.predict(e.point({17})).sd);
}

TEST(FailureModel, FailuresNearbyRaiseTheOdds) {
  auto space = flotilla::search::test::structured_space();
  Encoding e(space);
  FailureModel model(e);
  model.add(e.point({11, 8, 0, 0}), true);
  model.add(e.point({11, 9, 0, 0}), true);
  model.add(e.point({2, 2, 0, 0}), false);
  model.add(e.point({3, 5, 0, 0}), false);
  EXPECT_GT(model.p_fail(e.point({11, 7, 0, 0})), 0.5);
  EXPECT_LT(model.p_fail(e.point({2, 3, 0, 0})), model.p_fail(e.point({11, 7, 0, 0})));
  EXPECT_GT(model.p_fail(e.point({2, 3, 0, 0})), 0.0);  // never ruled out
}

// Warm starts (StrategyOptions::warm_start, WarmStart.h), for `bayes` and `parego`: advice that
// never enters history(), whose off-grid and infeasible configurations are ignored; a useful one
// finds the optimum sooner, and one whose ranking is inverted costs about its few picks.
// Statistics over 12 fixed seeds on the structured space, never timings.
#include <algorithm>
#include <cmath>
#include <iostream>

#include <gtest/gtest.h>

#include "WarmStart.h"
#include "flotilla/search/Strategy.h"
#include "search_test_util.h"

using namespace flotilla::search;

namespace {

constexpr std::uint64_t kWarmStartSeeds = 12;

// The structured objective measured "on another GPU": 1.4 times slower, with a deterministic
// wobble of up to 3%, the same hidden constraint, and its best tile one step smaller (the bowl
// centred at a = 8, not 9: the same kernel ranks a little differently elsewhere). `inverted`:
// the ranking upside down (the slowest configuration looks the fastest), failures kept.
std::vector<Observation> other_gpu(const Space& space, bool inverted) {
  std::vector<Observation> out;
  space.for_each_feasible([&](std::uint64_t index) {
    auto c = space.grid_point(index);
    auto shifted = c;
    shifted[0] += 1;
    auto value = test::structured_objective(c) ? test::structured_objective(shifted) : std::nullopt;
    if (!value) return out.push_back({c, {}});
    double v = 1.4 * *value * (1.0 + 0.03 * std::sin(7.0 * static_cast<double>(index)));
    out.push_back({c, {inverted ? 10.0 - v : v}});
  });
  return out;
}

// Evaluations until the optimum (1.0) was found, budget + 1 if never.
double evaluations_to_optimum(const std::string& name, std::uint64_t seed, const std::vector<Observation>& warm,
                              std::size_t budget) {
  auto space = test::structured_space();
  auto strategy = make_strategy({.name = name, .seed = seed, .maximize = false, .warm_start = warm}, space);
  std::size_t n = 0;
  for (const auto& text : test::drive(*strategy, space, budget, 1)) {
    ++n;
    auto value = test::structured_objective(space.parse_configuration(text));
    if (value && *value <= 1.0 + 1e-12) return static_cast<double>(n);
  }
  return static_cast<double>(budget + 1);
}

double mean_to_optimum(const std::string& name, const std::vector<Observation>& warm) {
  double sum = 0;
  for (std::uint64_t seed = 1; seed <= kWarmStartSeeds; ++seed) sum += evaluations_to_optimum(name, seed, warm, 60);
  return sum / kWarmStartSeeds;
}

}  // namespace

TEST(WarmStart, IgnoresConfigurationsOffTheGridInfeasibleOrFailed) {
  auto space = test::structured_space();  // a, b in 1..12, c ordinal of 4, d enum of 3, a + b <= 20
  std::vector<Observation> warm = {
      {{13, 1, 0, 0}, {0.1}},   // a off its grid
      {{1, 1, 4, 0}, {0.1}},    // c has no fifth choice
      {{1, 1, 0, 0.5}, {0.1}},  // not a choice index
      {{12, 12, 0, 0}, {0.1}},  // infeasible here
      {{1, 1}, {0.1}},          // another space's shape
      {{9, 4, 2, 1}, {}},       // failed there: never a pick
      {{2, 2, 0, 0}, {5.0}},
  };
  WarmStart picks(space, warm, 3);
  EXPECT_EQ(picks.usable(), 1u);
  EXPECT_EQ(picks.picks(), (std::vector<Configuration>{{2, 2, 0, 0}}));
  for (std::string name : {"bayes", "parego"}) {
    auto strategy = make_strategy({.name = name, .seed = 1, .maximize = false, .warm_start = warm}, space);
    auto first = strategy->ask(6);
    ASSERT_EQ(first.size(), 6u) << name;
    EXPECT_EQ(first[0], (Configuration{2, 2, 0, 0})) << name;
    for (const auto& c : first) EXPECT_TRUE(space.feasible(c) && on_grid(space, c)) << name << " " << space.to_text(c);
  }
}

TEST(WarmStart, IsNeverHistoryAndItsPicksAreProposedAndMeasuredHere) {
  auto space = test::structured_space();
  auto warm = other_gpu(space, false);
  WarmStart expected(space, warm, warm_start_picks(8));  // 4 parameters: an initial design of 8
  ASSERT_EQ(expected.picks().size(), 2u);
  // Diverse: the two best configurations differ in two parameters or more.
  std::size_t differ = 0;
  for (std::size_t d = 0; d < 4; ++d) differ += expected.picks()[0][d] != expected.picks()[1][d];
  EXPECT_GE(differ, 2u);
  for (std::string name : {"bayes", "parego"}) {
    auto strategy = make_strategy({.name = name, .seed = 3, .maximize = false, .warm_start = warm}, space);
    EXPECT_TRUE(strategy->history().empty()) << name;
    EXPECT_FALSE(strategy->seen(expected.picks()[0])) << name;
    auto batch = strategy->ask(3);  // pick, design point, pick: nothing measured yet to doubt them
    ASSERT_EQ(batch.size(), 3u) << name;
    EXPECT_EQ(batch[0], expected.picks()[0]) << name;
    EXPECT_EQ(batch[2], expected.picks()[1]) << name;
    EXPECT_TRUE(strategy->history().empty()) << name;
    strategy->tell(batch[0], 2.0);
    ASSERT_EQ(strategy->history().size(), 1u) << name;
    EXPECT_EQ(strategy->history()[0].loss, std::vector<double>{2.0}) << name;  // this run's value, not the warm start's
  }
}

TEST(WarmStart, PicksStopOnceOneMeasuresWorseThanTheDesign) {
  // Inverted: the first pick is among the slowest here. Measured after one design point that
  // beats it, no further pick is proposed.
  auto space = test::structured_space();
  auto misleading = other_gpu(space, true);
  WarmStart picks(space, misleading, 4);
  ASSERT_EQ(picks.picks().size(), 4u);
  for (std::string name : {"bayes", "parego"}) {
    auto strategy = make_strategy({.name = name, .seed = 4, .maximize = false, .warm_start = misleading}, space);
    auto proposed = test::drive(*strategy, space, 20, 1);
    std::size_t taken = 0;
    for (const auto& pick : picks.picks())
      taken += std::count(proposed.begin(), proposed.end(), space.to_text(pick));
    EXPECT_EQ(proposed.front(), space.to_text(picks.picks().front())) << name;
    EXPECT_EQ(taken, 1u) << name;
  }
}

TEST(WarmStart, WithoutOneNothingChanges) {
  // An empty warm start is no warm start: the same proposals as before it existed.
  auto space = test::structured_space();
  for (std::string name : {"bayes", "parego"}) {
    auto a = make_strategy({.name = name, .seed = 5, .maximize = false}, space);
    auto b = make_strategy({.name = name, .seed = 5, .maximize = false, .warm_start = {}}, space);
    EXPECT_EQ(test::drive(*a, space, 30, 1), test::drive(*b, space, 30, 1)) << name;
  }
}

TEST(WarmStart, AUsefulOneFindsTheOptimumSooner) {
  auto space = test::structured_space();
  auto useful = other_gpu(space, false);
  for (std::string name : {"bayes", "parego"}) {
    const double cold = mean_to_optimum(name, {}), warm = mean_to_optimum(name, useful);
    std::cout << name << ": mean evaluations to the optimum, cold " << cold << ", warm " << warm << "\n";
    EXPECT_LT(warm, 0.75 * cold) << name << " cold " << cold << " warm " << warm;
  }
}

TEST(WarmStart, AnInvertedOneCostsAboutItsPicks) {
  // The first pick is the other GPU's "best" (here: its worst); measured worse than the design,
  // it is the last, and the model never sees the warm start's values, so the search runs as a
  // cold one with one wasted evaluation: over 12 seeds, no more than the picks (2 here) later on
  // average, with one evaluation of slack for the different path it takes after them.
  auto space = test::structured_space();
  auto misleading = other_gpu(space, true);
  const double picks = static_cast<double>(warm_start_picks(8));
  for (std::string name : {"bayes", "parego"}) {
    const double cold = mean_to_optimum(name, {}), warm = mean_to_optimum(name, misleading);
    std::cout << name << ": mean evaluations to the optimum, cold " << cold << ", inverted warm start " << warm << "\n";
    EXPECT_LE(warm, cold + picks + 1.0) << name << " cold " << cold << " warm " << warm;
  }
}

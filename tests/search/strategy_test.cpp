// Strategies: no repeats, constraints respected, seeded determinism, exhaustion, registry.
#include <set>

#include <gtest/gtest.h>

#include "flotilla/search/Strategy.h"

using namespace flotilla::search;

namespace {
Space small_space() {
  Space s;
  s.add_parameter(parse_parameter("x: int: 1..8"));
  s.add_parameter(parse_parameter("y: int: 1..8"));
  s.add_constraint("x + y <= 9");  // 36 feasible points of 64
  return s;
}

std::vector<std::string> run(Strategy& strategy, const Space& space, std::size_t batch) {
  std::vector<std::string> out;
  for (;;) {
    auto configs = strategy.ask(batch);
    for (const auto& c : configs) {
      EXPECT_TRUE(space.feasible(c)) << space.to_text(c);
      out.push_back(space.to_text(c));
      strategy.tell(c, c[0] * c[1]);
    }
    if (configs.size() < batch) return out;
  }
}
}  // namespace

class EveryStrategy : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryStrategy, EnumeratesFeasibleSpaceExactlyOnceThenStops) {
  auto space = small_space();
  auto strategy = make_strategy({.name = GetParam(), .seed = 3}, space);
  auto seen = run(*strategy, space, 5);
  EXPECT_EQ(seen.size(), 36u);
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), 36u);
  EXPECT_TRUE(strategy->ask(4).empty());
}

TEST_P(EveryStrategy, NeverReproposesToldConfigurations) {
  auto space = small_space();
  auto strategy = make_strategy({.name = GetParam(), .seed = 3}, space);
  auto first = space.parse_configuration("x=1 y=1");
  strategy->tell(first, std::nullopt);
  for (const auto& text : run(*strategy, space, 7)) EXPECT_NE(text, "x=1 y=1");
}

INSTANTIATE_TEST_SUITE_P(Registry, EveryStrategy, ::testing::Values("grid", "random"));

TEST(RandomStrategy, SameSeedSameSequenceOtherSeedOther) {
  auto space = small_space();
  auto a = make_strategy({.name = "random", .seed = 7}, space);
  auto b = make_strategy({.name = "random", .seed = 7}, space);
  auto c = make_strategy({.name = "random", .seed = 8}, space);
  auto sa = run(*a, space, 4), sb = run(*b, space, 4), sc = run(*c, space, 4);
  EXPECT_EQ(sa, sb);
  EXPECT_NE(sa, sc);
}

TEST(RandomStrategy, ContinuousSpaceIsSampledWithinBounds) {
  Space s;
  s.add_parameter(parse_parameter("lr: real: 1e-4..1e-1 log"));
  s.add_parameter(parse_parameter("m: real: 0..1"));
  s.add_constraint("m < 0.5");
  auto strategy = make_strategy({.name = "random", .seed = 1}, s);
  auto batch = strategy->ask(200);
  ASSERT_EQ(batch.size(), 200u);
  int low_decade = 0;
  for (const auto& c : batch) {
    EXPECT_GE(c[0], 1e-4);
    EXPECT_LE(c[0], 1e-1);
    EXPECT_LT(c[1], 0.5);
    low_decade += c[0] < 1e-3;
  }
  EXPECT_GT(low_decade, 30);  // log-uniform: about a third fall in [1e-4, 1e-3)
}

TEST(GridStrategy, WalksInIndexOrder) {
  auto space = small_space();
  auto grid = make_strategy({.name = "grid"}, space);
  auto batch = grid->ask(3);
  ASSERT_EQ(batch.size(), 3u);
  EXPECT_EQ(space.to_text(batch[0]), "x=1 y=1");
  EXPECT_EQ(space.to_text(batch[2]), "x=1 y=3");
}

TEST(Registry, UnknownNameListsKnownOnes) {
  auto space = small_space();
  try {
    make_strategy({.name = "annealing"}, space);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "unknown strategy 'annealing' (known: grid, random)");
  }
}

// Search quality, as statistics over fixed seeds (never timings): every adaptive strategy
// beats uniform random sampling on a space with clear structure, learns a hidden constraint,
// keeps batches diverse; NSGA-II finds more of a Pareto front than random, ParEGO a front of more
// hypervolume; successive halving promotes along a fidelity parameter.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>

#include <gtest/gtest.h>

#include "Pareto.h"
#include "flotilla/search/Strategy.h"
#include "search_test_util.h"

using namespace flotilla::search;

namespace {

constexpr std::uint64_t kSeeds = 12;

struct Outcome {
  double mean_best = 0;      // mean over seeds of the best objective found
  double mean_failures = 0;  // mean over seeds of failed proposals
};

Outcome measure(const std::string& name, std::size_t budget, std::size_t batch) {
  auto space = test::structured_space();
  Outcome o;
  for (std::uint64_t seed = 1; seed <= kSeeds; ++seed) {
    auto strategy = make_strategy({.name = name, .seed = seed, .maximize = false}, space);
    double best = INFINITY;
    for (const auto& text : test::drive(*strategy, space, budget, batch)) {
      auto value = test::structured_objective(space.parse_configuration(text));
      if (value) best = std::min(best, *value);
      else o.mean_failures += 1;
    }
    o.mean_best += best;
  }
  o.mean_best /= kSeeds;
  o.mean_failures /= kSeeds;
  return o;
}

const std::map<std::string, Outcome>& random_outcomes() {
  static const std::map<std::string, Outcome> outcomes = {
      {"b1", measure("random", 40, 1)}, {"b4", measure("random", 40, 4)}, {"b1-80", measure("random", 80, 1)}};
  return outcomes;
}

}  // namespace

class Adaptive : public ::testing::TestWithParam<std::string> {};

TEST_P(Adaptive, BeatsRandomOnAStructuredSpace) {
  auto random = random_outcomes().at("b1");
  auto mine = measure(GetParam(), 40, 1);
  // The optimum is 1.0; random's mean best after 40 of 1,548 is about 1.3 (1.31 over these seeds).
  EXPECT_LT(mine.mean_best - 1.0, 0.75 * (random.mean_best - 1.0)) << GetParam() << " " << mine.mean_best << " vs " << random.mean_best;
}

TEST_P(Adaptive, BeatsRandomInBatchesToo) {
  auto random = random_outcomes().at("b4");
  auto mine = measure(GetParam(), 40, 4);
  EXPECT_LT(mine.mean_best, random.mean_best) << GetParam();
}

TEST_P(Adaptive, LearnsAHiddenConstraint) {
  // About 1 in 4 feasible configurations fail (random: 20 of 80); a strategy that learns proposes failing ones less often while
  // it searches towards the optimum, which sits next to the failing region.
  auto random = random_outcomes().at("b1-80");
  auto mine = measure(GetParam(), 80, 1);
  EXPECT_LT(mine.mean_failures, random.mean_failures) << GetParam() << " " << mine.mean_failures << " vs " << random.mean_failures;
}

INSTANTIATE_TEST_SUITE_P(Registry, Adaptive,
                         ::testing::Values("bayes", "genetic", "annealing", "local", "hyperband", "bandit", "nsga2",
                                           "bayes-escape", "parego", "bayes-climb", "bayes-local",
                                           "bayes-genetic"));

TEST(Batches, AreDiverseNotNearCopies) {
  // Mean number of parameters in which two members of one batch differ, for a batch asked
  // after 20 results: a batch of near-copies would differ in about one.
  auto space = test::structured_space();
  for (auto name : {"bayes", "genetic", "bandit", "nsga2", "parego"}) {
    auto strategy = make_strategy({.name = name, .seed = 9, .maximize = false}, space);
    test::drive(*strategy, space, 20, 4);
    auto batch = strategy->ask(8);
    ASSERT_EQ(batch.size(), 8u);
    double differing = 0, pairs = 0;
    for (std::size_t i = 0; i < batch.size(); ++i)
      for (std::size_t j = i + 1; j < batch.size(); ++j, ++pairs)
        for (std::size_t d = 0; d < 4; ++d) differing += batch[i][d] != batch[j][d];
    EXPECT_GE(differing / pairs, 1.5) << name;
  }
}

namespace {
// Two conflicting objectives over x, y in 0..9: speed (x + y) against error (a bowl at 2,2).
std::vector<double> two_objectives(const Configuration& c) {
  return {c[0] + c[1], (c[0] - 2) * (c[0] - 2) + (c[1] - 2) * (c[1] - 2) + 0.5 * c[0]};
}
std::size_t true_front_members(Strategy& strategy, const Space& space, std::size_t budget) {
  for (std::size_t n = 0; n < budget; n += 4)
    for (const auto& c : strategy.ask(4)) strategy.tell_objectives(c, two_objectives(c));
  // The true front, by brute force over the 100 points.
  std::vector<Configuration> all;
  for (std::uint64_t i = 0; i < space.grid_size(); ++i) all.push_back(space.grid_point(i));
  auto dominated = [&](const Configuration& c) {
    auto f = two_objectives(c);
    return std::any_of(all.begin(), all.end(), [&](const Configuration& o) {
      auto g = two_objectives(o);
      return g[0] <= f[0] && g[1] <= f[1] && (g[0] < f[0] || g[1] < f[1]);
    });
  };
  std::size_t members = 0;
  for (const auto& o : strategy.pareto_front()) members += !dominated(o.config);
  return members;
}
}  // namespace

TEST(Nsga2, FindsMoreOfTheParetoFrontThanRandom) {
  Space space;
  space.add_parameter(parse_parameter("x: int: 0..9"));
  space.add_parameter(parse_parameter("y: int: 0..9"));
  std::size_t nsga = 0, random = 0;
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    auto a = make_strategy({.name = "nsga2", .seed = seed, .maximize = false}, space);
    auto b = make_strategy({.name = "random", .seed = seed, .maximize = false}, space);
    nsga += true_front_members(*a, space, 40);
    random += true_front_members(*b, space, 40);
    for (const auto& o : a->pareto_front()) EXPECT_EQ(o.loss.size(), 2u);
  }
  EXPECT_GT(nsga, random);
}

TEST(Nsga2, ParetoFrontHonoursEachObjectivesDirection) {
  Space space;
  space.add_parameter(parse_parameter("x: int: 0..3"));
  auto s = make_strategy({.name = "nsga2", .seed = 1, .maximize_objectives = {true, false}}, space);
  s->tell_objectives({0}, {1.0, 1.0});  // dominated by x=1 (more of the first, less of the second)
  s->tell_objectives({1}, {2.0, 0.5});
  s->tell_objectives({2}, {3.0, 2.0});
  auto front = s->pareto_front();
  ASSERT_EQ(front.size(), 2u);
  EXPECT_EQ(front[0].config, Configuration{1});
  EXPECT_EQ(front[1].config, Configuration{2});
}

TEST(Hyperband, PromotesTheBestArmsAlongTheFidelityParameter) {
  // size 1, 3, 9: the cheap rungs rank configurations as the expensive one does.
  Space space;
  space.add_parameter(parse_parameter("a: int: 1..12"));
  space.add_parameter(parse_parameter("b: int: 1..12"));
  space.add_parameter(parse_parameter("size: int: 1,3,9"));
  auto s = make_strategy({.name = "hyperband", .seed = 3, .maximize = false, .fidelity = "size"}, space);
  std::map<double, std::vector<double>> by_size;
  for (int n = 0; n < 60; ++n)
    for (const auto& c : s->ask(1)) {
      double v = c[2] * (1.0 + 0.1 * std::abs(c[0] - 6) + 0.1 * std::abs(c[1] - 6));
      by_size[c[2]].push_back(v / c[2]);
      s->tell(c, v);
    }
  ASSERT_TRUE(by_size.contains(9.0));
  EXPECT_GT(by_size[1.0].size(), by_size[3.0].size());
  EXPECT_GT(by_size[3.0].size(), by_size[9.0].size());
  // Promoted arms are better than the average arm at rung 0.
  auto mean = [](const std::vector<double>& v) { double s = 0; for (double x : v) s += x; return s / static_cast<double>(v.size()); };
  EXPECT_LT(mean(by_size[9.0]), mean(by_size[1.0]));
  EXPECT_THROW(make_strategy({.name = "hyperband", .fidelity = "nope"}, space), std::invalid_argument);
}

namespace {
// ZDT1 (Zitzler, Deb and Thiele 2000) on a 32 x 16 x 8 grid, 4,096 configurations: f1 = x1,
// f2 = g (1 - sqrt(f1 / g)), g = 1 + 9 mean(x2, x3), every x scaled to [0, 1]. The front is
// x2 = x3 = 0 (32 configurations), convex; most of the space is far from it.
Space zdt_space() {
  Space s;
  s.add_parameter(parse_parameter("x1: int: 0..31"));
  s.add_parameter(parse_parameter("x2: int: 0..15"));
  s.add_parameter(parse_parameter("x3: int: 0..7"));
  return s;
}
std::vector<double> zdt(const Configuration& c) {
  const double f1 = c[0] / 31.0, g = 1.0 + 9.0 * (c[1] / 15.0 + c[2] / 7.0) / 2.0;
  return {f1, g * (1.0 - std::sqrt(f1 / g))};
}
const std::vector<double> kZdtReference = {1.1, 1.1};  // ZDT's usual reference point

// Hypervolume of the front found after `budget` evaluations over that of the true front.
double zdt_hypervolume_ratio(const std::string& name, std::uint64_t seed, std::size_t budget) {
  auto space = zdt_space();
  auto strategy = make_strategy({.name = name, .seed = seed, .maximize = false}, space);
  for (std::size_t n = 0; n < budget; ++n)
    for (const auto& c : strategy->ask(1)) strategy->tell_objectives(c, zdt(c));
  std::vector<std::vector<double>> found, all;
  for (const auto& o : strategy->pareto_front()) found.push_back(o.loss);
  for (std::uint64_t i = 0; i < space.grid_size(); ++i) all.push_back(zdt(space.grid_point(i)));
  return hypervolume(found, kZdtReference) / hypervolume(all, kZdtReference);
}
}  // namespace

TEST(Parego, FrontHasMoreHypervolumeThanRandomsOnZdt1) {
  // Mean over 12 seeds of hypervolume(found) / hypervolume(true front) after 50 evaluations.
  std::map<std::string, double> mean;
  for (std::string name : {"parego", "nsga2", "random"}) {
    for (std::uint64_t seed = 1; seed <= kSeeds; ++seed) mean[name] += zdt_hypervolume_ratio(name, seed, 50) / kSeeds;
    RecordProperty("hypervolume_ratio_" + name, std::to_string(mean[name]));
  }
  std::cout << "ZDT1, 50 evaluations, mean hypervolume ratio over 12 seeds: parego " << mean["parego"] << ", nsga2 "
            << mean["nsga2"] << ", random " << mean["random"] << "\n";
  EXPECT_GT(mean["parego"], mean["random"]);
}

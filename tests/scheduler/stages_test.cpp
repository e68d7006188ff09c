// The staged intent's pure decisions (Stages.h): which component next, and when to stop.
#include <gtest/gtest.h>

#include "flotilla/scheduler/Stages.h"

using namespace flotilla::scheduler;

namespace {
const std::vector<Component> kComponents = {
    {"norm", "share_norm", {"norm"}},
    {"gemv", "share_gemv", {"gemv_unroll", "drafter", "k"}},
    {"attention", "share_attention", {"attn_splits"}},
    {"other", "share_other", {}},
};
}  // namespace

TEST(Stages, FirstStageTakesTheLargestShare) {
  auto d = next_stage(kComponents, {{"share_norm", 0.1}, {"share_gemv", 0.7}, {"share_attention", 0.2}}, {}, 0.03);
  EXPECT_FALSE(d.stop);
  EXPECT_EQ(d.component, "gemv");
  EXPECT_DOUBLE_EQ(d.share, 0.7);
  EXPECT_EQ(d.reason, "gemv has the largest untuned share, 70.0%");
}

TEST(Stages, ComponentsWithoutParametersOrAlreadyTunedAreSkipped) {
  std::map<std::string, double> shares = {{"share_norm", 0.1}, {"share_gemv", 0.5}, {"share_attention", 0.15},
                                          {"share_other", 0.25}};
  auto d = next_stage(kComponents, shares, {{"gemv", 0.4}}, 0.03);
  EXPECT_FALSE(d.stop);
  EXPECT_EQ(d.component, "attention");  // other is larger but has no parameters; gemv had its stage
}

TEST(Stages, StopsWhenTheLastStageGainedLessThanTheThreshold) {
  std::map<std::string, double> shares = {{"share_gemv", 0.5}, {"share_attention", 0.4}};
  auto d = next_stage(kComponents, shares, {{"gemv", 0.5}, {"attention", 0.02}}, 0.03);
  EXPECT_TRUE(d.stop);
  EXPECT_EQ(d.reason, "stage attention gained 2.0% < threshold 3.0%");
  // A stage that kept the incumbent gained 0: with a zero threshold the loop goes on.
  EXPECT_FALSE(next_stage(kComponents, {{"share_norm", 0.2}}, {{"gemv", 0.0}}, 0.0).stop);
}

TEST(Stages, StopsWhenRemovingTheLargestUntunedComponentCouldNotGainTheThreshold) {
  // Amdahl: removing 2% of the time gains 1/(1-0.02)-1 = 2.04% < 3%.
  auto d = next_stage(kComponents, {{"share_norm", 0.02}, {"share_gemv", 0.9}}, {{"gemv", 0.8}}, 0.03);
  EXPECT_TRUE(d.stop);
  EXPECT_EQ(d.reason,
            "largest untuned component norm has 2.0% of the time: removing it entirely would gain 2.0% < threshold 3.0%");
  // 3% of the time bounds the gain at 3.09%, enough.
  EXPECT_FALSE(next_stage(kComponents, {{"share_norm", 0.03}}, {{"gemv", 0.8}}, 0.03).stop);
}

TEST(Stages, StopsWhenEveryTunableComponentHadItsStage) {
  std::map<std::string, double> shares = {{"share_norm", 0.3}, {"share_gemv", 0.3}, {"share_attention", 0.3},
                                          {"share_other", 0.1}};
  auto d = next_stage(kComponents, shares, {{"gemv", 0.5}, {"attention", 0.2}, {"norm", 0.1}}, 0.03);
  EXPECT_TRUE(d.stop);
  EXPECT_EQ(d.reason, "every tunable component has had its stage");
}

TEST(Stages, ComponentsMissingFromTheProfileAreNotChosen) {
  auto d = next_stage(kComponents, {{"share_attention", 0.2}, {"unrelated", 0.9}}, {}, 0.03);
  EXPECT_EQ(d.component, "attention");
  auto none = next_stage(kComponents, {{"unrelated", 0.9}}, {}, 0.03);
  EXPECT_TRUE(none.stop);
  EXPECT_EQ(none.reason, "the profile has none of the components' share metrics");
}

TEST(Stages, GainFollowsTheDirection) {
  EXPECT_DOUBLE_EQ(stage_gain(100, 150, true), 0.5);
  EXPECT_DOUBLE_EQ(stage_gain(2.0, 1.0, false), 1.0);
  EXPECT_DOUBLE_EQ(stage_gain(100, 90, true), 90.0 / 100 - 1);
  EXPECT_DOUBLE_EQ(stage_gain(0, 90, true), 0.0);
}

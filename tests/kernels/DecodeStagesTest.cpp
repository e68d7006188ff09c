// DecodeStagesTest.cpp — the staged decode intent's pure decisions (DecodeStages.h).
#include <gtest/gtest.h>

#include "flotilla/kernels/DecodeStages.h"

namespace fk = flotilla::kernels;

namespace {

const std::map<std::string, double> profile{{"share_norm", 0.01},      {"share_gemv", 0.75},
                                            {"share_attention", 0.19}, {"share_draft", 0.0},
                                            {"share_other", 0.05}};

TEST(DecodeStages, StartsWithTheLargestComponent) {
  const fk::StageDecision d = fk::next_stage(profile, {}, 0.03);
  EXPECT_FALSE(d.stop);
  EXPECT_EQ(d.component, "gemv");
  EXPECT_EQ(d.reason, "gemv has the largest untuned share, 75.0%");
}

TEST(DecodeStages, MovesToTheNextUntunedComponentAfterAGain) {
  const fk::StageDecision d = fk::next_stage(profile, {{"gemv", 100, 150}}, 0.03);
  EXPECT_FALSE(d.stop);
  EXPECT_EQ(d.component, "attention");
}

TEST(DecodeStages, StopsWhenTheLastStageGainedTooLittle) {
  const fk::StageDecision d = fk::next_stage(profile, {{"gemv", 100, 150}, {"attention", 150, 152}}, 0.03);
  EXPECT_TRUE(d.stop);
  EXPECT_EQ(d.reason, "stage attention gained 1.3% < threshold 3.0%");
}

TEST(DecodeStages, StopsWhenNoComponentCouldGainTheThreshold) {
  // other (5%) has no parameters; norm's 1% can give at most 1.0%.
  const fk::StageDecision d = fk::next_stage(profile, {{"gemv", 100, 150}, {"attention", 150, 200}}, 0.03);
  EXPECT_TRUE(d.stop);
  EXPECT_EQ(d.reason, "largest untuned component norm has 1.0% of the time: removing it entirely would gain 1.0% < threshold 3.0%");
}

TEST(DecodeStages, NeverPicksAComponentWithoutParametersOrTwice) {
  const std::map<std::string, double> other_heavy{{"share_other", 0.9}, {"share_gemv", 0.1}};
  EXPECT_EQ(fk::next_stage(other_heavy, {}, 0.01).component, "gemv");
  const fk::StageDecision d = fk::next_stage(other_heavy, {{"gemv", 10, 20}}, 0.01);
  EXPECT_TRUE(d.stop);
  EXPECT_EQ(d.reason, "every tunable component has had its stage");
}

TEST(DecodeStages, ComponentsNameDecodeFamilyMetrics) {
  for (const fk::DecodeComponent& c : fk::decode_components()) EXPECT_EQ(c.share_metric, "share_" + c.name);
}

}  // namespace

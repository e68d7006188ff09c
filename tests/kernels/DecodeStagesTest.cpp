// DecodeStagesTest.cpp — the staged decode intent's decisions: the scheduler's one set of stage
// rules (flotilla/scheduler/Stages.h) over the decode engine's components (DecodeStages.h), as
// bench/kernels applies them.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "flotilla/kernels/DecodeStages.h"
#include "flotilla/scheduler/Stages.h"

namespace fk = flotilla::kernels;
namespace fs = flotilla::scheduler;

namespace {

// A stage: its component and the incumbent's tokens/s before and after it.
using Stage = std::tuple<std::string, double, double>;

fs::StageDecision next_stage(const std::map<std::string, double>& shares, const std::vector<Stage>& history,
                             double threshold) {
  std::vector<fs::Component> components;
  for (const auto& c : fk::decode_components()) components.push_back({c.name, c.share_metric, c.params});
  std::vector<fs::StageRecord> records;
  for (const auto& [component, before, after] : history)
    records.push_back({component, fs::stage_gain(before, after, /*maximize=*/true)});
  return fs::next_stage(components, shares, records, threshold);
}

const std::map<std::string, double> profile{{"share_norm", 0.01},      {"share_gemv", 0.75},
                                            {"share_attention", 0.19}, {"share_draft", 0.0},
                                            {"share_other", 0.05}};

TEST(DecodeStages, StartsWithTheLargestComponent) {
  const fs::StageDecision d = next_stage(profile, {}, 0.03);
  EXPECT_FALSE(d.stop);
  EXPECT_EQ(d.component, "gemv");
  EXPECT_EQ(d.reason, "gemv has the largest untuned share, 75.0%");
}

TEST(DecodeStages, MovesToTheNextUntunedComponentAfterAGain) {
  const fs::StageDecision d = next_stage(profile, {{"gemv", 100, 150}}, 0.03);
  EXPECT_FALSE(d.stop);
  EXPECT_EQ(d.component, "attention");
}

TEST(DecodeStages, StopsWhenTheLastStageGainedTooLittle) {
  const fs::StageDecision d = next_stage(profile, {{"gemv", 100, 150}, {"attention", 150, 152}}, 0.03);
  EXPECT_TRUE(d.stop);
  EXPECT_EQ(d.reason, "stage attention gained 1.3% < threshold 3.0%");
}

TEST(DecodeStages, StopsWhenNoComponentCouldGainTheThreshold) {
  // other (5%) has no parameters; norm's 1% can give at most 1.0%.
  const fs::StageDecision d = next_stage(profile, {{"gemv", 100, 150}, {"attention", 150, 200}}, 0.03);
  EXPECT_TRUE(d.stop);
  EXPECT_EQ(d.reason, "largest untuned component norm has 1.0% of the time: removing it entirely would gain 1.0% < threshold 3.0%");
}

TEST(DecodeStages, NeverPicksAComponentWithoutParametersOrTwice) {
  const std::map<std::string, double> other_heavy{{"share_other", 0.9}, {"share_gemv", 0.1}};
  EXPECT_EQ(next_stage(other_heavy, {}, 0.01).component, "gemv");
  const fs::StageDecision d = next_stage(other_heavy, {{"gemv", 10, 20}}, 0.01);
  EXPECT_TRUE(d.stop);
  EXPECT_EQ(d.reason, "every tunable component has had its stage");
}

TEST(DecodeStages, ComponentsNameDecodeFamilyMetrics) {
  for (const fk::DecodeComponent& c : fk::decode_components()) EXPECT_EQ(c.share_metric, "share_" + c.name);
}

}  // namespace

// Pure campaign decisions: resume (missing tasks), gating, stopping, candidate status.
#include <cmath>

#include <gtest/gtest.h>

#include "flotilla/scheduler/Planning.h"

using namespace flotilla;
using namespace flotilla::scheduler;
using results::CandidateStatus;
using results::TrialKind;
using results::TrialRecord;
using results::TrialStatus;

namespace {
TrialRecord trial(std::int64_t candidate, TrialKind kind, int index, TrialStatus status, double objective = 1) {
  return TrialRecord{.candidate = candidate, .kind = kind, .index = index, .status = status, .objective = objective,
                     .reason = status == TrialStatus::ok ? "" : "exit code 1"};
}
std::vector<const TrialRecord*> pointers(const std::vector<TrialRecord>& v) {
  std::vector<const TrialRecord*> p;
  for (const auto& t : v) p.push_back(&t);
  return p;
}
results::CampaignInfo info(int repeats, int shards, bool test_gate = false) {
  return {.repeats = repeats, .shards = shards, .test_gate = test_gate ? "all_pass" : ""};
}
results::CandidateSummary explored(std::int64_t id, double objective, std::string origin = "random") {
  results::CandidateSummary c;
  c.record = {.id = id, .round = 1, .config = "x=" + std::to_string(id), .origin = origin};
  c.status = CandidateStatus::explored;
  c.objective = objective;
  return c;
}
}  // namespace

TEST(Resume, MissingIndicesSkipRecordedTasksOfThatKindOnly) {
  std::vector<TrialRecord> t = {trial(0, TrialKind::explore, 0, TrialStatus::ok),
                                trial(0, TrialKind::explore, 2, TrialStatus::failed),
                                trial(0, TrialKind::evaluate, 1, TrialStatus::ok)};
  EXPECT_EQ(missing_indices(pointers(t), TrialKind::explore, 4), (std::vector<int>{1, 3}));
  EXPECT_EQ(missing_indices(pointers(t), TrialKind::evaluate, 3), (std::vector<int>{0, 2}));
  EXPECT_TRUE(missing_indices(pointers(t), TrialKind::explore, 1).empty());
}

TEST(Gate, TopKBestFirstExcludingBaselineAndFailures) {
  std::vector<results::CandidateSummary> round = {explored(1, 5), explored(2, 9), explored(3, 7),
                                                  explored(4, 100, "baseline")};
  results::CandidateSummary failed;
  failed.record.id = 5;
  failed.status = CandidateStatus::explore_failed;
  round.push_back(failed);
  EXPECT_EQ(next_evaluations(round, Gate{Gate::Kind::top, 2}, true, std::nullopt), (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(next_evaluations(round, Gate{Gate::Kind::top, 2}, false, std::nullopt), (std::vector<std::int64_t>{1, 3}));
  EXPECT_EQ(next_evaluations(round, Gate{Gate::Kind::all, 0}, true, std::nullopt), (std::vector<std::int64_t>{2, 3, 1}));
}

TEST(Gate, RollbackMakesRoomForTheNextBest) {
  std::vector<results::CandidateSummary> round = {explored(1, 5), explored(2, 9), explored(3, 7), explored(6, 6)};
  round[1].status = CandidateStatus::rolled_back;  // 9 broke the output
  round[2].status = CandidateStatus::verified;     // 7 passed
  EXPECT_EQ(next_evaluations(round, Gate{Gate::Kind::top, 2}, true, 7.0), (std::vector<std::int64_t>{}));
  EXPECT_EQ(next_evaluations(round, Gate{Gate::Kind::top, 2}, true, 5.5), (std::vector<std::int64_t>{6}));
  round[2].status = CandidateStatus::rolled_back;
  EXPECT_EQ(next_evaluations(round, Gate{Gate::Kind::top, 2}, true, 4.0), (std::vector<std::int64_t>{6, 1}));
  EXPECT_EQ(next_evaluations(round, Gate{Gate::Kind::top, 2}, true, 5.0), (std::vector<std::int64_t>{6}));
}

TEST(Stop, BudgetAndTarget) {
  Settings s;
  s.budget = 10;
  s.objective = "gflops";
  EXPECT_FALSE(stop_reason(s, 9, std::nullopt));
  EXPECT_EQ(stop_reason(s, 10, std::nullopt), "budget of 10 candidates spent");
  s.target = 50;
  EXPECT_FALSE(stop_reason(s, 3, 49.9));
  EXPECT_EQ(stop_reason(s, 3, 50.0), "target gflops 50 reached");
  s.maximize = false;
  EXPECT_EQ(stop_reason(s, 3, 49.0), "target gflops 50 reached");
}

TEST(CandidateStatusRules, MedianVerifiedAndRolledBack) {
  results::CandidateRecord c{.id = 0, .round = 1, .config = "x=1", .origin = "random"};
  std::vector<TrialRecord> t = {trial(0, TrialKind::explore, 0, TrialStatus::ok, 3),
                                trial(0, TrialKind::explore, 1, TrialStatus::ok, 1),
                                trial(0, TrialKind::explore, 2, TrialStatus::ok, 2)};
  auto s = results::summarize_candidate(c, pointers(t), info(3, 2));
  EXPECT_EQ(s.status, CandidateStatus::explored);
  EXPECT_DOUBLE_EQ(*s.objective, 2);
  EXPECT_DOUBLE_EQ(s.spread, 1.0);
  t.push_back(trial(0, TrialKind::evaluate, 0, TrialStatus::ok));
  EXPECT_EQ(results::summarize_candidate(c, pointers(t), info(3, 2)).status, CandidateStatus::explored);
  t.push_back(trial(0, TrialKind::evaluate, 1, TrialStatus::ok));
  EXPECT_EQ(results::summarize_candidate(c, pointers(t), info(3, 2)).status, CandidateStatus::verified);
  t.back().status = TrialStatus::failed;
  t.back().reason = "exit code 1";
  t.back().output_tail = "checking\nshard 1/2 rows 4..7: max abs error 3e-07 > tolerance 1e-12\n";
  auto rolled = results::summarize_candidate(c, pointers(t), info(3, 2));
  EXPECT_EQ(rolled.status, CandidateStatus::rolled_back);
  EXPECT_EQ(rolled.reason, "shard 1/2: exit code 1: shard 1/2 rows 4..7: max abs error 3e-07 > tolerance 1e-12");
  EXPECT_EQ(results::summarize_candidate(c, pointers({t[0], t[1]}), info(3, 2)).status, CandidateStatus::pending);
  t[1].status = TrialStatus::timeout;
  t[1].reason = "timed out after 2s";
  auto failed = results::summarize_candidate(c, pointers(t), info(3, 2));
  EXPECT_EQ(failed.status, CandidateStatus::explore_failed);
  EXPECT_EQ(failed.reason, "repeat 1: timed out after 2s");
}

TEST(TaskId, EncodesTheTrialKeyBothWays) {
  for (TaskKey key : {TaskKey{0, TrialKind::explore, 0}, TaskKey{12345, TrialKind::evaluate, 999'999},
                      TaskKey{(std::int64_t{1} << 39) - 1, TrialKind::explore, (1 << 22) - 1},
                      TaskKey{7, TrialKind::confirm, 0}, TaskKey{7, TrialKind::warmup, (1 << 22) - 1}})
    EXPECT_EQ(decode_task_id(encode_task_id(key)), key);
  EXPECT_NE(encode_task_id({1, TrialKind::explore, 0}), encode_task_id({1, TrialKind::evaluate, 0}));
  EXPECT_NE(encode_task_id({1, TrialKind::confirm, 0}), encode_task_id({1, TrialKind::warmup, 0}));
}

// With a test gate, the verdict (evaluate index `shards`) is required: a candidate whose shards
// all passed is not verified until it is in, and the re-run (index shards + 1) never counts.
TEST(Analysis, TestGateVerdictIsRequired) {
  results::CandidateRecord c{.id = 0, .round = 1, .config = "x=1", .origin = "random"};
  std::vector<TrialRecord> t = {trial(0, TrialKind::explore, 0, TrialStatus::ok, 3),
                                trial(0, TrialKind::evaluate, 0, TrialStatus::ok),
                                trial(0, TrialKind::evaluate, 1, TrialStatus::ok),
                                trial(0, TrialKind::evaluate, 3, TrialStatus::failed)};  // the re-run
  EXPECT_EQ(results::summarize_candidate(c, pointers(t), info(1, 2, true)).status, CandidateStatus::explored);
  EXPECT_EQ(results::summarize_candidate(c, pointers(t), info(1, 2, false)).status, CandidateStatus::verified);
  t.push_back(trial(0, TrialKind::evaluate, 2, TrialStatus::ok));
  EXPECT_EQ(results::summarize_candidate(c, pointers(t), info(1, 2, true)).status, CandidateStatus::verified);
  t.back().status = TrialStatus::failed;
  t.back().reason = "1 regression against the baseline";
  auto rolled = results::summarize_candidate(c, pointers(t), info(1, 2, true));
  EXPECT_EQ(rolled.status, CandidateStatus::rolled_back);
  EXPECT_EQ(rolled.reason, "test gate: 1 regression against the baseline");
}

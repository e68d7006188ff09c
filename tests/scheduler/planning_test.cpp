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

TEST(Stop, ABaselineThatFailedToExploreOrVerifyStopsTheCampaign) {
  results::CampaignSummary summary;
  EXPECT_FALSE(baseline_failure(summary));  // no baseline: nothing to stop for
  summary.candidates = {explored(0, 1.0, "baseline"), explored(1, 2.0)};
  summary.baseline = 0;
  EXPECT_FALSE(baseline_failure(summary));
  summary.candidates[0].status = CandidateStatus::pending;
  EXPECT_FALSE(baseline_failure(summary));
  summary.candidates[0].status = CandidateStatus::verified;
  EXPECT_FALSE(baseline_failure(summary));
  summary.candidates[1].status = CandidateStatus::explore_failed;  // another candidate failing is no reason
  EXPECT_FALSE(baseline_failure(summary));

  summary.candidates[0].status = CandidateStatus::explore_failed;
  summary.candidates[0].reason = "repeat 0: exit code 127";
  EXPECT_EQ(baseline_failure(summary), "the baseline (x=0) failed to explore: repeat 0: exit code 127");
  summary.candidates[0].status = CandidateStatus::rolled_back;
  summary.candidates[0].reason = "shard 1/3: exit code 1";
  EXPECT_EQ(baseline_failure(summary), "the baseline (x=0) failed verification: shard 1/3: exit code 1");
  summary.candidates[0].reason.clear();
  EXPECT_EQ(baseline_failure(summary), "the baseline (x=0) failed verification");
  summary.candidates[0].status = CandidateStatus::build_failed;
  summary.candidates[0].reason = "k.cpp:3:1: error: expected ';'";
  EXPECT_EQ(baseline_failure(summary), "the baseline (x=0) failed to build: k.cpp:3:1: error: expected ';'");
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

namespace {
results::CandidateSummary with_interval(std::int64_t id, double low, double median, double high, int repeats = 3,
                                        std::string origin = "random") {
  auto c = explored(id, median, std::move(origin));
  c.interval = results::stats::Interval{.estimate = median, .low = low, .high = high, .coverage = 0.75};
  c.repeats_done = repeats;
  return c;
}
}  // namespace

// Racing: only a candidate whose interval still contains the incumbent's objective gets more
// repeats; clearly worse or clearly better ones are decided; the baseline and candidates at the
// limit get none; without an incumbent nothing is undecided.
TEST(AdaptiveRepeats, OnlyUndecidedCandidatesGetMore) {
  std::vector<results::CandidateSummary> round = {
      with_interval(1, 1.0, 1.5, 2.0),             // contains 1.8: undecided
      with_interval(2, 0.5, 0.7, 0.9),             // clearly worse: raced out
      with_interval(3, 2.0, 2.5, 3.0),             // clearly better: its confirmation will measure it
      with_interval(4, 1.7, 1.9, 2.1, 6),          // undecided, but at max_repeats
      with_interval(5, 1.0, 1.8, 2.0, 3, "baseline")};
  const auto more = more_repeats(round, 1.8, 3, 6);
  ASSERT_EQ(more.size(), 1u);
  EXPECT_EQ(more[0].candidate, 1);
  EXPECT_EQ(more[0].total, 6);
  EXPECT_EQ(more_repeats(round, 1.8, 2, 4)[0].total, 4);  // capped by max_repeats
  EXPECT_TRUE(more_repeats(round, std::nullopt, 3, 6).empty());
  round[0].status = CandidateStatus::explore_failed;
  EXPECT_TRUE(more_repeats(round, 1.8, 3, 6).empty());
}

namespace {
results::CampaignSummary campaign_of(std::vector<results::CandidateSummary> candidates, int shards = 1,
                                     std::string direction = "maximize") {
  results::CampaignSummary s;
  s.campaign.shards = shards;
  s.campaign.direction = std::move(direction);
  s.candidates = std::move(candidates);
  return s;
}

// The kind of each failure, as the strategy is told it (search::Failure).
TEST(Failures, EachCandidateStatusSaysItsKind) {
  const auto candidate = [](std::int64_t id, CandidateStatus status) {
    results::CandidateSummary c;
    c.record.id = id;
    c.status = status;
    return c;
  };
  const std::vector<TrialRecord> trials = {
      {.candidate = 3, .kind = TrialKind::explore, .index = 0, .status = TrialStatus::ok},
      {.candidate = 3, .kind = TrialKind::explore, .index = 1, .status = TrialStatus::timeout},
      {.candidate = 4, .kind = TrialKind::explore, .index = 0, .status = TrialStatus::failed},
      {.candidate = 5, .kind = TrialKind::evaluate, .index = 0, .status = TrialStatus::timeout}};
  EXPECT_EQ(failure_of(candidate(1, CandidateStatus::build_failed), trials), search::Failure::build);
  EXPECT_EQ(failure_of(candidate(2, CandidateStatus::rolled_back), trials), search::Failure::verification);
  EXPECT_EQ(failure_of(candidate(3, CandidateStatus::explore_failed), trials), search::Failure::timeout);
  EXPECT_EQ(failure_of(candidate(4, CandidateStatus::explore_failed), trials), search::Failure::crash);
  // Only its explore runs say how an exploration failed: an evaluate trial that timed out does not.
  EXPECT_EQ(failure_of(candidate(5, CandidateStatus::explore_failed), trials), search::Failure::crash);
  EXPECT_EQ(failure_of(candidate(6, CandidateStatus::verified), trials), std::nullopt);
  EXPECT_EQ(failure_of(candidate(7, CandidateStatus::explored), trials), std::nullopt);
  EXPECT_EQ(failure_of(candidate(8, CandidateStatus::pending), trials), std::nullopt);
}

}  // namespace

// Confirmation candidates: verified (explored without an evaluate stage), not the baseline, not
// confirmed yet, beating the threshold; best first, at most `tries`.
TEST(ConfirmationCandidates, BestEligibleFirstUpToTries) {
  auto a = explored(1, 5), b = explored(2, 9), c = explored(3, 7), d = explored(4, 8), base = explored(0, 4, "baseline");
  for (auto* x : {&a, &b, &c, &d, &base}) x->status = CandidateStatus::verified;
  d.confirmation = results::ConfirmationSummary{};  // confirmed already
  c.status = CandidateStatus::rolled_back;
  const auto s = campaign_of({base, a, b, c, d});
  EXPECT_EQ(confirmation_candidates(s, 4.0, 2, 6), (std::vector<std::int64_t>{2, 1}));
  EXPECT_EQ(confirmation_candidates(s, 4.0, 1, 6), (std::vector<std::int64_t>{2}));
  EXPECT_EQ(confirmation_candidates(s, 6.0, 5, 6), (std::vector<std::int64_t>{2}));  // 5 cannot beat 6
  EXPECT_TRUE(confirmation_candidates(s, 9.0, 5, 6).empty());
  // Minimised objectives: lower is better.
  EXPECT_EQ(confirmation_candidates(campaign_of({base, a, b}, 1, "minimize"), 8.0, 5, 6),
            (std::vector<std::int64_t>{1}));
  // Without an evaluate stage, explored candidates are eligible; verified ones only with one.
  auto e = explored(5, 10);
  EXPECT_EQ(confirmation_candidates(campaign_of({base, e}, 0), 4.0, 5, 6), (std::vector<std::int64_t>{5}));
  EXPECT_TRUE(confirmation_candidates(campaign_of({base, e}, 1), 4.0, 5, 6).empty());
}

// A candidate whose median does not beat the threshold, but whose interval still contains it
// after the most repeats exploration gives, is confirmed after the ones that beat it: only the
// pairs can tell. One short of max_repeats, adaptive repeats come first.
TEST(ConfirmationCandidates, UndecidedAfterAllRepeatsComeAfterTheBeatingOnes) {
  auto base = with_interval(0, 0.9, 1.0, 1.1, 3, "baseline");
  auto close = with_interval(1, 0.8, 0.97, 1.2, 6);   // median below 1.0, interval holds it
  auto worse = with_interval(2, 0.5, 0.6, 0.7, 6);    // clearly worse
  auto beats = with_interval(3, 1.0, 1.3, 1.6, 3);
  auto early = with_interval(4, 0.8, 0.98, 1.2, 3);   // undecided, but it may still get repeats
  for (auto* x : {&base, &close, &worse, &beats, &early}) x->status = CandidateStatus::explored;
  const auto s = campaign_of({base, close, worse, beats, early}, 0);
  EXPECT_EQ(confirmation_candidates(s, 1.0, 5, 6), (std::vector<std::int64_t>{3, 1}));
  EXPECT_EQ(confirmation_candidates(s, 1.0, 1, 6), (std::vector<std::int64_t>{3}));
}

// search.warm_start: another campaign's candidates as advice, in this campaign's loss convention.
TEST(WarmStart, OutcomesFailuresAndCandidatesOffTheSpace) {
  Settings s;
  s.objective = "gflops";
  s.maximize = true;
  s.space.add_parameter(search::parse_parameter("x: int: 1,2,3,4"));
  results::CampaignSummary other{.campaign = {.objective = "gflops", .direction = "maximize"}};
  auto with = [](results::CandidateSummary c, CandidateStatus status) {
    c.status = status;
    return c;
  };
  other.candidates = {explored(1, 2.5), with(explored(2, 3.0), CandidateStatus::verified),
                      with(explored(3, 9.0), CandidateStatus::rolled_back), with(explored(4, 1.0), CandidateStatus::pending),
                      explored(7, 8.0)};  // x=7 is not a value of this space's x
  const auto warm = warm_start_from(other, s, "other.h5");
  ASSERT_EQ(warm.observations.size(), 3u);
  EXPECT_EQ(warm.observations[0].loss, std::vector<double>{-2.5});  // maximised: negated
  EXPECT_EQ(warm.observations[1].loss, std::vector<double>{-3.0});
  EXPECT_TRUE(warm.observations[2].failed());
  EXPECT_EQ(warm.observations[2].failure, search::Failure::verification);
  EXPECT_EQ(warm.failed, 1u);
  EXPECT_EQ(warm.off_space, 1u);
  EXPECT_EQ(warm.first_off_space, "'x=7': '7' is not a value of parameter 'x'");

  other.campaign.direction = "minimize";
  try {
    warm_start_from(other, s, "other.h5");
    ADD_FAILURE() << "another direction was accepted";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "other.h5: [search] warm_start: it optimises gflops (minimize), this campaign gflops "
                           "(maximize): a warm start needs the same objective");
  }
  other.campaign.direction = "maximize";
  other.candidates = {explored(7, 8.0)};
  try {
    warm_start_from(other, s, "other.h5");
    ADD_FAILURE() << "a campaign of another space was accepted";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "other.h5: [search] warm_start: none of its 1 candidates with an outcome is a configuration "
                           "of this campaign's space (the first, 'x=7': '7' is not a value of parameter 'x')");
  }
}

// Several objectives: the other campaign must have the same ones; each outcome holds every loss.
TEST(WarmStart, SeveralObjectivesNeedTheSameObjectivesAndGiveEveryLoss) {
  Settings s;
  s.objective = "time_s";
  s.maximize = false;
  s.objectives = {{"time_s", false}, {"gflops", true}};
  s.space.add_parameter(search::parse_parameter("x: int: 1,2,3,4"));
  results::CampaignSummary other{.campaign = {.objective = "time_s", .direction = "minimize",
                                              .objectives = "time_s:min,gflops:max"}};
  other.goals = s.objectives;
  auto c = explored(1, 2.5);
  c.metrics = {{"gflops", 8.0}};
  other.candidates = {c, explored(2, 3.0)};  // the second printed no gflops: left out
  const auto warm = warm_start_from(other, s, "other.h5");
  ASSERT_EQ(warm.observations.size(), 1u);
  EXPECT_EQ(warm.observations[0].loss, (std::vector<double>{2.5, -8.0}));
  other.campaign.objectives = "time_s:min,joules:min";
  try {
    warm_start_from(other, s, "other.h5");
    ADD_FAILURE() << "other objectives were accepted";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "other.h5: [search] warm_start: its objectives are 'time_s:min,joules:min', this "
                           "campaign's 'time_s:min,gflops:max': a warm start needs the same objectives");
  }
}

TEST(Fairness, OversubscriptionIsWarnedAboutWithTheSettingToChange) {
  const jobs::BackendCapabilities local{
      .tasks_per_host = 4, .tasks_per_host_setting = "resources.slots", .runs_exclusive_alone = true};
  EXPECT_FALSE(oversubscription_warning(local, 4, false));  // one run per core
  EXPECT_FALSE(oversubscription_warning(local, 2, true));   // explore.exclusive: each alone
  EXPECT_FALSE(oversubscription_warning({}, 2, false));     // a batch system's nodes: unknown
  const auto warning = oversubscription_warning(local, 2, false);
  ASSERT_TRUE(warning);
  EXPECT_NE(warning->find("up to 4 benchmark runs at once on a host with 2 cores"), std::string::npos) << *warning;
  EXPECT_NE(warning->find("set resources.slots to at most 2, or explore.exclusive = true"), std::string::npos)
      << *warning;
  // mpi: rank 0 dispatches, so one rank more than the cores.
  const jobs::BackendCapabilities mpi{.tasks_per_host = 5, .tasks_per_host_setting = "resources.ranks"};
  const auto mpi_warning = oversubscription_warning(mpi, 2, false);
  ASSERT_TRUE(mpi_warning);
  EXPECT_TRUE(mpi_warning->ends_with("set resources.ranks to at most 3")) << *mpi_warning;
  // Its ranks do not run an exclusive task alone: explore.exclusive changes nothing there.
  EXPECT_TRUE(oversubscription_warning(mpi, 2, true));
}

TEST(Fairness, TheBaselineUnderUnlikePlacementGatesNothing) {
  results::CampaignSummary s;
  s.candidates = {explored(0, 3.3, "baseline"), explored(1, 2.8), explored(2, 2.6)};
  s.baseline = 0;
  s.best = 0;
  EXPECT_EQ(incumbent_objective(s), 3.3);
  s.unlike_placement = results::CampaignSummary::UnlikePlacement{3, 5};
  EXPECT_FALSE(incumbent_objective(s));  // the confirmations decide
  // Without a threshold every verified candidate may be confirmed, best first.
  EXPECT_EQ(confirmation_candidates(s, incumbent_objective(s), 2, 3), (std::vector<std::int64_t>{1, 2}));
  // A candidate that won its confirmation holds the incumbency, like placement or not.
  s.best = 1;
  EXPECT_EQ(incumbent_objective(s), 2.8);
}

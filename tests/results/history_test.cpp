// History, run state and timeline: best-so-far in hindsight, lifecycle events, lane packing.
#include <flotilla/results/History.h>
#include <flotilla/results/Timeline.h>
#include <gtest/gtest.h>

#include "campaign_builder.h"

using namespace flotilla::results;
using namespace flotilla::results::testing;

namespace {

TEST(History, BestSoFarNeverCountsRolledBackCandidates) {
  CampaignBuilder b;
  b.add("x=1", 0, 1.0, Verdict::pass);  // baseline, verified
  b.add("x=2", 1, 2.0);                 // explored only
  b.add("x=9", 1, 9.0, Verdict::fail);  // fastest, but rolled back
  b.add("x=3", 1, std::nullopt);        // explore failed
  b.add("x=4", 2, 4.0, Verdict::pass);
  const auto h = history(b.summary(), b.trials);
  ASSERT_EQ(h.evaluations.size(), 5u);
  std::vector<std::optional<double>> best, verified;
  for (const auto& e : h.evaluations) {
    best.push_back(e.best_so_far);
    verified.push_back(e.best_verified_so_far);
  }
  EXPECT_EQ(best, (std::vector<std::optional<double>>{1.0, 2.0, 2.0, 2.0, 4.0}));
  EXPECT_EQ(verified, (std::vector<std::optional<double>>{1.0, 1.0, 1.0, 1.0, 4.0}));
  EXPECT_TRUE(h.evaluations[1].improved);
  EXPECT_FALSE(h.evaluations[2].improved);
  EXPECT_EQ(h.evaluations[0].elapsed, 1.0);  // the end of the first trial, from the first start
}

TEST(History, EvaluationsFollowExploreCompletionNotIds) {
  CampaignBuilder b("minimize", 0);
  b.add("x=1", 0, 5.0);
  b.add("x=2", 0, 3.0);
  std::swap(b.trials[0].start, b.trials[1].start);
  std::swap(b.trials[0].end, b.trials[1].end);  // candidate 1 finished first
  const auto h = history(b.summary(), b.trials);
  ASSERT_EQ(h.evaluations.size(), 2u);
  EXPECT_EQ(h.evaluations[0].candidate, 1u);
  EXPECT_EQ(h.evaluations[1].best_so_far, 3.0);  // minimize: 3 stays best after 5
}

// A candidate whose build failed has no explore repeat: it is an evaluation when its build ended,
// not before every other (it came first, at time 0, so a chart of such a campaign began at 2).
TEST(History, AFailedBuildIsEvaluatedWhenItsBuildEnded) {
  CampaignBuilder b;
  b.add("x=1", 0, 1.0, Verdict::pass);
  b.add("x=2", 1, 2.0, Verdict::pass);
  b.candidates.push_back({2, 2, "x=3", "grid"});
  b.trials.push_back({.candidate = 2, .kind = TrialKind::build, .status = TrialStatus::build_failed,
                      .start = b.clock, .end = b.clock + 1});
  b.add("x=4", 3, 4.0, Verdict::pass);
  const auto h = history(b.summary(), b.trials);
  ASSERT_EQ(h.evaluations.size(), 4u);
  std::vector<std::size_t> order;
  for (const auto& e : h.evaluations) order.push_back(e.candidate);
  EXPECT_EQ(order, (std::vector<std::size_t>{0, 1, 2, 3}));
  EXPECT_FALSE(h.evaluations[2].objective);
  EXPECT_GT(h.evaluations[2].elapsed, h.evaluations[1].elapsed);
}

TEST(History, RoundsCarryTheBestForward) {
  CampaignBuilder b;
  b.add("x=1", 0, 1.0, Verdict::pass);
  b.add("x=5", 1, 5.0, Verdict::pass);
  b.add("x=9", 1, 9.0, Verdict::fail);
  b.add("x=2", 2, 2.0);
  b.candidates.push_back({4, 2, "x=7", "grid"});  // proposed, no trial yet: pending
  const auto h = history(b.summary(), b.trials);
  ASSERT_EQ(h.rounds.size(), 3u);
  EXPECT_EQ(h.rounds[1].round_best, 5.0);
  EXPECT_EQ(h.rounds[1].rolled_back, 1u);
  EXPECT_EQ(h.rounds[2].round_best, 2.0);
  EXPECT_EQ(h.rounds[2].best_so_far, 5.0);
  EXPECT_EQ(h.rounds[2].best_verified_so_far, 5.0);
  EXPECT_EQ(h.rounds[2].pending, 1u);
  EXPECT_EQ(h.rounds[2].best_candidate, 1u);
  EXPECT_EQ(h.evaluations.size(), 4u);  // the pending candidate is no evaluation yet
}

std::vector<EventRecord> events(std::initializer_list<const char*> kinds) {
  std::vector<EventRecord> out;
  for (const char* k : kinds) out.push_back({0, k, ""});
  return out;
}

TEST(RunStatus, TheLastLifecycleEventDecides) {
  CampaignBuilder b;
  b.add("x=1", 0, 1.0, Verdict::pass);
  const auto s = b.summary();
  EXPECT_EQ(run_status(events({"campaign_started", "batch_proposed", "campaign_finished"}), s, false).state,
            RunState::finished);
  EXPECT_TRUE(run_status(events({"campaign_started", "campaign_finished"}), s, true).complete());
  EXPECT_EQ(run_status(events({"campaign_started", "interrupted"}), s, false).state, RunState::interrupted);
  EXPECT_EQ(run_status(events({"campaign_started", "campaign_finished", "campaign_resumed"}), s, true).state,
            RunState::running);
  EXPECT_EQ(run_status(events({"campaign_started", "verified"}), s, false).state, RunState::stopped);
  EXPECT_EQ(run_status({}, s, false).state, RunState::stopped);
  // `flotilla cancel`: the run recorded why it stopped; a later resume runs again.
  EXPECT_EQ(run_status(events({"campaign_started", "cancelled"}), s, false).state, RunState::cancelled);
  EXPECT_EQ(to_string(RunState::cancelled), "cancelled");
  EXPECT_EQ(run_status(events({"campaign_started", "cancelled", "campaign_resumed"}), s, false).state,
            RunState::stopped);
}

TEST(RunStatus, NoteNamesTheStateAndThePendingCandidates) {
  CampaignBuilder b;
  b.add("x=1", 0, 1.0, Verdict::pass);
  b.candidates.push_back({1, 1, "x=2", "grid"});
  b.candidates.push_back({2, 1, "x=3", "grid"});
  const auto stopped = run_status(events({"campaign_started"}), b.summary(), false);
  EXPECT_FALSE(stopped.complete());
  EXPECT_EQ(stopped.note(),
            "incomplete: the campaign stopped without finishing (crashed or killed) with 2 of 3 "
            "candidates pending; run it again to resume");
  EXPECT_EQ(run_status(events({"interrupted"}), b.summary(), false).note(),
            "incomplete: the campaign was interrupted with 2 of 3 candidates pending; run it again to resume");
  EXPECT_EQ(run_status(events({"campaign_resumed"}), b.summary(), true).note(),
            "incomplete: the campaign is still running with 2 of 3 candidates pending; these are its results so far");
  EXPECT_EQ(run_status(events({"cancelled"}), b.summary(), false).note(),
            "incomplete: the campaign was stopped by `flotilla cancel` with 2 of 3 candidates pending; run it again "
            "to resume");
}

TrialRecord trial(double start, double end) {
  TrialRecord t;
  t.start = start;
  t.end = end;
  return t;
}

TEST(Timeline, WithoutRanksConcurrentTrialsGetOneSlotLaneEach) {
  // Two slots: [0,2) [0,1) [1,3) [2,4) need exactly two lanes.
  const auto tl = build_timeline({trial(10, 12), trial(10, 11), trial(11, 13), trial(12, 14)});
  ASSERT_EQ(tl.lanes.size(), 2u);
  EXPECT_FALSE(tl.by_rank);
  EXPECT_EQ(tl.lanes[0].label, "slot 0");
  EXPECT_EQ(tl.bars[0].lane, 0u);
  EXPECT_EQ(tl.bars[1].lane, 1u);
  EXPECT_EQ(tl.bars[2].lane, 1u);
  EXPECT_EQ(tl.bars[3].lane, 0u);
  EXPECT_EQ(tl.bars[3].start, 2.0);
  EXPECT_EQ(tl.span, 4.0);
  EXPECT_DOUBLE_EQ(tl.utilisation(), 7.0 / 8.0);
}

// Candidate 1 shares candidate 0's build: its build trial is a copy (built_by 0, the same times).
// It is not drawn, so it opens no lane of its own.
TEST(Timeline, CopiesOfASharedBuildAreNotDrawn) {
  std::vector<TrialRecord> trials = {trial(0, 1), trial(0, 1), trial(1, 2), trial(2, 3)};
  trials[0].kind = trials[1].kind = TrialKind::build;
  trials[1].candidate = trials[3].candidate = 1;
  trials[0].metrics = {{"built_by", 0}};
  trials[1].metrics = {{"built_by", 0}};
  EXPECT_FALSE(shared_build_copy(trials[0]));
  EXPECT_TRUE(shared_build_copy(trials[1]));
  const auto tl = build_timeline(trials);
  ASSERT_EQ(tl.lanes.size(), 1u);
  ASSERT_EQ(tl.bars.size(), 3u);
  EXPECT_EQ(tl.bars[0].trial, 0u);
  EXPECT_EQ(tl.bars[1].trial, 2u);
}

// Two runs, [0, 10] (finished) and [100, 110] (killed: no end recorded, its last trial ends it),
// busy all the time they ran: utilisation counts only while the campaign ran, not the 90 s between.
TEST(Timeline, UtilisationCountsOnlyTheTimeTheCampaignRan) {
  const std::vector<TrialRecord> trials = {trial(1000, 1010), trial(1100, 1110)};
  const std::vector<EventRecord> events = {{999, "campaign_started", ""},
                                           {1010.5, "campaign_finished", ""},
                                           {1099, "campaign_resumed", ""},
                                           {1105, "batch_proposed", "round 2: 1 candidates (grid)"}};
  const auto tl = build_timeline(trials);
  const auto running = running_periods(tl, trials, events);
  ASSERT_EQ(running.size(), 2u);
  EXPECT_EQ(running[0].start, 0);  // from the first task: the timeline starts there
  EXPECT_EQ(running[0].end, 10.5);
  EXPECT_EQ(running[1].start, 99);
  EXPECT_EQ(running[1].end, 110);
  EXPECT_DOUBLE_EQ(tl.utilisation(running), 20.0 / 21.5);
  EXPECT_DOUBLE_EQ(tl.utilisation(), 20.0 / 110.0);  // the whole span, without events
  EXPECT_TRUE(running_periods(tl, trials, {}).empty());
  // A run stopped by `flotilla cancel` ends at its `cancelled` event, as an interrupted one does.
  auto cancelled = events;
  cancelled.push_back({1107, "cancelled", "stopped by `flotilla cancel`; nothing was resubmitted"});
  EXPECT_EQ(running_periods(tl, trials, cancelled).back().end, 107);
}

TEST(Timeline, EmptyHasNoLanes) {
  const auto tl = build_timeline({});
  EXPECT_TRUE(tl.lanes.empty());
  EXPECT_EQ(tl.utilisation(), 0);
}

// Sets where a trial ran, when TrialRecord has the rank/host columns (the MPI worker adds them).
template <class Trial>
bool set_place(Trial& t, int rank, const std::string& host) {
  if constexpr (requires {
                  t.rank = rank;
                  t.host = host;
                }) {
    t.rank = rank;
    t.host = host;
    return true;
  }
  return false;
}

TEST(Timeline, RecordedRanksGiveOneLanePerRankAndSlotsForTheRest) {
  std::vector<TrialRecord> trials = {trial(0, 5), trial(0, 1), trial(1, 2), trial(0, 2)};
  if (!set_place(trials[0], 1, "n1") || !set_place(trials[1], 0, "n1") || !set_place(trials[2], 0, "n1"))
    GTEST_SKIP() << "TrialRecord has no rank column";
  const auto tl = build_timeline(trials);  // trials[3]: a row from an older file, no place
  ASSERT_EQ(tl.lanes.size(), 3u);
  EXPECT_TRUE(tl.by_rank);
  EXPECT_EQ(tl.lanes[0].label, "n1 rank 0");
  EXPECT_EQ(tl.lanes[1].label, "n1 rank 1");
  EXPECT_EQ(tl.lanes[2].label, "no place recorded, slot 0");
  EXPECT_EQ(tl.bars[0].lane, 1u);
  EXPECT_EQ(tl.bars[1].lane, 0u);
  EXPECT_EQ(tl.bars[2].lane, 0u);
  EXPECT_EQ(tl.lanes[0].tasks, 2u);
  EXPECT_EQ(tl.lanes[1].busy, 5.0);
}

TEST(Timeline, ARankRunningTasksConcurrentlyGetsSlotLanes) {
  // The local backend records every task as rank 0 of its host, however many slots run.
  std::vector<TrialRecord> trials = {trial(0, 2), trial(0, 2)};
  if (!set_place(trials[0], 0, "vm") || !set_place(trials[1], 0, "vm")) GTEST_SKIP() << "no rank column";
  const auto tl = build_timeline(trials);
  ASSERT_EQ(tl.lanes.size(), 2u);
  EXPECT_EQ(tl.lanes[0].label, "vm rank 0 slot 0");
  EXPECT_EQ(tl.lanes[1].label, "vm rank 0 slot 1");
}

}  // namespace

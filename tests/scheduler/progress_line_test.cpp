// progress_line_test.cpp — the progress line of `flotilla run` (ProgressLine.h): fitted to the
// terminal's width by dropping and abbreviating whole fields, its rate and ETA, and its counts
// taken as the final report takes them.
#include <gtest/gtest.h>

#include <sstream>

#include "Progress.h"
#include "ProgressLine.h"

namespace flotilla::scheduler {
namespace {

using namespace std::chrono_literals;

ProgressState mid_campaign() {
  return {.round = 3, .phase = "explore", .finished = 12, .budget = 24, .running = 2, .queued = 6,
          .verified = 3, .rolled_back = 4, .failed = 1, .best_verified = 2.228, .best_explored = 2.314,
          .objective = "gflops"};
}

TEST(ProgressLine, At200ColumnsTheFieldsAreInFullButTheLeastImportant) {
  const auto line = format_progress(mid_campaign(), 200, 65s);
  EXPECT_EQ(line,
            "round 3 explore · 12/24 candidates finished · 2 running · 3 verified, 4 rolled back, 1 failed · "
            "best verified gflops 2.228 · 2.314 not verified yet · 1m05s elapsed · 11 candidates/min · eta 1m05s");
  EXPECT_LE(display_width(line), 199u);
}

TEST(ProgressLine, At80ColumnsFieldsAreAbbreviatedAndTheLeastImportantDropped) {
  const auto line = format_progress(mid_campaign(), 80, 65s);
  EXPECT_EQ(line, "r3 · 12/24 · 2 running · verified 2.228 · unverified 2.314 · 1m05s · eta 1m05s");
  EXPECT_EQ(display_width(line), 78u);
}

TEST(ProgressLine, At40ColumnsTheElapsedTimeProgressAndVerifiedBestStay) {
  const auto line = format_progress(mid_campaign(), 40, 65s);
  EXPECT_EQ(line, "r3 · 12/24 · verified 2.228 · 1m05s");  // no room for "eta 1m05s"; "r3" fits after
  EXPECT_LE(display_width(line), 39u);
}

TEST(ProgressLine, WithNoRoomForAnyFieldTheLineIsEmptyNotCut) {
  EXPECT_EQ(format_progress(mid_campaign(), 4, 65s), "r3");  // the elapsed "1m05s" needs 5
  EXPECT_EQ(format_progress(mid_campaign(), 2, 65s), "");
  EXPECT_EQ(format_progress(mid_campaign(), 1, 65s), "");
}

TEST(ProgressLine, NeverReachesTheLastColumnAtAnyWidth) {
  auto s = mid_campaign();
  s.objective = "a_rather_long_objective_name_ms";
  s.jobs = jobs::JobsOverview{.pending = 2, .running = 1, .pending_reason = "QOSMaxJobsPerUserLimit"};
  for (int width = 1; width <= 250; ++width) {
    const auto line = format_progress(s, width, 12345s);
    EXPECT_LE(display_width(line), static_cast<std::size_t>(width - 1)) << width << ": " << line;
    if (width >= 12) {  // the elapsed time is the last field dropped
      EXPECT_NE(line.find("3h25m"), std::string::npos) << width << ": " << line;
    }
  }
}

TEST(ProgressLine, WidthZeroIsALogLineWithEverything) {
  auto s = mid_campaign();
  s.phase = "done";
  EXPECT_EQ(format_progress(s, 0, 65s), format_progress(s, 10000, 65s));
  EXPECT_NE(format_progress(s, 0, 65s).find("round 3 done"), std::string::npos);
}

TEST(ProgressLine, BeforeAnythingIsVerifiedTheVerifiedBestIsADash) {
  auto s = mid_campaign();
  s.best_verified.reset();
  EXPECT_NE(format_progress(s, 200, 65s).find("best verified gflops - · 2.314 not verified yet"), std::string::npos)
      << format_progress(s, 200, 65s);
  EXPECT_EQ(format_progress(s, 40, 65s), "12/24 · verified - · 1m05s · eta 1m05s");
}

TEST(ProgressLine, WithoutAnEvaluateStageTheBestIsSaidUnverified) {
  auto s = mid_campaign();
  s.verifies = false;
  s.best_verified.reset();
  const auto line = format_progress(s, 200, 65s);
  EXPECT_NE(line.find("best gflops 2.314 (unverified)"), std::string::npos) << line;
  EXPECT_EQ(line.find("verified,"), std::string::npos) << line;
}

TEST(ProgressLine, ASlurmJobPendingSaysSlurmsReasonEvenAt80Columns) {
  auto s = mid_campaign();
  s.running = 0;
  s.queued = 8;
  s.jobs = jobs::JobsOverview{.pending = 1, .running = 0, .pending_reason = "Priority"};
  EXPECT_NE(format_progress(s, 0, 65s).find(" · Slurm: 1 PENDING (Priority) · "), std::string::npos);
  EXPECT_EQ(format_progress(s, 80, 65s),
            "r3 · 12/24 · 1 PD (Priority) · 0 running · verified 2.228 · 1m05s · eta 1m05s");
  // At 60 the pending job's reason is kept before the ETA.
  EXPECT_EQ(format_progress(s, 60, 65s), "r3 · 12/24 · 1 PD (Priority) · verified 2.228 · 1m05s");
}

TEST(ProgressLine, SlurmJobsRunningAndPendingAreBothCounted) {
  auto s = mid_campaign();
  s.jobs = jobs::JobsOverview{.pending = 2, .running = 1, .pending_reason = "Dependency"};
  EXPECT_NE(format_progress(s, 0, 65s).find(" · Slurm: 1 RUNNING, 2 PENDING (Dependency) · "), std::string::npos);
  EXPECT_NE(format_progress(s, 80, 65s).find(" · 1 R, 2 PD (Dependency) · "), std::string::npos)
      << format_progress(s, 80, 65s);
  s.jobs = jobs::JobsOverview{};  // between rounds: no job, nothing to say
  EXPECT_EQ(format_progress(s, 0, 65s).find("Slurm"), std::string::npos);
}

TEST(ProgressRate, CountsOnlyCandidatesThisRunFinished) {
  auto s = mid_campaign();  // 12 of 24 finished
  EXPECT_DOUBLE_EQ(*candidates_per_minute(s, 60s), 12.0);
  EXPECT_DOUBLE_EQ(eta(s, 60s)->count(), 60.0);
  s.finished_before_run = 6;  // a resume: 6 in this run's 60 s
  EXPECT_DOUBLE_EQ(*candidates_per_minute(s, 60s), 6.0);
  EXPECT_DOUBLE_EQ(eta(s, 60s)->count(), 120.0);
}

TEST(ProgressRate, NoRateOrEtaBeforeTheFirstCandidateFinishes) {
  auto s = mid_campaign();
  s.finished_before_run = s.finished;
  EXPECT_FALSE(candidates_per_minute(s, 60s));
  EXPECT_FALSE(eta(s, 60s));
  EXPECT_NE(format_progress(s, 200, 60s).find("eta -"), std::string::npos);
  EXPECT_EQ(format_progress(s, 200, 60s).find("/min"), std::string::npos);
  s.finished_before_run = 0;
  EXPECT_FALSE(candidates_per_minute(s, 0s));
}

TEST(ProgressRate, NoEtaOnceTheBudgetIsFinished) {
  auto s = mid_campaign();
  s.finished = s.budget;
  EXPECT_TRUE(candidates_per_minute(s, 60s));
  EXPECT_FALSE(eta(s, 60s));
}

TEST(ProgressRate, ASlowCampaignIsCountedPerHour) {
  auto s = mid_campaign();
  s.finished = 3;
  const auto line = format_progress(s, 0, 2h);
  EXPECT_NE(line.find(" · 1.5 candidates/h · eta 14h00m"), std::string::npos) << line;
}

TEST(ProgressDuration, ReadsAsAClock) {
  EXPECT_EQ(duration_text(0s), "0s");
  EXPECT_EQ(duration_text(59.9s), "59s");
  EXPECT_EQ(duration_text(65s), "1m05s");
  EXPECT_EQ(duration_text(3600s + 7min + 30s), "1h07m");
}

results::CandidateSummary candidate(std::int64_t id, const char* origin, results::CandidateStatus status,
                                    std::optional<double> objective) {
  return {.record = {.id = id, .round = 1, .config = "x", .origin = origin}, .status = status, .objective = objective};
}

// A rolled-back candidate's failed shards fail its verification, not the campaign: the report's
// "failed" counts candidates whose exploration failed, and so does the line.
TEST(ProgressFromSummary, CountsAsTheReportDoes) {
  using results::CandidateStatus;
  results::CampaignSummary summary{.campaign = {.objective = "gflops", .direction = "maximize", .shards = 4}};
  summary.candidates = {candidate(0, "baseline", CandidateStatus::verified, 1.0),
                        candidate(1, "random", CandidateStatus::rolled_back, 3.0),
                        candidate(2, "random", CandidateStatus::verified, 2.0),
                        candidate(3, "random", CandidateStatus::explored, 2.5),
                        candidate(4, "random", CandidateStatus::explore_failed, std::nullopt),
                        candidate(5, "random", CandidateStatus::pending, std::nullopt)};
  summary.best = 2;
  summary.best_verified = true;
  summary.failed_trials = 9;  // the rolled-back one's shards
  ProgressState s;
  fill_from_summary(s, summary);
  EXPECT_EQ(s.finished, 4u);  // neither the baseline nor the pending one
  EXPECT_EQ(s.verified, 2u);
  EXPECT_EQ(s.rolled_back, 1u);
  EXPECT_EQ(s.failed, 1u);
  EXPECT_EQ(s.best_verified, 2.0);
  EXPECT_EQ(s.best_explored, 2.5);  // better than the verified best, not verified yet
}

TEST(ProgressFromSummary, AnExploredCandidateNoBetterThanTheVerifiedBestIsNotShown) {
  using results::CandidateStatus;
  results::CampaignSummary summary{.campaign = {.direction = "minimize", .shards = 2}};
  summary.candidates = {candidate(0, "random", CandidateStatus::verified, 1.0),
                        candidate(1, "random", CandidateStatus::explored, 1.5)};
  summary.best = 0;
  summary.best_verified = true;
  ProgressState s;
  fill_from_summary(s, summary);
  EXPECT_EQ(s.best_verified, 1.0);
  EXPECT_FALSE(s.best_explored);
}

TEST(ProgressFromSummary, WithoutAnEvaluateStageTheWinnerIsTheUnverifiedBest) {
  using results::CandidateStatus;
  results::CampaignSummary summary{.campaign = {.direction = "maximize", .shards = 0}};
  summary.candidates = {candidate(0, "random", CandidateStatus::explored, 4.0)};
  summary.best = 0;
  ProgressState s;
  fill_from_summary(s, summary);
  EXPECT_FALSE(s.verifies);
  EXPECT_FALSE(s.best_verified);
  EXPECT_EQ(s.best_explored, 4.0);
}

// Several objectives: the front's size and how much of it is verified, and the pick's values,
// in place of one best objective; the front stays at 80 columns.
TEST(ProgressLine, SeveralObjectivesShowTheFrontAndThePick) {
  auto s = mid_campaign();
  s.front = 5;
  s.front_verified = 3;
  s.pick = "time_s 0.01967, residual 0.08147";
  EXPECT_EQ(format_progress(s, 0, 65s),
            "round 3 explore · 12/24 candidates finished · 2 tasks running, 6 queued · 3 verified, 4 rolled back, 1 "
            "failed · front 5 (3 verified) · pick time_s 0.01967, residual 0.08147 · 1m05s elapsed · 11 "
            "candidates/min · eta 1m05s");
  const auto narrow = format_progress(s, 80, 65s);
  EXPECT_NE(narrow.find("front 5"), std::string::npos) << narrow;
  EXPECT_LE(display_width(narrow), 79u);
}

TEST(ProgressFromSummary, SeveralObjectivesCountTheFrontAndNameThePick) {
  using results::CandidateStatus;
  results::CampaignSummary summary{.campaign = {.objective = "time_s", .direction = "minimize", .shards = 1}};
  summary.candidates = {candidate(0, "baseline", CandidateStatus::verified, 2.0),
                        candidate(1, "random", CandidateStatus::explored, 1.0)};
  summary.candidates[0].metrics = {{"residual", 0.5}};
  summary.candidates[1].metrics = {{"residual", 0.9}};
  summary.goals = {{"time_s", false}, {"residual", false}};
  summary.front = {1, 0};
  summary.best = 0;
  ProgressState s;
  fill_from_summary(s, summary);
  EXPECT_EQ(s.front, 2u);
  EXPECT_EQ(s.front_verified, 1u);
  EXPECT_EQ(s.pick, "time_s 2, residual 0.5");
}

}  // namespace
}  // namespace flotilla::scheduler

// A note longer than the terminal is broken on words, every row narrower than it (a row that
// reaches the last column makes the terminal wrap it mid-word).
TEST(ProgressLine, ALongNoteIsBrokenOnWordsToTheWidth) {
  const std::string note = "candidate 11: no significant difference: 1x [1, 1] over candidate 10 head to head in "
                           "12 pairs";
  const auto out = flotilla::scheduler::wrap_note(note, 80);
  ASSERT_NE(out.find('\n'), std::string::npos);
  std::string joined;
  std::size_t begin = 0;
  for (std::size_t end; begin <= out.size(); begin = end + 1) {
    end = out.find('\n', begin);
    if (end == std::string::npos) end = out.size();
    const auto row = out.substr(begin, end - begin);
    EXPECT_LT(row.size(), 80u) << row;
    joined += (joined.empty() ? "" : " ") + (begin == 0 ? row : row.substr(2));
  }
  EXPECT_EQ(joined, note);
  EXPECT_EQ(flotilla::scheduler::wrap_note("short", 80), "short");
  EXPECT_EQ(flotilla::scheduler::wrap_note(note, 0), note);
}

// The campaign builds a progress state (a summary of every recorded trial) only when the line is
// due (issue 35: built at each returned task, it made a campaign's CPU quadratic in its tasks).
TEST(Progress, IsNeverDueOffATerminalAndAtMostEvery100msOnOne) {
  std::ostringstream log;
  using flotilla::scheduler::Progress;
  using flotilla::scheduler::ProgressState;
  Progress plain(log, false);
  EXPECT_FALSE(plain.due());
  EXPECT_FALSE(plain.due(true));
  Progress live(log, true);
  EXPECT_TRUE(live.due());
  live.update(ProgressState{}, true);
  EXPECT_FALSE(live.due());      // drawn just now
  EXPECT_TRUE(live.due(true));   // forced: the round's last update
}

// JobPhaseTest.cpp — every transition of the job lifecycle (jobs/include/flotilla/jobs/JobPhase.h),
// legal and illegal, and the journal's append and replay.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

#include "flotilla/jobs/JobPhase.h"

namespace flotilla::jobs {
namespace {

using P = JobPhase;
using E = JobEvent;

constexpr P kAllPhases[] = {P::written, P::queued, P::running, P::orphaned, P::retired, P::ended, P::cancelled};
constexpr E kAllEvents[] = {E::submitted,    E::allocated,  E::deferred,     E::launching,
                            E::seen_pending, E::seen_running, E::seen_ended,   E::all_reported,
                            E::launcher_lost, E::cancelled,   E::detached,     E::reattached};

// The whole table, written out independently of the implementation: every pair not listed
// must be refused.
const std::map<std::pair<P, E>, P>& legal() {
  static const std::map<std::pair<P, E>, P> table{
      {{P::written, E::submitted}, P::queued},
      {{P::written, E::allocated}, P::running},
      {{P::written, E::deferred}, P::written},
      {{P::written, E::launching}, P::written},
      {{P::written, E::cancelled}, P::cancelled},
      {{P::written, E::detached}, P::written},
      {{P::queued, E::seen_pending}, P::queued},
      {{P::queued, E::seen_running}, P::running},
      {{P::queued, E::seen_ended}, P::ended},
      {{P::queued, E::all_reported}, P::retired},
      {{P::queued, E::cancelled}, P::cancelled},
      {{P::queued, E::detached}, P::queued},
      {{P::queued, E::reattached}, P::queued},
      {{P::running, E::seen_pending}, P::running},
      {{P::running, E::seen_running}, P::running},
      {{P::running, E::seen_ended}, P::ended},
      {{P::running, E::all_reported}, P::retired},
      {{P::running, E::launcher_lost}, P::orphaned},
      {{P::running, E::cancelled}, P::cancelled},
      {{P::running, E::detached}, P::running},
      {{P::running, E::reattached}, P::running},
      {{P::orphaned, E::seen_pending}, P::orphaned},
      {{P::orphaned, E::seen_running}, P::orphaned},
      {{P::orphaned, E::seen_ended}, P::ended},
      {{P::orphaned, E::all_reported}, P::retired},
      {{P::orphaned, E::cancelled}, P::cancelled},
      {{P::orphaned, E::detached}, P::orphaned},
      {{P::orphaned, E::reattached}, P::orphaned},
      {{P::retired, E::seen_pending}, P::retired},
      {{P::retired, E::seen_running}, P::retired},
      {{P::retired, E::reattached}, P::retired},
      {{P::retired, E::all_reported}, P::retired},
      {{P::retired, E::seen_ended}, P::ended},
      {{P::retired, E::launcher_lost}, P::orphaned},
      {{P::retired, E::cancelled}, P::cancelled},
      {{P::retired, E::detached}, P::retired},
      {{P::ended, E::seen_ended}, P::ended},
      {{P::cancelled, E::seen_pending}, P::cancelled},
      {{P::cancelled, E::seen_running}, P::cancelled},
      {{P::cancelled, E::seen_ended}, P::cancelled},
      {{P::cancelled, E::cancelled}, P::cancelled},
  };
  return table;
}

TEST(JobPhase, EveryTransitionLegalOrRefused) {
  int legal_seen = 0, refused = 0;
  for (P phase : kAllPhases)
    for (E event : kAllEvents) {
      const auto it = legal().find({phase, event});
      if (it != legal().end()) {
        EXPECT_EQ(next(phase, event), it->second) << to_string(event) << " in " << to_string(phase);
        ++legal_seen;
      } else {
        EXPECT_THROW(next(phase, event), IllegalTransition) << to_string(event) << " in " << to_string(phase);
        ++refused;
      }
    }
  EXPECT_EQ(legal_seen, static_cast<int>(legal().size()));
  EXPECT_EQ(legal_seen + refused, 7 * 12);
}

TEST(JobPhase, IllegalTransitionsSayWhat) {
  try {
    next(P::ended, E::seen_running);
    FAIL() << "an ended job cannot run again";
  } catch (const IllegalTransition& e) {
    EXPECT_STREQ(e.what(), "event seen_running cannot happen to a job that is ended");
  }
  // The rules that carry the promises: a stale job id is never followed again once it ended,
  // a job is never submitted twice, a cancelled job is not resumed.
  EXPECT_THROW(next(P::ended, E::reattached), IllegalTransition);
  EXPECT_THROW(next(P::queued, E::submitted), IllegalTransition);
  EXPECT_THROW(next(P::cancelled, E::reattached), IllegalTransition);
  EXPECT_THROW(next(P::written, E::seen_running), IllegalTransition);
}

TEST(JobPhase, OnlyEndedAndCancelledAreFinal) {
  for (P phase : kAllPhases) EXPECT_EQ(is_final(phase), phase == P::ended || phase == P::cancelled);
}

TEST(JobPhase, NamesRoundTrip) {
  for (P phase : kAllPhases) EXPECT_EQ(job_phase_from_string(to_string(phase)), phase);
  for (E event : kAllEvents) EXPECT_EQ(job_event_from_string(to_string(event)), event);
  EXPECT_EQ(job_phase_from_string("RUNNING"), std::nullopt);
  EXPECT_EQ(job_event_from_string(""), std::nullopt);
}

class JobJournal : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = std::filesystem::temp_directory_path() /
          ("flotilla-journal-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  void TearDown() override { std::filesystem::remove_all(dir); }
  std::filesystem::path dir;
};

TEST_F(JobJournal, AppendThenReplay) {
  EXPECT_EQ(read_job_journal(dir), std::nullopt);  // an older flotilla's folder has none
  P phase = P::written;
  for (E event : {E::deferred, E::submitted, E::seen_pending, E::detached, E::reattached, E::seen_running,
                  E::all_reported, E::seen_ended}) {
    phase = next(phase, event);
    append_job_event(dir, event, phase, event == E::submitted ? "Slurm job 17\nsecond line" : "");
  }
  const auto replay = read_job_journal(dir);
  ASSERT_TRUE(replay);
  EXPECT_EQ(replay->phase, P::ended);
  EXPECT_EQ(replay->events, 8u);
  EXPECT_FALSE(replay->torn_tail);
  std::ifstream in(dir / "events");
  std::string line;
  std::getline(in, line);
  std::getline(in, line);
  EXPECT_TRUE(line.ends_with(" submitted queued Slurm job 17 second line")) << line;
}

// The journal is the record of which Slurm job holds a folder's tasks: replay reads the id back
// from the details, the last submission or allocation winning, and a `launching` allocation
// stays pending until one of them (or a deferral: its launcher did not start) settles it.
TEST_F(JobJournal, ReplayNamesTheSlurmJob) {
  auto replay = replay_job_journal("1 deferred written MaxSubmitJobs\n2 submitted queued Slurm job 812\n", "e");
  EXPECT_EQ(replay.slurm_id, 812u);
  EXPECT_FALSE(replay.allocated);
  EXPECT_EQ(replay.launching, 0u);

  replay = replay_job_journal("1 launching written Slurm allocation 90\n", "e");
  EXPECT_EQ(replay.slurm_id, 0u);
  EXPECT_EQ(replay.launching, 90u);
  replay = replay_job_journal("1 launching written Slurm allocation 90\n"
                              "2 allocated running Slurm allocation 90, launcher pid 7 on n1\n",
                              "e");
  EXPECT_EQ(replay.slurm_id, 90u);
  EXPECT_TRUE(replay.allocated);
  EXPECT_EQ(replay.launching, 0u);
  replay = replay_job_journal("1 launching written Slurm allocation 90\n"
                              "2 deferred written Slurm allocation 90 cancelled: its launcher did not start\n"
                              "3 submitted queued Slurm job 91\n",
                              "e");
  EXPECT_EQ(replay.slurm_id, 91u);
  EXPECT_FALSE(replay.allocated);
  EXPECT_EQ(replay.launching, 0u);
  // An older flotilla's `flotilla cancel` journalled a submission without the id.
  replay = replay_job_journal("1 submitted queued found by flotilla cancel\n2 cancelled cancelled\n", "e");
  EXPECT_EQ(replay.slurm_id, 0u);
}

TEST(JobJournalDetail, StartsWithTheJobsId) {
  EXPECT_EQ(slurm_id_of_detail("Slurm job 812"), 812u);
  EXPECT_EQ(slurm_id_of_detail("Slurm job 812, found on restart"), 812u);
  EXPECT_EQ(slurm_id_of_detail("Slurm allocation 9 cancelled: its launcher did not start"), 9u);
  EXPECT_EQ(slurm_id_of_detail("Slurm job 81x"), std::nullopt);
  EXPECT_EQ(slurm_id_of_detail("Slurm job 0"), std::nullopt);
  EXPECT_EQ(slurm_id_of_detail("Slurm job "), std::nullopt);
  EXPECT_EQ(slurm_id_of_detail("Slurm job 99999999999"), std::nullopt);
  EXPECT_EQ(slurm_id_of_detail("found by flotilla cancel"), std::nullopt);
}

TEST_F(JobJournal, ATornLastLineIsIgnored) {
  const auto replay = replay_job_journal("1.0 submitted queued\n2.0 seen_runn", "events");
  EXPECT_EQ(replay.phase, P::queued);
  EXPECT_TRUE(replay.torn_tail);
}

TEST_F(JobJournal, ForeignOrInconsistentLinesAreNamed) {
  const auto error_of = [](std::string_view text) {
    try {
      replay_job_journal(text, "d/events");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error_of("1 submitted queued\nhello\n"), "d/events:2: not a job event: 'hello'");
  EXPECT_EQ(error_of("1 seen_running running\n"), "d/events:1: event seen_running cannot happen to a job that is written");
  EXPECT_EQ(error_of("1 submitted running\n"), "d/events:1: event submitted leads from written to queued, not running");
  EXPECT_EQ(error_of("\n\n1 submitted queued\n"), "no error");
}

}  // namespace
}  // namespace flotilla::jobs

// The Slurm backend restarted on a jobs folder (jobs/src/slurm/Restart.h): jobs re-attached from
// their journal, ended jobs' results taken, abandoned allocations cancelled, jobs submitted by
// hand found by name, and folders in the layout of a flotilla from before the journal named the
// job (marker files) still re-attached. All on the fake Slurm.
#include <fstream>

#include "SlurmBackendFixture.h"
#include "slurm/JobFolder.h"

namespace flotilla::jobs::test {
namespace {

using namespace std::chrono_literals;

// A job folder of one task, and the request that runs it, as another flotilla left them.
JobRequest folder_with_task(const std::filesystem::path& dir, const TaskSpec& task) {
  slurm::write_job_folder(dir, dir.filename().string(), {&task}, {});
  return {.name = dir.filename().string(), .ranks_per_node = 2, .workdir = dir, .output = dir / "slurm-%j.out"};
}

std::uint32_t submitted_id(const SubmitOutcome& outcome) { return std::get<Submitted>(outcome).id; }

TEST_F(SlurmBackendTest, ANewJobIsRecordedInItsJournalAloneAndReattachedFromIt) {
  slurm.hold_new(true);
  const auto task = sh_task(5, "echo flotilla-metric: x=1");
  auto first = make();
  first->submit({task});
  EXPECT_TRUE(first->collect(300ms).empty());
  ASSERT_EQ(folders().size(), 1u);
  const auto dir = folders().front();
  EXPECT_EQ(journal(dir), (std::vector<std::string>{"submitted queued Slurm job 1000"}));
  for (const auto* marker : {"slurm_job_id", "allocation"})
    EXPECT_FALSE(std::filesystem::exists(dir / marker)) << marker;
  EXPECT_EQ(first->detach(), 1u);
  first.reset();

  auto restarted = make();
  restarted->submit({task});
  EXPECT_TRUE(restarted->collect(300ms).empty());
  EXPECT_EQ(slurm.submitted().size(), 1u) << "the task was submitted again instead of re-attached";
  slurm.start(1000);
  const auto results = collect_results(*restarted, 1);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].status, TaskStatus::ok) << results[0].reason;
  EXPECT_EQ(results[0].metrics, (MetricList{{"x", 1}}));
  const auto lines = journal(dir);
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines[1], "detached queued the scheduler left it running; a restarted `flotilla run` re-attaches");
  EXPECT_EQ(lines[2], "reattached queued followed again by a restarted scheduler");
}

TEST_F(SlurmBackendTest, AnEndedJobsResultsAreTakenAndItsAttemptsUsedUp) {
  auto first = make();
  first->submit({sh_task(1, "echo flotilla-metric: x=1"), sh_task(2, "sleep 30")});
  const auto before = collect_results(*first, 1);
  ASSERT_EQ(before.size(), 1u);
  EXPECT_EQ(before[0].id, 1u);
  first->detach();
  first.reset();
  slurm.end(1000, JobState::node_fail);

  auto restarted = make();
  restarted->submit({sh_task(1, "echo flotilla-metric: x=1"), sh_task(2, "echo flotilla-metric: y=2")});
  auto results = collect_results(*restarted, 2);
  ASSERT_EQ(results.size(), 2u);
  std::sort(results.begin(), results.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  EXPECT_EQ(results[0].attempt, 0);  // the earlier job's result, as it was
  EXPECT_EQ(results[0].metrics, (MetricList{{"x", 1}}));
  EXPECT_EQ(results[1].attempt, 1);  // attempt 0 was the ended job's
  EXPECT_EQ(results[1].metrics, (MetricList{{"y", 2}}));
  ASSERT_EQ(slurm.submitted().size(), 2u);
  ASSERT_EQ(folders().size(), 2u);
  EXPECT_EQ(journal(folders()[0]).back(), "seen_ended ended ended NODE_FAIL, seen on restart");
}

// What a flotilla from before the journal named the job left: the manifest, slurm_job_id written
// at submission, and no journal. A newer flotilla resuming the campaign re-attaches to the job.
TEST_F(SlurmBackendTest, AFolderInTheOldLayoutIsReattachedFromItsMarkerFile) {
  const auto task = sh_task(5, "echo flotilla-metric: x=1");
  const auto dir = jobs_dir() / "fake-1-1";
  slurm.hold_new(true);
  const auto id = submitted_id(slurm.client()->submit(folder_with_task(dir, task)));
  std::ofstream(dir / "slurm_job_id") << id << '\n';

  auto backend = make();
  backend->submit({task});
  EXPECT_TRUE(backend->collect(300ms).empty());
  EXPECT_EQ(slurm.submitted().size(), 1u) << "the task was submitted again instead of re-attached";
  slurm.start(id);
  const auto results = collect_results(*backend, 1);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].metrics, (MetricList{{"x", 1}}));
  const auto lines = journal(dir);
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(lines[0], "submitted queued Slurm job 1000, found on restart");  // the journal names it now
  EXPECT_EQ(lines[1], "reattached queued followed again by a restarted scheduler");
}

// The same layout, its job ended and purged from Slurm (past MinJobAge), so it cannot be found by
// its name: the marker file alone says which job the folder's results are from, and they are
// taken instead of running the task again.
TEST_F(SlurmBackendTest, AFolderInTheOldLayoutWhoseJobIsGoneGivesItsResults) {
  const auto task = sh_task(5, "echo flotilla-metric: x=1");
  const auto dir = jobs_dir() / "fake-1-1";
  const auto id = submitted_id(slurm.client()->submit(folder_with_task(dir, task)));
  slurm.start(id);
  slurm.wait_for_processes();
  slurm.forget(id);
  std::ofstream(dir / "slurm_job_id") << id << '\n';

  auto backend = make();
  backend->submit({task});
  const auto results = collect_results(*backend, 1);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].metrics, (MetricList{{"x", 1}}));
  EXPECT_EQ(slurm.submitted().size(), 1u) << "the task ran again";
  EXPECT_EQ(journal(dir), (std::vector<std::string>{"submitted queued Slurm job 1000, found on restart",
                                                    "seen_ended ended vanished from the queue, seen on restart"}));
}

// An older flotilla wrote DIR/allocation before it started a launcher, and was killed in
// between: nothing runs in the allocation, so it is cancelled and the task runs again.
TEST_F(SlurmBackendTest, AnAbandonedAllocationOfTheOldLayoutIsCancelledOnce) {
  const auto task = sh_task(5, "echo flotilla-metric: x=1");
  const auto dir = jobs_dir() / "fake-1-1";
  slurm.allow_allocations(true);
  const auto id = *slurm.client()->allocate_now(folder_with_task(dir, task));
  slurm.allow_allocations(false);
  std::ofstream(dir / "allocation") << id << '\n';

  auto backend = make();
  EXPECT_EQ(slurm.cancelled(), (std::set<std::uint32_t>{id}));
  EXPECT_EQ(notice("slurm_allocation_abandoned"),
            "Slurm allocation 1000 (fake-1-1) was made but its launcher never started: cancelled it");
  EXPECT_EQ(journal(dir),
            (std::vector<std::string>{"cancelled cancelled Slurm allocation 1000: its launcher never started"}));
  backend->submit({task});
  const auto results = collect_results(*backend, 1);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].status, TaskStatus::ok) << results[0].reason;
  EXPECT_EQ(slurm.submitted().size(), 2u);  // the allocation, then the task's new job

  notices.clear();
  backend.reset();
  make();  // a later restart: the journal says it is cancelled already
  EXPECT_EQ(notice_kinds(), std::vector<std::string>{});
}

TEST_F(SlurmBackendTest, AnAbandonedAllocationOfTheJournalIsCancelled) {
  const auto task = sh_task(5, "true");
  const auto dir = jobs_dir() / "fake-1-1";
  slurm.allow_allocations(true);
  const auto id = *slurm.client()->allocate_now(folder_with_task(dir, task));
  append_job_event(dir, JobEvent::launching, JobPhase::written, "Slurm allocation 1000");

  make();
  EXPECT_EQ(slurm.cancelled(), (std::set<std::uint32_t>{id}));
  EXPECT_EQ(journal(dir).back(), "cancelled cancelled Slurm allocation 1000: its launcher never started");
}

// Killed after the launcher named itself and before the journal said `allocated`: the launcher
// runs the job, which is followed like any other.
TEST_F(SlurmBackendTest, AnAllocationWhoseLauncherStartedIsFollowed) {
  const auto task = sh_task(5, "true");
  const auto dir = jobs_dir() / "fake-1-1";
  slurm.allow_allocations(true);
  const auto id = *slurm.client()->allocate_now(folder_with_task(dir, task));
  append_job_event(dir, JobEvent::launching, JobPhase::written, "Slurm allocation 1000");
  std::ofstream(dir / "launcher") << "n1 4242\n";

  auto backend = make();
  EXPECT_TRUE(slurm.cancelled().empty());
  EXPECT_EQ(journal(dir).back(), "allocated running Slurm allocation 1000, launcher pid 4242 on n1, found on restart");
  backend->submit({task});
  EXPECT_TRUE(backend->collect(300ms).empty());
  EXPECT_EQ(backend->running(), 1u);
  EXPECT_EQ(slurm.submitted().size(), 1u);
  slurm.client()->release(id, 1 << 8);  // its script failed before the task reported
  const auto results = collect_results(*backend, 1);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].status, TaskStatus::lost);
  EXPECT_EQ(results[0].reason, "Slurm job 1000 (fake-1-1) ended FAILED before this task reported");
}

// `flotilla sbatch` wrote the folder, a person submitted its job.sh: the next run finds the job by
// its name (the folder's), journals it and follows it.
TEST_F(SlurmBackendTest, AJobSubmittedByHandIsFoundByItsName) {
  const auto task = sh_task(5, "echo flotilla-metric: x=1");
  settings.hold = true;
  std::filesystem::path dir;
  {
    auto holding = make();
    holding->submit({task});
    EXPECT_TRUE(holding->collect(300ms).empty());
    const auto held = holding->held();  // a value: the job it wrote instead of submitting
    ASSERT_TRUE(held) << "hold mode submitted";
    dir = held->dir;
    EXPECT_FALSE(held->already_written);
    EXPECT_EQ(holding->queued(), 1u);  // its task waits for a person to submit the job
  }
  EXPECT_TRUE(std::filesystem::exists(dir / "job.sh"));
  EXPECT_TRUE(slurm.submitted().empty());
  {
    auto again = make();  // `flotilla sbatch` again before it was submitted: the same folder
    again->submit({task});
    EXPECT_TRUE(again->collect(300ms).empty());
    const auto held = again->held();
    ASSERT_TRUE(held) << "hold mode submitted";
    EXPECT_EQ(held->dir, dir);
    EXPECT_TRUE(held->already_written);
  }
  slurm.hold_new(true);
  const auto id = submitted_id(slurm.client()->submit(folder_with_task(dir, task)));  // sbatch job.sh

  settings.hold = false;
  auto backend = make();
  backend->submit({task});
  EXPECT_TRUE(backend->collect(300ms).empty());
  EXPECT_EQ(slurm.submitted().size(), 1u);
  EXPECT_EQ(journal(dir).front(), "submitted queued Slurm job 1000, found on restart");
  slurm.start(id);
  const auto results = collect_results(*backend, 1);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].metrics, (MetricList{{"x", 1}}));
}

}  // namespace
}  // namespace flotilla::jobs::test

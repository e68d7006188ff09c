// The Slurm backend's parts that talk to Slurm, on the fake Slurm (jobs/src/slurm): jobs made
// and submitted (Submitter), followed to their end (Poller), allocated at once with a launcher
// (Allocator), and the Backend interface around them (SlurmBackend).
#include <signal.h>
#include <sys/stat.h>

#include <fstream>
#include <set>

#include "SlurmBackendFixture.h"
#include "flotilla/jobs/JobResults.h"
#include "flotilla/jobs/Manifest.h"

namespace flotilla::jobs::test {
namespace {

using namespace std::chrono_literals;

TaskSpec staged(TaskSpec spec, std::string resources, std::string after = "", int array_index = -1) {
  spec.resources = std::move(resources);
  spec.after = std::move(after);
  spec.array_index = array_index;
  return spec;
}

TEST_F(SlurmBackendTest, OneJobPerResourceSetArraysCutAtMaxArraySizeAfterTheirDependency) {
  slurm.set_max_array_size(2);
  std::vector<TaskSpec> tasks{staged(sh_task(1, "echo flotilla-metric: x=1"), "explore"),
                              staged(sh_task(2, "echo flotilla-metric: x=2"), "explore")};
  for (int shard = 0; shard < 3; ++shard)
    tasks.push_back(staged(sh_task(10 + shard, "true"), "evaluate", "explore", shard));
  auto backend = make();
  backend->submit(tasks);
  const auto results = collect_results(*backend, tasks.size());
  ASSERT_EQ(results.size(), tasks.size());
  for (const auto& r : results) EXPECT_EQ(r.status, TaskStatus::ok) << r.id << ": " << r.reason;
  const auto& asked = slurm.submitted();
  ASSERT_EQ(asked.size(), 3u);
  EXPECT_EQ(asked[0].array, "");
  EXPECT_EQ(asked[0].dependency, "");
  EXPECT_EQ(asked[1].array, "0-1");
  EXPECT_EQ(asked[1].dependency, "afterok:1000");
  EXPECT_EQ(asked[2].array, "0");  // shard 2, as index 0 of its own array
  EXPECT_EQ(asked[2].dependency, "afterok:1000");
  const auto last = read_manifest(asked[2].workdir / "manifest-0.json");
  ASSERT_EQ(last.tasks.size(), 1u);
  EXPECT_EQ(last.tasks[0].id, 12u);
}

TEST_F(SlurmBackendTest, ASubmitLimitIsWaitedOutWithBackOff) {
  slurm.refuse_next({"QOSMaxSubmitJobPerUserLimit", true});
  auto backend = make();
  backend->submit({sh_task(1, "true")});
  const auto results = collect_results(*backend, 1);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].status, TaskStatus::ok) << results[0].reason;
  const auto dir = folders().at(0);
  EXPECT_EQ(notice("slurm_submit_deferred"), "Slurm refused job " + dir.filename().string() +
                                                 " for now (QOSMaxSubmitJobPerUserLimit); trying again in 1 s");
  const auto lines = journal(dir);
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(lines[0], "deferred written QOSMaxSubmitJobPerUserLimit");
  EXPECT_EQ(lines[1], "submitted queued Slurm job 1000");
}

TEST_F(SlurmBackendTest, AnyOtherRefusalIsASetupError) {
  slurm.refuse_next({"sbatch: error: invalid partition specified: nope", false});
  auto backend = make();
  backend->submit({sh_task(1, "true")});
  try {
    backend->collect(300ms);
    FAIL() << "the refusal was not an error";
  } catch (const std::runtime_error& e) {
    const auto dir = folders().at(0);
    EXPECT_EQ(std::string(e.what()), "Slurm refused job " + dir.filename().string() + " (" +
                                         (dir / "manifest.json").string() +
                                         "): sbatch: error: invalid partition specified: nope");
  }
}

TEST_F(SlurmBackendTest, MaxSubmitJobsWaitsForTheUsersOtherJobs) {
  settings.max_submit_jobs = 1;
  slurm.hold_new(true);
  const auto other =
      std::get<Submitted>(slurm.client()->submit({.name = "not-the-campaigns", .workdir = jobs_dir()})).id;
  slurm.hold_new(false);
  auto backend = make();
  backend->submit({sh_task(1, "true")});
  EXPECT_TRUE(backend->collect(600ms).empty());
  EXPECT_EQ(slurm.submitted().size(), 1u) << "submitted while the user's one job allowed was queued";
  slurm.end(other, JobState::completed);
  EXPECT_EQ(collect_results(*backend, 1).size(), 1u);
  EXPECT_EQ(slurm.submitted().size(), 2u);
}

// Issue 35: slurmctld's load from a campaign must not grow with its jobs. 50 jobs in Slurm at
// once (one per resource set, all held pending), followed for 2.2 s with a 1 s poll interval: one
// query at each poll, 3 at most, as for one job (a query per job would be 150).
TEST_F(SlurmBackendTest, OneQueryPerPollIntervalWhateverTheNumberOfJobs) {
  settings.poll_interval = 1s;
  slurm.hold_new(true);
  auto backend = make();
  std::vector<TaskSpec> tasks;
  for (int i = 0; i < 50; ++i)
    tasks.push_back(staged(sh_task(static_cast<std::uint64_t>(i + 1), "true"), "set" + std::to_string(i)));
  backend->submit(tasks);
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < 2200ms) EXPECT_TRUE(backend->collect(100ms).empty());
  EXPECT_EQ(slurm.submitted().size(), 50u);
  // Polls at 0, 1 and 2 s; a loaded machine may push the last one past the 2.2 s.
  EXPECT_GE(slurm.queries(), 2);
  EXPECT_LE(slurm.queries(), 3);
}

// Between two polls a job's start is seen in its folder (its script writes slurm_job_id first), and
// its results are read from there: with a 30 s poll interval, the result of a job Slurm starts
// after the first poll arrives with no further query.
TEST_F(SlurmBackendTest, AStartedJobsResultsArriveWithoutWaitingForThePoll) {
  settings.poll_interval = 30s;
  slurm.hold_new(true);
  auto backend = make();
  backend->submit({sh_task(1, "echo flotilla-metric: x=1")});
  EXPECT_TRUE(backend->collect(300ms).empty());
  const int queries = slurm.queries();
  slurm.start(1000);
  const auto results = collect_results(*backend, 1, 10s);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].status, TaskStatus::ok) << results[0].reason;
  EXPECT_EQ(slurm.queries(), queries) << "Slurm was asked again";
  const auto lines = journal(folders().at(0));
  EXPECT_NE(std::find(lines.begin(), lines.end(), "seen_running running its script started (slurm_job_id written)"),
            lines.end());
}

// The results files this process has open (an HDF5 reader holds its file open).
std::set<std::string> open_results_files() {
  std::set<std::string> out;
  for (const auto& fd : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    const auto target = std::filesystem::read_symlink(fd.path(), ec);
    if (!ec && target.extension() == ".h5") out.insert(target.filename().string());
  }
  return out;
}

// An array element whose tasks have all reported has its results file closed while the other
// elements run: a reader costs some 0.6 MiB, and 1,000 elements held 670 MiB (bench/scale).
TEST_F(SlurmBackendTest, AnArrayElementsResultsFileIsClosedOnceItsTasksReported) {
  auto backend = make();
  backend->submit({staged(sh_task(1, "echo flotilla-metric: x=1"), "evaluate", "", 0),
                   staged(sh_task(2, "sleep 4; echo flotilla-metric: x=2"), "evaluate", "", 1)});
  const auto first = collect_results(*backend, 1);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].id, 1u);
  // Element 1's file is open (its worker has started it) while element 0's is not.
  const auto start = std::chrono::steady_clock::now();
  while (!open_results_files().contains("results-1.h5") && std::chrono::steady_clock::now() - start < 3s)
    EXPECT_TRUE(backend->collect(100ms).empty());
  const auto open = open_results_files();
  EXPECT_TRUE(open.contains("results-1.h5")) << "element 1's results file was never opened";
  EXPECT_FALSE(open.contains("results-0.h5")) << "element 0 reported all its tasks, its file is still open";
  const auto rest = collect_results(*backend, 1);
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0].status, TaskStatus::ok) << rest[0].reason;
}

TEST_F(SlurmBackendTest, AJobThatEndsBeforeItsTasksReportGivesThemBackLost) {
  auto backend = make();
  backend->submit({sh_task(1, "echo flotilla-metric: x=1"), sh_task(2, "sleep 30")});
  const auto first = collect_results(*backend, 1);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].id, 1u);
  slurm.end(1000, JobState::node_fail);
  const auto rest = collect_results(*backend, 1);
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0].id, 2u);
  EXPECT_EQ(rest[0].status, TaskStatus::lost);
  const auto dir = folders().at(0);
  EXPECT_EQ(rest[0].reason,
            "Slurm job 1000 (" + dir.filename().string() + ") ended NODE_FAIL before this task reported");
  EXPECT_EQ(journal(dir).back(), "seen_ended ended ended NODE_FAIL");
  EXPECT_EQ(backend->queued() + backend->running(), 0u);
}

TEST_F(SlurmBackendTest, AJobThatVanishesGivesItsTasksBackLost) {
  slurm.hold_new(true);
  auto backend = make();
  backend->submit({sh_task(1, "true")});
  EXPECT_TRUE(backend->collect(300ms).empty());
  slurm.forget(1000);
  const auto results = collect_results(*backend, 1);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].status, TaskStatus::lost);
  EXPECT_EQ(results[0].reason, "Slurm job 1000 (" + folders().at(0).filename().string() +
                                   ") vanished from the queue before this task reported");
}

TEST_F(SlurmBackendTest, PendingJobsAndTheirReasonAreInTheOverview) {
  slurm.hold_new(true);
  auto backend = make();
  backend->submit({staged(sh_task(1, "true"), "explore"), staged(sh_task(2, "true"), "evaluate", "explore")});
  EXPECT_TRUE(backend->collect(300ms).empty());
  const auto overview = backend->jobs_overview();
  ASSERT_TRUE(overview);
  EXPECT_EQ(overview->pending, 2u);
  EXPECT_EQ(overview->running, 0u);
  EXPECT_EQ(overview->pending_reason, "Resources");  // the first job's; the second waits on it
  EXPECT_EQ(backend->queued(), 2u);
  EXPECT_EQ(backend->running(), 0u);
}

TEST_F(SlurmBackendTest, CancelAllCancelsTheJobsAndGivesEveryTaskBack) {
  slurm.hold_new(true);
  auto backend = make();
  backend->submit({staged(sh_task(1, "true"), "explore")});
  EXPECT_TRUE(backend->collect(300ms).empty());
  backend->submit({staged(sh_task(2, "true"), "explore")});  // not in a job yet
  backend->cancel_all();
  EXPECT_EQ(backend->queued(), 2u);  // counted until collected
  auto results = backend->collect(0ms);
  ASSERT_EQ(results.size(), 2u);
  for (const auto& r : results) {
    EXPECT_EQ(r.status, TaskStatus::cancelled);
    EXPECT_EQ(r.reason, "cancelled by flotilla");
  }
  EXPECT_EQ(slurm.cancelled(), (std::set<std::uint32_t>{1000}));
  EXPECT_EQ(journal(folders().at(0)).back(), "cancelled cancelled cancelled by flotilla");
  EXPECT_EQ(backend->queued() + backend->running(), 0u);
}

// slurm_start = allocate, with a stand-in for `flotilla run-allocation ID DIR` on the path.
class SlurmAllocateTest : public SlurmBackendTest {
 protected:
  void SetUp() override {
    settings.start = "allocate";
    slurm.allow_allocations(true);
    path_prepend = {m_bin.path()};
  }
  void TearDown() override {  // the stand-in launchers that still run
    for (const auto& dir : folders())
      if (const auto pid = launcher_pid(dir); pid > 0) ::kill(pid, SIGKILL);
  }
  // The stand-in: `body` with $2 the allocation, $3 the job folder.
  void flotilla_run_allocation(const std::string& body) {
    const auto script = m_bin.path() / "flotilla";
    std::ofstream(script) << "#!/bin/sh\n" << body << "\n";
    ::chmod(script.c_str(), 0755);
  }
  // A launcher as flotilla's: it holds DIR/launcher.lock for its life and names itself in
  // DIR/launcher before run-allocation exits. It runs nothing: the test records the results.
  void launchers_that_hold_their_lock() {
    flotilla_run_allocation(
        "exec 9>\"$3/launcher.lock\" && flock 9 && { sleep 600 & echo \"$(hostname) $!\" > \"$3/launcher\"; }");
  }
  static pid_t launcher_pid(const std::filesystem::path& dir) {
    std::ifstream in(dir / "launcher");
    std::string host;
    pid_t pid = 0;
    in >> host >> pid;
    return pid;
  }

 private:
  ScratchDir m_bin;
};

TEST_F(SlurmAllocateTest, ALauncherThatCannotStartSendsTheJobAsABatchJob) {
  flotilla_run_allocation("exit 3");
  auto backend = make();
  backend->submit({sh_task(1, "echo flotilla-metric: x=1")});
  const auto results = collect_results(*backend, 1);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].status, TaskStatus::ok) << results[0].reason;
  EXPECT_EQ(slurm.cancelled(), (std::set<std::uint32_t>{1000}));  // the allocation: nothing ran in it
  ASSERT_EQ(slurm.submitted().size(), 2u);
  const auto dir = folders().at(0);
  const auto lines = journal(dir);
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines[0], "launching written Slurm allocation 1000");
  EXPECT_EQ(lines[1],
            "deferred written Slurm allocation 1000 cancelled: its launcher did not start; the job goes as a "
            "batch job");
  EXPECT_EQ(lines[2], "submitted queued Slurm job 1001");
  EXPECT_TRUE(notice("slurm_launcher_failed").starts_with("could not start the launcher of Slurm allocation 1000"))
      << notice("slurm_launcher_failed");
}

// Every task reported: the job is retired, not cancelled, and watched until its launcher
// releases it.
TEST_F(SlurmAllocateTest, AnAllocatedJobWhoseTasksReportedIsWatchedUntilReleased) {
  launchers_that_hold_their_lock();
  auto backend = make();
  backend->submit({sh_task(1, "true")});
  EXPECT_TRUE(backend->collect(300ms).empty());
  const auto dir = folders().at(0);
  EXPECT_TRUE(journal(dir).at(1).starts_with("allocated running Slurm allocation 1000, launcher pid "))
      << journal(dir).at(1);
  {  // what the job's worker would record (closed before the backend reads it, as across processes)
    auto out = results::JobFileWriter::create(dir / "results.h5", {"job", 1, "n1", 0, ""});
    const auto record = to_job_record({.id = 1, .status = TaskStatus::ok});
    out.append({&record, 1});
  }
  const auto results = collect_results(*backend, 1);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(journal(dir).back(), "all_reported retired");
  slurm.client()->release(1000, 0);
  for (int polls = 0; polls < 40 && journal(dir).back() != "seen_ended ended ended COMPLETED"; ++polls)
    EXPECT_TRUE(backend->collect(300ms).empty());
  EXPECT_EQ(journal(dir).back(), "seen_ended ended ended COMPLETED");
  EXPECT_TRUE(slurm.cancelled().empty());
}

TEST_F(SlurmAllocateTest, AnAllocationWhoseLauncherDiedIsCancelledAndItsTasksLost) {
  launchers_that_hold_their_lock();
  auto backend = make();
  backend->submit({sh_task(1, "true")});
  EXPECT_TRUE(backend->collect(300ms).empty());
  const auto dir = folders().at(0);
  ASSERT_GT(launcher_pid(dir), 0);
  ::kill(launcher_pid(dir), SIGKILL);
  const auto results = collect_results(*backend, 1);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].status, TaskStatus::lost);
  EXPECT_EQ(results[0].reason, "Slurm job 1000 (" + dir.filename().string() +
                                   ") ended CANCELLED (its launcher died before releasing the allocation, so flotilla "
                                   "cancelled it) before this task reported");
  EXPECT_EQ(slurm.cancelled(), (std::set<std::uint32_t>{1000}));
  EXPECT_TRUE(notice("slurm_launcher_lost").starts_with("the launcher (pid ")) << notice("slurm_launcher_lost");
}

}  // namespace
}  // namespace flotilla::jobs::test

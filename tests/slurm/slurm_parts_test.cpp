// The Slurm backend's parts that need no Slurm: the task ledger (every task back exactly once),
// job folders and what they say of their job, job requests, and the advice on a partition's
// limits (jobs/src/slurm).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <fstream>

#include "BackendTestUtil.h"
#include "slurm/JobFolder.h"
#include "slurm/JobRequests.h"
#include "slurm/PartitionAdvice.h"
#include "slurm/TaskLedger.h"
#include "flotilla/jobs/Slurm.h"

namespace flotilla::jobs::slurm {
namespace {

using test::ScratchDir;
using test::sh_task;

TaskResult result_of(std::uint64_t id, int attempt) { return {.id = id, .status = TaskStatus::ok, .attempt = attempt}; }

// `flotilla status`: a job Slurm shows ended while its journal, which no run follows now, still
// says queued or running is done (every element completed) or ended, never running or queued;
// a final journal and a live job keep the journal's word; an array speaks by its first active
// element, or by the first that did not complete.
TEST(JobView, AJobSlurmSawEndIsDoneOrEndedWhateverItsStaleJournalSays) {
  const auto record = [](JobState state, std::string reason = "") {
    return JobStatus{.id = 812, .state = state, .reason = std::move(reason)};
  };
  JobDirectory job{.name = "batch-3", .slurm_id = 812, .phase = "running"};
  const auto view = [&](const std::vector<JobStatus>& records, bool reachable = true) {
    const auto v = job_view(job, records, reachable);
    return v.state + " / " + v.phase;
  };
  EXPECT_EQ(view({record(JobState::completed), record(JobState::completed)}), "COMPLETED / done");
  EXPECT_EQ(view({record(JobState::completed), record(JobState::timeout)}), "TIMEOUT / ended");
  EXPECT_EQ(view({record(JobState::completed), record(JobState::running)}), "RUNNING / running");
  EXPECT_EQ(view({}), "ENDED / ended");  // past MinJobAge: Slurm forgot it
  EXPECT_EQ(view({}, false), "? / running");
  job.phase = "queued";
  EXPECT_EQ(view({record(JobState::pending, "Dependency")}), "PENDING (Dependency) / queued");
  EXPECT_EQ(view({record(JobState::completed)}), "COMPLETED / done");
  job.phase = "cancelled";  // final: the journal's word stands
  EXPECT_EQ(view({record(JobState::cancelled)}), "CANCELLED / cancelled");
  job.phase = "";  // no journal (submitted by hand)
  EXPECT_EQ(view({record(JobState::completed)}), "COMPLETED / done");
  EXPECT_EQ(view({record(JobState::running)}), "RUNNING / -");
  job.slurm_id = 0;
  EXPECT_EQ(view({}), "NOT_SUBMITTED / -");
}

TEST(TaskLedger, TakesOneResultPerTaskAndOnlyAtItsAttempt) {
  TaskLedger ledger;
  auto spec = sh_task(1, "true");
  spec.attempt = 1;
  ledger.add(spec);
  ledger.take(result_of(1, 0));  // a late result of the attempt before
  ledger.take(result_of(9, 0));  // not a task of ours
  EXPECT_FALSE(ledger.has_ready());
  ledger.take(result_of(1, 1));
  ledger.take(result_of(1, 1));  // read again from the file: not a second result
  const auto ready = ledger.drain();
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(ready[0].attempt, 1);
  EXPECT_FALSE(ledger.is_pending(1));
}

TEST(TaskLedger, FinishGivesBackEveryUnreportedTaskOfTheJob) {
  TaskLedger ledger;
  for (std::uint64_t id : {1, 2, 3}) ledger.add(sh_task(id, "true"));
  ledger.take(result_of(2, 0));
  ledger.finish(Job{.tasks = {1, 2}}, "Slurm job 7 (j) ended NODE_FAIL before this task reported", TaskStatus::lost);
  const auto ready = ledger.drain();
  ASSERT_EQ(ready.size(), 2u);
  EXPECT_EQ(ready[0].id, 2u);
  EXPECT_EQ(ready[0].status, TaskStatus::ok);
  EXPECT_EQ(ready[1].id, 1u);
  EXPECT_EQ(ready[1].status, TaskStatus::lost);
  EXPECT_EQ(ready[1].reason, "Slurm job 7 (j) ended NODE_FAIL before this task reported");
  EXPECT_TRUE(ledger.is_pending(3));
  EXPECT_TRUE(ledger.reported(Job{.tasks = {1, 2}}));
  EXPECT_FALSE(ledger.reported(Job{.tasks = {2, 3}}));
}

TEST(JobFolder, ANewJobGetsAFolderNoJobUsed) {
  ScratchDir jobs;
  int counter = 0;
  const auto first = new_job_folder(jobs.path(), "c", counter);
  EXPECT_EQ(first.dir, jobs.path() / first.name);
  EXPECT_TRUE(first.name.starts_with("c-"));
  std::filesystem::create_directories(first.dir);
  counter = 0;  // a restarted scheduler with the same pid
  EXPECT_NE(new_job_folder(jobs.path(), "c", counter).dir, first.dir);
  try {
    new_job_folder(jobs.path(), "../x", counter);
    FAIL() << "a folder outside jobs_dir";
  } catch (const std::invalid_argument& e) {
    EXPECT_TRUE(std::string(e.what()).ends_with("would lie outside " + jobs.path().string())) << e.what();
  }
}

// The journal names the job; the slurm_job_id a job's script writes, and an older flotilla's
// markers, fill in only where the journal names none.
TEST(JobFolder, TheRecordComesFromTheJournalFirst) {
  ScratchDir dir;
  EXPECT_EQ(read_folder_record(dir.path()).slurm_id, 0u);

  std::ofstream(dir.path() / "slurm_job_id") << "77\n";  // the script's, or an older flotilla's
  auto record = read_folder_record(dir.path());
  EXPECT_EQ(record.slurm_id, 77u);
  EXPECT_EQ(record.phase, JobPhase::written);

  append_job_event(dir.path(), JobEvent::submitted, JobPhase::queued, "Slurm job 78");
  record = read_folder_record(dir.path());
  EXPECT_EQ(record.slurm_id, 78u);
  EXPECT_EQ(record.phase, JobPhase::queued);
  EXPECT_FALSE(record.allocated);
}

TEST(JobFolder, AnOlderFlotillasAllocationMarkers) {
  ScratchDir dir;
  std::ofstream(dir.path() / "allocation") << "90\n";
  auto record = read_folder_record(dir.path());  // made, its launcher never journalled
  EXPECT_EQ(record.slurm_id, 0u);
  EXPECT_EQ(record.launching, 90u);
  std::ofstream(dir.path() / "slurm_job_id") << "90\n";
  record = read_folder_record(dir.path());
  EXPECT_EQ(record.slurm_id, 90u);
  EXPECT_TRUE(record.allocated);
  EXPECT_EQ(record.launching, 0u);
}

TEST(JobFolder, AJournalThatIsNotOneIsSaidAndTheJobsOwnIdDecides) {
  ScratchDir dir;
  std::ofstream(dir.path() / "events") << "hello\n";
  std::ofstream(dir.path() / "slurm_job_id") << "12\n";
  const auto record = read_folder_record(dir.path());
  EXPECT_EQ(record.unreadable, (dir.path() / "events").string() + ":1: not a job event: 'hello'");
  EXPECT_EQ(record.slurm_id, 12u);
}

Job job_with(std::string resources, std::string array = "") {
  return {.name = "c-1-1",
          .resources = std::move(resources),
          .dir = "/jobs/c-1-1",
          .tasks = {1, 2, 3},
          .array = std::move(array)};
}

TEST(JobRequests, APlainJobRunsTheWorkerInOneStepOfItsShape) {
  SlurmResources settings{.shape = {.partition = "cpu", .nodes = 2, .ranks_per_node = 3}};
  const auto r = job_request(job_with(""), settings, "/opt/bin/flotilla-worker", "");
  EXPECT_EQ(r.partition, "cpu");
  EXPECT_FALSE(r.requeue);
  EXPECT_EQ(r.output, "/jobs/c-1-1/slurm-%j.out");
  ASSERT_EQ(r.commands.size(), 2u);
  EXPECT_EQ(r.commands[0], "echo \"${SLURM_ARRAY_JOB_ID:-$SLURM_JOB_ID}\" > slurm_job_id");
  EXPECT_EQ(r.commands[1], "srun --mpi=pmix --nodes=2 --ntasks-per-node=3 /opt/bin/flotilla-worker manifest.json");
}

TEST(JobRequests, AStageArrayOnGpuNodesGivesTheDispatcherNoGpu) {
  SlurmResources settings;
  settings.stages["evaluate"] = {.partition = "gb200", .nodes = 1, .ranks_per_node = 2, .gpus_per_node = 2};
  settings.setup = {"module load cuda"};
  const auto r = job_request(job_with("evaluate", "0-1"), settings, "w", "afterok:5");
  EXPECT_EQ(r.partition, "gb200");
  EXPECT_EQ(r.dependency, "afterok:5");
  EXPECT_EQ(r.array, "0-1");
  EXPECT_EQ(r.output, "/jobs/c-1-1/slurm-%A_%a.out");
  ASSERT_EQ(r.commands.size(), 3u);
  EXPECT_EQ(r.commands[1], render_setup_line("module load cuda", 1));
  EXPECT_EQ(r.commands[2],
            "srun --mpi=pmix --nodes=1 --ntasks=3 --overcommit --gpus-per-node=2 w "
            "manifest-${SLURM_ARRAY_TASK_ID}.json");
}

TEST(JobRequests, MpirunStartsTheRanksFromAHostfile) {
  SlurmResources settings{.shape = {.nodes = 2, .ranks_per_node = 2}, .launcher = "mpirun"};
  const auto r = job_request(job_with(""), settings, "w", "");
  ASSERT_EQ(r.commands.size(), 3u);
  EXPECT_TRUE(r.commands[1].ends_with("> hostfile")) << r.commands[1];
  EXPECT_EQ(r.commands[2], "mpirun -n 4 --hostfile hostfile --map-by slot --bind-to none w manifest.json");
}

TEST(JobRequests, SbatchVariablesThatWouldBreakTheJobsStopTheRun) {
  ::setenv("SBATCH_JOB_NAME", "mine", 1);
  try {
    check_sbatch_environment("sbatch", Notice({}));
    ADD_FAILURE() << "SBATCH_JOB_NAME was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_TRUE(
        std::string(e.what()).starts_with("the environment's SBATCH_* variables: SBATCH_JOB_NAME: flotilla "
                                          "names its jobs"))
        << e.what();
  }
  ::unsetenv("SBATCH_JOB_NAME");
  EXPECT_NO_THROW(check_sbatch_environment("api", Notice({})));
}

// The allocation launcher (`flotilla run-allocation`) started through the process runner: when it
// cannot take its lock (another process holds DIR/launcher.lock), it ends before naming itself and
// the starter says so, naming the launcher file; a folder whose launcher still runs is refused
// before anything starts, and a folder without job.sh too. No cluster: nothing here reaches Slurm.
TEST(AllocationLauncher, ALauncherThatCannotStartIsAnErrorNamingItsFolder) {
  ScratchDir dir;
  auto argv = [&] { return std::vector<std::string>{FLOTILLA_EXE, "run-allocation", "--launcher", "7", dir.path().string()}; };
  try {
    start_allocation_launcher(7, dir.path(), argv());
    ADD_FAILURE() << "started without a job.sh";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find((dir.path() / "job.sh").string() + ": no job script"), std::string::npos)
        << e.what();
  }
  std::ofstream(dir.path() / "job.sh") << "exit 0\n";
  // Someone holds the lock (a launcher that has not named itself yet, as far as this folder says).
  const int held = open((dir.path() / "launcher.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(held, 0);
  ASSERT_EQ(flock(held, LOCK_EX | LOCK_NB), 0);
  try {
    start_allocation_launcher(7, dir.path(), argv());
    ADD_FAILURE() << "a launcher that could not lock was taken for a running one";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("the launcher of allocation 7 ended (exit code 1) before it named itself"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "launcher"));
  // With DIR/launcher naming a holder of the lock, the folder's launcher runs: refused at once.
  std::ofstream(dir.path() / "launcher") << "host 1\n";
  try {
    start_allocation_launcher(7, dir.path(), argv());
    ADD_FAILURE() << "a second launcher was started beside a live one";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("a launcher of allocation 7 already runs"), std::string::npos) << e.what();
  }
  close(held);
}

// `scontrol show partition --oneliner` of the limits test's cluster (Slurm 22.05, recorded).
constexpr const char* kPartitions =
    "PartitionName=debug AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL AllocNodes=ALL Default=YES QoS=N/A "
    "DefaultTime=NONE DisableRootJobs=NO ExclusiveUser=NO GraceTime=0 Hidden=NO MaxNodes=UNLIMITED "
    "MaxTime=UNLIMITED MinNodes=0 LLN=NO MaxCPUsPerNode=UNLIMITED Nodes=node[1-2] PriorityJobFactor=1 "
    "PriorityTier=1 RootOnly=NO ReqResv=NO OverSubscribe=NO OverTimeLimit=NONE PreemptMode=OFF State=UP "
    "TotalCPUs=8 TotalNodes=2 SelectTypeParameters=NONE\n"
    "PartitionName=small AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL AllocNodes=ALL Default=NO QoS=N/A "
    "DefaultTime=NONE DisableRootJobs=NO ExclusiveUser=NO GraceTime=0 Hidden=NO MaxNodes=1 MaxTime=00:02:00 "
    "MinNodes=0 LLN=NO MaxCPUsPerNode=UNLIMITED Nodes=node[1-2] PriorityJobFactor=1 PriorityTier=1 RootOnly=NO "
    "ReqResv=NO OverSubscribe=NO OverTimeLimit=NONE PreemptMode=OFF State=DRAIN TotalCPUs=8 TotalNodes=2\n";

TEST(PartitionAdvice, ReadsScontrolsPartitions) {
  const auto parts = parse_partitions(kPartitions);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].name, "debug");
  EXPECT_TRUE(parts[0].is_default);
  EXPECT_EQ(parts[0].max_nodes, std::nullopt);
  EXPECT_EQ(parts[0].max_time, std::nullopt);
  EXPECT_EQ(parts[0].total_nodes, 2u);
  EXPECT_EQ(parts[1].name, "small");
  EXPECT_FALSE(parts[1].is_default);
  EXPECT_EQ(parts[1].state, "DRAIN");
  EXPECT_EQ(parts[1].max_nodes, 1u);
  EXPECT_EQ(parts[1].max_time, std::chrono::minutes(2));
}

// Each limit named with its value and the setting to change; a stage's jobs name its own key too.
TEST(PartitionAdvice, NamesTheBrokenLimitAndTheSetting) {
  const auto parts = parse_partitions(kPartitions);
  JobRequest r{.partition = "small", .nodes = 2, .time_limit = std::chrono::minutes(30)};
  EXPECT_EQ(broken_limit(parts[1], r, "evaluate"),
            "partition small allows at most 1 node a job (MaxNodes); the job asks for 2: lower resources.nodes "
            "(resources.evaluate.nodes for evaluate jobs), or choose another partition with resources.partition "
            "(resources.evaluate.partition for evaluate jobs)");
  r.nodes = 1;
  EXPECT_EQ(broken_limit(parts[1], r, ""),
            "partition small allows at most 00:02:00 a job (MaxTime); the job asks for 00:30:00: lower "
            "resources.time_limit, or choose another partition with resources.partition");
  r.time_limit = std::chrono::minutes(2);
  EXPECT_EQ(broken_limit(parts[1], r, ""), std::nullopt);
  const JobRequest wide{.nodes = 3, .time_limit = std::chrono::minutes(24 * 60 + 5)};  // the default partition
  EXPECT_EQ(find_partition(parts, wide), &parts[0]);
  EXPECT_EQ(broken_limit(parts[0], wide, ""),
            "partition debug has 2 nodes; the job asks for 3: lower resources.nodes, or choose another partition with "
            "resources.partition");
}

TEST(PartitionAdvice, SaysWhatARefusalMeansInSettings) {
  const auto parts = parse_partitions(kPartitions);
  const JobRequest nope{.partition = "nope"};
  EXPECT_EQ(refusal_advice("slurm_submit_batch_job: Invalid partition name specified (errno 2000)", parts, nope, ""),
            "partition nope does not exist on this cluster (it has debug, small): set resources.partition");
  const JobRequest small{.partition = "small", .time_limit = std::chrono::minutes(1)};
  EXPECT_EQ(refusal_advice("sbatch: error: Batch job submission failed: Required partition not available (inactive or "
                           "drain)",
                           parts, small, ""),
            "partition small is DRAIN: wait for it to be UP (flotilla tries again), or choose another with "
            "resources.partition");
  EXPECT_EQ(refusal_advice("slurm_submit_batch_job: Invalid feature specification (errno 2041)", parts, small, ""),
            "the --constraint of resources.sbatch names a feature no node of the partition has (sinfo -o '%P %f')");
  EXPECT_EQ(refusal_advice("slurm_submit_batch_job: Unable to contact slurm controller", parts, small, ""), "");
  // A refusal for a limit the partitions show is named by that limit, whatever Slurm's words.
  const JobRequest longer{.partition = "small", .time_limit = std::chrono::minutes(10)};
  EXPECT_EQ(refusal_advice("slurm_submit_batch_job: Requested time limit is invalid (missing or exceeds some limit) "
                           "(errno 2051)",
                           parts, longer, ""),
            "partition small allows at most 00:02:00 a job (MaxTime); the job asks for 00:10:00: lower "
            "resources.time_limit, or choose another partition with resources.partition");
  EXPECT_TRUE(is_partition_limit_reason("PartitionNodeLimit"));
  EXPECT_TRUE(is_partition_limit_reason("PartitionTimeLimit"));
  EXPECT_FALSE(is_partition_limit_reason("PartitionDown"));
  EXPECT_FALSE(is_partition_limit_reason("Resources"));
}

}  // namespace
}  // namespace flotilla::jobs::slurm

// Both Slurm clients against a real local cluster (started by the slurm_cluster fixture):
// submit, batch query, arrays on the GPU partition, afterok, invalid dependencies, cancel.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "flotilla/jobs/Slurm.h"
#include "flotilla/jobs/Subprocess.h"

using namespace flotilla::jobs;
using namespace std::chrono_literals;

namespace {

class SlurmClientTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!std::getenv("SLURM_CONF")) GTEST_SKIP() << "SLURM_CONF is not set: no test cluster";
    m_client = make_slurm_client(GetParam());
    // Job files go beside the cluster state (a directory every fake node can write to).
    m_dir = std::filesystem::path(std::getenv("SLURM_CONF")).parent_path().parent_path() / ("client-" + GetParam());
    std::filesystem::create_directories(m_dir);
  }
  JobRequest request(std::string name, std::string command) {
    return JobRequest{.name = std::move(name), .time_limit = 5min, .workdir = m_dir,
                      .output = m_dir / "job-%j.out", .commands = {std::move(command)}};
  }
  std::uint32_t submit(const JobRequest& r) {
    auto outcome = m_client->submit(r);
    if (auto* rejected = std::get_if<SubmitRejected>(&outcome)) ADD_FAILURE() << rejected->message;
    return std::get<Submitted>(outcome).id;
  }
  // Polls until every job is terminal; returns the last statuses.
  std::vector<JobStatus> wait_all(const std::vector<std::uint32_t>& ids, std::chrono::seconds limit = 60s) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    for (;;) {
      auto statuses = m_client->query(ids);
      bool done = !statuses.empty();
      for (const auto& s : statuses) done = done && is_terminal(s.state);
      if (done || std::chrono::steady_clock::now() > deadline) return statuses;
      std::this_thread::sleep_for(50ms);
    }
  }
  static JobStatus only(const std::vector<JobStatus>& v, std::uint32_t id) {
    for (const auto& s : v)
      if (s.id == id) return s;
    return {};
  }
  std::unique_ptr<SlurmClient> m_client;
  std::filesystem::path m_dir;
};

}  // namespace

TEST_P(SlurmClientTest, SubmitsAndSeesCompletionAndFailure) {
  auto ok = submit(request("ok", "echo hello $SLURM_JOB_ID"));
  auto bad = submit(request("bad", "exit 3"));
  auto statuses = wait_all({ok, bad});
  EXPECT_EQ(only(statuses, ok).state, JobState::completed);
  EXPECT_EQ(only(statuses, bad).state, JobState::failed);
  std::ifstream out(m_dir / ("job-" + std::to_string(ok) + ".out"));
  std::string line;
  std::getline(out, line);
  EXPECT_EQ(line, "hello " + std::to_string(ok));
}

TEST_P(SlurmClientTest, ArrayOnGpuPartitionGetsDevices) {
  auto r = request("gpus", "echo \"$SLURM_ARRAY_TASK_ID $CUDA_VISIBLE_DEVICES\" > gpu-$SLURM_ARRAY_TASK_ID.txt");
  r.partition = "gb200";
  r.gpus_per_node = 2;
  r.array = "0-3";
  auto id = submit(r);
  auto statuses = wait_all({id});
  ASSERT_EQ(statuses.size(), 4u);
  for (const auto& s : statuses) EXPECT_EQ(s.state, JobState::completed);
  for (int i = 0; i < 4; ++i) {
    std::ifstream in(m_dir / ("gpu-" + std::to_string(i) + ".txt"));
    std::string index, devices;
    in >> index >> devices;
    EXPECT_EQ(index, std::to_string(i));
    EXPECT_EQ(std::count(devices.begin(), devices.end(), ',') + 1, 2) << devices;
  }
}

TEST_P(SlurmClientTest, AfterokRunsAfterSuccessAndCancelsWhenNeverSatisfiable) {
  auto first = submit(request("first", "sleep 0.5"));
  auto r = request("second", "true");
  r.dependency = "afterok:" + std::to_string(first);
  auto second = submit(r);
  auto failing = submit(request("failing", "exit 1"));
  auto r2 = request("orphan", "true");
  r2.dependency = "afterok:" + std::to_string(failing);
  auto orphan = submit(r2);
  auto statuses = wait_all({first, second, failing, orphan});
  EXPECT_EQ(only(statuses, second).state, JobState::completed);
  // --kill-on-invalid-dep: not left PENDING with DependencyNeverSatisfied.
  EXPECT_EQ(only(statuses, orphan).state, JobState::cancelled);
}

TEST_P(SlurmClientTest, CancelsARunningJob) {
  auto id = submit(request("long", "sleep 300"));
  for (int i = 0; i < 200 && only(m_client->query({id}), id).state != JobState::running; ++i)
    std::this_thread::sleep_for(50ms);
  m_client->cancel(id);
  EXPECT_EQ(only(wait_all({id}), id).state, JobState::cancelled);
  EXPECT_NO_THROW(m_client->cancel(id));  // cancelling a finished job is not an error
}

TEST_P(SlurmClientTest, ReadsMaxArraySizeAndRejectsBadPartitionAsValue) {
  EXPECT_EQ(m_client->max_array_size(), 1001u);
  auto r = request("nowhere", "true");
  r.partition = "no_such_partition";
  auto outcome = m_client->submit(r);
  ASSERT_TRUE(std::holds_alternative<SubmitRejected>(outcome));
  EXPECT_NE(std::get<SubmitRejected>(outcome).message.find("partition"), std::string::npos)
      << std::get<SubmitRejected>(outcome).message;
  EXPECT_FALSE(std::get<SubmitRejected>(outcome).limit);
}

// Sets an environment variable for one test, as a user's shell would have.
class ScopedVariable {
 public:
  ScopedVariable(const char* name, const char* value) : m_name(name) { ::setenv(name, value, 1); }
  ~ScopedVariable() { ::unsetenv(m_name); }
  ScopedVariable(const ScopedVariable&) = delete;
  ScopedVariable& operator=(const ScopedVariable&) = delete;

 private:
  const char* m_name;
};

std::string squeue_fields(std::uint32_t id, const char* format) {
  auto r = run_subprocess({.argv = {"squeue", "-h", "-j", std::to_string(id), "-o", format}});
  EXPECT_TRUE(r.ok()) << r.err;
  return r.out.substr(0, r.out.find('\n'));
}

// resources.sbatch's options and the SBATCH_* variables reach a job the same way whichever
// client submits it: as sbatch, a variable beats the request's own value (#SBATCH line).
TEST_P(SlurmClientTest, PassThroughOptionsAndSbatchVariablesReachTheJobAlike) {
  ScopedVariable partition("SBATCH_PARTITION", "gb200");
  ScopedVariable constraint("SBATCH_CONSTRAINT", "grace");
  auto client = make_slurm_client(GetParam());  // the api client reads the environment when made
  auto r = request("passthrough", "true");
  r.partition = "debug";  // node1-2, which lack the feature: the variable must win
  r.extra = {{"comment", "flotilla-pass-through"}, {"mem", "100M"}, {"cpus-per-task", "2"}};
  auto outcome = client->submit(r);
  ASSERT_TRUE(std::holds_alternative<Submitted>(outcome)) << std::get<SubmitRejected>(outcome).message;
  const auto id = std::get<Submitted>(outcome).id;
  EXPECT_EQ(squeue_fields(id, "%P|%f|%k|%m|%c"), "gb200|grace|flotilla-pass-through|100M|2");
  EXPECT_EQ(only(wait_all({id}), id).state, JobState::completed);
}

// A pending job's reason is Slurm's own name of it (squeue's), from both clients.
TEST_P(SlurmClientTest, PendingReasonsAreSlurmsNames) {
  auto blocker = submit(request("blocker", "sleep 300"));
  auto r = request("waiting", "true");
  r.dependency = "afterok:" + std::to_string(blocker);
  auto waiting = submit(r);
  ASSERT_TRUE(run_subprocess({.argv = {"scontrol", "uhold", std::to_string(waiting)}}).ok());
  std::string reason;
  for (int i = 0; i < 100 && reason != "JobHeldUser"; ++i) {
    reason = only(m_client->query({waiting}), waiting).reason;
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_EQ(reason, "JobHeldUser");
  m_client->cancel(waiting);
  m_client->cancel(blocker);
}

INSTANTIATE_TEST_SUITE_P(Clients, SlurmClientTest, ::testing::Values("api", "sbatch"));

// resources.slurm_start = allocate: an allocation made inside the call when the nodes are free,
// refused (not queued) when they are not, run by a detached launcher that releases it with the
// script's status and holds its lock while it runs.
// `flotilla run-allocation --launcher ID DIR`, as the command starts it.
std::vector<std::string> launcher_argv(std::uint32_t id, const std::filesystem::path& dir) {
  return {FLOTILLA_EXE, "run-allocation", "--launcher", std::to_string(id), dir.string()};
}

TEST(SlurmAllocation, AllocatesAtOnceRefusesWhenBusyAndIsReleasedByItsLauncher) {
  if (!std::getenv("SLURM_CONF")) GTEST_SKIP() << "SLURM_CONF is not set: no test cluster";
  auto client = make_slurm_client("api");
  const auto base = std::filesystem::path(std::getenv("SLURM_CONF")).parent_path().parent_path() / "client-allocate";
  auto folder = [&](const std::string& name, std::vector<std::string> commands, int nodes) {
    // Every CPU of its nodes (4 each), so that nothing else fits beside it.
    JobRequest r{.name = name, .partition = "debug", .nodes = nodes, .ranks_per_node = 4, .time_limit = 5min,
                 .workdir = base / name, .commands = std::move(commands)};
    std::filesystem::remove_all(r.workdir);
    std::filesystem::create_directories(r.workdir);
    std::ofstream(r.workdir / "job.sh") << render_job_script(r);
    return r;
  };
  std::vector<std::uint32_t> made;  // cancelled at the end, so a failed assertion holds no node
  struct Cancel {
    SlurmClient& client;
    std::vector<std::uint32_t>& ids;
    ~Cancel() {
      for (auto id : ids) client.cancel(id);
    }
  } cancel_at_end{*client, made};
  auto state = [&](std::uint32_t id) {
    for (const auto& s : client->query({id})) return s.state;
    return JobState::unknown;
  };
  auto wait_ended = [&](std::uint32_t id) {
    for (int i = 0; i < 600 && !is_terminal(state(id)); ++i) std::this_thread::sleep_for(50ms);
    return state(id);
  };

  // A job an earlier test left completing would hold a node: wait (at most 30 s) until none is left.
  auto live_jobs = [&] {
    std::size_t n = 0;
    for (const auto& job : client->user_jobs()) n += !is_terminal(job.state);
    return n;
  };
  for (int i = 0; i < 600 && live_jobs() > 0; ++i) std::this_thread::sleep_for(50ms);
  ASSERT_EQ(live_jobs(), 0u) << "jobs of an earlier test still hold the cluster";

  // Both nodes of the partition, allocated inside the call: running at once, no scheduling tick.
  // An earlier test's job reads as ended while Slurm still completes it on its nodes (the state's
  // COMPLETING flag is not part of the job's state): until they are free, an allocation is refused
  // (ctest -j2, 2026-12-04, right after slurm_in_allocation), as for `again` below.
  auto whole = folder("whole", {"srun --nodes=2 --ntasks-per-node=1 hostname > step.txt", "sleep 0.5", "exit 3"}, 2);
  std::optional<std::uint32_t> id;
  for (int i = 0; i < 100 && !id; ++i) {
    id = client->allocate_now(whole);
    if (!id) std::this_thread::sleep_for(100ms);
  }
  ASSERT_TRUE(id.has_value());
  made.push_back(*id);
  EXPECT_EQ(state(*id), JobState::running);

  // Nothing left to allocate now: refused, and no job is left pending.
  auto one = folder("one", {"true"}, 1);
  EXPECT_FALSE(client->allocate_now(one).has_value());
  for (const auto& job : client->user_jobs())
    EXPECT_FALSE(job.name == "one" && !is_terminal(job.state)) << "job " << job.id << " left " << to_string(job.state);

  // The launcher runs the script in the allocation (its step sees the allocation's nodes), holds
  // its lock while it runs, and releases the allocation with the script's status: exit 3 ends
  // it FAILED, and the lock is free once the launcher has gone.
  EXPECT_FALSE(launcher_alive(whole.workdir).has_value());  // no launcher yet
  EXPECT_EQ(start_allocation_launcher(*id, whole.workdir, launcher_argv(*id, whole.workdir)), 0);
  EXPECT_EQ(launcher_alive(whole.workdir), std::optional<bool>(true));
  EXPECT_EQ(wait_ended(*id), JobState::failed);
  for (int i = 0; i < 100 && launcher_alive(whole.workdir) != std::optional<bool>(false); ++i)
    std::this_thread::sleep_for(50ms);
  EXPECT_EQ(launcher_alive(whole.workdir), std::optional<bool>(false));
  std::ifstream step(whole.workdir / "step.txt");
  std::string first, second;
  step >> first >> second;
  EXPECT_FALSE(first.empty() || second.empty()) << "the step did not run on both allocated nodes";

  // The nodes free up (once Slurm has finished completing the job): a script that succeeds
  // ends its allocation COMPLETED.
  std::optional<std::uint32_t> again;
  for (int i = 0; i < 100 && !again; ++i) {
    again = client->allocate_now(one);
    if (!again) std::this_thread::sleep_for(100ms);
  }
  ASSERT_TRUE(again.has_value());
  made.push_back(*again);
  EXPECT_EQ(start_allocation_launcher(*again, one.workdir, launcher_argv(*again, one.workdir)), 0);
  EXPECT_EQ(wait_ended(*again), JobState::completed);
  EXPECT_NO_THROW(client->release(*again, 0));  // releasing an ended job is not an error
}

// MpiBackendTest.cpp — the mpi backend through real mpirun jobs of 2-4 ranks: every task comes
// back exactly once, results equal the local backend's, a rank killed mid-job loses only the
// tasks it had not reported (and they complete when run again), and flotilla-worker itself
// reruns a manifest by running only what its job file lacks.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "BackendTestUtil.h"
#include "flotilla/jobs/Manifest.h"

namespace flotilla::jobs::test {
namespace {

using namespace std::chrono_literals;

// flotilla-worker and flotilla-kernel are found on PATH, as they are for `flotilla run`.
const bool g_path_set = [] {
  const char* path = std::getenv("PATH");
  ::setenv("PATH", (std::string(FLOTILLA_BIN_DIR) + ":" + (path ? path : "/usr/bin:/bin")).c_str(), 1);
  return true;
}();

std::unique_ptr<Backend> mpi_backend(unsigned ranks) {
  return make_backend({.name = "mpi", .slots = 0, .ranks = ranks});
}

std::vector<TaskResult> run_all(Backend& backend, const std::vector<TaskSpec>& tasks) {
  backend.submit(tasks);
  std::vector<TaskResult> results;
  const auto deadline = SteadyClock::now() + 120s;
  while (backend.queued() + backend.running() > 0 && SteadyClock::now() < deadline)
    for (auto& r : backend.collect(200ms)) results.push_back(std::move(r));
  return results;
}

TaskSpec kernel(std::uint64_t id, std::vector<std::string> args, std::string objective = "") {
  TaskSpec spec = argv_task(id, {"flotilla-kernel"}, std::move(objective));
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  return spec;
}

class EveryTaskOnce : public ::testing::TestWithParam<unsigned> {};

TEST_P(EveryTaskOnce, MixedTasksComeBackExactlyOnceFromEveryWorker) {
  const unsigned ranks = GetParam();
  std::vector<TaskSpec> tasks;
  for (std::uint64_t id = 0; id < 600; ++id) {
    if (id % 50 == 0)
      tasks.push_back(sh_task(id, "echo flotilla-metric: id=" + std::to_string(id), "id"));
    else
      tasks.push_back(kernel(id, {"sleep", "--us", id % 7 ? "500" : "0"}, "time_s"));
  }
  auto backend = mpi_backend(ranks);
  const auto results = run_all(*backend, tasks);
  ASSERT_EQ(results.size(), tasks.size());
  std::set<std::uint64_t> ids;
  std::set<int> used;
  for (const auto& r : results) {
    EXPECT_TRUE(ids.insert(r.id).second) << "returned twice: " << r.id;
    EXPECT_EQ(r.status, TaskStatus::ok) << r.id << ": " << r.reason;
    EXPECT_GE(r.rank, 1);
    EXPECT_LT(r.rank, static_cast<int>(ranks));
    used.insert(r.rank);
    if (r.id % 50 == 0) {
      EXPECT_EQ(r.objective, static_cast<double>(r.id));
    }
  }
  EXPECT_EQ(ids.size(), tasks.size());
  EXPECT_EQ(used.size(), ranks - 1) << "every worker rank took tasks";
}

INSTANTIATE_TEST_SUITE_P(Ranks, EveryTaskOnce, ::testing::Values(2u, 3u, 4u));

TEST(MpiBackend, ResultsEqualTheLocalBackends) {
  std::vector<TaskSpec> tasks{
      sh_task(1, "echo hello; echo 'flotilla-metric: gflops=12.5 time_s=0.5'", "gflops"),
      sh_task(2, "echo some output; exit 3"),
      sh_task(3, "kill -SEGV $$"),
      sh_task(4, "echo 'flotilla-metric: gflops=abc'", "gflops"),
      sh_task(5, "echo 'flotilla-metric: time_s=1'", "gflops"),
      sh_task(6, "sleep 5", "", 300ms),
      argv_task(7, {"flotilla-no-such-command"}),
      kernel(8, {"stencil", "--tile-x", "8", "--tile-y", "4", "--iters", "5", "--verify", "--shard", "1", "--shards",
                 "4"}),
      kernel(9, {"stencil", "--precision", "float", "--iters", "5", "--verify", "--shard", "0", "--shards", "2"}),
      kernel(10, {"stencil", "--tile-x", "0"}, "gflops"),
      kernel(11, {"stencil", "--tile-z", "3"}),
      kernel(12, {"sleep", "--us", "400000"}, "time_s"),
  };
  tasks.back().timeout = 100ms;
  auto local = make_backend({.name = "local", .slots = 2});
  auto mpi = mpi_backend(3);
  std::map<std::uint64_t, TaskResult> expected, got;
  for (auto& r : run_all(*local, tasks)) expected[r.id] = std::move(r);
  for (auto& r : run_all(*mpi, tasks)) got[r.id] = std::move(r);
  ASSERT_EQ(expected.size(), tasks.size());
  ASSERT_EQ(got.size(), tasks.size());
  for (const auto& [id, want] : expected) {
    const TaskResult& have = got[id];
    SCOPED_TRACE("task " + std::to_string(id) + ": " + want.output_tail);
    EXPECT_EQ(have.status, want.status);
    EXPECT_EQ(have.exit_code, want.exit_code);
    EXPECT_EQ(have.reason, want.reason);
    EXPECT_EQ(have.output_tail, want.output_tail);
    EXPECT_EQ(have.metrics, want.metrics);
    EXPECT_EQ(have.objective, want.objective);
    EXPECT_EQ(have.host, want.host);
    EXPECT_EQ(want.rank, 0);
    EXPECT_GE(have.rank, 1);
  }
}

TEST(MpiBackend, ARankKilledMidJobLosesOnlyWhatItHadNotReported) {
  ScratchDir dir;
  const std::string marker = (dir.path() / "killed").string();
  std::vector<TaskSpec> tasks;
  for (std::uint64_t id = 0; id < 40; ++id) tasks.push_back(sh_task(id, "sleep 0.05; echo flotilla-metric: x=1", "x"));
  // The first run of task 1000 kills its own rank (its parent); a rerun just succeeds.
  tasks.insert(tasks.begin() + 12, sh_task(1000,
                                           "if mkdir " + marker +
                                               " 2>/dev/null; then kill -9 $PPID; sleep 5; fi; "
                                               "echo flotilla-metric: x=1",
                                           "x"));
  auto backend = mpi_backend(3);
  const auto first = run_all(*backend, tasks);
  ASSERT_EQ(first.size(), tasks.size());
  std::set<std::uint64_t> ids;
  std::vector<TaskSpec> again;
  for (const auto& r : first) {
    EXPECT_TRUE(ids.insert(r.id).second) << "returned twice: " << r.id;
    if (r.status == TaskStatus::lost) {
      EXPECT_EQ(r.attempt, 0);
      EXPECT_NE(r.reason.find("rank died before the task reported (mpirun exit code"), std::string::npos) << r.reason;
      auto spec = *std::find_if(tasks.begin(), tasks.end(), [&](const auto& t) { return t.id == r.id; });
      spec.attempt = 1;
      again.push_back(spec);
    } else {
      EXPECT_EQ(r.status, TaskStatus::ok) << r.reason;
    }
  }
  EXPECT_TRUE(ids.contains(1000));
  ASSERT_FALSE(again.empty());
  EXPECT_TRUE(std::any_of(again.begin(), again.end(), [](const auto& t) { return t.id == 1000; }));
  const auto second = run_all(*backend, again);
  ASSERT_EQ(second.size(), again.size());
  for (const auto& r : second) {
    EXPECT_EQ(r.status, TaskStatus::ok) << r.id << ": " << r.reason;
    EXPECT_EQ(r.attempt, 1);
  }
}

// The worker's one-line summary from mpirun's output.
nlohmann::json summary(const TaskResult& mpirun) {
  const auto begin = mpirun.output_tail.rfind("{\"job\"");
  if (begin == std::string::npos) return {};
  return nlohmann::json::parse(mpirun.output_tail.substr(begin, mpirun.output_tail.find('\n', begin) - begin));
}

TaskResult run_worker(const std::filesystem::path& manifest, unsigned ranks = 2) {
  auto local = make_backend({.name = "local", .slots = 1});
  TaskSpec spec = argv_task(
      1, {FLOTILLA_MPIEXEC, "-n", std::to_string(ranks), "--oversubscribe", "flotilla-worker", manifest.string()});
  spec.env = {{"OMPI_ALLOW_RUN_AS_ROOT", "1"}, {"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"}};
  return run_one(*local, spec);
}

TEST(Worker, ARerunRunsOnlyWhatTheJobFileLacks) {
  ScratchDir dir;
  Manifest manifest{"rerun", "rerun.h5", {}};
  for (std::uint64_t id = 0; id < 5; ++id) manifest.tasks.push_back(to_manifest_task(kernel(id, {"sleep"})));
  write_manifest(dir.path() / "m.json", manifest);
  const TaskResult first = run_worker(dir.path() / "m.json");
  ASSERT_EQ(first.status, TaskStatus::ok) << first.output_tail;
  EXPECT_EQ(summary(first)["tasks"], 5) << first.output_tail;
  const TaskResult second = run_worker(dir.path() / "m.json", 3);
  ASSERT_EQ(second.status, TaskStatus::ok) << second.output_tail;
  EXPECT_EQ(summary(second)["tasks"], 0) << second.output_tail;
  EXPECT_EQ(summary(second)["already_recorded"], 5);
}

TEST(Worker, ABadManifestEndsEveryRankNamingTheField) {
  ScratchDir dir;
  std::ofstream(dir.path() / "m.json") << R"({"flotilla_manifest": 1, "job": "j", "output": "j.h5",
                                            "tasks": [{"id": 1, "kind": "shell"}]})";
  const TaskResult result = run_worker(dir.path() / "m.json");
  EXPECT_EQ(result.status, TaskStatus::failed);
  EXPECT_NE(result.output_tail.find("flotilla-worker: " + (dir.path() / "m.json").string() +
                                    ": tasks[0].kind: expected \"command\" or \"kernel\", got \"shell\""),
            std::string::npos)
      << result.output_tail;
}

}  // namespace
}  // namespace flotilla::jobs::test

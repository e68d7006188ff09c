// BackendContractTest.cpp — the contract of Backend.h, written once and instantiated per backend
// (local; slurm on the fake Slurm of tests/slurm, whose jobs run their tasks in a worker process
// of their own; mpi in tests/worker). Real processes through /bin/sh; time limits are generous
// (seconds) because the test machine is shared.
#include <sys/types.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "BackendTestUtil.h"
#include "FakeSlurm.h"

namespace flotilla::jobs::test {
namespace {

using namespace std::chrono_literals;

// The tests a backend is known to fail because it reads Backend.h more narrowly than this suite,
// each with the difference: the test is skipped for that backend, saying so. The Slurm backend
// follows jobs, not ranks: every task of a running job counts as running; cancel_all() gives
// each task back at once as cancelled ("cancelled by flotilla"), counted as queued until
// collected; and collect() waits out its wait even with nothing to follow (flotilla never calls
// it so). Changing these would change what `flotilla run` shows and records on Slurm.
std::string known_difference(const std::string& backend, const std::string& test) {
  static const std::map<std::pair<std::string, std::string>, std::string> differences{
      {{"slurm", "ConcurrencyNeverExceedsSlots"}, "slurm: every task of a running job counts as running"},
      {{"slurm", "CollectReturnsAsSoonAsOneTaskFinishes"}, "slurm: every task of a running job counts as running"},
      {{"slurm", "CancelAllEndsRunningAndDropsQueued"},
       "slurm: every task of a running job counts as running, and cancel_all() gives them back at once, "
       "\"cancelled by flotilla\""},
      {{"slurm", "CollectWithNothingToDoReturnsAtOnce"}, "slurm: collect() waits out its wait with nothing to follow"},
  };
  auto it = differences.find({backend, test});
  return it == differences.end() ? std::string() : it->second;
}

class BackendContract : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    test = test.substr(0, test.find('/'));  // "Name/slurm"
    if (auto why = known_difference(GetParam(), test); !why.empty()) GTEST_SKIP() << why;
  }

  // `slots` tasks at once: the local backend's slots, an mpi job's worker ranks, a Slurm job's
  // task ranks (one job per batch of tasks submitted together).
  std::unique_ptr<Backend> make(unsigned slots) {
    BackendOptions options;
    options.name = GetParam();
    options.slots = slots;
    if (GetParam() != "slurm") return make_backend(options);
    return make_fake_slurm_backend(m_slurm, options, fake_slurm_resources(m_jobs_dir.path(), slots));
  }

 private:
  ScratchDir m_jobs_dir;  // declared before the Slurm whose jobs write into it
  FakeSlurm m_slurm;
};

TEST_P(BackendContract, OkWithMetricsFromBothStreamsAndForms) {
  auto backend = make(2);
  const double before = epoch_now();
  const TaskResult result = run_one(*backend, sh_task(7, R"(echo hello
echo "flotilla-metric: gflops=12.5 time_s=0.5"
echo '{"metrics": {"n": 3}}' >&2
echo "flotilla-metric: gflops=13")",
                                                      "gflops"));
  EXPECT_EQ(result.id, 7u);
  EXPECT_EQ(result.status, TaskStatus::ok);
  EXPECT_EQ(result.reason, "");
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.objective, 13);
  EXPECT_EQ(result.metrics, (MetricList{{"gflops", 13}, {"time_s", 0.5}, {"n", 3}}));
  EXPECT_NE(result.output_tail.find("hello\n"), std::string::npos);
  EXPECT_LE(before - 1, result.start);
  EXPECT_LE(result.start, result.end);
  EXPECT_LE(result.end, epoch_now() + 1);
}

TEST_P(BackendContract, NonZeroExit) {
  auto backend = make(1);
  const TaskResult result = run_one(*backend, sh_task(1, "echo some output; exit 3"));
  EXPECT_EQ(result.status, TaskStatus::failed);
  EXPECT_EQ(result.reason, "exit code 3");
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_EQ(result.output_tail, "some output\n");
}

TEST_P(BackendContract, CrashBySignal) {
  auto backend = make(1);
  const TaskResult result = run_one(*backend, sh_task(1, "kill -SEGV $$"));
  EXPECT_EQ(result.status, TaskStatus::failed);
  EXPECT_EQ(result.reason, "killed by signal 11 (SIGSEGV)");
  EXPECT_EQ(result.exit_code, 128 + 11);
}

TEST_P(BackendContract, TimeoutKillsTheWholeGroupPromptly) {
  auto backend = make(1);
  const auto start = SteadyClock::now();
  // The background grandchild holds the output pipe open: only a group kill ends the task.
  const TaskResult result =
      run_one(*backend, sh_task(1, "sleep 30 & echo $!; sleep 30", "", 2000ms));
  EXPECT_LT(seconds_since(start), 10.0);  // far below the 30 s either sleep would take
  EXPECT_EQ(result.status, TaskStatus::timeout);
  EXPECT_EQ(result.reason, "timed out after 2s");
  const pid_t grandchild = std::atoi(result.output_tail.c_str());
  ASSERT_GT(grandchild, 0) << result.output_tail;
  EXPECT_TRUE(becomes_dead(grandchild));
}

TEST_P(BackendContract, MissingObjective) {
  auto backend = make(1);
  const TaskResult result =
      run_one(*backend, sh_task(1, "echo 'flotilla-metric: time_s=1'", "gflops"));
  EXPECT_EQ(result.status, TaskStatus::failed);
  EXPECT_EQ(result.reason, "objective 'gflops' missing from output");
  EXPECT_EQ(result.metrics, (MetricList{{"time_s", 1}}));
  EXPECT_EQ(result.objective, std::nullopt);
}

// intent.objective = wall_time: the runner times the process (a wall_time it prints does not
// count), and only a task whose objective it is gets the metric.
TEST_P(BackendContract, WallTimeObjectiveIsTheRunnersMeasurement) {
  auto backend = make(1);
  const TaskResult timed = run_one(*backend, sh_task(1, "sleep 0.2; echo 'flotilla-metric: wall_time=99 x=1'", "wall_time"));
  ASSERT_EQ(timed.status, TaskStatus::ok) << timed.reason;
  ASSERT_EQ(timed.metrics.size(), 2u);
  EXPECT_EQ(timed.metrics[0], (std::pair<std::string, double>{"x", 1}));
  EXPECT_EQ(timed.metrics[1].first, "wall_time");
  EXPECT_GE(timed.metrics[1].second, 0.2);
  EXPECT_LT(timed.metrics[1].second, 2.0);
  EXPECT_EQ(timed.objective, timed.metrics[1].second);
  const TaskResult silent = run_one(*backend, sh_task(2, "true", "wall_time"));
  EXPECT_EQ(silent.status, TaskStatus::ok) << silent.reason;  // prints nothing, yet has its objective
  const TaskResult other = run_one(*backend, sh_task(3, "echo 'flotilla-metric: gflops=2'", "gflops"));
  EXPECT_EQ(other.metrics, (MetricList{{"gflops", 2}}));
}

TEST_P(BackendContract, GarbageOutputIsOrdinaryOutput) {
  auto backend = make(1);
  const TaskResult result =
      run_one(*backend,
              sh_task(1, R"(printf '\000\377\376{{{\n{"metrics": 5}\n'; head -c 3000 /dev/zero)"));
  EXPECT_EQ(result.status, TaskStatus::failed);
  EXPECT_EQ(result.reason, "output line 2: \"metrics\" is not an object");
  const TaskResult junk =
      run_one(*backend, sh_task(2, R"(printf '\000\377{x\n}}\n'; head -c 3000 /dev/zero)"));
  EXPECT_EQ(junk.status, TaskStatus::ok) << junk.reason;
  EXPECT_EQ(junk.output_tail.size(), kOutputTailBytes);
}

TEST_P(BackendContract, BadMetricLineFailsAnOtherwiseGoodRun) {
  auto backend = make(1);
  const TaskResult result = run_one(
      *backend,
      sh_task(1, "echo start; echo 'flotilla-metric: gflops=abc'; echo 'flotilla-metric: gflops=1'",
              "gflops"));
  EXPECT_EQ(result.status, TaskStatus::failed);
  EXPECT_EQ(result.reason, "output line 2: 'gflops=abc': value is not a number");
}

TEST_P(BackendContract, LargeOutputKeepsTheTail) {
  auto backend = make(1);
  const TaskResult result = run_one(
      *backend,
      sh_task(
          1,
          "head -c 1000000 /dev/zero | tr '\\0' x; echo; echo 'flotilla-metric: n=1'; echo END"));
  EXPECT_EQ(result.status, TaskStatus::ok) << result.reason;
  EXPECT_EQ(result.metrics, (MetricList{{"n", 1}}));
  ASSERT_EQ(result.output_tail.size(), kOutputTailBytes);
  EXPECT_TRUE(result.output_tail.ends_with("x\nflotilla-metric: n=1\nEND\n"));
}

TEST_P(BackendContract, ManyShortTasksComeBackExactlyOnce) {
  auto backend = make(4);
  std::vector<TaskSpec> tasks;
  for (std::uint64_t id = 1000; id < 1200; ++id)
    tasks.push_back(
        sh_task(id, id % 3 == 0 ? "exit 1" : "echo flotilla-metric: id=" + std::to_string(id)));
  backend->submit(tasks);
  const auto results = collect_results(*backend, tasks.size());
  ASSERT_EQ(results.size(), tasks.size());
  std::set<std::uint64_t> ids;
  for (const auto& result : results) {
    EXPECT_TRUE(ids.insert(result.id).second) << "returned twice: " << result.id;
    EXPECT_EQ(result.status, result.id % 3 == 0 ? TaskStatus::failed : TaskStatus::ok) << result.id;
    if (result.id % 3 != 0) {
      EXPECT_EQ(result.metrics, (MetricList{{"id", double(result.id)}}));
    }
  }
  EXPECT_EQ(ids.size(), tasks.size());
  EXPECT_EQ(*ids.begin(), 1000u);
  EXPECT_EQ(*ids.rbegin(), 1199u);
  EXPECT_TRUE(backend->collect(0ms).empty());
  EXPECT_EQ(backend->queued() + backend->running(), 0u);
}

// Largest number of [start, end] intervals that overlap at one instant.
std::size_t max_overlap(std::vector<std::pair<double, int>> events) {
  std::sort(events.begin(), events.end());  // at equal times the end (-1) sorts first
  std::size_t now = 0, most = 0;
  for (const auto& event : events) {
    now += event.second;
    most = std::max(most, now);
  }
  return most;
}

TEST_P(BackendContract, ConcurrencyNeverExceedsSlots) {
  ScratchDir dir;
  const std::string log = (dir.path() / "log").string();
  auto backend = make(3);
  std::vector<TaskSpec> tasks;
  for (std::uint64_t id = 0; id < 9; ++id)
    tasks.push_back(sh_task(id, "echo \"$(date +%s.%N) 1\" >> " + log +
                                    "; sleep 0.5; echo \"$(date +%s.%N) -1\" >> " + log));
  backend->submit(tasks);
  std::vector<TaskResult> results;
  const auto deadline = SteadyClock::now() + 60s;
  while (results.size() < tasks.size() && SteadyClock::now() < deadline) {
    EXPECT_LE(backend->running(), 3u);
    for (auto& result : backend->collect(200ms)) results.push_back(std::move(result));
  }
  ASSERT_EQ(results.size(), tasks.size());
  std::vector<std::pair<double, int>> inside, outside;  // as seen by the tasks / by the backend
  std::istringstream lines(read_file(log));
  for (std::pair<double, int> event; lines >> event.first >> event.second;) inside.push_back(event);
  for (const auto& result : results) {
    EXPECT_EQ(result.status, TaskStatus::ok) << result.reason;
    outside.emplace_back(result.start, 1);
    outside.emplace_back(result.end, -1);
  }
  ASSERT_EQ(inside.size(), 2 * tasks.size());
  EXPECT_LE(max_overlap(inside), 3u);
  EXPECT_GE(max_overlap(inside), 2u);  // it did run tasks side by side
  EXPECT_LE(max_overlap(outside), 3u);
}

TEST_P(BackendContract, CollectReturnsAsSoonAsOneTaskFinishes) {
  auto backend = make(2);
  backend->submit({sh_task(1, "sleep 0.2"), sh_task(2, "sleep 30")});
  const auto start = SteadyClock::now();
  std::vector<TaskResult> results;
  while (results.empty() && seconds_since(start) < 20) results = backend->collect(60s);
  EXPECT_LT(seconds_since(start), 10.0);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results.front().id, 1u);
  EXPECT_EQ(backend->running(), 1u);
  backend->cancel_all();
}

TEST_P(BackendContract, CollectWithNothingToDoReturnsAtOnce) {
  auto backend = make(1);
  const auto start = SteadyClock::now();
  EXPECT_TRUE(backend->collect(30s).empty());
  EXPECT_LT(seconds_since(start), 5.0);
}

TEST_P(BackendContract, CancelAllEndsRunningAndDropsQueued) {
  auto backend = make(2);
  std::vector<TaskSpec> tasks;
  for (std::uint64_t id = 1; id <= 5; ++id) tasks.push_back(sh_task(id, "sleep 30 & sleep 30"));
  backend->submit(tasks);
  EXPECT_TRUE(backend->collect(300ms).empty());
  EXPECT_EQ(backend->running(), 2u);
  EXPECT_EQ(backend->queued(), 3u);
  const auto start = SteadyClock::now();
  backend->cancel_all();
  EXPECT_EQ(backend->queued(), 3u);  // still counted until collect() returns them
  EXPECT_EQ(backend->running(), 2u);
  const auto results = collect_results(*backend, tasks.size(), 20s);
  EXPECT_LT(seconds_since(start), 10.0);
  EXPECT_EQ(backend->running() + backend->queued(), 0u);
  ASSERT_EQ(results.size(), tasks.size());
  std::set<std::uint64_t> ids;
  for (const auto& result : results) {
    ids.insert(result.id);
    EXPECT_EQ(result.status, TaskStatus::cancelled);
    EXPECT_EQ(result.reason, "cancelled");
  }
  EXPECT_EQ(ids.size(), tasks.size());
}

// The caller's natural loop (the scheduler's) must see tasks that failed to start and tasks
// that cancel_all() ended, even though neither is queued or running any more.
TEST_P(BackendContract, LoopingWhileQueuedOrRunningSeesEveryResult) {
  auto backend = make(2);
  std::vector<TaskSpec> tasks;
  for (std::uint64_t id = 0; id < 6; ++id)
    tasks.push_back(id % 2 ? argv_task(id, {"flotilla-no-such-command"}) : sh_task(id, "true"));
  backend->submit(tasks);
  std::set<std::uint64_t> ids;
  const auto deadline = SteadyClock::now() + 60s;
  while (backend->queued() + backend->running() > 0 && SteadyClock::now() < deadline)
    for (const auto& result : backend->collect(200ms)) EXPECT_TRUE(ids.insert(result.id).second);
  EXPECT_EQ(ids.size(), tasks.size());

  backend->submit({sh_task(10, "sleep 30"), sh_task(11, "sleep 30"), sh_task(12, "sleep 30")});
  backend->cancel_all();
  ids.clear();
  while (backend->queued() + backend->running() > 0 && SteadyClock::now() < deadline)
    for (const auto& result : backend->collect(200ms)) EXPECT_TRUE(ids.insert(result.id).second);
  EXPECT_EQ(ids, (std::set<std::uint64_t>{10, 11, 12}));
}

TEST_P(BackendContract, StdinIsEmpty) {
  auto backend = make(1);
  const TaskResult result = run_one(*backend, sh_task(1, "cat; echo done", "", 20s));
  EXPECT_EQ(result.status, TaskStatus::ok) << result.reason;
  EXPECT_EQ(result.output_tail, "done\n");
}

// jobs_test checks "local"; tests/worker compiles this file again for "mpi" (it needs mpirun).
#ifndef FLOTILLA_CONTRACT_BACKENDS
#define FLOTILLA_CONTRACT_BACKENDS "local"
#endif
INSTANTIATE_TEST_SUITE_P(Backends, BackendContract, ::testing::Values(FLOTILLA_CONTRACT_BACKENDS),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace flotilla::jobs::test

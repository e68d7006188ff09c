// ExecutorTest.cpp — a kernel variant run in-process by the worker gives the same trial result
// as the same flotilla-kernel command run as a process by the local backend.
#include <gtest/gtest.h>

#include "BackendTestUtil.h"
#include "Executor.h"
#include "flotilla/jobs/Manifest.h"
#include "flotilla/kernels/Runtime.h"

namespace flotilla::jobs::worker {
namespace {

using namespace std::chrono_literals;

// A kernel task the registry cannot run goes to the flotilla-kernel on PATH, as in a worker rank.
const bool g_path_set = [] {
  const char* path = std::getenv("PATH");
  ::setenv("PATH", (std::string(FLOTILLA_BIN_DIR) + ":" + (path ? path : "/usr/bin:/bin")).c_str(), 1);
  return true;
}();

// Kokkos may be initialised once per process: one Runtime for every test of this binary.
kernels::Runtime& kokkos() {
  static kernels::Runtime runtime;
  return runtime;
}

TaskSpec kernel_spec(std::uint64_t id, std::vector<std::string> args, std::string objective = "",
                     std::chrono::milliseconds timeout = 0ms) {
  TaskSpec spec;
  spec.id = id;
  spec.argv = {"flotilla-kernel"};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.objective = std::move(objective);
  spec.timeout = timeout;
  return spec;
}

struct Case {
  TaskSpec spec;
  bool deterministic;  // the output (and metric values) do not depend on timing
};

std::vector<Case> cases() {
  return {
      {kernel_spec(1, {"stencil", "--tile-x", "8", "--tile-y", "4", "--iters", "5", "--verify", "--shard", "1",
                       "--shards", "4"}),
       true},
      {kernel_spec(2, {"stencil", "--precision", "float", "--iters", "5", "--verify", "--shard", "0", "--shards", "2"}),
       true},
      {kernel_spec(3, {"stencil", "--tile-x", "0"}, "gflops"), true},
      {kernel_spec(4, {"stencil", "--unroll", "4", "--n", "1022"}), true},
      {kernel_spec(5, {"stencil", "--tile-z", "3"}), true},  // not a parameter: runs as a process
      {kernel_spec(6, {"stencil", "--device", "cuda", "--verify"}), true},
      {kernel_spec(7, {"sleep", "--us", "10"}, "time_s"), false},
      {kernel_spec(8, {"sleep"}, "gflops"), false},
      {kernel_spec(9, {"sleep", "--us", "400000"}, "time_s", 100ms), true},
      {kernel_spec(10, {"stencil", "--n", "64", "--iters", "2"}, "gflops"), false},
  };
}

TEST(Executor, InProcessKernelsMatchTheExecutable) {
  (void)kokkos();
  auto local = make_backend({.name = "local", .slots = 2});
  Executor executor(Placement{3, "here", "cpu"});
  const auto all = cases();
  std::vector<TaskSpec> specs;
  for (const auto& c : all) specs.push_back(c.spec);
  local->submit(specs);
  std::map<std::uint64_t, TaskResult> by_process;
  for (auto& r : test::collect_results(*local, all.size())) by_process[r.id] = std::move(r);
  ASSERT_EQ(by_process.size(), all.size());
  for (const auto& c : all) {
    const ManifestTask task = to_manifest_task(c.spec);
    EXPECT_TRUE(std::holds_alternative<KernelTask>(task.work)) << c.spec.id;
    const TaskResult in = executor.run(task);
    const TaskResult& out = by_process[c.spec.id];
    SCOPED_TRACE("task " + std::to_string(c.spec.id) + ": " + out.output_tail);
    EXPECT_EQ(in.id, c.spec.id);
    EXPECT_EQ(in.status, out.status);
    EXPECT_EQ(in.exit_code, out.exit_code);
    EXPECT_EQ(in.reason, out.reason);
    EXPECT_EQ(in.objective.has_value(), out.objective.has_value());
    ASSERT_EQ(in.metrics.size(), out.metrics.size());
    for (std::size_t m = 0; m < in.metrics.size(); ++m) EXPECT_EQ(in.metrics[m].first, out.metrics[m].first);
    if (c.deterministic) {
      EXPECT_EQ(in.output_tail, out.output_tail);
      EXPECT_EQ(in.metrics, out.metrics);
      EXPECT_EQ(in.objective, out.objective);
    }
    EXPECT_EQ(in.rank, 3);
    EXPECT_EQ(in.host, "here");
    EXPECT_EQ(in.device, "cpu");
  }
}

TEST(Executor, CommandsRunThroughTheLocalBackend) {
  Executor executor(Placement{1, "here", "cpu"});
  ManifestTask task{11, 2, CommandTask{{"/bin/sh", "-c", "echo flotilla-metric: x=4; exit 3"}, 0ms, {}, {}, "x"}};
  const TaskResult result = executor.run(task);
  EXPECT_EQ(result.id, 11u);
  EXPECT_EQ(result.attempt, 2);
  EXPECT_EQ(result.status, TaskStatus::failed);
  EXPECT_EQ(result.reason, "exit code 3");
  EXPECT_EQ(result.metrics, (MetricList{{"x", 4}}));
  EXPECT_EQ(result.rank, 1);
}

}  // namespace
}  // namespace flotilla::jobs::worker

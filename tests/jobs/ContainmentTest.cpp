// ContainmentTest.cpp — a task's descendants end with it even when they leave its process group
// and clear the environment tag (hostile input: `env -i setsid` outlived the campaign, unnamed).
// The same tests run twice (tests/jobs/CMakeLists.txt): with whatever containment the machine
// allows (a cgroup per task here), and with FLOTILLA_CONTAINMENT=subreaper.
#include <signal.h>
#include <sys/wait.h>

#include <fstream>
#include <thread>

#include "BackendTestUtil.h"
#include "process/Containment.h"

namespace flotilla::jobs::test {
namespace {

using namespace std::chrono_literals;

std::unique_ptr<Backend> local(unsigned slots) { return make_backend({.name = "local", .slots = slots}); }

// Whether the process runs (a zombie does not: it was killed and is waiting to be reaped).
bool runs(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  std::getline(stat, text);
  const auto close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && text[close + 2] != 'Z';
}

pid_t read_pid(const std::filesystem::path& file) {
  std::ifstream in(file);
  pid_t pid = 0;
  in >> pid;
  return pid;
}

TEST(Containment, SaysWhichIsInForce) {
  const auto text = describe_containment();
  std::printf("containment: %s\n", text.c_str());
  const char* forced = std::getenv("FLOTILLA_CONTAINMENT");
  if (forced && std::string_view(forced) == "subreaper") {
    EXPECT_EQ(containment(), ContainmentKind::subreaper);
    EXPECT_TRUE(text.starts_with("child subreaper (FLOTILLA_CONTAINMENT=subreaper)")) << text;
  } else {
    EXPECT_TRUE(text.starts_with(containment() == ContainmentKind::cgroup ? "cgroup v2 (" : "child subreaper (")) << text;
  }
}

TEST(Containment, ADescendantThatLeavesTheGroupAndClearsTheTagEndsWithTheTask) {
  ScratchDir dir;
  const auto pid_file = dir.path() / "escaped";
  auto backend = local(1);
  // env -i drops FLOTILLA_TASK and FLOTILLA_CAMPAIGN, setsid leaves the task's group and session.
  const auto result = run_one(
      *backend, sh_task(1, "env -i setsid sh -c 'echo $$ > " + pid_file.string() + ".tmp; mv " + pid_file.string() +
                               ".tmp " + pid_file.string() + "; exec sleep 300' </dev/null >/dev/null 2>&1 & "
                               "while [ ! -s " + pid_file.string() + " ]; do sleep 0.01; done; echo flotilla-metric: x=1"));
  EXPECT_EQ(result.status, TaskStatus::ok) << result.reason;
  const pid_t escaped = read_pid(pid_file);
  ASSERT_GT(escaped, 0);
  const bool alive = runs(escaped);
  if (alive) ::kill(escaped, SIGKILL);
  EXPECT_FALSE(alive) << "pid " << escaped << " outlived its task (" << describe_containment() << ")";
  // Named by its command at the moment it was ended: `sleep`, or still `sh` when the task ended
  // between the pid file's mv and the exec (seen under load).
  const auto left = "[flotilla: the task left 1 process (" + std::to_string(escaped);
  EXPECT_TRUE(result.output_tail.find(left + " sleep)") != std::string::npos ||
              result.output_tail.find(left + " sh)") != std::string::npos)
      << result.output_tail;
}

// A daemon a running task relies on is not killed because another task ended meanwhile.
TEST(Containment, AnotherTasksEndLeavesARunningTasksDaemonAlone) {
  ScratchDir dir;
  const auto pid_file = dir.path() / "daemon";
  auto backend = local(2);
  backend->submit({sh_task(1, "env -i setsid sh -c 'echo $$ > " + pid_file.string() + ".tmp; mv " +
                                  pid_file.string() + ".tmp " + pid_file.string() +
                                  "; exec sleep 300' </dev/null >/dev/null 2>&1 & sleep 3; "
                                  "kill -0 $(cat " + pid_file.string() + ") && echo flotilla-metric: alive=1")});
  const auto deadline = SteadyClock::now() + 10s;
  while (!std::filesystem::exists(pid_file) && SteadyClock::now() < deadline) std::this_thread::sleep_for(10ms);
  ASSERT_TRUE(std::filesystem::exists(pid_file));
  backend->submit({sh_task(2, "true")});  // ends while task 1 and its daemon run
  std::vector<TaskResult> results;
  while (results.size() < 2 && SteadyClock::now() < deadline + 20s)
    for (auto& r : backend->collect(100ms)) results.push_back(std::move(r));
  ASSERT_EQ(results.size(), 2u);
  for (const auto& r : results)
    if (r.id == 1) {
      EXPECT_EQ(r.metrics, (MetricList{{"alive", 1}})) << r.output_tail;
    }
  const pid_t daemon = read_pid(pid_file);
  EXPECT_FALSE(daemon > 0 && runs(daemon)) << "the daemon outlived task 1";
}

}  // namespace
}  // namespace flotilla::jobs::test

// LocalBackendTest.cpp — what only the local backend promises: PATH lookup with path_prepend,
// environment and working directory, exec errors as results, the registry, no leftover
// processes, and that a grandchild which leaves the group cannot hold a task open.
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cerrno>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <set>
#include <thread>

#include "BackendTestUtil.h"
#include "flotilla/jobs/Placement.h"

namespace flotilla::jobs::test {
namespace {

using namespace std::chrono_literals;

std::unique_ptr<Backend> local(unsigned slots, std::vector<std::filesystem::path> prepend = {}) {
  BackendOptions options;
  options.slots = slots;
  options.path_prepend = std::move(prepend);
  return make_backend(options);
}

void write_script(const std::filesystem::path& path, const std::string& body,
                  bool executable = true) {
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  ::chmod(path.c_str(), executable ? 0755 : 0644);
}

TEST(Registry, KnownAndUnknownNames) {
  EXPECT_EQ(backend_names(), (std::vector<std::string_view>{"local", "mpi", "slurm"}));
  EXPECT_EQ(local(3)->name(), "local");
  BackendOptions options;
  options.name = "x";
  try {
    make_backend(options);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& error) {
    EXPECT_STREQ(error.what(), "unknown backend 'x' (known: local, mpi, slurm)");
  }
}

TEST(LocalBackend, CommandNotFound) {
  auto backend = local(1);
  TaskSpec spec = argv_task(4, {"flotilla-no-such-command"});
  const TaskResult result = run_one(*backend, spec);
  EXPECT_EQ(result.id, 4u);
  EXPECT_EQ(result.status, TaskStatus::failed);
  EXPECT_EQ(result.reason, "cannot execute 'flotilla-no-such-command': No such file or directory");
  EXPECT_EQ(result.exit_code, 127);
  // With a '/' there is no PATH lookup: the error comes from execve in the child.
  spec.argv = {"/nonexistent/flotilla-tool", "--flag"};
  EXPECT_EQ(run_one(*backend, spec).reason,
            "cannot execute '/nonexistent/flotilla-tool': No such file or directory");
  EXPECT_EQ(backend->running(), 0u);
}

TEST(LocalBackend, NotExecutable) {
  ScratchDir dir;
  write_script(dir.path() / "tool", "exit 0", /*executable=*/false);
  auto backend = local(1);
  const TaskResult result = run_one(*backend, argv_task(1, {(dir.path() / "tool").string()}));
  EXPECT_EQ(result.reason,
            "cannot execute '" + (dir.path() / "tool").string() + "': Permission denied");
  EXPECT_EQ(result.exit_code, 126);
}

TEST(LocalBackend, PathPrependComesFirstAndIsExported) {
  ScratchDir dir;
  write_script(dir.path() / "true", "echo flotilla-metric: prepended=1; echo \"PATH=$PATH\"");
  auto backend = local(1, {dir.path()});
  const TaskResult result = run_one(*backend, argv_task(1, {"true"}, "prepended"));
  EXPECT_EQ(result.status, TaskStatus::ok) << result.reason;
  EXPECT_EQ(result.objective, 1);
  EXPECT_NE(result.output_tail.find("PATH=" + dir.path().string() + ":"), std::string::npos);
}

TEST(LocalBackend, EnvironmentAndWorkdir) {
  ScratchDir dir;
  auto backend = local(1);
  TaskSpec spec =
      sh_task(1, "echo \"flotilla-metric: x=$FLOTILLA_TEST_X\"; echo \"$HOME_LIKE\"; pwd");
  spec.env = {{"FLOTILLA_TEST_X", "42"}, {"HOME_LIKE", "a b; c"}};
  spec.workdir = dir.path();
  const TaskResult result = run_one(*backend, spec);
  EXPECT_EQ(result.status, TaskStatus::ok) << result.reason;
  EXPECT_EQ(result.metrics, (MetricList{{"x", 42}}));
  EXPECT_EQ(result.output_tail, "flotilla-metric: x=42\na b; c\n" + dir.path().string() + "\n");
}

TEST(LocalBackend, MissingWorkdir) {
  auto backend = local(1);
  TaskSpec spec = sh_task(1, "true");
  spec.workdir = "/nonexistent/flotilla-dir";
  EXPECT_EQ(run_one(*backend, spec).reason,
            "cannot change directory to '/nonexistent/flotilla-dir': No such file or directory");
}

// TaskSpec::fresh_dir: emptied by the process runner just before the task starts (a build job's
// folder on its node), made when missing; one that cannot be made fails the task, naming it.
TEST(LocalBackend, AFreshDirIsEmptiedBeforeTheTaskStarts) {
  ScratchDir dir;
  const auto fresh = dir.path() / "build" / "a1b2";
  std::filesystem::create_directories(fresh / "obj");
  std::ofstream(fresh / "obj" / "stale.o") << "left by a killed build\n";
  auto backend = local(1);
  TaskSpec spec = sh_task(1, "ls -A " + fresh.string() + "; touch " + (fresh / "new").string());
  spec.fresh_dir = fresh;
  TaskResult result = run_one(*backend, spec);
  EXPECT_EQ(result.status, TaskStatus::ok) << result.reason;
  EXPECT_EQ(result.output_tail, "");  // nothing left when it started
  EXPECT_TRUE(std::filesystem::exists(fresh / "new"));
  std::filesystem::remove_all(dir.path() / "build");
  spec.id = 2;
  result = run_one(*backend, spec);  // a folder that is not there yet is made
  EXPECT_EQ(result.status, TaskStatus::ok) << result.reason;
  EXPECT_TRUE(std::filesystem::exists(fresh / "new"));

  std::ofstream(dir.path() / "file") << "x";
  spec.id = 3;
  spec.fresh_dir = dir.path() / "file" / "sub";
  result = run_one(*backend, spec);
  EXPECT_EQ(result.status, TaskStatus::failed);
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.reason, "cannot empty the folder '" + spec.fresh_dir.string() + "': Not a directory");
}

TEST(LocalBackend, GrandchildThatLeavesTheGroupDoesNotHoldTheTask) {
  auto backend = local(1);
  const auto start = SteadyClock::now();
  // setsid puts the sleeper in a new session: the group kill misses it, and it keeps the pipe.
  const TaskResult result =
      run_one(*backend, sh_task(1, "setsid sleep 30 & echo $!; echo flotilla-metric: x=1"));
  EXPECT_LT(seconds_since(start), 10.0);
  EXPECT_EQ(result.status, TaskStatus::ok) << result.reason;
  EXPECT_EQ(result.metrics, (MetricList{{"x", 1}}));
  const pid_t escaped = std::atoi(result.output_tail.c_str());
  ASSERT_GT(escaped, 0);
  ::kill(escaped, SIGKILL);
}

TEST(LocalBackend, DestructorKillsRunningTasks) {
  ScratchDir dir;
  const auto pid_file = dir.path() / "pid";
  {
    auto backend = local(1);
    backend->submit({sh_task(1, "sleep 30 & echo $! > " + pid_file.string() + "; sleep 30")});
    const auto deadline = SteadyClock::now() + 10s;
    while (read_file(pid_file).empty() && SteadyClock::now() < deadline)
      (void)backend->collect(50ms);
  }
  const pid_t grandchild = std::atoi(read_file(pid_file).c_str());
  ASSERT_GT(grandchild, 0);
  EXPECT_TRUE(becomes_dead(grandchild));
}

std::size_t open_fds() {
  return std::distance(std::filesystem::directory_iterator("/proc/self/fd"),
                       std::filesystem::directory_iterator());
}

TEST(LocalBackend, LeavesNoFdsOrChildrenBehind) {
  const std::size_t fds_before = open_fds();
  {
    auto backend = local(3);
    std::vector<TaskSpec> tasks;
    for (std::uint64_t id = 0; id < 30; ++id)
      tasks.push_back(sh_task(id, id % 2 ? "exit 1" : "echo x"));
    tasks.push_back(argv_task(30, {"flotilla-no-such-command"}));
    tasks.push_back(argv_task(31, {"/nonexistent/tool"}));
    tasks.push_back(sh_task(32, "sleep 30", "", 200ms));
    backend->submit(tasks);
    EXPECT_EQ(collect_results(*backend, tasks.size()).size(), tasks.size());
    backend->submit({sh_task(40, "sleep 30"), sh_task(41, "sleep 30")});
    backend->cancel_all();
    EXPECT_EQ(backend->collect(0ms).size(), 2u);
    backend->submit({sh_task(50, "sleep 30")});  // left running for the destructor
  }
  EXPECT_EQ(open_fds(), fds_before);
  // No child left running. In subreaper mode (Containment.subreaper runs this test after others in
  // one process) orphans of earlier tests' tasks become this process's children, and a killed one
  // may still be on its way out under load: those are reaped here for a few seconds; a leaked
  // `sleep 30` would outlive the wait.
  int status = 0;
  pid_t child = 0;
  for (const auto until = SteadyClock::now() + 5s; SteadyClock::now() < until;) {
    child = ::waitpid(-1, &status, WNOHANG);
    if (child < 0) break;
    if (child == 0) std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(child, -1) << "a child still runs";
  EXPECT_EQ(errno, ECHILD);
}

// Exactly-once must survive running out of file descriptors, and a start the system refuses is
// not the task's failure (hostile input: after one task forked 10,000 processes, the next
// candidate's evaluation failed "cannot start 'true': Resource temporarily unavailable" and the
// candidate was rolled back): the task waits, is started again once the limit allows, and
// comes back once, ok.
TEST(LocalBackend, NoFileDescriptorsLeftIsRetriedNotFailed) {
  auto backend = local(1);
  // First calls through the Backend and std::error_category pointers while descriptors are left:
  // UBSan (FLOTILLA_SANITIZE builds) checks the dynamic type behind a virtual call the first time,
  // reading the vtable through a pipe, and caches the answer for the calls below.
  EXPECT_TRUE(backend->collect(0ms).empty());
  EXPECT_FALSE(std::generic_category().message(EMFILE).empty());
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved), 0);
  const int lowest_free = ::dup(0);
  ::close(lowest_free);
  rlimit tight = saved;
  tight.rlim_cur = static_cast<rlim_t>(lowest_free);  // no new fd can be opened
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &tight), 0);
  backend->submit({sh_task(1, "true")});
  auto results = backend->collect(0ms);
  const auto queued = backend->queued();
  const auto later = backend->collect(150ms);  // tried again, refused again
  ::setrlimit(RLIMIT_NOFILE, &saved);
  EXPECT_TRUE(results.empty());
  EXPECT_TRUE(later.empty());
  EXPECT_EQ(queued, 1u);
  const auto deadline = SteadyClock::now() + 30s;
  while (results.empty() && SteadyClock::now() < deadline) results = backend->collect(100ms);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results.front().status, TaskStatus::ok) << results.front().reason;
  EXPECT_EQ(backend->queued() + backend->running(), 0u);
  EXPECT_EQ(run_one(*backend, sh_task(2, "true")).status, TaskStatus::ok);
}

// A transient refusal is retried; a task the system cannot start for another reason still fails
// at once (a missing program is the task's own fault).
TEST(LocalBackend, OnlyTransientStartFailuresWait) {
  auto backend = local(1);
  backend->submit({argv_task(1, {"/nonexistent/program"})});
  const auto results = backend->collect(0ms);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results.front().status, TaskStatus::failed);
}

TEST(LocalBackend, ZeroSlotsMeansHardwareThreads) {
  auto backend = local(0);
  std::vector<TaskSpec> tasks;
  for (std::uint64_t id = 0; id < 64; ++id) tasks.push_back(sh_task(id, "sleep 5"));
  backend->submit(tasks);
  const std::size_t expected = std::max(1u, std::thread::hardware_concurrency());
  EXPECT_EQ(backend->running(), std::min(expected, tasks.size()));
  backend->cancel_all();
}

// Not a benchmark gate: prints the rate so regressions are visible in the test log.
TEST(LocalBackend, ThroughputOfEmptyTasks) {
  auto backend = local(2);
  constexpr std::uint64_t kTasks = 500;
  std::vector<TaskSpec> tasks;
  for (std::uint64_t id = 0; id < kTasks; ++id) tasks.push_back(argv_task(id, {"true"}));
  const auto start = SteadyClock::now();
  backend->submit(tasks);
  const auto results = collect_results(*backend, kTasks);
  const double elapsed = seconds_since(start);
  ASSERT_EQ(results.size(), kTasks);
  for (const auto& result : results) EXPECT_EQ(result.status, TaskStatus::ok) << result.reason;
  std::printf("[ rate     ] %llu x true on 2 slots: %.2f s, %.0f tasks/s\n",
              static_cast<unsigned long long>(kTasks), elapsed, kTasks / elapsed);
}

}  // namespace
}  // namespace flotilla::jobs::test

namespace flotilla::jobs::test {
namespace {

// The CPUs a task's own process may run on, as it prints them (Cpus_allowed_list).
std::string cpus_seen(const TaskResult& r) {
  const auto at = r.output_tail.find("Cpus_allowed_list:");
  if (at == std::string::npos) return "?";
  auto line = r.output_tail.substr(at + 18, r.output_tail.find('\n', at) - at - 18);
  line.erase(0, line.find_first_not_of(" \t"));
  return line;
}

TEST(SlotCpus, EqualBlocksOrRoundRobin) {
  const std::vector<int> four = {0, 1, 2, 3};
  EXPECT_EQ(slot_cpus(four, 0, 2), (std::vector<int>{0, 1}));
  EXPECT_EQ(slot_cpus(four, 1, 2), (std::vector<int>{2, 3}));
  EXPECT_EQ(slot_cpus(four, 0, 3), (std::vector<int>{0, 1}));  // 4 over 3: the first block is larger
  EXPECT_EQ(slot_cpus(four, 2, 3), (std::vector<int>{3}));
  EXPECT_EQ(slot_cpus({0, 1}, 3, 4), (std::vector<int>{1}));  // more slots than CPUs: round-robin
  EXPECT_TRUE(slot_cpus({}, 0, 2).empty());
  EXPECT_EQ(cpu_list_text({0, 1, 2, 5, 7, 8}), "0-2,5,7-8");
  EXPECT_EQ(cpu_list_text({}), "");
}

// Each slot's task runs on its slot's CPUs and says so in its result; with pinning off, tasks
// see every CPU and record none.
TEST(LocalBackend, SlotsArePinnedToTheirOwnCpus) {
  const auto cpus = allowed_cpus();
  ASSERT_FALSE(cpus.empty());
  auto backend = local(2);
  std::vector<TaskSpec> specs;
  for (std::uint64_t i = 0; i < 2; ++i) specs.push_back(sh_task(i, "grep Cpus_allowed_list /proc/self/status; sleep 0.3"));
  backend->submit(std::move(specs));
  const auto results = collect_results(*backend, 2);
  std::set<std::string> seen;
  for (const auto& r : results) {
    ASSERT_EQ(r.status, TaskStatus::ok) << r.reason;
    EXPECT_EQ(cpus_seen(r), r.cores);
    seen.insert(r.cores);
  }
  EXPECT_EQ(seen, (std::set<std::string>{cpu_list_text(slot_cpus(cpus, 0, 2)), cpu_list_text(slot_cpus(cpus, 1, 2))}));
  BackendOptions off;
  off.slots = 1;
  off.pin = false;
  auto unpinned = make_backend(off);
  const auto r = run_one(*unpinned, sh_task(9, "grep Cpus_allowed_list /proc/self/status"));
  EXPECT_EQ(r.cores, "");
  EXPECT_EQ(cpus_seen(r), cpu_list_text(cpus));
}

// An exclusive task starts only when nothing else runs, and nothing starts beside it.
TEST(LocalBackend, ExclusiveTasksRunAlone) {
  auto backend = local(2);
  const auto marks = std::filesystem::temp_directory_path() / ("flotilla-exclusive-" + std::to_string(::getpid()));
  std::filesystem::create_directories(marks);
  const auto task = [&](std::uint64_t id, bool exclusive) {
    auto spec = sh_task(id, "date +%s.%N > " + (marks / std::to_string(id)).string() + ".start; sleep 0.2; date +%s.%N > " +
                                (marks / std::to_string(id)).string() + ".end");
    spec.exclusive = exclusive;
    return spec;
  };
  backend->submit({task(0, false), task(1, false), task(2, true), task(3, false)});
  for (const auto& r : collect_results(*backend, 4)) ASSERT_EQ(r.status, TaskStatus::ok) << r.reason;
  const auto at = [&](std::uint64_t id, const char* what) {
    return std::stod(read_file(marks / (std::to_string(id) + "." + what)));
  };
  EXPECT_LT(at(0, "start"), at(1, "end"));   // 0 and 1 share the two slots
  EXPECT_LT(at(1, "start"), at(0, "end"));
  EXPECT_GE(at(2, "start"), std::max(at(0, "end"), at(1, "end")));  // 2 waits for both
  EXPECT_GE(at(3, "start"), at(2, "end"));   // and 3 waits for 2, though a slot was free
  std::filesystem::remove_all(marks);
}

}  // namespace
}  // namespace flotilla::jobs::test

namespace flotilla::jobs::test {
namespace {

// Descendants that leave the task's process group (setsid, a double fork) end with the task,
// and its result says what was killed.
TEST(LocalBackend, DescendantsThatLeaveTheGroupEndWithTheTask) {
  auto backend = local(1);
  // setsid: a session of its own; ( ... & ): a double fork whose middle process exits at once,
  // so init adopts the sleep. Each prints its pid.
  const auto r = run_one(*backend, sh_task(1, "setsid sleep 60 </dev/null >/dev/null 2>&1 & echo pid=$!; "
                                               "( sleep 60 </dev/null >/dev/null 2>&1 & echo pid=$! ); sleep 0.2"));
  ASSERT_EQ(r.status, TaskStatus::ok) << r.reason;
  std::vector<pid_t> pids;
  for (std::size_t at = r.output_tail.find("pid="); at != std::string::npos; at = r.output_tail.find("pid=", at + 4))
    pids.push_back(static_cast<pid_t>(std::stol(r.output_tail.substr(at + 4))));
  ASSERT_EQ(pids.size(), 2u) << r.output_tail;
  EXPECT_NE(r.output_tail.find("[flotilla: the task left "), std::string::npos) << r.output_tail;
  // Gone, or a zombie that init has not reaped yet: not running either way.
  const auto running = [](pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const auto close = text.rfind(')');
    return close != std::string::npos && close + 2 < text.size() && text[close + 2] != 'Z';
  };
  for (pid_t pid : pids) {
    for (int i = 0; i < 50 && running(pid); ++i) std::this_thread::sleep_for(20ms);
    EXPECT_FALSE(running(pid)) << "descendant " << pid << " outlived its task";
  }
}

// A campaign's tag marks every task's descendants, so a later scheduler ends what a killed one
// left (here: a process started with the tag, as an orphan of an earlier run would carry it).
TEST(LocalBackend, CampaignLeftoversAreFoundByTheirTag) {
  const std::string tag = "/tmp/flotilla-test-campaign-" + std::to_string(::getpid()) + ".h5";
  const std::string pid_file = tag + ".pid";
  ASSERT_EQ(std::system(("FLOTILLA_CAMPAIGN=" + tag + " setsid sleep 60 </dev/null >/dev/null 2>&1 & echo $! >" +
                         pid_file).c_str()), 0);
  // Until the process has become `sleep`: between its fork and its exec it carries the tag as `sh`
  // or `setsid`, and on a loaded machine it was found (and named) so (ctest -j2, 2026-12-04).
  pid_t pid = 0;
  std::ifstream(pid_file) >> pid;
  std::filesystem::remove(pid_file);
  const auto comm = [pid] {
    std::string name;
    std::ifstream("/proc/" + std::to_string(pid) + "/comm") >> name;
    return name;
  };
  for (int i = 0; i < 250 && pid > 0; ++i) {
    const auto name = comm();
    if (name == "sleep" || name.empty()) break;  // exec'd, or gone (then the loop below says so)
    std::this_thread::sleep_for(20ms);
  }
  std::string killed;
  for (int i = 0; i < 50 && killed.empty(); ++i) {
    std::this_thread::sleep_for(20ms);
    killed = kill_campaign_leftovers(tag);
  }
  EXPECT_NE(killed.find("1 process ("), std::string::npos) << killed;
  EXPECT_NE(killed.find(" sleep)"), std::string::npos) << killed;
  EXPECT_EQ(kill_campaign_leftovers(tag), "");  // it is dead, not only signalled
  EXPECT_EQ(kill_campaign_leftovers(""), "");
}

}  // namespace
}  // namespace flotilla::jobs::test

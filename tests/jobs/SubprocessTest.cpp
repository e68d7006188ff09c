// SubprocessTest.cpp — the one process runner (jobs/include/flotilla/jobs/Subprocess.h) with real
// children: capture, input, files, exit codes and signals, start errors, timeouts that end the
// whole process group, and the capture limit.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "flotilla/jobs/Subprocess.h"

namespace flotilla::jobs {
namespace {

using namespace std::chrono_literals;
using Output = SubprocessSpec::Output;

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::filesystem::path scratch(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("flotilla-subprocess-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir / name;
}

// Running, not a zombie: a killed grandchild is reparented to init, which here may not reap it.
bool running(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), {});
  const auto paren = stat.rfind(')');
  if (paren == std::string::npos || paren + 2 >= stat.size()) return false;
  const char state = stat[paren + 2];
  return state != 'Z' && state != 'X';
}

TEST(Subprocess, CapturesBothStreamsAndTheExitCode) {
  const auto r = run_subprocess({.argv = {"sh", "-c", "echo out; echo err >&2; exit 3"}});
  ASSERT_TRUE(r.started) << r.error;
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.describe(0ms), "exit code 3");
}

TEST(Subprocess, FeedsItsInputAndClosesIt) {
  std::string big(1 << 20, 'x');  // larger than a pipe: written while the output is read
  const auto r = run_subprocess({.argv = {"wc", "-c"}, .input = big});
  ASSERT_TRUE(r.ok()) << r.describe(0ms);
  EXPECT_EQ(std::stoul(r.out), big.size());
}

TEST(Subprocess, ANamedProgramThatDoesNotExistIsAStartError) {
  const auto r = run_subprocess({.argv = {"flotilla-no-such-program"}});
  EXPECT_FALSE(r.started);
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_EQ(r.error, "cannot execute 'flotilla-no-such-program': No such file or directory");
}

TEST(Subprocess, ASignalIsNamed) {
  const auto r = run_subprocess({.argv = {"sh", "-c", "kill -9 $$"}});
  ASSERT_TRUE(r.started);
  EXPECT_EQ(r.exit_code, 128 + SIGKILL);
  EXPECT_EQ(r.describe(0ms), "killed by signal 9 (SIGKILL)");
}

// A hung helper (squeue on a wedged slurmctld) is an error after its timeout, and what it
// started in its group ends with it: nothing holds the output pipe open afterwards.
TEST(Subprocess, ATimeoutEndsTheWholeGroup) {
  const auto marker = scratch("grandchild.pid");
  const auto start = std::chrono::steady_clock::now();
  const auto r = run_subprocess(
      {.argv = {"sh", "-c", "sleep 30 & echo $! > \"$0\"; wait", marker.string()}, .timeout = 300ms});
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.describe(300ms), "timed out after 300ms");
  EXPECT_LT(took, 10s);
  const pid_t grandchild = std::stoi(slurp(marker));
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(running(grandchild)) << "the sleep the helper started outlived its timeout";
}

// A child that closes its output and then hangs still counts against the timeout.
TEST(Subprocess, ATimeoutAppliesAfterTheOutputCloses) {
  const auto r = run_subprocess({.argv = {"sh", "-c", "exec >/dev/null 2>&1; sleep 30"}, .timeout = 200ms});
  EXPECT_TRUE(r.timed_out);
}

TEST(Subprocess, OutputToFilesAndAppends) {
  const auto out = scratch("out.txt"), err = scratch("err.txt");
  std::filesystem::remove(out);
  for (int i = 0; i < 2; ++i) {
    const auto r = run_subprocess({.argv = {"sh", "-c", "echo a; echo b >&2"},
                                   .stdout_to = Output::append,
                                   .stderr_to = Output::file,
                                   .stdout_file = out,
                                   .stderr_file = err});
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.out, "");
  }
  EXPECT_EQ(slurp(out), "a\na\n");
  EXPECT_EQ(slurp(err), "b\n");
}

TEST(Subprocess, StderrCanJoinStdout) {
  const auto r = run_subprocess({.argv = {"sh", "-c", "echo a; echo b >&2; echo c"}, .stderr_to = Output::to_stdout});
  EXPECT_EQ(r.out, "a\nb\nc\n");
  EXPECT_EQ(r.err, "");
}

TEST(Subprocess, TheCaptureIsBoundedAndSaysSo) {
  const auto r = run_subprocess({.argv = {"head", "-c", "100000", "/dev/zero"}, .capture_limit = 1000});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.out.substr(0, 1000), std::string(1000, '\0'));
  EXPECT_NE(r.out.find("[flotilla: output cut at 1000 bytes]"), std::string::npos);
}

// For output whose verdict is at its end (a checker's summary line): the last bytes are kept,
// and the note before them says how much was dropped.
TEST(Subprocess, TheTailCanBeKeptInstead) {
  const auto r = run_subprocess({.argv = {"sh", "-c", "head -c 300000 /dev/zero; echo; echo last line"},
                                 .capture_limit = 1000,
                                 .capture_tail = true});
  ASSERT_TRUE(r.ok());
  const std::string note = "[flotilla: output cut: the first 299011 bytes dropped, the last 1000 kept]\n";
  ASSERT_EQ(r.out.size(), note.size() + 1000);
  EXPECT_EQ(r.out.substr(0, note.size()), note);
  EXPECT_EQ(r.out.substr(note.size()), std::string(989, '\0') + "\nlast line\n");
}

TEST(Subprocess, EnvironmentAndWorkdir) {
  const auto dir = scratch("wd");
  std::filesystem::create_directories(dir);
  const auto r = run_subprocess({.argv = {"sh", "-c", "echo \"$FLOTILLA_TEST_VALUE\"; pwd"},
                                 .env = {{"FLOTILLA_TEST_VALUE", "v 1"}},
                                 .workdir = dir});
  EXPECT_EQ(r.out, "v 1\n" + std::filesystem::canonical(dir).string() + "\n");
}

TEST(Subprocess, PathPrependIsSearchedFirst) {
  const auto dir = scratch("bin");
  std::filesystem::create_directories(dir);
  const auto tool = dir / "flotilla-test-tool";
  std::ofstream(tool) << "#!/bin/sh\necho prepended\n";
  std::filesystem::permissions(tool, std::filesystem::perms::owner_all);
  const auto r = run_subprocess({.argv = {"flotilla-test-tool"}, .path_prepend = {dir}});
  ASSERT_TRUE(r.ok()) << r.describe(0ms);
  EXPECT_EQ(r.out, "prepended\n");
}

// A launcher of a job that must outlive flotilla: its own session, and what it leaves running
// is not killed when it exits.
TEST(Subprocess, OutlivesUsLeavesItsDescendantsRunning) {
  const auto marker = scratch("daemon.pid");
  const auto r = run_subprocess(
      {.argv = {"sh", "-c", "sleep 30 >/dev/null 2>&1 & echo $! > \"$0\"", marker.string()}, .outlives_us = true});
  ASSERT_TRUE(r.ok());
  const pid_t daemon = std::stoi(slurp(marker));
  EXPECT_TRUE(running(daemon)) << "the launcher's job ended with the launcher";
  EXPECT_EQ(::getsid(daemon), r.pid) << "not in a session of its own";
  ::kill(daemon, SIGKILL);
}

// Without outlives_us, leftovers in the child's group end when it does.
TEST(Subprocess, LeftoversInTheGroupEndWithIt) {
  const auto marker = scratch("left.pid");
  const auto r = run_subprocess({.argv = {"sh", "-c", "sleep 30 >/dev/null 2>&1 & echo $! > \"$0\"", marker.string()}});
  ASSERT_TRUE(r.ok());
  const pid_t left = std::stoi(slurp(marker));
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(running(left));
}

}  // namespace
}  // namespace flotilla::jobs

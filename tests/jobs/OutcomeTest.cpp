// OutcomeTest.cpp — the status rules of Task.h as pure functions (jobs/src/process/Outcome.h).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <csignal>

#include "process/Outcome.h"

namespace flotilla::jobs {
namespace {

using std::chrono::milliseconds;

// Wait statuses as waitpid() encodes them on Linux.
int exited(int code) { return code << 8; }
int signalled(int sig) { return sig; }

TEST(Outcome, OkWithObjective) {
  const MetricList metrics{{"time_s", 2}, {"gflops", 12.5}};
  const Outcome outcome = classify({exited(0)}, std::nullopt, metrics, "gflops");
  EXPECT_EQ(outcome.status, TaskStatus::ok);
  EXPECT_EQ(outcome.reason, "");
  EXPECT_EQ(outcome.objective, 12.5);
  EXPECT_EQ(classify({exited(0)}, std::nullopt, {}, "").objective, std::nullopt);
}

TEST(Outcome, Failures) {
  const MetricList metrics{{"gflops", 1}};
  auto reason = [&](ExitInfo exit, std::optional<std::string> error, std::string_view objective) {
    return classify(exit, error, metrics, objective).reason;
  };
  EXPECT_EQ(reason({exited(3)}, std::nullopt, ""), "exit code 3");
  EXPECT_EQ(reason({signalled(SIGSEGV)}, std::nullopt, ""), "killed by signal 11 (SIGSEGV)");
  EXPECT_EQ(reason({exited(0)}, "output line 2: 'x=y': value is not a number", "gflops"),
            "output line 2: 'x=y': value is not a number");
  EXPECT_EQ(reason({exited(0)}, std::nullopt, "time_s"), "objective 'time_s' missing from output");
  EXPECT_EQ(reason({exited(3)}, "metric error", "time_s"), "exit code 3");  // exit code first
  EXPECT_EQ(classify({signalled(SIGSEGV)}, std::nullopt, metrics, "").exit_code, 139);
  EXPECT_EQ(classify({exited(3)}, std::nullopt, metrics, "gflops").objective, std::nullopt);
}

TEST(Outcome, TimeoutAndCancel) {
  ExitInfo timed_out{signalled(SIGKILL), true, false, milliseconds(2000)};
  Outcome outcome = classify(timed_out, std::nullopt, {}, "");
  EXPECT_EQ(outcome.status, TaskStatus::timeout);
  EXPECT_EQ(outcome.reason, "timed out after 2s");
  EXPECT_EQ(outcome.exit_code, 137);
  // It exited by itself just as the timeout fired: its own result stands.
  ExitInfo raced{exited(0), true, false, milliseconds(2000)};
  EXPECT_EQ(classify(raced, std::nullopt, {}, "").status, TaskStatus::ok);
  ExitInfo cancelled{signalled(SIGKILL), false, true, {}};
  EXPECT_EQ(classify(cancelled, std::nullopt, {}, "").status, TaskStatus::cancelled);
  EXPECT_EQ(classify(cancelled, std::nullopt, {}, "").reason, "cancelled");
  EXPECT_EQ(classify(ExitInfo{}, std::nullopt, {}, "").reason,
            "exit status lost (the process was reaped elsewhere)");
}

TEST(Outcome, FormatDuration) {
  EXPECT_EQ(format_duration(milliseconds(0)), "0ms");
  EXPECT_EQ(format_duration(milliseconds(250)), "250ms");
  EXPECT_EQ(format_duration(milliseconds(1000)), "1s");
  EXPECT_EQ(format_duration(milliseconds(1500)), "1.5s");
  EXPECT_EQ(format_duration(milliseconds(1050)), "1.05s");
  EXPECT_EQ(format_duration(milliseconds(60'000)), "1m");
  EXPECT_EQ(format_duration(milliseconds(90'000)), "1m30s");
  EXPECT_EQ(format_duration(milliseconds(3'600'000)), "1h");
  EXPECT_EQ(format_duration(milliseconds(3'661'500)), "1h1m1.5s");
}

TEST(Outcome, DescribeSignal) {
  EXPECT_EQ(describe_signal(SIGKILL), "9 (SIGKILL)");
  EXPECT_EQ(describe_signal(SIGABRT), "6 (SIGABRT)");
}

TEST(TaskStatusNames, AreStable) {
  EXPECT_EQ(to_string(TaskStatus::ok), "ok");
  EXPECT_EQ(to_string(TaskStatus::failed), "failed");
  EXPECT_EQ(to_string(TaskStatus::timeout), "timeout");
  EXPECT_EQ(to_string(TaskStatus::cancelled), "cancelled");
}

}  // namespace
}  // namespace flotilla::jobs

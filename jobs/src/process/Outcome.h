// Outcome.h — how a finished process becomes a task status (internal to the local backend).
//
// Pure functions, so the rules in Task.h are tested without processes. Order of precedence:
// cancelled > timeout > signal > non-zero exit > metric protocol error > missing objective > ok.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "flotilla/jobs/Task.h"

namespace flotilla::jobs {

struct ExitInfo {
  std::optional<int> wait_status;  // from waitpid(); empty when the process was reaped elsewhere
  bool timed_out = false;          // we killed it because its timeout expired
  bool cancelled = false;          // we killed it in cancel_all()
  std::chrono::milliseconds timeout{0};
};

struct Outcome {
  TaskStatus status = TaskStatus::failed;
  int exit_code = 0;
  std::string reason;
  std::optional<double> objective;  // set only when status is ok
};

Outcome classify(const ExitInfo& exit, const std::optional<std::string>& metric_error,
                 const MetricList& metrics, std::string_view objective);

// "250ms", "2s", "1.5s", "1m30s", "2h5m" — for reasons people read.
std::string format_duration(std::chrono::milliseconds duration);

// "11 (SIGSEGV)"; just the number for signals without a name.
std::string describe_signal(int signal);

}  // namespace flotilla::jobs

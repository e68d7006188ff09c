// Outcome.cpp — the status rules of Task.h as pure functions of an exit and the parsed output.
#include "Outcome.h"

#include <sys/wait.h>

#include <algorithm>
#include <csignal>
#include <cstring>

namespace flotilla::jobs {
namespace {

int exit_code_of(int wait_status) {
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);  // the shell convention
  return WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 0;
}

bool killed_by_sigkill(int wait_status) {
  return WIFSIGNALED(wait_status) && WTERMSIG(wait_status) == SIGKILL;
}

std::optional<double> find_metric(const MetricList& metrics, std::string_view name) {
  const auto it = std::find_if(metrics.begin(), metrics.end(),
                               [&](const auto& entry) { return entry.first == name; });
  return it == metrics.end() ? std::nullopt : std::optional<double>(it->second);
}

Outcome failed(int exit_code, std::string reason) {
  return Outcome{TaskStatus::failed, exit_code, std::move(reason), std::nullopt};
}

}  // namespace

Outcome classify(const ExitInfo& exit, const std::optional<std::string>& metric_error,
                 const MetricList& metrics, std::string_view objective) {
  const int status = exit.wait_status.value_or(0);
  const int code = exit.wait_status ? exit_code_of(status) : 0;
  if (exit.cancelled) return Outcome{TaskStatus::cancelled, code, "cancelled", std::nullopt};
  // A process that exited on its own just as its timeout fired keeps its real result.
  if (exit.timed_out && killed_by_sigkill(status))
    return Outcome{TaskStatus::timeout, code, "timed out after " + format_duration(exit.timeout),
                   std::nullopt};
  if (!exit.wait_status) return failed(0, "exit status lost (the process was reaped elsewhere)");
  if (WIFSIGNALED(status))
    return failed(code, "killed by signal " + describe_signal(WTERMSIG(status)));
  if (code != 0) return failed(code, "exit code " + std::to_string(code));
  if (metric_error) return failed(0, *metric_error);
  std::optional<double> value;
  if (!objective.empty()) {
    value = find_metric(metrics, objective);
    if (!value) return failed(0, "objective '" + std::string(objective) + "' missing from output");
  }
  return Outcome{TaskStatus::ok, 0, "", value};
}

std::string format_duration(std::chrono::milliseconds duration) {
  const long long ms = duration.count();
  if (ms < 1000) return std::to_string(ms) + "ms";
  const auto seconds = [](long long part) {  // part < 60000 ms: "1.5s", "2s", "" for zero
    if (part == 0) return std::string();
    std::string text = std::to_string(part / 1000);
    if (part % 1000 != 0) {
      std::string fraction = std::to_string(1000 + part % 1000).substr(1);  // zero-padded
      fraction.erase(fraction.find_last_not_of('0') + 1);
      text += "." + fraction;
    }
    return text + "s";
  };
  const long long hours = ms / 3'600'000, minutes = ms / 60'000 % 60;
  return (hours ? std::to_string(hours) + "h" : "") +
         (minutes ? std::to_string(minutes) + "m" : "") + seconds(ms % 60'000);
}

std::string describe_signal(int signal) {
  const char* abbrev = ::sigabbrev_np(signal);  // glibc >= 2.32: "SEGV"
  if (abbrev == nullptr) return std::to_string(signal);
  return std::to_string(signal) + " (SIG" + abbrev + ")";
}

}  // namespace flotilla::jobs

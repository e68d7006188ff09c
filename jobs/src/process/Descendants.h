// Descendants.h — finding and ending the processes a task left behind (internal to jobs).
//
// A task is killed by its process group, but a descendant can leave the group (setsid, a
// double-forked daemon) and outlive the task, and one whose parent died is adopted by init.
// What it cannot easily shed is its environment: every local task is started with
// FLOTILLA_TASK=<token> (unique per task) and, when the caller names one, FLOTILLA_CAMPAIGN=<tag>,
// and its descendants inherit both. When a task ends, the processes that still carry its token
// are its leftovers; when a campaign starts (or resumes), processes that carry its tag are left
// by an earlier scheduler of the same campaign that was killed (only one scheduler writes a
// campaign: it holds the results file's lock). /proc/PID/environ is the environment a process
// was started with; a process that re-executed itself with a fresh environment escapes this,
// and the docs say so.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

namespace flotilla::jobs {

inline constexpr std::string_view kTaskTokenVariable = "FLOTILLA_TASK";
inline constexpr std::string_view kCampaignTagVariable = "FLOTILLA_CAMPAIGN";

struct Leftover {
  pid_t pid = 0;
  std::string command;  // /proc/PID/comm
};

// Processes (of any parent) whose environment has VARIABLE=VALUE, this process excluded.
// `spared_group`: a process group already signalled as a whole (the task's own): its members
// are dying with it, not leftovers that escaped it, so they are neither named nor counted.
std::vector<Leftover> processes_with(std::string_view variable, std::string_view value, pid_t spared_group = 0);

// SIGKILLs them, twice over (a process forking while being killed is caught by the second
// pass); returns what it killed.
std::vector<Leftover> kill_processes_with(std::string_view variable, std::string_view value, pid_t spared_group = 0);

// "2 processes (1234 sleep, 1240 daemon)".
std::string describe(const std::vector<Leftover>& killed);

}  // namespace flotilla::jobs

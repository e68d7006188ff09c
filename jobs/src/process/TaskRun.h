// TaskRun.h — one started task of the local backend: process, output, deadlines (internal).
//
// Lifecycle: running -> exited (leader reaped, rest of its group SIGKILLed) -> done (output at
// end-of-file, or its group gone, or a short grace period over: a grandchild that left the
// group while holding the pipe must not keep the task open). The owner polls output_fd() and
// exit_fd() and calls the on_* handlers; check() enforces the timeout and the grace period.
// Invariant: the group is signalled only while the leader is unreaped, so a recycled pid is never
// hit; a destroyed TaskRun leaves no process of its group behind.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "Containment.h"
#include "Descendants.h"
#include "Outcome.h"
#include "Process.h"
#include "flotilla/jobs/Metrics.h"
#include "flotilla/jobs/Task.h"

namespace flotilla::jobs {

class TaskRun {
 public:
  using Clock = std::chrono::steady_clock;

  // `cgroup`: the task's own (Containment.h), or null in subreaper mode.
  TaskRun(TaskSpec spec, SpawnedProcess process, std::unique_ptr<TaskCgroup> cgroup = nullptr);
  TaskRun(const TaskRun&) = delete;
  TaskRun& operator=(const TaskRun&) = delete;
  ~TaskRun();

  int output_fd() const { return m_process.output.get(); }               // -1 once closed
  int exit_fd() const { return m_reaped ? -1 : m_process.pidfd.get(); }  // -1: poll with check()
  void on_output();                                                      // reads what is available
  void on_exit_ready();                                                  // the pidfd is readable
  void check(Clock::time_point now);                    // timeout, exit without pidfd, grace period
  std::optional<Clock::time_point> next_check() const;  // when check() next has work to do
  bool done() const { return m_reaped && !m_process.output; }
  void cancel();              // kills the group and reaps it now, unless it has already exited
  TaskResult result() const;  // once done()
  const std::vector<Leftover>& leftovers() const { return m_leftovers; }  // killed when it ended

 private:
  void reap();
  void append_tail(std::string_view chunk);
  void close_output();

  TaskSpec m_spec;
  SpawnedProcess m_process;
  MetricCollector m_metrics;
  std::string m_tail;
  double m_start = 0;
  double m_end = 0;
  Clock::time_point m_started_at;               // the wall_time objective (Metrics.h) is measured on it
  std::optional<Clock::time_point> m_deadline;  // from spec.timeout
  Clock::time_point m_reaped_at{};
  bool m_reaped = false;
  ExitInfo m_exit;
  std::vector<Leftover> m_leftovers;
  std::unique_ptr<TaskCgroup> m_cgroup;
};

double epoch_seconds();

}  // namespace flotilla::jobs

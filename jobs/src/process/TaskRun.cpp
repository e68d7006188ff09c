// TaskRun.cpp — output, exit and deadlines of one local task (TaskRun.h).
#include "TaskRun.h"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>

#include "Descendants.h"

namespace flotilla::jobs {
namespace {

// After the leader exits and its group is killed, end-of-file normally follows within
// milliseconds; only a process that left the group can hold the pipe longer.
constexpr std::chrono::milliseconds kGrace{1000};
// How often to look again when there is no fd to wait on (no pidfd; group-gone check).
constexpr std::chrono::milliseconds kTick{20};
// Reads per on_output() call, so that one chatty task cannot starve the others.
constexpr int kReadsPerTurn = 8;

}  // namespace

double epoch_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

TaskRun::TaskRun(TaskSpec spec, SpawnedProcess process, std::unique_ptr<TaskCgroup> cgroup)
    : m_spec(std::move(spec)),
      m_process(std::move(process)),
      m_start(epoch_seconds()),
      m_started_at(m_process.started),
      m_cgroup(std::move(cgroup)) {
  if (m_spec.timeout.count() > 0) m_deadline = Clock::now() + m_spec.timeout;
  m_exit.timeout = m_spec.timeout;
}

TaskRun::~TaskRun() {
  if (!m_reaped) {
    kill_group(m_process.pid);
    if (m_cgroup) m_cgroup->kill_all(m_process.pid);
    wait_blocking(m_process.pid);
  }
}

void TaskRun::on_output() {
  std::array<char, 64 * 1024> buffer;
  for (int turn = 0; turn < kReadsPerTurn && m_process.output; ++turn) {
    const ssize_t n = ::read(m_process.output.get(), buffer.data(), buffer.size());
    if (n > 0) {
      const std::string_view chunk(buffer.data(), static_cast<std::size_t>(n));
      m_metrics.feed(chunk);
      append_tail(chunk);
    } else if (n < 0 && errno == EAGAIN) {
      return;
    } else if (n == 0 || errno != EINTR) {
      close_output();  // end-of-file: every writer is gone (or the pipe broke)
    }
  }
}

void TaskRun::append_tail(std::string_view chunk) {
  if (chunk.size() >= kOutputTailBytes) {
    m_tail.assign(chunk.substr(chunk.size() - kOutputTailBytes));
    return;
  }
  m_tail.append(chunk);
  if (m_tail.size() > 2 * kOutputTailBytes)  // trim in batches, not on every chunk
    m_tail.erase(0, m_tail.size() - kOutputTailBytes);
}

void TaskRun::close_output() {
  m_process.output.reset();
  m_metrics.finish();
}

void TaskRun::on_exit_ready() {
  if (!m_reaped && has_exited(m_process.pid)) reap();
}

void TaskRun::reap() {
  kill_group(m_process.pid);  // the leader is a zombie: its group id cannot have been reused
  // Descendants that left the group (setsid, a double-forked daemon) end with it, and the
  // result says what was killed: by the task's cgroup, or as orphans this subreaper adopted
  // (Containment.h); the environment token (Descendants.h) also finds those that re-parented
  // elsewhere and kept it.
  if (m_cgroup) {
    m_leftovers = m_cgroup->kill_all(m_process.pid);
  } else {
    for (const auto& [key, value] : m_spec.env)
      if (key == kTaskTokenVariable) m_leftovers = kill_processes_with(kTaskTokenVariable, value, m_process.pid);
    for (auto& orphan : kill_adopted_orphans()) m_leftovers.push_back(std::move(orphan));
  }
  const int status = wait_blocking(m_process.pid);
  if (status >= 0) m_exit.wait_status = status;  // else reaped elsewhere: classify() says so
  m_reaped = true;
  m_reaped_at = Clock::now();
  m_end = epoch_seconds();
  m_process.pidfd.reset();
}

void TaskRun::check(Clock::time_point now) {
  if (!m_reaped) {
    if (m_deadline && now >= *m_deadline && !m_exit.timed_out) {
      m_exit.timed_out = true;
      kill_group(m_process.pid);
    }
    if (!m_process.pidfd) on_exit_ready();
    return;
  }
  if (!m_process.output) return;
  if (!group_exists(m_process.pid) || now >= m_reaped_at + kGrace) {
    on_output();  // what is already in the pipe still counts
    close_output();
  }
}

std::optional<TaskRun::Clock::time_point> TaskRun::next_check() const {
  const auto now = Clock::now();
  if (m_reaped) return m_process.output ? std::optional(now + kTick) : std::nullopt;
  if (!m_process.pidfd) return now + kTick;
  if (m_deadline && !m_exit.timed_out) return *m_deadline;
  return std::nullopt;
}

void TaskRun::cancel() {
  if (!m_reaped) {
    m_exit.cancelled = true;
    reap();
  }
  if (m_process.output) close_output();
}

TaskResult TaskRun::result() const {
  TaskResult result;
  result.id = m_spec.id;
  result.start = m_start;
  result.end = m_end;
  // Reaped at once when the owner is in its poll (LocalBackend.h): the exit is seen within the poll's wake-up.
  const double seconds = std::chrono::duration<double>(m_reaped_at - m_started_at).count();
  auto metrics = with_wall_time(m_metrics.metrics(), m_spec.objective, seconds);
  Outcome outcome = classify(m_exit, m_metrics.error(), metrics, m_spec.objective);
  result.status = outcome.status;
  result.exit_code = outcome.exit_code;
  result.reason = std::move(outcome.reason);
  result.objective = outcome.objective;
  std::string tail = m_tail;
  if (!m_leftovers.empty()) tail += "\n[flotilla: the task left " + describe(m_leftovers) + " running: killed]\n";
  const std::size_t keep = std::min(tail.size(), kOutputTailBytes);
  result.output_tail = tail.substr(tail.size() - keep);
  result.metrics = std::move(metrics);
  result.attempt = m_spec.attempt;
  return result;
}

}  // namespace flotilla::jobs

// Process.h — starting one task process for the local backend (internal).
//
// The child is the leader of its own process group (so a timeout or cancel kills everything it
// started), dies with the scheduler (PR_SET_PDEATHSIG), reads /dev/null and writes stdout and
// stderr into one pipe. Everything the child needs is prepared before fork(), so that between
// fork and exec it makes only async-signal-safe calls (the scheduler may have other threads).
// Caveat: PR_SET_PDEATHSIG fires when the *thread* that forked exits, so drive a backend from a
// thread that lives as long as its tasks.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <variant>
#include <vector>

#include "Fd.h"
#include "flotilla/jobs/Task.h"

namespace flotilla::jobs {

struct SpawnedProcess {
  pid_t pid = -1;  // also the process group id
  Fd pidfd;        // readable once the process exits; empty where the kernel lacks pidfd_open
  Fd output;       // non-blocking read end of the stdout+stderr pipe
  std::chrono::steady_clock::time_point started{};  // just before the child was made (wall_time)
};

struct SpawnFailure {
  std::string reason;  // "cannot execute 'foo': No such file or directory"
  int exit_code = 127;
  // The system could not start a process now (EAGAIN, ENOMEM, EMFILE, ENFILE: another task's
  // processes exhausted a limit): the task itself is not at fault, and a later try may work.
  bool transient = false;
};

using SpawnResult = std::variant<SpawnedProcess, SpawnFailure>;

struct ExecPlan;  // Process.cpp: what the child needs, prepared before fork

// Descriptors a started child gets as stdin, stdout and stderr; -1: /dev/null.
struct ChildIo {
  int in = -1, out = -1, err = -1;
};

class Spawner {
 public:
  explicit Spawner(std::vector<std::filesystem::path> path_prepend);
  // The general form (Subprocess.h): the child's standard descriptors as given, dying with the
  // starting thread or not, in a process group or a session of its own (its pid is the group's).
  std::variant<pid_t, SpawnFailure> start(const TaskSpec& spec, ChildIo io, bool die_with_parent,
                                          bool new_session) const;
  // Returns once the child has exec'd or failed to: exec errors come back as a SpawnFailure.
  // A non-empty `cpus` pins the child (and what it starts) to those CPUs. A task is contained
  // (Containment.h): it joins `cgroup_procs` (a task cgroup's cgroup.procs, open for writing)
  // before exec, or without one becomes a child subreaper in subreaper mode. spec.fresh_dir is
  // emptied first; a folder that cannot be is a SpawnFailure (exit code 1).
  SpawnResult spawn(const TaskSpec& spec, const std::vector<int>& cpus = {}, int cgroup_procs = -1) const;

 private:
  std::string search_path(const TaskSpec& spec) const;
  SpawnResult fork_and_exec(const ExecPlan& plan, const TaskSpec& spec) const;
  std::vector<std::filesystem::path> m_path_prepend;
  Fd m_dev_null;
};

// SIGKILL to the whole group led by `pgid` (and to the leader itself, in case it has not yet
// become a group leader). Call it only while the leader is unreaped (running or a zombie): only
// then can its pid not have been reused by an unrelated process.
void kill_group(pid_t pgid);
// Whether any process (zombies included) is still in the group. Only signal 0 is sent.
bool group_exists(pid_t pgid);
// Whether the child has exited, without reaping it (so its pid and group id stay reserved).
bool has_exited(pid_t pid);
// Blocking waitpid that retries on EINTR; returns the wait status, or -1 if not our child.
int wait_blocking(pid_t pid);
// Whether this process started `pid` through a Spawner (or was told to keep it, keep_child) and
// has not reaped it: any other child is an orphan it adopted as a subreaper (Containment.h).
bool started_here(pid_t pid);
// A process this one adopted on purpose (the launcher of an allocated Slurm job, which outlives
// us): never taken for a task's orphan.
void keep_child(pid_t pid);

}  // namespace flotilla::jobs

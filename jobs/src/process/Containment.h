// Containment.h — every process a local task starts ends with the task, by construction (internal
// to jobs).
//
// A task is killed by its process group, but a descendant can leave the group (setsid, a
// double-forked daemon) and clear the environment tag flotilla puts on it (Descendants.h); it
// then outlived the campaign, unnamed. Two ways to hold on to such processes, the first the
// system allows:
//  - cgroup: each task runs in a cgroup v2 of its own, under this process's cgroup
//    (CGROUP/flotilla-PID/task-N). The child joins it before exec, so everything it starts is
//    inside; when the task ends, `cgroup.kill` (or SIGKILL to each member) ends them all and the
//    members that had left the task's process group are named. A killed scheduler's groups
//    (flotilla-PID of a PID that is gone) are emptied when its campaign runs again (a group's
//    name carries a hash of its campaign's tag: task-N-HASH).
//  - subreaper: this process is a child subreaper (PR_SET_CHILD_SUBREAPER), and so is each task
//    before it execs: a task's orphaned descendants are adopted by the task while it runs, and by
//    this process once it has ended. When a task ends, every child of this process that this
//    process did not start (Process.h, started_here) is such an orphan: killed, reaped and named.
//    After a SIGKILLed scheduler they go to init; the campaign tag (Descendants.h) still finds
//    them when the campaign is resumed.
// FLOTILLA_CONTAINMENT=cgroup|subreaper picks one (cgroup falls back to subreaper when it cannot
// be used); `describe_containment()` says which is in force and why.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "Descendants.h"
#include "Fd.h"

namespace flotilla::jobs {

enum class ContainmentKind { cgroup, subreaper };

// Decided once per process (the first call); thread-safe.
ContainmentKind containment();
// "cgroup v2 (/sys/fs/cgroup/unified/flotilla-1234)" or "child subreaper (no writable cgroup v2:
// ...)", for the run's provenance and the docs' claim that it is in force.
std::string describe_containment();

// Cgroup mode: kills what the tasks of campaign `tag` left in the groups of a killed scheduler
// (kill_campaign_leftovers) and returns it. Untagged groups of killed schedulers are emptied when
// containment is decided.
std::vector<Leftover> kill_dead_schedulers_tasks(std::string_view tag);

// One task's cgroup (cgroup mode). The child joins it by writing "0" to procs_fd() before exec.
class TaskCgroup {
 public:
  // nullopt when containment() is not cgroup, or this task's group cannot be made (the task
  // then runs with the subreaper rules).
  // `campaign_tag`: the campaign the task belongs to (BackendOptions::campaign_tag), or empty.
  static std::unique_ptr<TaskCgroup> create(std::string_view campaign_tag);
  ~TaskCgroup();
  TaskCgroup(const TaskCgroup&) = delete;
  TaskCgroup& operator=(const TaskCgroup&) = delete;

  int procs_fd() const { return m_procs.get(); }
  // Kills every member and waits (up to a second) until none is left; returns the members that
  // were not in `spared_group` (the task's own group, already killed whole).
  std::vector<Leftover> kill_all(pid_t spared_group);

 private:
  explicit TaskCgroup(std::filesystem::path dir, Fd procs) : m_dir(std::move(dir)), m_procs(std::move(procs)) {}
  std::filesystem::path m_dir;
  Fd m_procs;
};

// Subreaper mode: the children of this process that it did not start (orphans a task left when
// it ended), killed and reaped; exited ones are reaped. Returns the ones it killed.
std::vector<Leftover> kill_adopted_orphans();

}  // namespace flotilla::jobs

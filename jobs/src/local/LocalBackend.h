// LocalBackend.h — runs tasks as processes on this machine, at most `slots` at a time (internal;
// reached through make_backend("local")).
//
// Not thread-safe, and single-threaded by design: work happens only inside submit(), collect()
// and cancel_all(), so output is read and timeouts are enforced only while the caller is in
// collect(); between calls a task that fills its 64 KiB pipe simply blocks. Tasks die with the
// thread that started them (PR_SET_PDEATHSIG), so drive a backend from a long-lived thread.
// Slots: a task runs in a free slot, pinned (with `pin`) to that slot's own CPUs (slot_cpus over
// the CPUs this process may use), so two benchmarks never share a core; an exclusive task
// starts only when no other runs, and nothing starts beside it.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "process/Process.h"
#include "process/TaskRun.h"
#include "flotilla/jobs/Backend.h"
#include "flotilla/jobs/Placement.h"

namespace flotilla::jobs {

class LocalBackend final : public Backend {
 public:
  explicit LocalBackend(const BackendOptions& options);

  std::string_view name() const override { return "local"; }
  BackendCapabilities capabilities() const override {
    return {.tasks_per_host = m_slots, .tasks_per_host_setting = "resources.slots", .runs_exclusive_alone = true};
  }
  void submit(std::vector<TaskSpec> tasks) override;
  std::vector<TaskResult> collect(std::chrono::milliseconds wait) override;
  // Results not yet collected still count (Backend.h), as queued if they never started.
  std::size_t queued() const override { return m_queue.size() + m_waiting.size() + m_finished_unstarted; }
  std::size_t running() const override {
    return m_running.size() + m_finished.size() - m_finished_unstarted;
  }
  // The CPUs slot `slot` pins its tasks to; empty when pinning is off.
  const std::vector<int>& slot_cpus(unsigned slot) const { return m_slot_cpus.at(slot); }
  void cancel_all() override;

 private:
  struct Running {
    std::unique_ptr<TaskRun> run;
    unsigned slot;
    bool exclusive;
  };

  // A task the system could not start now (SpawnFailure::transient), and when to try again.
  struct Waiting {
    TaskSpec spec;
    TaskRun::Clock::time_point not_before, since;
    int tries = 0;
  };
  void start_queued();
  void wait_to_retry(TaskRun::Clock::time_point until);
  bool may_start(const TaskSpec& next) const;
  unsigned free_slot() const;
  void wait_for_events(TaskRun::Clock::time_point until);
  void move_done_to_finished();

  unsigned m_slots;
  std::vector<std::vector<int>> m_slot_cpus;  // per slot; empty vectors: not pinned
  std::vector<std::string> m_slot_text;       // per slot: cpu_list_text of its CPUs
  std::vector<bool> m_slot_busy;
  Placement m_placement;  // stamped on every result: rank 0, this host, its devices
  Spawner m_spawner;
  std::string m_campaign_tag;
  std::string m_token_prefix;   // "<pid>-<start ns>": no two backends' tokens meet
  std::uint64_t m_tasks = 0;
  std::function<void(std::string, std::string)> m_notice;
  std::deque<TaskSpec> m_queue;
  std::vector<Waiting> m_waiting;        // in the order they first failed to start
  std::vector<Running> m_running;
  std::vector<TaskResult> m_finished;    // done, not yet returned by collect()
  std::size_t m_finished_unstarted = 0;  // of those, cancelled before they started
};

std::unique_ptr<Backend> make_local_backend(const BackendOptions& options);

const std::vector<BackendSetting>& local_backend_settings();

}  // namespace flotilla::jobs

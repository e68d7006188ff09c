// LocalBackend.cpp — the local backend's event loop (LocalBackend.h).
//
// One poll() watches every running task's output pipe and pidfd, with a timeout set by the
// nearest task deadline or the caller's wait, so the loop sleeps until something happens.
// Invariants: at most `slots` processes run; each submitted task leaves exactly once, through
// m_finished; tasks start in submission order; a task that cannot even start never takes a slot;
// queued() + running() == submitted - returned by collect().
#include "LocalBackend.h"

#include <poll.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "process/Containment.h"
#include "process/Descendants.h"
#include <cerrno>
#include <thread>
#include <utility>

#include <fmt/format.h>

namespace flotilla::jobs {
namespace {

// A start the system refused (fork or pipe limits) is tried again after 50 ms, doubling up to
// 5 s, for a minute; then the task comes back lost, which the scheduler runs again as its next
// attempt: never a failure of the task itself.
constexpr std::chrono::milliseconds kFirstRetry{50}, kLongestRetry{5000};
constexpr std::chrono::seconds kRetryFor{60};

unsigned resolve_slots(unsigned requested) {
  if (requested > 0) return requested;
  return std::max(1u, std::thread::hardware_concurrency());
}

TaskResult failure_result(const TaskSpec& spec, const SpawnFailure& failure) {
  TaskResult result;
  result.id = spec.id;
  result.status = TaskStatus::failed;
  result.start = result.end = epoch_seconds();
  result.exit_code = failure.exit_code;
  result.reason = failure.reason;
  result.attempt = spec.attempt;
  return result;
}

TaskResult cancelled_result(const TaskSpec& spec) {
  TaskResult result;
  result.id = spec.id;
  result.status = TaskStatus::cancelled;
  result.start = result.end = epoch_seconds();
  result.reason = "cancelled";
  result.attempt = spec.attempt;
  return result;
}

}  // namespace

LocalBackend::LocalBackend(const BackendOptions& options)
    : m_slots(resolve_slots(options.slots)),
      m_slot_cpus(m_slots),
      m_slot_text(m_slots),
      m_slot_busy(m_slots, false),
      m_placement(local_placement()),
      m_spawner(options.path_prepend),
      m_campaign_tag(options.campaign_tag),
      m_token_prefix(std::to_string(::getpid()) + "-" +
                     std::to_string(std::chrono::steady_clock::now().time_since_epoch().count())),
      m_notice(options.notice) {
  // How tasks are contained is decided once, here, and not at the first start: a start may come
  // when the process is out of file descriptors, and detection reads /proc files (a misread
  // there would choose the weaker subreaper mode for the whole process).
  (void)describe_containment();
  const auto cpus = options.pin ? allowed_cpus() : std::vector<int>{};
  for (unsigned slot = 0; slot < m_slots && !cpus.empty(); ++slot) {
    m_slot_cpus[slot] = jobs::slot_cpus(cpus, slot, m_slots);
    m_slot_text[slot] = cpu_list_text(m_slot_cpus[slot]);
  }
}

void LocalBackend::submit(std::vector<TaskSpec> tasks) {
  for (auto& task : tasks) m_queue.push_back(std::move(task));
  start_queued();
}

// In submission order: an exclusive task waits until nothing runs, and while one runs nothing
// else starts (so the queue's order is kept, and the tasks behind it wait too).
bool LocalBackend::may_start(const TaskSpec& next) const {
  if (m_running.size() >= m_slots) return false;
  if (std::any_of(m_running.begin(), m_running.end(), [](const Running& r) { return r.exclusive; })) return false;
  return !next.exclusive || m_running.empty();
}

unsigned LocalBackend::free_slot() const {
  for (unsigned slot = 0; slot < m_slots; ++slot)
    if (!m_slot_busy[slot]) return slot;
  return 0;  // unreachable: may_start() saw fewer running tasks than slots
}

void LocalBackend::start_queued() {
  // Tasks due for another try go first: they were submitted before everything still queued.
  const auto now = TaskRun::Clock::now();
  for (auto it = m_waiting.rbegin(); it != m_waiting.rend(); ++it)
    if (it->not_before <= now) m_queue.push_front(std::move(it->spec));
  std::vector<Waiting> due;
  for (auto& w : m_waiting)
    if (w.not_before <= now) due.push_back(std::move(w));
  std::erase_if(m_waiting, [&](const Waiting& w) { return w.not_before <= now; });
  while (!m_queue.empty() && may_start(m_queue.front())) {
    TaskSpec spec = std::move(m_queue.front());
    m_queue.pop_front();
    Waiting earlier{};
    if (!due.empty() && due.front().spec.id == spec.id && due.front().spec.attempt == spec.attempt) {
      earlier = std::move(due.front());
      due.erase(due.begin());
    }
    const unsigned slot = free_slot();
    auto started = spec;  // what a retry needs is the spec without this try's tokens
    started.env.emplace_back(kTaskTokenVariable, m_token_prefix + "-" + std::to_string(++m_tasks));
    if (!m_campaign_tag.empty()) started.env.emplace_back(kCampaignTagVariable, m_campaign_tag);
    auto cgroup = TaskCgroup::create(m_campaign_tag);  // null in subreaper mode (Containment.h)
    auto spawned = m_spawner.spawn(started, m_slot_cpus[slot], cgroup ? cgroup->procs_fd() : -1);
    if (auto* failure = std::get_if<SpawnFailure>(&spawned)) {
      if (failure->transient) {
        const auto since = earlier.tries > 0 ? earlier.since : now;
        if (now - since < kRetryFor) {
          const auto delay = std::min(kLongestRetry, kFirstRetry * (1 << std::min(earlier.tries, 7)));
          m_waiting.push_back({std::move(spec), now + delay, since, earlier.tries + 1});
          break;  // the system is short of processes or files: the tasks behind this one wait too
        }
        auto lost = failure_result(spec, *failure);
        lost.status = TaskStatus::lost;
        lost.reason += fmt::format(" (the system refused {} starts over {:.0f} s: not the task's fault)",
                                   earlier.tries + 1, std::chrono::duration<double>(now - since).count());
        m_finished.push_back(std::move(lost));
        continue;
      }
      m_finished.push_back(failure_result(spec, *failure));
      continue;
    }
    spec = std::move(started);
    const bool exclusive = spec.exclusive;
    m_slot_busy[slot] = true;
    m_running.push_back(
        {std::make_unique<TaskRun>(std::move(spec), std::move(std::get<SpawnedProcess>(spawned)), std::move(cgroup)),
         slot, exclusive});
  }
}

std::vector<TaskResult> LocalBackend::collect(std::chrono::milliseconds wait) {
  const auto until = TaskRun::Clock::now() + wait;
  for (;;) {
    start_queued();
    // Nothing in flight: nothing more can finish, so do not sleep out the wait, unless a task
    // waits to be started again.
    if (m_running.empty()) {
      if (m_waiting.empty() || !m_finished.empty() || TaskRun::Clock::now() >= until) break;
      wait_to_retry(until);
      continue;
    }
    wait_for_events(m_finished.empty() ? until : TaskRun::Clock::now());
    move_done_to_finished();
    start_queued();  // refill freed slots before returning, so they do not idle until next call
    if (!m_finished.empty() || TaskRun::Clock::now() >= until) break;
  }
  m_finished_unstarted = 0;
  for (auto& result : m_finished) {
    result.rank = m_placement.rank;
    result.host = m_placement.host;
    result.device = m_placement.device;
    result.slurm_job = m_placement.slurm_job;  // flotilla run inside an allocation
  }
  return std::exchange(m_finished, {});
}

void LocalBackend::wait_to_retry(TaskRun::Clock::time_point until) {
  auto next = until;
  for (const auto& w : m_waiting) next = std::min(next, w.not_before);
  std::this_thread::sleep_until(next);
}

void LocalBackend::wait_for_events(TaskRun::Clock::time_point until) {
  std::vector<pollfd> fds;
  std::vector<std::pair<TaskRun*, bool>> owners;  // (task, is the exit fd)
  for (const auto& [run, slot, exclusive] : m_running) {
    if (run->output_fd() >= 0) {
      fds.push_back({run->output_fd(), POLLIN, 0});
      owners.emplace_back(run.get(), false);
    }
    if (run->exit_fd() >= 0) {
      fds.push_back({run->exit_fd(), POLLIN, 0});
      owners.emplace_back(run.get(), true);
    }
    if (auto next = run->next_check()) until = std::min(until, *next);
  }
  for (const auto& w : m_waiting) until = std::min(until, w.not_before);
  const auto timeout = std::chrono::ceil<std::chrono::milliseconds>(until - TaskRun::Clock::now());
  const int ready =
      ::poll(fds.data(), fds.size(), static_cast<int>(std::max<long long>(0, timeout.count())));
  for (std::size_t i = 0; ready > 0 && i < fds.size(); ++i) {
    if (fds[i].revents == 0) continue;
    if (owners[i].second)
      owners[i].first->on_exit_ready();
    else
      owners[i].first->on_output();
  }
  const auto now = TaskRun::Clock::now();
  for (const auto& running : m_running) running.run->check(now);
}

void LocalBackend::move_done_to_finished() {
  auto done = std::stable_partition(m_running.begin(), m_running.end(),
                                    [](const Running& r) { return !r.run->done(); });
  for (auto it = done; it != m_running.end(); ++it) {
    m_finished.push_back(it->run->result());
    if (!it->run->leftovers().empty() && m_notice)
      m_notice("task_leftovers_killed", "a task left " + describe(it->run->leftovers()) + " running when it ended: killed");
    m_finished.back().cores = m_slot_text[it->slot];
    m_slot_busy[it->slot] = false;
  }
  m_running.erase(done, m_running.end());
}

void LocalBackend::cancel_all() {
  for (const auto& spec : m_queue) m_finished.push_back(cancelled_result(spec));
  for (const auto& w : m_waiting) m_finished.push_back(cancelled_result(w.spec));
  m_finished_unstarted += m_queue.size() + m_waiting.size();
  m_queue.clear();
  m_waiting.clear();
  for (const auto& running : m_running) running.run->cancel();
  move_done_to_finished();
}

std::string kill_campaign_leftovers(const std::string& tag) {
  // The task groups a killed scheduler of this campaign left; the tag in the environment finds
  // those that re-parented elsewhere (subreaper mode, or an older flotilla's).
  auto killed = kill_dead_schedulers_tasks(tag);
  if (!tag.empty())
    for (auto& leftover : kill_processes_with(kCampaignTagVariable, tag)) killed.push_back(std::move(leftover));
  return killed.empty() ? std::string() : describe(killed);
}

std::string task_containment() { return describe_containment(); }

std::unique_ptr<Backend> make_local_backend(const BackendOptions& options) {
  return std::make_unique<LocalBackend>(options);
}

// The settings of backend "local" (slots and pinning), declared here and registered with it (Backend.cpp):
// the scheduler's one option table takes them for the INI reader, the command line and --help.
const std::vector<BackendSetting>& local_backend_settings() {
  static const std::vector<BackendSetting> settings = {
      {"resources.slots", "0", "concurrent tasks on the local backend (0 = number of cores)"},
      {"resources.pin", "true",
       "local backend: pin each slot's tasks to its own CPUs (sched_setaffinity); recorded per trial"},
  };
  return settings;
}

}  // namespace flotilla::jobs

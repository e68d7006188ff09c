// SlurmBackendImpl.h — the Slurm backend's class, shared by the files that implement it by
// concern (the split keeps each under ~400 lines):
//   SlurmBackend.cpp  the Backend interface: submit, collect, counts, detach, cancel; results in
//   SlurmSubmit.cpp   job folders, requests, submission, allocation at once and its launcher
//   SlurmPoll.cpp     queries, streaming results of running jobs, ends, lost launchers
//   SlurmRestart.cpp  what a restarted scheduler finds in jobs_dir: re-attach or take results
// Each job's phase (JobPhase.h) changes only through advance(), which journals it.
#pragma once

#include <unistd.h>

#include <chrono>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "flotilla/jobs/JobPhase.h"
#include "flotilla/jobs/Slurm.h"
#include "flotilla/results/JobFile.h"
#include "SlurmBackend.h"
#include "SlurmClients.h"

namespace flotilla::jobs::slurm_backend {

using Clock = std::chrono::steady_clock;
constexpr auto kPollInterval = std::chrono::milliseconds(250);  // Slurm queries
constexpr auto kReadInterval = std::chrono::milliseconds(50);   // open results files of running jobs
constexpr auto kSoonPollInterval = std::chrono::milliseconds(50);  // queries while a job waits on one
// slurm_start = allocate: how long a job may wait for the campaign's own allocations that are
// ending (every task reported, the launcher releasing) to free their nodes, after one refusal;
// and how long no allocation is tried after a refusal that was not ours (each refused request
// leaves a FAILED job record in Slurm).
constexpr auto kOwnAllocationWait = std::chrono::seconds(2);
constexpr auto kAllocatePause = std::chrono::seconds(10);

inline double epoch_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

inline std::filesystem::path find_program(const std::vector<std::filesystem::path>& dirs, const std::string& name) {
  for (const auto& dir : dirs)
    if (std::filesystem::exists(dir / name)) return std::filesystem::absolute(dir / name);
  return name;  // on PATH (the compute nodes' PATH, for flotilla-worker)
}

struct Job {
  std::uint32_t slurm_id = 0;      // 0 while written and not submitted
  JobPhase phase = JobPhase::written;  // changed only by SlurmBackend::advance, which journals it
  std::string name;
  std::string resources;           // TaskSpec::resources of its tasks
  std::filesystem::path dir;
  std::vector<std::uint64_t> tasks;
  std::string after;               // TaskSpec::after of its tasks
  std::string array;               // array indices ("0-2,5"); empty: a plain job
  Clock::time_point next_try{};    // back-off after a submit-limit rejection
  int tries = 0;
  std::map<std::filesystem::path, results::JobFileReader> readers;  // results files being written
  bool allocated = false;          // allocated at once, run by a launcher (DIR/launcher, DIR/launcher.lock)
  Clock::time_point created = Clock::now();
  bool waits_for_own = false;      // refused once while the campaign's own allocations were ending
  std::string pending_reason;      // Slurm's reason at the last query that saw it pending
};

// "pid PID on HOST" from DIR/launcher, for messages.
inline std::string launcher_text(const std::filesystem::path& dir) {
  std::ifstream in(dir / "launcher");
  std::string host, pid;
  return in >> host >> pid ? fmt::format("pid {} on {}", pid, host) : std::string("unknown");
}

// How a job ended, from the states of its records (an array has one per element, and one for
// the elements still pending): nullopt while any is pending or running.
inline std::optional<JobState> ended_state(const std::vector<const JobStatus*>& records) {
  if (records.empty()) return JobState::unknown;  // vanished from the queue
  JobState worst = JobState::completed;
  for (const auto* s : records) {
    if (!is_terminal(s->state)) return std::nullopt;
    if (s->state != JobState::completed && worst == JobState::completed) worst = s->state;
  }
  return worst;
}

class SlurmBackend final : public Backend {
 public:
  explicit SlurmBackend(const BackendOptions& o);
  // Jobs outlive the scheduler (a restart re-attaches through their folders): nothing is
  // cancelled here, and no Slurm call can throw from a destructor.
  ~SlurmBackend() override = default;

  std::string_view name() const override { return "slurm"; }
  BackendCapabilities capabilities() const override { return {.dependencies = true, .outlives_scheduler = true}; }
  std::size_t detach() override;
  void submit(std::vector<TaskSpec> tasks) override;
  std::vector<TaskResult> collect(std::chrono::milliseconds wait) override;
  std::size_t queued() const override;
  std::size_t running() const override { return count_tasks(true); }
  void cancel_all() override;
  std::optional<JobsOverview> jobs_overview() const override;

 private:
  std::size_t count_tasks(bool running) const;
  const SlurmShape& shape_of(const std::string& resources) const;
  std::uint32_t max_array_size();
  void make_jobs();
  void add_job(const std::string& resources, const std::vector<std::uint64_t>& ids, const ArrayPiece* piece);
  JobRequest request_for(const Job& job, const std::string& dependency) const;
  void submit_waiting();
  std::optional<std::string> dependency_of(const Job& job) const;
  std::size_t count_user_queued();
  void hold_existing(const std::vector<std::uint64_t>& ids) const;
  void try_submit(Job& job, const std::string& dependency);
  void defer_for_own(Job& job);
  bool launch(Job& job, JobRequest request, std::uint32_t id);
  std::set<std::uint32_t> gone_launchers() const;
  void notify(std::string kind, std::string message) const;
  std::map<std::uint32_t, std::vector<JobStatus>> query_jobs(const std::vector<std::uint32_t>& ids);
  static std::vector<const JobStatus*> pointers(const std::vector<JobStatus>& records);
  void poll();
  void watch_released(std::map<std::uint32_t, std::vector<JobStatus>>& records, const std::set<std::uint32_t>& gone);
  void read_running();
  void retire_reported();
  void read_new_results(Job& job);
  void take(TaskResult r);
  void scan_earlier_jobs();
  void check_sbatch_environment() const;
  bool abandoned_allocation(const std::filesystem::path& dir);
  std::map<std::string, std::uint32_t> submitted_by_hand();
  bool take_earlier_result(TaskSpec& spec);
  JobPhase replayed_phase(const std::filesystem::path& dir);
  void finish(const Job& job, const std::string& reason, TaskStatus status);
  // The job's next phase after `event` (JobPhase.h's next(): an illegal event is a bug and
  // throws), appended to DIR/events when it changes the phase or says something new. A journal
  // that cannot be written (a full disk) is said once as a notice: the folder's markers still
  // tell a restarted scheduler what it needs.
  void advance(Job& job, JobEvent event, std::string_view detail = {});
  void journal(const std::filesystem::path& dir, JobEvent event, JobPhase after, std::string_view detail);

  SlurmResources m_r;
  std::function<void(std::string, std::string)> m_notice;
  std::unique_ptr<SlurmClient> m_client;
  std::filesystem::path m_worker;
  std::filesystem::path m_flotilla;  // runs allocated jobs' scripts (`flotilla run-allocation`)
  std::map<std::uint64_t, TaskSpec> m_pending;  // submitted, no result returned yet
  std::vector<Job> m_jobs;
  std::deque<TaskResult> m_ready;
  std::map<std::uint64_t, TaskResult> m_earlier_results;   // from finished jobs of an earlier run
  std::map<std::uint64_t, std::uint32_t> m_adoptable;      // task -> still active job of an earlier run
  std::map<std::uint32_t, Job> m_earlier_jobs;
  std::map<std::uint64_t, int> m_next_attempt;             // task -> attempt after an ended earlier job's
  std::map<std::string, std::vector<std::uint64_t>> m_unsent;              // resources -> tasks for the next job
  std::map<std::filesystem::path, std::set<std::uint64_t>> m_unsubmitted;  // folders `flotilla sbatch` wrote
  std::uint32_t m_max_array_size = 0;                                      // 0: not asked yet
  std::map<std::uint32_t, std::filesystem::path> m_watched;  // retired allocated jobs, until seen ended
  bool m_journal_failed = false;                             // said once
  Clock::time_point m_allocate_pause{};                      // no allocation tried before this
  bool m_poll_soon = false;                                  // a job waits for the next query
  Clock::time_point m_last_poll{};
  Clock::time_point m_last_read{};
  int m_counter = 0;
};

}  // namespace flotilla::jobs::slurm_backend

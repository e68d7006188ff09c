// Job.h — one Slurm job as the Slurm backend follows it, and what its parts share: the clock and
// the intervals of the polling rules (SlurmBackend.h), the notice callback, and how a job's
// Slurm records say it ended.
//
// Invariants: a Job's phase changes only through JobJournal::advance (JobPhase.h's next(), then
// a line in DIR/events); slurm_id is 0 exactly while the job is written and not in Slurm.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "flotilla/jobs/JobPhase.h"
#include "flotilla/jobs/Slurm.h"
#include "flotilla/results/JobFile.h"

namespace flotilla::jobs::slurm {

using Clock = std::chrono::steady_clock;
// Slurm queries are at most every SlurmResources::poll_interval (resources.slurm_poll, 2 s).
constexpr auto kScanInterval = std::chrono::milliseconds(250);     // job folders: started jobs, new results files
constexpr auto kReadInterval = std::chrono::milliseconds(50);      // open results files of running jobs
constexpr auto kSoonPollInterval = std::chrono::milliseconds(50);  // queries while a job waits on one

// What the user should hear that is not a task's result (BackendOptions::notice); may be empty.
class Notice {
 public:
  explicit Notice(std::function<void(std::string, std::string)> sink) : m_sink(std::move(sink)) {}
  void operator()(std::string kind, std::string message) const {
    if (m_sink) m_sink(std::move(kind), std::move(message));
  }
  explicit operator bool() const { return static_cast<bool>(m_sink); }

 private:
  std::function<void(std::string, std::string)> m_sink;
};

struct Job {
  std::uint32_t slurm_id = 0;          // 0 while written and not submitted
  JobPhase phase = JobPhase::written;  // changed only by JobJournal::advance, which journals it
  std::string name;
  std::string resources;  // TaskSpec::resources of its tasks
  std::filesystem::path dir;
  std::vector<std::uint64_t> tasks;
  std::string after;             // TaskSpec::after of its tasks
  std::string array;             // array indices ("0-2,5"); empty: a plain job
  Clock::time_point next_try{};  // back-off after a submit-limit rejection
  int tries = 0;
  std::map<std::filesystem::path, results::JobFileReader> readers;  // results files being written
  // An array's results-E.h5 -> the tasks of element E (made by the Submitter; empty for a job
  // found on restart). A file whose tasks have all reported is closed and not opened again: an
  // open reader costs some 0.6 MiB, and a 1,000-element array kept 670 MiB open to its end.
  std::map<std::filesystem::path, std::vector<std::uint64_t>> file_tasks;
  std::set<std::filesystem::path> done_files;
  bool allocated = false;  // allocated at once, run by a launcher (DIR/launcher, DIR/launcher.lock)
  Clock::time_point created = Clock::now();
  bool waits_for_own = false;  // refused once while the campaign's own allocations were ending
  std::string pending_reason;  // Slurm's reason at the last query that saw it pending
  std::string told_reason;     // the last pending reason the Poller looked into (each is said once)
};

double epoch_seconds();

// "pid PID on HOST" from DIR/launcher (written by the launcher itself), for messages.
std::string launcher_text(const std::filesystem::path& dir);

// How a job ended, from the states of its records (an array has one per element, and one for
// the elements still pending): nullopt while any is pending or running; unknown when it has no
// record (it vanished from the queue).
std::optional<JobState> ended_state(const std::vector<JobStatus>& records);

// The records of the given jobs in one query, keyed by job id (an array's elements by the
// array's id); a job Slurm no longer knows has none.
std::map<std::uint32_t, std::vector<JobStatus>> query_records(SlurmClient& client,
                                                              const std::vector<std::uint32_t>& ids);

}  // namespace flotilla::jobs::slurm

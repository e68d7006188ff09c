// Poller.h — following the Slurm backend's submitted jobs: one query per poll for every active
// job, results streamed from running jobs' files between queries, ended jobs' unreported tasks
// given back as lost, jobs whose every task reported retired, and allocations whose launcher is
// gone cancelled.
//
// Invariants:
//  - One query for all jobs per poll, at most every poll interval (resources.slurm_poll, 2 s by
//    default; kSoonPollInterval while a job waits for one), whatever the number of jobs: Slurm's
//    calls per minute do not grow with a campaign. Between two polls no Slurm call is made: the
//    job folders are scanned every kScanInterval (a queued job whose script wrote slurm_job_id has
//    started; a running job's new results files are opened), and the open results files are read
//    again every kReadInterval. So results and job starts are seen as soon as with a 250 ms poll,
//    and only what Slurm alone knows (a job that failed, vanished or waits for a reason) waits
//    for the next poll.
//  - A job Slurm holds PENDING for breaking a limit of its partition (MaxNodes, MaxTime, more
//    nodes than it has; Slurm queues such jobs unless EnforcePartLimits is set) is cancelled and
//    the campaign stops, naming the limit and the setting (PartitionAdvice.h): it would never
//    start. A partition that is down is waited for, said once.
//  - A job whose every task has come back is dropped at once (retired), never cancelled; an
//    allocated one is still watched until Slurm sees it end, and cancelled if its launcher dies
//    first (nothing else would end it before its time limit).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <vector>

#include "Job.h"
#include "JobJournal.h"
#include "SlurmResources.h"
#include "TaskLedger.h"

namespace flotilla::jobs::slurm {

class Poller {
 public:
  Poller(SlurmClient& client, TaskLedger& ledger, JobJournal& journal, Notice notice, const SlurmResources& settings)
      : m_client(client), m_ledger(ledger), m_journal(journal), m_notice(std::move(notice)), m_settings(settings) {}

  // A poll when one is due, else a scan of the job folders when one is due, else a read of the
  // open results files when one is due.
  void follow();
  void poll();
  // Without a Slurm call: queued jobs whose script has started (DIR/slurm_job_id) are running,
  // and running jobs' new results files are opened and read.
  void scan();
  // Between two polls: new results in the files already open for the running jobs.
  void read_running();
  // Drops the jobs whose every task has come back, whatever Slurm says of them yet.
  void retire_reported();

  // Retired allocations not yet seen ended: their nodes are about to be free.
  bool watching_released() const { return !m_watched.empty(); }
  // The next poll comes after kSoonPollInterval (a job waits to see allocations end).
  void poll_soon() { m_soon = true; }

 private:
  std::set<std::uint32_t> gone_launchers() const;
  void follow_job(Job& job, std::vector<JobStatus>& records, const std::set<std::uint32_t>& gone);
  void watch_released(std::map<std::uint32_t, std::vector<JobStatus>>& records, const std::set<std::uint32_t>& gone);
  void read_new_results(Job& job);
  void read_file(Job& job, const std::filesystem::path& file);
  void check_pending(Job& job);

  SlurmClient& m_client;
  TaskLedger& m_ledger;
  JobJournal& m_journal;
  Notice m_notice;
  const SlurmResources& m_settings;
  std::map<std::uint32_t, std::filesystem::path> m_watched;  // retired allocated jobs, until seen ended
  bool m_soon = false;
  Clock::time_point m_last_poll{};
  Clock::time_point m_last_scan{};
  Clock::time_point m_last_read{};
};

}  // namespace flotilla::jobs::slurm

// Submitter.h — the Slurm backend's jobs from tasks: the tasks handed over between two collect()
// calls become one job per resource set (a job array, cut at MaxArraySize, when they name array
// elements), written to a folder of its own and submitted once its dependencies are in Slurm,
// within the user's MaxSubmitJobs, with back-off after a submit-limit refusal. In hold mode
// (`flotilla sbatch`) the next job's folder is written instead and held() names it; from then on
// nothing more is made or submitted.
//
// Invariants:
//  - Jobs that depend on no other are made first, so a dependent job finds the job it waits for.
//  - With max_submit_jobs, a job is submitted only while fewer of the user's jobs are pending or
//    running (one query per pass).
//  - A submit-limit refusal (or a partition drained or inactive) is retried with back-off (1, 2,
//    4 ... 30 s), never failed; any other refusal (unknown partition, a partition limit, Slurm
//    unreachable) throws: it is a setup error, named with the setting to change (PartitionAdvice.h).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "Allocator.h"
#include "Job.h"
#include "JobJournal.h"
#include "Poller.h"
#include "SlurmResources.h"
#include "TaskLedger.h"
#include "flotilla/jobs/Backend.h"

namespace flotilla::jobs::slurm {

class Submitter {
 public:
  struct Parts {
    SlurmClient& client;
    TaskLedger& ledger;
    JobJournal& journal;
    Allocator& allocator;
    Poller& poller;
    // Folders `flotilla sbatch` wrote and nobody submitted (Restart::unsubmitted).
    const std::map<std::filesystem::path, std::set<std::uint64_t>>& unsubmitted;
  };
  Submitter(const SlurmResources& settings, Parts parts, Notice notice, std::filesystem::path worker)
      : m_settings(settings), m_parts(parts), m_notice(std::move(notice)), m_worker(std::move(worker)) {}

  // A task for the next job of its resource set.
  void add(TaskSpec spec);
  std::size_t unsent() const;
  // Gives back every task not yet in a job as `status`.
  void finish_unsent(const std::string& reason, TaskStatus status);
  void clear() { m_unsent.clear(); }

  // One folder (and Job) per resource set of the tasks added since the last call.
  void make_jobs();
  // Submits the jobs whose back-off has passed and whose dependencies are submitted.
  void submit_waiting();
  // Hold mode: the job written instead of submitted, once there is one.
  const std::optional<HeldJob>& held() const { return m_held; }

 private:
  void add_job(const std::string& resources, const std::vector<std::uint64_t>& ids, const ArrayPiece* piece);
  std::uint32_t max_array_size();
  std::optional<std::string> dependency_of(const Job& job) const;
  std::size_t count_user_queued();
  bool hold_existing(const std::vector<std::uint64_t>& ids);
  void hold(const Job& job, const JobRequest& request);
  void try_submit(Job& job, const std::string& dependency);
  std::vector<PartitionLimits> partitions();
  void defer_for_own(Job& job);

  const SlurmResources& m_settings;
  Parts m_parts;
  Notice m_notice;
  std::filesystem::path m_worker;
  std::map<std::string, std::vector<std::uint64_t>> m_unsent;  // resources -> tasks for the next job
  std::uint32_t m_max_array_size = 0;                          // 0: not asked yet
  int m_counter = 0;                                           // job names: PREFIX-PID-N
  std::optional<HeldJob> m_held;                               // hold mode: the job written
};

}  // namespace flotilla::jobs::slurm

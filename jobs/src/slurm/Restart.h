// Restart.h — what a restarted scheduler finds in jobs_dir before it submits anything: results
// of ended jobs taken as they are, tasks of still active jobs followed in those jobs instead of
// being submitted twice, abandoned allocations cancelled, and folders `flotilla sbatch` wrote.
//
// Invariants:
//  - A task whose job of an earlier run is pending or running is re-attached to that job, never
//    submitted again; an ended job's result is taken with its own attempt.
//  - Every attempt an ended job held is used up: a task submitted again runs as a later attempt,
//    so no (task, attempt) ever runs in two jobs (the model's P6, docs/verification.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "Job.h"
#include "JobFolder.h"
#include "JobJournal.h"
#include "TaskLedger.h"
#include "SlurmResources.h"

namespace flotilla::jobs::slurm {

class Restart {
 public:
  Restart(const SlurmResources& settings, SlurmClient& client, TaskLedger& ledger, JobJournal& journal, Notice notice)
      : m_settings(settings), m_client(client), m_ledger(ledger), m_journal(journal), m_notice(std::move(notice)) {}

  // Reads every job folder of workdir, asking Slurm for the states of their jobs in one query.
  void scan_earlier_jobs();
  // For a task being submitted: true when an earlier run's job answers for it (its result is
  // ready, or it is followed in its still active job); else false, with the attempt raised past
  // every attempt an ended job held.
  bool take_earlier_result(TaskSpec& spec);
  // Folders `flotilla sbatch` wrote that were never submitted, with their tasks.
  const std::map<std::filesystem::path, std::set<std::uint64_t>>& unsubmitted() const { return m_unsubmitted; }

 private:
  bool launcher_started(const std::filesystem::path& dir, FolderRecord& record);
  std::map<std::string, std::uint32_t> submitted_by_hand(const std::map<std::filesystem::path, FolderRecord>& folders);
  void take_ended(const Job& job);

  const SlurmResources& m_settings;
  SlurmClient& m_client;
  TaskLedger& m_ledger;
  JobJournal& m_journal;
  Notice m_notice;
  std::map<std::uint64_t, TaskResult> m_earlier_results;  // from ended jobs of an earlier run
  std::map<std::uint64_t, std::uint32_t> m_adoptable;     // task -> still active job of an earlier run
  std::map<std::uint32_t, Job> m_earlier_jobs;
  std::map<std::uint64_t, int> m_next_attempt;  // task -> attempt after an ended earlier job's
  std::map<std::filesystem::path, std::set<std::uint64_t>> m_unsubmitted;
};

}  // namespace flotilla::jobs::slurm

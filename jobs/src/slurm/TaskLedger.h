// TaskLedger.h — the Slurm backend's account of its tasks: the jobs it follows, the tasks still
// waiting for a result, and the results ready for the next collect().
//
// Invariants:
//  - A task is pending from submit() until its one result is ready; a result is taken only for a
//    pending task at the attempt it was submitted with, so a stray, repeated or earlier attempt's
//    record never gives a second result.
//  - A task counts as queued or running until collect() has returned its result.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "Job.h"
#include "flotilla/jobs/Task.h"

namespace flotilla::jobs::slurm {

class TaskLedger {
 public:
  void add(TaskSpec spec);
  bool is_pending(std::uint64_t id) const { return m_pending.contains(id); }
  const TaskSpec& spec(std::uint64_t id) const { return m_pending.at(id); }
  // A worker's result, returned once, if it belongs to a task still waiting for one.
  void take(TaskResult result);
  // A result to return as it is (an earlier run's, taken on resubmission).
  void ready(TaskResult result) { m_ready.push_back(std::move(result)); }
  // The job's recorded results; every other task of the job still pending comes back as
  // `status` with `reason`.
  void finish(const Job& job, const std::string& reason, TaskStatus status);
  // Whether every task of the job has come back.
  bool reported(const Job& job) const;

  std::vector<Job>& jobs() { return m_jobs; }
  const std::vector<Job>& jobs() const { return m_jobs; }
  // Tasks of the jobs in phase `running` (true) or in any other phase (false).
  std::size_t tasks_in_jobs(bool running) const;
  bool has_ready() const { return !m_ready.empty(); }
  std::size_t ready_count() const { return m_ready.size(); }
  std::vector<TaskResult> drain();
  // Forgets every job and task (detach: the jobs go on without us).
  void clear();

 private:
  std::map<std::uint64_t, TaskSpec> m_pending;  // submitted, no result returned yet
  std::vector<Job> m_jobs;                      // in the order they were made
  std::deque<TaskResult> m_ready;
};

}  // namespace flotilla::jobs::slurm

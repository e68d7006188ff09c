// TaskLedger.cpp — every task of the Slurm backend comes back exactly once (TaskLedger.h).
#include "TaskLedger.h"

#include <algorithm>
#include <iterator>

#include "JobFolder.h"

namespace flotilla::jobs::slurm {

void TaskLedger::add(TaskSpec spec) {
  const auto id = spec.id;
  m_pending[id] = std::move(spec);
}

void TaskLedger::take(TaskResult r) {
  auto it = m_pending.find(r.id);
  if (it == m_pending.end()) return;            // not ours, or already returned
  if (it->second.attempt != r.attempt) return;  // an earlier attempt's result: not this one
  m_pending.erase(it);
  m_ready.push_back(std::move(r));
}

void TaskLedger::finish(const Job& job, const std::string& reason, TaskStatus status) {
  for (auto& r : read_job_folder_results(job.dir)) take(std::move(r));  // ours, not yet returned
  for (auto id : job.tasks) {
    auto it = m_pending.find(id);
    if (it == m_pending.end()) continue;
    TaskResult lost{.id = id,
                    .status = status,
                    .start = epoch_seconds(),
                    .end = epoch_seconds(),
                    .exit_code = 0,
                    .reason = reason,
                    .attempt = it->second.attempt};
    m_ready.push_back(std::move(lost));
    m_pending.erase(it);
  }
}

bool TaskLedger::reported(const Job& job) const {
  return std::none_of(job.tasks.begin(), job.tasks.end(), [&](std::uint64_t id) { return m_pending.contains(id); });
}

std::size_t TaskLedger::tasks_in_jobs(bool running) const {
  std::size_t n = 0;
  for (const auto& job : m_jobs)
    if ((job.phase == JobPhase::running) == running) n += job.tasks.size();
  return n;
}

std::vector<TaskResult> TaskLedger::drain() {
  std::vector<TaskResult> out(std::make_move_iterator(m_ready.begin()), std::make_move_iterator(m_ready.end()));
  m_ready.clear();
  return out;
}

void TaskLedger::clear() {
  m_jobs.clear();
  m_pending.clear();
  m_ready.clear();
}

}  // namespace flotilla::jobs::slurm

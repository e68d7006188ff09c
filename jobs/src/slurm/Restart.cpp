// Restart.cpp — what a restarted scheduler finds in jobs_dir (Restart.h).
#include "Restart.h"

#include <algorithm>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "JobFolder.h"
#include "flotilla/jobs/Manifest.h"

namespace flotilla::jobs::slurm {

// A restarted scheduler resubmits the tasks it has no result for. Jobs of an earlier run in
// workdir may hold them: a result already in a job's results is taken as it is, and a task
// whose job is still pending or running is followed in that job instead of being submitted twice.
// Each folder's journal says which job that is (read_folder_record: older folders' markers too).
void Restart::scan_earlier_jobs() {
  std::map<std::filesystem::path, FolderRecord> folders;
  for (const auto& entry : std::filesystem::directory_iterator(m_settings.workdir))
    if (std::filesystem::exists(entry.path() / "manifest.json"))
      folders[entry.path()] = read_folder_record(entry.path());
  const auto by_name = submitted_by_hand(folders);
  std::vector<std::uint32_t> ids;
  std::map<std::uint32_t, Job> jobs;
  for (auto& [dir, record] : folders) {
    if (!record.unreadable.empty())
      m_notice("slurm_journal_unreadable",
               fmt::format("{}: the job is found by its slurm_job_id or its name instead", record.unreadable));
    if (record.slurm_id == 0 && record.launching != 0 && !launcher_started(dir, record)) continue;  // runs again
    Job job{.slurm_id = record.slurm_id,
            .phase = record.phase,
            .name = dir.filename().string(),
            .dir = dir,
            .allocated = record.allocated};
    if (job.slurm_id == 0) {
      auto found = by_name.find(job.name);
      if (found == by_name.end()) {  // written by `flotilla sbatch`, not submitted (yet)
        auto& tasks = m_unsubmitted[dir];
        for (const auto& task : read_manifest(dir / "manifest.json").tasks) tasks.insert(task.id);
        continue;
      }
      job.slurm_id = found->second;
    }
    // Submitted by hand, or killed between the submission and its journal line: the journal
    // names the job from now on.
    if (job.phase == JobPhase::written)
      m_journal.advance(job, JobEvent::submitted, fmt::format("Slurm job {}, found on restart", job.slurm_id));
    for (const auto& task : read_manifest(dir / "manifest.json").tasks) job.tasks.push_back(task.id);
    if (!is_final(job.phase)) ids.push_back(job.slurm_id);  // a journal that says the job ended needs no query
    jobs[job.slurm_id] = std::move(job);
  }
  if (jobs.empty()) return;
  auto records = ids.empty() ? std::map<std::uint32_t, std::vector<JobStatus>>() : query_records(m_client, ids);
  for (auto& [id, job] : jobs) {
    const auto ended = is_final(job.phase) ? std::optional(JobState::unknown) : ended_state(records[id]);
    if (ended && !is_final(job.phase))
      m_journal.advance(job, JobEvent::seen_ended,
                        records[id].empty() ? "vanished from the queue, seen on restart"
                                            : fmt::format("ended {}, seen on restart", to_string(*ended)));
    if (!ended) {
      for (auto task : job.tasks) m_adoptable[task] = id;
      m_earlier_jobs[id] = std::move(job);
      continue;
    }
    take_ended(job);
  }
}

void Restart::take_ended(const Job& job) {
  // Of several ended jobs' results for one task, the highest attempt's is kept (whatever order
  // the folders are scanned in): it is the latest run of the task.
  for (auto& r : read_job_folder_results(job.dir))
    if (r.status == TaskStatus::ok || r.status == TaskStatus::failed || r.status == TaskStatus::timeout) {
      auto kept = m_earlier_results.find(r.id);
      if (kept == m_earlier_results.end() || r.attempt > kept->second.attempt) m_earlier_results[r.id] = std::move(r);
    }
  // Every attempt an ended job held is used up: a task submitted again runs as a later attempt,
  // and a late result of the old attempt (ranks in KillWait) is never taken for the new one.
  for (const auto& task : read_manifest(job.dir / "manifest.json").tasks)
    m_next_attempt[task.id] = std::max(m_next_attempt[task.id], task.attempt + 1);
}

// A folder whose allocation was made (record.launching) but that names no job yet: its launcher
// started and the scheduler was killed before journalling it, so the allocation is the job; or
// it never started (the scheduler was killed in between): nothing runs in the allocation, so it
// is cancelled, not waited for to its time limit, and the folder's tasks run again.
bool Restart::launcher_started(const std::filesystem::path& dir, FolderRecord& record) {
  const auto id = record.launching;
  if (is_final(record.phase)) return false;  // cancelled by an earlier restart
  if (std::filesystem::exists(dir / "launcher")) {
    Job job{.slurm_id = id, .phase = record.phase, .dir = dir};
    m_journal.advance(job, JobEvent::allocated,
                      fmt::format("Slurm allocation {}, launcher {}, found on restart", id, launcher_text(dir)));
    record = {.phase = job.phase, .slurm_id = id, .allocated = true};
    return true;
  }
  m_client.cancel(id);
  Job job{.slurm_id = id, .phase = record.phase, .dir = dir};
  m_journal.advance(job, JobEvent::cancelled, fmt::format("Slurm allocation {}: its launcher never started", id));
  m_notice("slurm_allocation_abandoned", fmt::format("Slurm allocation {} ({}) was made but its launcher never "
                                                     "started: cancelled it",
                                                     id, dir.filename().string()));
  return false;
}

// Jobs submitted by hand from a folder whose job is not known yet (its script writes
// slurm_job_id when the job starts), found by name: the folder's name is the job's name. One
// query, and only when some folder names no job.
std::map<std::string, std::uint32_t> Restart::submitted_by_hand(
    const std::map<std::filesystem::path, FolderRecord>& folders) {
  std::map<std::string, std::uint32_t> by_name;
  if (std::none_of(folders.begin(), folders.end(), [](const auto& f) { return f.second.slurm_id == 0; }))
    return by_name;
  for (const auto& job : m_client.user_jobs())
    if (!is_terminal(job.state) || !by_name.contains(job.name))
      by_name[job.name] = job.array_job_id != 0 ? job.array_job_id : job.id;
  return by_name;
}

bool Restart::take_earlier_result(TaskSpec& spec) {
  // An ended earlier job's result is taken as it is, with its own attempt, whatever attempt the
  // campaign resubmits the task at (docs/slurm.md): throwing it away would run the task again,
  // at an attempt that already ran (the model's PROMISE_REATTACH, docs/verification.md).
  if (auto it = m_earlier_results.find(spec.id); it != m_earlier_results.end()) {
    m_ledger.ready(std::move(it->second));
    m_earlier_results.erase(it);
    return true;
  }
  if (auto next = m_next_attempt.find(spec.id); next != m_next_attempt.end() && spec.attempt < next->second)
    spec.attempt = next->second;  // the result comes back with it (TaskResult::attempt)
  auto adopt = m_adoptable.find(spec.id);
  if (adopt == m_adoptable.end()) return false;
  auto& earlier = m_earlier_jobs[adopt->second];
  auto& jobs = m_ledger.jobs();
  auto existing = std::find_if(jobs.begin(), jobs.end(), [&](const Job& j) { return j.slurm_id == earlier.slurm_id; });
  if (existing == jobs.end()) {
    jobs.push_back(Job{.slurm_id = earlier.slurm_id,
                       .phase = earlier.phase,
                       .name = earlier.name,
                       .resources = spec.resources,
                       .dir = earlier.dir,
                       .allocated = earlier.allocated});
    existing = std::prev(jobs.end());
    m_journal.advance(*existing, JobEvent::reattached, "followed again by a restarted scheduler");
  }
  existing->tasks.push_back(spec.id);
  m_adoptable.erase(adopt);
  m_ledger.add(std::move(spec));
  return true;
}

}  // namespace flotilla::jobs::slurm

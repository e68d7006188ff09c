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
void Restart::scan_earlier_jobs() {
  std::vector<std::uint32_t> ids;
  std::map<std::uint32_t, Job> jobs;
  const auto by_name = submitted_by_hand();
  for (const auto& entry : std::filesystem::directory_iterator(m_settings.workdir)) {
    if (!std::filesystem::exists(entry.path() / "manifest.json")) continue;
    if (abandoned_allocation(entry.path())) continue;  // its tasks are submitted again
    std::ifstream id_file(entry.path() / "slurm_job_id");
    std::uint32_t id = 0;
    if (!(id_file >> id)) {
      auto found = by_name.find(entry.path().filename().string());
      if (found == by_name.end()) {  // written by `flotilla sbatch`, not submitted (yet)
        auto& tasks = m_unsubmitted[entry.path()];
        for (const auto& task : read_manifest(entry.path() / "manifest.json").tasks) tasks.insert(task.id);
        continue;
      }
      id = found->second;
      std::ofstream(entry.path() / "slurm_job_id") << id << '\n';
    }
    Job job{.slurm_id = id, .name = entry.path().filename().string(), .dir = entry.path(),
            .allocated = std::filesystem::exists(entry.path() / "allocation")};
    job.phase = replayed_phase(entry.path());
    // Killed between the submission and its journal line: the job id in the folder says it.
    if (job.phase == JobPhase::written)
      m_journal.advance(job, JobEvent::submitted, fmt::format("Slurm job {}, found on restart", id));
    for (const auto& task : read_manifest(entry.path() / "manifest.json").tasks) job.tasks.push_back(task.id);
    if (!is_final(job.phase)) ids.push_back(id);  // a journal that says the job ended needs no query
    jobs[id] = std::move(job);
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

// A folder whose allocation was made but whose launcher never started (the scheduler was
// killed in between, or the launcher failed): nothing runs in it, so it is cancelled, not
// waited for to its time limit.
bool Restart::abandoned_allocation(const std::filesystem::path& dir) {
  std::ifstream in(dir / "allocation");
  std::uint32_t id = 0;
  if (!(in >> id) || std::filesystem::exists(dir / "slurm_job_id")) return false;
  if (std::filesystem::exists(dir / "launcher")) {  // started; killed before slurm_job_id was written
    std::ofstream(dir / "slurm_job_id") << id << '\n';
    return false;
  }
  m_client.cancel(id);
  std::filesystem::rename(dir / "allocation", dir / "allocation.cancelled");
  m_notice("slurm_allocation_abandoned", fmt::format("Slurm allocation {} ({}) was made but its launcher never "
                                                     "started: cancelled it",
                                                     id, dir.filename().string()));
  return true;
}

// Jobs submitted by hand from a folder that has no slurm_job_id yet (the script writes it when
// the job starts), found by name: the folder's name is the job's name.
std::map<std::string, std::uint32_t> Restart::submitted_by_hand() {
  bool any = false;
  for (const auto& entry : std::filesystem::directory_iterator(m_settings.workdir))
    any = any || (std::filesystem::exists(entry.path() / "manifest.json") &&
                  !std::filesystem::exists(entry.path() / "slurm_job_id"));
  std::map<std::string, std::uint32_t> by_name;
  if (!any) return by_name;
  for (const auto& job : m_client.user_jobs())
    if (!is_terminal(job.state) || !by_name.contains(job.name))
      by_name[job.name] = job.array_job_id != 0 ? job.array_job_id : job.id;
  return by_name;
}

// The phase the job's journal ends in; `written` for a folder with no journal (an older
// flotilla's) or one that is not a journal (said, and then the markers decide).
JobPhase Restart::replayed_phase(const std::filesystem::path& dir) {
  try {
    if (auto replay = read_job_journal(dir)) return replay->phase;
  } catch (const std::invalid_argument& e) {
    m_notice("slurm_journal_unreadable", fmt::format("{}: the job's folder decides instead", e.what()));
  }
  return JobPhase::written;
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
    jobs.push_back(Job{.slurm_id = earlier.slurm_id, .phase = earlier.phase, .name = earlier.name,
                       .resources = spec.resources, .dir = earlier.dir, .allocated = earlier.allocated});
    existing = std::prev(jobs.end());
    m_journal.advance(*existing, JobEvent::reattached, "followed again by a restarted scheduler");
  }
  existing->tasks.push_back(spec.id);
  m_adoptable.erase(adopt);
  m_ledger.add(std::move(spec));
  return true;
}

}  // namespace flotilla::jobs::slurm

// Poller.cpp — following the Slurm backend's jobs (Poller.h).
#include "Poller.h"

#include <algorithm>

#include <fmt/format.h>

#include "JobFolder.h"
#include "PartitionAdvice.h"
#include "flotilla/jobs/JobResults.h"

namespace flotilla::jobs::slurm {

void Poller::follow() {
  const auto now = Clock::now();
  if (now - m_last_poll >= (m_soon ? Clock::duration(kSoonPollInterval) : Clock::duration(m_settings.poll_interval)))
    poll();
  else if (now - m_last_scan >= kScanInterval)
    scan();
  else if (now - m_last_read >= kReadInterval)
    read_running();
}

// A job's script writes slurm_job_id first (JobRequests.cpp), so its presence in a queued job's
// folder says the job (an array: one of its elements) has started, without asking Slurm. The
// next poll still says how it ends.
void Poller::scan() {
  m_last_scan = m_last_read = Clock::now();
  for (auto& job : m_ledger.jobs()) {
    if (job.phase == JobPhase::queued && job.slurm_id != 0 && std::filesystem::exists(job.dir / "slurm_job_id"))
      m_journal.advance(job, JobEvent::seen_running, "its script started (slurm_job_id written)");
    if (job.phase == JobPhase::running) read_new_results(job);
  }
  retire_reported();
}

// Allocated jobs (running, or retired and watched) whose launcher is gone without releasing
// the allocation: nothing would end them before their time limit. Asked before Slurm is
// queried, so a launcher that released its job and exited is seen ended by that query, not
// cancelled. The launcher's lock says it, not its pid (a zombie, or a pid reused after a reboot).
std::set<std::uint32_t> Poller::gone_launchers() const {
  std::set<std::uint32_t> gone;
  for (const auto& job : m_ledger.jobs())
    if (job.allocated && job.phase != JobPhase::orphaned && launcher_alive(job.dir) == false) gone.insert(job.slurm_id);
  for (const auto& [id, dir] : m_watched)
    if (launcher_alive(dir) == false) gone.insert(id);
  return gone;
}

void Poller::poll() {
  m_last_poll = m_last_scan = m_last_read = Clock::now();
  m_soon = false;
  std::vector<std::uint32_t> ids;
  for (const auto& job : m_ledger.jobs())
    if (job.slurm_id != 0) ids.push_back(job.slurm_id);
  for (const auto& [id, dir] : m_watched) ids.push_back(id);
  if (ids.empty()) {
    std::erase_if(m_ledger.jobs(), [](const Job& j) { return j.tasks.empty(); });
    return;
  }
  const auto gone = gone_launchers();
  auto records = query_records(m_client, ids);
  watch_released(records, gone);
  for (auto& job : m_ledger.jobs())
    if (job.phase != JobPhase::written) follow_job(job, records[job.slurm_id], gone);
  retire_reported();
}

// One job's records at this poll: still pending or running (its new results read), or ended
// (its recorded results taken, every other task given back as lost).
void Poller::follow_job(Job& job, std::vector<JobStatus>& mine, const std::set<std::uint32_t>& gone) {
  const auto ended = ended_state(mine);
  if (!ended && gone.contains(job.slurm_id) && job.phase != JobPhase::orphaned) {
    // It ends CANCELLED at a later query; its unreported tasks then run again.
    m_journal.advance(job, JobEvent::launcher_lost, fmt::format("launcher {}", launcher_text(job.dir)));
    m_notice("slurm_launcher_lost", fmt::format("the launcher ({}) of Slurm job {} ({}) died before releasing the "
                                                "allocation: cancelled it; its unreported tasks run again",
                                                launcher_text(job.dir), job.slurm_id, job.name));
    m_client.cancel(job.slurm_id);
  }
  if (!ended) {
    const bool any_running =
        std::any_of(mine.begin(), mine.end(), [](const JobStatus& s) { return s.state == JobState::running; });
    m_journal.advance(job, any_running ? JobEvent::seen_running : JobEvent::seen_pending);
    job.pending_reason.clear();
    if (!any_running)
      for (const auto& s : mine)
        if (s.state == JobState::pending && !s.reason.empty()) job.pending_reason = s.reason;
    if (any_running) read_new_results(job);
    else check_pending(job);
    return;
  }
  auto how = mine.empty() ? std::string("vanished from the queue") : fmt::format("ended {}", to_string(*ended));
  if (job.phase == JobPhase::orphaned)
    how += " (its launcher died before releasing the allocation, so flotilla cancelled it)";
  if (!is_final(job.phase)) m_journal.advance(job, JobEvent::seen_ended, how);
  m_ledger.finish(job, fmt::format("Slurm job {} ({}) {} before this task reported", job.slurm_id, job.name, how),
                  TaskStatus::lost);
  job.tasks.clear();
}

// A pending job's reason, said once when it is one a user should hear: a partition that is down
// is waited for; a broken partition limit never passes, so the job is cancelled and the campaign
// stops with the limit and the setting to change (its tasks were not recorded: a run after the
// fix submits them again).
void Poller::check_pending(Job& job) {
  const auto& reason = job.pending_reason;
  if (reason.empty() || reason == job.told_reason) return;
  job.told_reason = reason;
  const auto shape_it = m_settings.stages.find(job.resources);
  const auto& shape = shape_it == m_settings.stages.end() ? m_settings.shape : shape_it->second;
  const JobRequest request{.partition = shape.partition, .nodes = shape.nodes, .ranks_per_node = shape.ranks_per_node,
                           .gpus_per_node = shape.gpus_per_node, .time_limit = shape.time_limit};
  if (reason == "PartitionDown" || reason == "PartitionInactive") {
    m_notice("slurm_job_waiting", fmt::format("Slurm job {} ({}) waits: its partition {} is down ({}); the campaign "
                                              "goes on once it is up",
                                              job.slurm_id, job.name,
                                              shape.partition.empty() ? "(the default)" : shape.partition, reason));
    return;
  }
  if (!is_partition_limit_reason(reason)) return;
  const auto partitions = m_client.partitions();
  const auto* partition = find_partition(partitions, request);
  auto broken = partition ? broken_limit(*partition, request, job.resources) : std::nullopt;
  // PartitionConfig is also Slurm's first word for a job it has not looked at closely yet: only a
  // limit the job does break stops the campaign.
  if (!broken && reason == "PartitionConfig") return;
  m_client.cancel(job.slurm_id);
  m_journal.advance(job, JobEvent::cancelled, fmt::format("cancelled by flotilla: Slurm holds it PENDING ({})", reason));
  throw std::runtime_error(fmt::format(
      "Slurm job {} ({}) can never start: Slurm holds it PENDING ({}): {}. flotilla cancelled it; run again once the "
      "setting is fixed",
      job.slurm_id, job.name, reason,
      broken ? *broken
             : fmt::format("it breaks a limit of partition {} (scontrol show partition {})", partition ? partition->name : shape.partition,
                           partition ? partition->name : shape.partition)));
}

// Retired allocated jobs (every task reported) until Slurm sees them end: their launcher
// releases them, and if it died first they are cancelled here.
void Poller::watch_released(std::map<std::uint32_t, std::vector<JobStatus>>& records,
                            const std::set<std::uint32_t>& gone) {
  for (auto it = m_watched.begin(); it != m_watched.end();) {
    const auto id = it->first;
    if (auto ended = ended_state(records[id])) {
      m_journal.append(it->second, JobEvent::seen_ended, next(JobPhase::retired, JobEvent::seen_ended),
                       records[id].empty() ? "vanished from the queue" : fmt::format("ended {}", to_string(*ended)));
      it = m_watched.erase(it);
      continue;
    }
    if (gone.contains(id)) {
      m_journal.append(it->second, JobEvent::launcher_lost, next(JobPhase::retired, JobEvent::launcher_lost),
                       fmt::format("launcher {}", launcher_text(it->second)));
      m_notice("slurm_launcher_lost",
               fmt::format("the launcher ({}) of Slurm job {} died before releasing the allocation, after its tasks "
                           "reported: cancelled it",
                           launcher_text(it->second), id));
      m_client.cancel(id);
      // A final line only once it is true: killed before it, a restart still queries the job.
      m_journal.append(it->second, JobEvent::cancelled, next(JobPhase::orphaned, JobEvent::cancelled),
                       "cancelled by flotilla");
      it = m_watched.erase(it);
      continue;
    }
    ++it;
  }
}

// No directory listing and no Slurm call: a job's last result is seen within kReadInterval.
void Poller::read_running() {
  m_last_read = Clock::now();
  bool any = false;
  for (auto& job : m_ledger.jobs()) {
    if (job.phase != JobPhase::running) continue;
    std::vector<std::filesystem::path> open;
    for (const auto& [file, reader] : job.readers) open.push_back(file);
    for (const auto& file : open) read_file(job, file);
    any = true;
  }
  if (any) retire_reported();
}

// Their results are returned and kept in their results files; such a job is left to end by
// itself, not cancelled.
void Poller::retire_reported() {
  std::erase_if(m_ledger.jobs(), [&](Job& j) {
    if (j.phase == JobPhase::written && !j.tasks.empty()) return false;  // not submitted yet
    if (!m_ledger.reported(j)) return false;
    if (j.phase != JobPhase::written && !is_final(j.phase)) {
      const bool orphaned = j.phase == JobPhase::orphaned;
      m_journal.advance(j, JobEvent::all_reported);
      if (j.allocated && !orphaned) m_watched[j.slurm_id] = j.dir;
    }
    return true;
  });
}

// Results recorded so far by a running job's workers, returned as they arrive so the campaign
// records them while the job runs. A file not yet in SWMR mode (the worker is starting) is
// simply opened again at the next poll; finish() reads every file once more at the end.
void Poller::read_new_results(Job& job) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(job.dir, ec))
    if (is_results_file(entry.path()) && !job.done_files.contains(entry.path())) read_file(job, entry.path());
}

// One results file's new records; the file is closed for good once every task it holds has
// reported (an array element's, known from file_tasks).
void Poller::read_file(Job& job, const std::filesystem::path& file) {
  try {
    auto it = job.readers.find(file);
    if (it == job.readers.end()) it = job.readers.emplace(file, results::JobFileReader::open(file)).first;
    for (const auto& record : it->second.read_new()) m_ledger.take(from_job_record(record));
  } catch (const results::StoreError&) {
    job.readers.erase(file);  // opened again later; results are matched by id, so reading again never doubles
    return;
  }
  const auto tasks = job.file_tasks.find(file);
  if (tasks == job.file_tasks.end()) return;
  if (std::none_of(tasks->second.begin(), tasks->second.end(), [&](std::uint64_t id) { return m_ledger.is_pending(id); })) {
    job.readers.erase(file);
    job.done_files.insert(file);
  }
}

}  // namespace flotilla::jobs::slurm

// SlurmBackend.cpp — the Backend interface of the Slurm backend (SlurmBackend.h, SlurmBackendImpl.h).
//
// A job's life: tasks wait in m_unsent until the next collect(); make_jobs() writes one folder
// per resource set (a job array cut at MaxArraySize into several); submit_waiting() submits each
// once its back-off, the user's MaxSubmitJobs and the jobs it depends on allow; poll() follows
// every active job with one query, streams the results its workers record while it runs (SWMR
// reads of its results files, refreshed every 50 ms between queries), and when a job (every
// element of an array) has ended, returns the rest of its recorded results and its other tasks
// as lost. A job whose every task has reported is done for the campaign at once: the worker's
// results file holds them, and waiting for Slurm to see the job end (MPI_Finalize, srun and
// the batch script exiting, the next query) would only delay the campaign.
#include <thread>
#include <utility>

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "SlurmBackendImpl.h"
#include "SlurmJobFolder.h"
#include "flotilla/jobs/JobResults.h"

namespace flotilla::jobs::slurm_backend {

SlurmBackend::SlurmBackend(const BackendOptions& o)
    : m_r(o.slurm), m_notice(o.notice), m_client(make_slurm_client(o.slurm.client)),
      m_worker(find_program(o.path_prepend, "flotilla-worker")), m_flotilla(find_program(o.path_prepend, "flotilla")) {
  if (m_r.start != "batch" && m_r.start != "allocate")
    throw std::invalid_argument(fmt::format("unknown Slurm start '{}' (batch or allocate)", m_r.start));
  if (m_r.workdir.empty()) m_r.workdir = std::filesystem::current_path() / "flotilla-jobs";
  m_r.workdir = std::filesystem::absolute(m_r.workdir);
  std::filesystem::create_directories(m_r.workdir);
  check_sbatch_environment();
  scan_earlier_jobs();
}

// sbatch applies the SBATCH_* variables of its environment over a script's #SBATCH lines, so
// with the sbatch client they reach every job whether flotilla knows them or not; the api
// client applies those of SbatchOptions.h the same way. A variable that would break flotilla's
// jobs, or that the api client cannot apply as sbatch would, stops the run here, named;
// the ones applied are said once, so that a job landing elsewhere than the campaign file says
// is never a surprise.
void SlurmBackend::check_sbatch_environment() const {
  const auto environment = read_sbatch_environment(process_environment());
  std::vector<std::string> errors = environment.refused;
  errors.insert(errors.end(), environment.malformed.begin(), environment.malformed.end());
  if (m_client->name() == "api")
    for (const auto& name : environment.unsupported)
      errors.push_back(fmt::format("{}: sbatch would apply it, but libslurm's job description (resources.slurm_client "
                                   "= api) has no way to: unset it, or use resources.slurm_client = sbatch",
                                   name));
  if (!errors.empty())
    throw std::invalid_argument(fmt::format("the environment's SBATCH_* variables: {}", fmt::join(errors, "; ")));
  if (!m_notice) return;
  for (const auto& option : environment.applied)
    m_notice("sbatch_environment", fmt::format("{} from the environment (SBATCH_*) applies to every job, over the "
                                               "campaign's settings, as sbatch does",
                                               to_string(option)));
  for (const auto& name : environment.unsupported)
    m_notice("sbatch_environment", fmt::format("{} is in the environment: sbatch applies it to every job", name));
}

// Forgets every task; submitted jobs keep running and their folders say what they hold.
// Jobs not yet submitted are not: their tasks are simply unrecorded, and run again later.
std::size_t SlurmBackend::detach() {
  std::size_t left = 0;
  for (auto& job : m_jobs)
    if (job.phase != JobPhase::written && !is_final(job.phase)) {
      ++left;
      advance(job, JobEvent::detached, "the scheduler left it running; a restarted `flotilla run` re-attaches");
    }
  m_unsent.clear();
  m_jobs.clear();
  m_pending.clear();
  m_ready.clear();
  return left;
}

// Tasks wait here until the next collect(), so the tasks submitted between two collects (a
// batch, or every lost task of a failed job) become one job per resource set, not one each.
void SlurmBackend::submit(std::vector<TaskSpec> tasks) {
  std::erase_if(tasks, [&](TaskSpec& spec) { return take_earlier_result(spec); });
  for (auto& spec : tasks) {
    m_unsent[spec.resources].push_back(spec.id);
    m_pending[spec.id] = std::move(spec);
  }
}

std::vector<TaskResult> SlurmBackend::collect(std::chrono::milliseconds wait) {
  const auto deadline = Clock::now() + wait;
  make_jobs();
  for (;;) {
    submit_waiting();
    if (Clock::now() - m_last_poll >= (m_poll_soon ? kSoonPollInterval : kPollInterval))
      poll();
    else if (Clock::now() - m_last_read >= kReadInterval)
      read_running();
    if (!m_ready.empty() || Clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::min<Clock::duration>(std::chrono::milliseconds(10), deadline - Clock::now()));
  }
  std::vector<TaskResult> out(std::make_move_iterator(m_ready.begin()), std::make_move_iterator(m_ready.end()));
  m_ready.clear();
  return out;
}

std::size_t SlurmBackend::queued() const {
  std::size_t unsent = 0;
  for (const auto& [resources, ids] : m_unsent) unsent += ids.size();
  return count_tasks(false) + unsent + m_ready.size();
}

void SlurmBackend::cancel_all() {
  for (auto& [resources, ids] : m_unsent)
    finish(Job{.tasks = std::move(ids)}, "cancelled by flotilla", TaskStatus::cancelled);
  m_unsent.clear();
  for (auto& job : m_jobs) {
    if (job.slurm_id != 0) m_client->cancel(job.slurm_id);
    if (!is_final(job.phase)) advance(job, JobEvent::cancelled, "cancelled by flotilla");
    finish(job, "cancelled by flotilla", TaskStatus::cancelled);
  }
  m_jobs.clear();
}

// From the phases and reasons the last query saw; jobs not submitted yet (written) are not
// Slurm's, and count among the queued tasks only.
std::optional<JobsOverview> SlurmBackend::jobs_overview() const {
  JobsOverview overview;
  for (const auto& job : m_jobs) {
    if (job.phase == JobPhase::running) ++overview.running;
    if (job.phase != JobPhase::queued) continue;
    // The first one's reason: m_jobs keeps the order jobs were made in, so it waits longest.
    if (overview.pending++ == 0) overview.pending_reason = job.pending_reason;
  }
  return overview;
}

std::size_t SlurmBackend::count_tasks(bool running) const {
  std::size_t n = 0;
  for (const auto& job : m_jobs)
    if ((job.phase == JobPhase::running) == running) n += job.tasks.size();
  return n;
}

const SlurmShape& SlurmBackend::shape_of(const std::string& resources) const {
  auto it = m_r.stages.find(resources);
  return it == m_r.stages.end() ? m_r.shape : it->second;
}

std::uint32_t SlurmBackend::max_array_size() {
  if (m_max_array_size == 0) m_max_array_size = m_client->max_array_size();
  return m_max_array_size;
}

void SlurmBackend::notify(std::string kind, std::string message) const {
  if (m_notice) m_notice(std::move(kind), std::move(message));
}

// Returns a worker's result once, if it belongs to a task still waiting for one.
void SlurmBackend::take(TaskResult r) {
  auto it = m_pending.find(r.id);
  if (it == m_pending.end()) return;                  // not ours, or already returned
  if (it->second.attempt != r.attempt) return;        // an earlier attempt's result: not this one
  m_pending.erase(it);
  m_ready.push_back(std::move(r));
}

// Takes the job's recorded results; every other task of the job comes back as `status`.
void SlurmBackend::finish(const Job& job, const std::string& reason, TaskStatus status) {
  for (auto& r : read_job_folder_results(job.dir)) take(std::move(r));  // ours, not yet returned
  for (auto id : job.tasks) {
    auto it = m_pending.find(id);
    if (it == m_pending.end()) continue;
    TaskResult lost{.id = id, .status = status, .start = epoch_seconds(), .end = epoch_seconds(), .exit_code = 0,
                    .reason = reason, .attempt = it->second.attempt};
    m_ready.push_back(std::move(lost));
    m_pending.erase(it);
  }
}

void SlurmBackend::advance(Job& job, JobEvent event, std::string_view detail) {
  const JobPhase before = job.phase;
  job.phase = next(before, event);
  // A query that sees what was known already says nothing new: one line per change, not per poll.
  const bool observation = event == JobEvent::seen_pending || event == JobEvent::seen_running;
  if (job.phase != before || !observation) journal(job.dir, event, job.phase, detail);
}

void SlurmBackend::journal(const std::filesystem::path& dir, JobEvent event, JobPhase after, std::string_view detail) {
  if (dir.empty()) return;
  try {
    append_job_event(dir, event, after, detail);
  } catch (const std::runtime_error& e) {
    if (!std::exchange(m_journal_failed, true))
      notify("slurm_journal_failed", fmt::format("{} (the job folders' other files still say what each job holds)", e.what()));
  }
}

}  // namespace flotilla::jobs::slurm_backend

namespace flotilla::jobs {

std::unique_ptr<Backend> make_slurm_backend(const BackendOptions& options) {
  return std::make_unique<slurm_backend::SlurmBackend>(options);
}

}  // namespace flotilla::jobs

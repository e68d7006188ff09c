// SlurmBackend.cpp — the Backend interface of the Slurm backend, composed of its parts
// (SlurmBackend.h).
//
// A job's life: tasks wait in the Submitter until the next collect(); make_jobs() writes one
// folder per resource set; submit_waiting() submits each once its back-off, the user's
// MaxSubmitJobs and the jobs it depends on allow; the Poller follows every active job with one
// query, streams the results its workers record while it runs, and when a job has ended, returns
// the rest of its recorded results and its other tasks as lost. A job whose every task has
// reported is done for the campaign at once: waiting for Slurm to see the job end (MPI_Finalize,
// srun and the batch script exiting, the next query) would only delay the campaign.
#include "SlurmBackend.h"

#include <algorithm>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "JobRequests.h"
#include "flotilla/jobs/Programs.h"

namespace flotilla::jobs::slurm {
namespace {

// In the prepended folders (flotilla's own, Programs.h), else the bare name: looked up on the
// PATH where it runs (the compute nodes', for flotilla-worker).
std::filesystem::path own_program(const std::vector<std::filesystem::path>& dirs, const std::string& name) {
  auto found = dirs.empty() ? std::filesystem::path() : find_program_path(name, search_path(dirs, ""));
  return found.empty() ? std::filesystem::path(name) : found;
}

SlurmResources checked(SlurmResources settings) {
  if (settings.start != "batch" && settings.start != "allocate")
    throw std::invalid_argument(fmt::format("unknown Slurm start '{}' (batch or allocate)", settings.start));
  if (settings.workdir.empty()) settings.workdir = std::filesystem::current_path() / "flotilla-jobs";
  settings.workdir = std::filesystem::absolute(settings.workdir);
  std::filesystem::create_directories(settings.workdir);
  return settings;
}

}  // namespace

SlurmBackend::SlurmBackend(SlurmResources settings, const BackendOptions& o, std::unique_ptr<SlurmClient> client)
    : m_settings(checked(std::move(settings))),
      m_notice(o.notice),
      m_client(std::move(client)),
      m_journal(m_notice),
      m_poller(*m_client, m_ledger, m_journal, m_notice, m_settings),
      m_allocator(*m_client, m_journal, m_notice, own_program(o.path_prepend, "flotilla")),
      m_restart(m_settings, *m_client, m_ledger, m_journal, m_notice),
      m_submitter(m_settings,
                  {.client = *m_client,
                   .ledger = m_ledger,
                   .journal = m_journal,
                   .allocator = m_allocator,
                   .poller = m_poller,
                   .unsubmitted = m_restart.unsubmitted()},
                  m_notice, own_program(o.path_prepend, "flotilla-worker")) {
  check_sbatch_environment(m_client->name(), m_notice);
  m_restart.scan_earlier_jobs();
}

// Forgets every task; submitted jobs keep running and their folders say what they hold.
// Jobs not yet submitted are not: their tasks are simply unrecorded, and run again later.
std::size_t SlurmBackend::detach() {
  std::size_t left = 0;
  for (auto& job : m_ledger.jobs())
    if (job.phase != JobPhase::written && !is_final(job.phase)) {
      ++left;
      m_journal.advance(job, JobEvent::detached,
                        "the scheduler left it running; a restarted `flotilla run` re-attaches");
    }
  m_submitter.clear();
  m_ledger.clear();
  return left;
}

// Tasks wait in the Submitter until the next collect(), so the tasks submitted between two
// collects (a batch, or every lost task of a failed job) become one job per resource set, not
// one each.
void SlurmBackend::submit(std::vector<TaskSpec> tasks) {
  for (auto& spec : tasks)
    if (!m_restart.take_earlier_result(spec)) m_submitter.add(std::move(spec));
}

std::vector<TaskResult> SlurmBackend::collect(std::chrono::milliseconds wait) {
  const auto deadline = Clock::now() + wait;
  m_submitter.make_jobs();
  for (;;) {
    m_submitter.submit_waiting();
    m_poller.follow();
    if (m_ledger.has_ready() || Clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::min<Clock::duration>(std::chrono::milliseconds(10), deadline - Clock::now()));
  }
  return m_ledger.drain();
}

BackendCapabilities SlurmBackend::capabilities() const { return kSlurmCapabilities; }

std::size_t SlurmBackend::queued() const {
  // A held job's tasks stay queued: nothing runs them until a person submits the job.
  const std::size_t held = m_submitter.held() ? m_submitter.held()->tasks : 0;
  return m_ledger.tasks_in_jobs(false) + m_submitter.unsent() + m_ledger.ready_count() + held;
}

void SlurmBackend::cancel_all() {
  m_submitter.finish_unsent("cancelled by flotilla", TaskStatus::cancelled);
  for (auto& job : m_ledger.jobs()) {
    if (job.slurm_id != 0) m_client->cancel(job.slurm_id);
    if (!is_final(job.phase)) m_journal.advance(job, JobEvent::cancelled, "cancelled by flotilla");
    m_ledger.finish(job, "cancelled by flotilla", TaskStatus::cancelled);
  }
  m_ledger.jobs().clear();
}

// From the phases and reasons the last query saw; jobs not submitted yet (written) are not
// Slurm's, and count among the queued tasks only.
std::optional<JobsOverview> SlurmBackend::jobs_overview() const {
  JobsOverview overview;
  for (const auto& job : m_ledger.jobs()) {
    if (job.phase == JobPhase::running) ++overview.running;
    if (job.phase != JobPhase::queued) continue;
    // The first one's reason: jobs keep the order they were made in, so it waits longest.
    if (overview.pending++ == 0) overview.pending_reason = job.pending_reason;
  }
  return overview;
}

}  // namespace flotilla::jobs::slurm

namespace flotilla::jobs {

std::unique_ptr<Backend> make_slurm_backend(const BackendOptions& options) {
  auto settings = slurm_resources(options);
  auto client = make_slurm_client(settings.client);
  return make_slurm_backend(settings, options, std::move(client));
}

std::unique_ptr<Backend> make_slurm_backend(const SlurmResources& settings, const BackendOptions& options,
                                            std::unique_ptr<SlurmClient> client) {
  return std::make_unique<slurm::SlurmBackend>(settings, options, std::move(client));
}

}  // namespace flotilla::jobs

// SlurmBackend.h — backend "slurm": the tasks submitted between two collect() calls become one
// Slurm job per resource set (TaskSpec::resources, e.g. explore and evaluate on different
// partitions), an allocation of nodes x ranks_per_node that runs flotilla-worker under
// `srun --mpi=pmix` on a manifest of the tasks; the worker's rank 0 writes every result to the
// job's HDF5 file, read back here. In hold mode (`flotilla sbatch`) the next job's folder is
// written instead of submitting, and held() names it; a job submitted by hand from such a folder
// is found by its name and followed like the backend's own.
//
// A thin composition of parts with one concern each, sharing the ledger of tasks and jobs:
//   TaskLedger   the jobs followed, tasks waiting for a result, results ready (exactly once)
//   JobJournal   every phase change of a job, appended to its journal (JobPhase.h)
//   JobFolder    a job's folder: name, manifests, results files
//   Submitter    jobs from tasks, requests (JobRequests), submission, limits and back-off
//   Allocator    slurm_start = allocate: allocation at once and its launcher
//   Poller       one query for all jobs, streamed results, ends, lost launchers
//   Restart      what a restarted scheduler finds in jobs_dir: re-attach or take results
// The Slurm client is passed in (make_slurm_backend builds the one the settings name), so the
// backend runs against a fake Slurm in unit tests.
//
// Invariants (each kept by the part named):
//  - Job states are read with one query for all active jobs per poll (Poller).
//  - A job whose every task has come back is dropped at once, never cancelled (Poller).
//  - Every task comes back exactly once: with the worker's result, or as `lost` (reason names
//    the job and how it ended) when its job ended FAILED, TIMEOUT, NODE_FAIL, PREEMPTED,
//    CANCELLED or vanished before the task reported; the caller re-runs lost tasks with the next
//    attempt. Finished tasks of a failed job are kept (TaskLedger, Poller).
//  - Submit limits are respected and retried, other refusals throw (Submitter).
//  - Jobs outlive the scheduler: nothing is cancelled on destruction (detach leaves them running).
#pragma once

#include <memory>

#include "Allocator.h"
#include "JobJournal.h"
#include "Poller.h"
#include "Restart.h"
#include "SlurmResources.h"
#include "Submitter.h"
#include "TaskLedger.h"
#include "flotilla/jobs/Backend.h"

namespace flotilla::jobs::slurm {

class SlurmBackend final : public Backend {
 public:
  // Reads jobs_dir (Restart::scan_earlier_jobs), asking `client` for its jobs' states. `settings`
  // is slurm_resources(options), or the tests' own.
  SlurmBackend(SlurmResources settings, const BackendOptions& options, std::unique_ptr<SlurmClient> client);
  // Jobs outlive the scheduler (a restart re-attaches through their folders): nothing is
  // cancelled here, and no Slurm call can throw from a destructor.
  ~SlurmBackend() override = default;

  std::string_view name() const override { return "slurm"; }
  BackendCapabilities capabilities() const override;
  std::size_t detach() override;
  void submit(std::vector<TaskSpec> tasks) override;
  std::vector<TaskResult> collect(std::chrono::milliseconds wait) override;
  std::size_t queued() const override;
  std::size_t running() const override { return m_ledger.tasks_in_jobs(true); }
  void cancel_all() override;
  std::optional<JobsOverview> jobs_overview() const override;
  std::optional<HeldJob> held() const override { return m_submitter.held(); }

 private:
  SlurmResources m_settings;
  Notice m_notice;
  std::unique_ptr<SlurmClient> m_client;
  TaskLedger m_ledger;
  JobJournal m_journal;
  Poller m_poller;
  Allocator m_allocator;
  Restart m_restart;
  Submitter m_submitter;
};

}  // namespace flotilla::jobs::slurm

namespace flotilla::jobs {

// What the Slurm backend can do (its registry row's and every instance's).
constexpr BackendCapabilities kSlurmCapabilities{
    .dependencies = true, .outlives_scheduler = true, .build_jobs = true, .job_scripts = true};

// The backend with its settings resolved for options.stages (slurm_resources) and the Slurm
// client they name (api or sbatch).
std::unique_ptr<Backend> make_slurm_backend(const BackendOptions& options);
// The backend with settings and a client of the caller's (a fake Slurm in tests).
std::unique_ptr<Backend> make_slurm_backend(const SlurmResources& settings, const BackendOptions& options,
                                            std::unique_ptr<SlurmClient> client);

const std::vector<BackendSetting>& slurm_backend_settings();

}  // namespace flotilla::jobs

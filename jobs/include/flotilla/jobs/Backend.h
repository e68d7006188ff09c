// Backend.h — where tasks run. Backends sit behind this small interface and are registered by
// name in one explicit list (make_backend), so the Slurm backend and the MPI worker slot in
// without changing the scheduler.
//
// Contract every backend keeps (tests/jobs: one contract suite, instantiated per backend):
//  - every submitted task comes back from collect() exactly once, as a TaskResult with its id;
//  - a task's failure (exit code, signal, timeout, bad metrics) is a result, never an exception;
//  - cancel_all() ends running tasks (status cancelled) and drops queued ones (also returned as
//    cancelled by the next collect());
//  - a task counts in queued() or running() until collect() has returned it, so a caller that
//    loops `while (queued() + running() > 0) collect(...)` sees every result, including tasks
//    that failed to start and those cancel_all() ended.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flotilla/jobs/SbatchOptions.h"
#include "flotilla/jobs/Task.h"

namespace flotilla::jobs {

// What a backend can do, so that the scheduler asks instead of testing its name.
struct BackendCapabilities {
  // TaskSpec::after is honoured: tasks that wait for others may be submitted with them (the
  // scheduler then submits a round's evaluations with its explorations).
  bool dependencies = false;
  // Its tasks keep running when the scheduler stops, and a restarted scheduler takes them up
  // again (re-attach): stopping it detaches rather than cancels.
  bool outlives_scheduler = false;
  // The most tasks it runs at once on one host, and the setting that says so (the scheduler
  // warns when that is more than the host's cores); 0 when it cannot tell (Slurm's nodes).
  unsigned tasks_per_host = 0;
  std::string_view tasks_per_host_setting;
  // It runs a task marked exclusive (explore.exclusive) alone on its host.
  bool runs_exclusive_alone = false;
};

// What a batch system says of the campaign's jobs, for the progress line: a task may be queued
// because its job waits in Slurm's queue, and Slurm says why.
struct JobsOverview {
  std::size_t pending = 0;     // jobs submitted and waiting in the queue
  std::size_t running = 0;
  std::string pending_reason;  // the first pending job's reason as Slurm gives it ("Priority"); may be empty
};

class Backend {
 public:
  // Never touches running work: a backend whose tasks outlive the scheduler leaves them
  // running (to be re-attached), the others end the processes they own. Never throws.
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  virtual BackendCapabilities capabilities() const { return {}; }
  // Queues tasks; they start as slots free up, in submission order.
  virtual void submit(std::vector<TaskSpec> tasks) = 0;
  // Waits up to `wait` for tasks to finish and returns those that did (possibly none).
  virtual std::vector<TaskResult> collect(std::chrono::milliseconds wait) = 0;
  virtual std::size_t queued() const = 0;    // submitted, not started
  virtual std::size_t running() const = 0;
  virtual void cancel_all() = 0;
  // The batch system's view of the backend's jobs, as of its last query; nullopt for a backend
  // that runs tasks itself (local, mpi). Never asks the batch system.
  virtual std::optional<JobsOverview> jobs_overview() const { return std::nullopt; }
  // Stops following every task without ending it, where tasks outlive the scheduler; returns
  // how many were left running. The others cannot leave work behind, and cancel it.
  virtual std::size_t detach() {
    cancel_all();
    return 0;
  }
};

// The allocation one Slurm job asks for.
struct SlurmShape {
  std::string partition;                  // empty: the cluster's default
  int nodes = 1;
  int ranks_per_node = 2;                 // flotilla-worker ranks per node (srun --mpi=pmix)
  int gpus_per_node = 0;
  std::chrono::minutes time_limit{30};
  std::string account;
  std::string qos;
  std::vector<SbatchOption> extra;        // resources.sbatch: further #SBATCH options (SbatchOptions.h)
};

// What each Slurm job asks for, and where its files go (backend "slurm").
struct SlurmResources {
  std::string client = "api";             // "api" (libslurm) or "sbatch" (the commands)
  SlurmShape shape;                       // for tasks whose `resources` has no entry in `stages`
  std::map<std::string, SlurmShape, std::less<>> stages;  // TaskSpec::resources -> its allocation
  std::filesystem::path workdir;          // manifests, job results and logs; absolute
  std::string job_prefix = "flotilla";    // job names: PREFIX-N
  int max_attempts = 3;                   // tries per task across failed, lost or preempted jobs
  int max_submit_jobs = 0;                // the user's pending + running jobs allowed at once; 0: no limit
  bool hold = false;                      // write the next job's folder, submit nothing (throws JobHeld)
  // "batch": every job is a batch job. "allocate": a job that depends on no other and is not an
  // array is first allocated at once when its nodes are free (as `salloc --immediate`), and its
  // script runs from a launcher on this host that outlives flotilla; otherwise a batch job.
  std::string start = "batch";
  std::vector<std::string> setup;         // resources.setup: commands each job script runs first
  std::string launcher = "srun";          // how a job starts its ranks: "srun" or "mpirun" (Open MPI's)
  std::string srun_mpi = "pmix";          // srun --mpi=THIS
};

struct BackendOptions {
  std::string name = "local";
  unsigned slots = 0;                               // local: concurrent tasks; 0 = hardware threads
  bool pin = true;                                  // local: each slot's tasks pinned to its own CPUs
  unsigned ranks = 0;                               // mpi: MPI ranks, rank 0 dispatching; 0 = slots + 1
  std::vector<std::filesystem::path> path_prepend;  // put before PATH for argv[0] lookup
  // mpi: the campaign's own folder (resources.jobs_dir), where each run keeps a private folder
  // of manifests and job files (PrivateDir.h); empty: $TMPDIR.
  std::filesystem::path jobs_dir;
  // local: every task (and what it starts) carries FLOTILLA_CAMPAIGN=<campaign_tag>, so a later
  // scheduler of the campaign can end what a killed one left (kill_campaign_leftovers).
  std::string campaign_tag;
  SlurmResources slurm;                             // backend "slurm"
  // What the user should hear that is not a task's result (a submission deferred by a submit
  // limit, an allocation cancelled because its launcher died): an event kind and a sentence.
  std::function<void(std::string kind, std::string message)> notice;
};

// Ends the processes left running by an earlier scheduler of the campaign tagged `tag` (its
// tasks' descendants that outlived it); returns a sentence saying what, or "" for none.
std::string kill_campaign_leftovers(const std::string& tag);

// How this process keeps a local task's descendants inside the task: "cgroup v2 (DIR)" or
// "child subreaper (WHY)" (jobs/src/process/Containment.h).
std::string task_containment();

// A setting a backend declares ("resources.partition"), with its default and its --help text.
struct BackendSetting {
  std::string_view key;
  std::string_view default_value;  // empty: none
  std::string_view help;
  bool multi = false;              // repeatable: every line counts
};
// Every registered backend's settings, in registry order (local, mpi, slurm).
std::vector<BackendSetting> backend_settings();
// Whether the backend renders job scripts (Slurm): values that reach one must be #SBATCH-safe.
bool backend_renders_job_scripts(std::string_view name);

// Throws std::invalid_argument naming the known backends for an unknown name.
std::unique_ptr<Backend> make_backend(const BackendOptions& options);
std::vector<std::string_view> backend_names();

}  // namespace flotilla::jobs

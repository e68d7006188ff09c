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
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flotilla/jobs/BackendSettings.h"
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
  // It runs tasks on other hosts, so a round's builds may run as jobs of their own there: a
  // backend made for the stage "build" (build.on = job, docs/build.md).
  bool build_jobs = false;
  // It renders job scripts: paths and values that reach one must be #SBATCH-safe.
  bool job_scripts = false;
};

// A job written and not submitted (BackendOptions::hold, `flotilla sbatch`): its folder, for a
// person to read and submit; already_written when an earlier run wrote the same job.
struct HeldJob {
  std::filesystem::path dir;
  std::size_t tasks = 0;
  bool already_written = false;
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
  // In hold mode, the job it wrote instead of submitting: from then on it submits nothing, and
  // its tasks stay queued (the caller stops). An expected outcome, so a value, never thrown.
  virtual std::optional<HeldJob> held() const { return std::nullopt; }
};

// What a backend is made with: its own settings as its registry row read them (`config`), and
// what every backend may use. slots, pin and ranks are the host backends' (local, mpi), plain
// fields because flotilla's own code makes local backends with them (mpirun's launcher, the
// worker's executor, proposers, host builds); a batch system's settings come only through config.
struct BackendOptions {
  std::string name = "local";
  std::shared_ptr<const BackendConfig> config;      // read_backend_configs' for `name`; null: its defaults
  // The stages whose tasks it runs (TaskSpec::resources), the first the default: a backend whose
  // settings differ by stage ([resources.explore], [resources.build]) sets itself up for them.
  std::vector<std::string> stages = {"explore", "evaluate"};
  unsigned slots = 0;                               // local: concurrent tasks; 0 = hardware threads
  bool pin = true;                                  // local: each slot's tasks pinned to its own CPUs
  unsigned ranks = 0;                               // mpi: MPI ranks, rank 0 dispatching; 0 = slots + 1
  std::vector<std::filesystem::path> path_prepend;  // put before PATH for argv[0] lookup
  // The campaign's folder of job files (resources.jobs_dir): the mpi backend's private folders
  // (PrivateDir.h; empty: $TMPDIR), a batch system's job folders (empty: ./flotilla-jobs).
  std::filesystem::path jobs_dir;
  std::string job_prefix = "flotilla";              // a batch system's job names: PREFIX-N
  int max_attempts = 3;                             // tries per task across failed, lost or preempted jobs
  bool hold = false;                                // write the next job, submit nothing (held())
  // local: every task (and what it starts) carries FLOTILLA_CAMPAIGN=<campaign_tag>, so a later
  // scheduler of the campaign can end what a killed one left (kill_campaign_leftovers).
  std::string campaign_tag;
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
// Each row reads and checks its own settings from `source` (BackendSettings.h), every row for
// every campaign; the result goes back to the backend through BackendOptions::config.
BackendConfigs read_backend_configs(SettingsSource& source);
// What the backend `name` can do, without making one ({} for an unknown name): its registry row's
// flags (build_jobs, job_scripts, ...). What depends on how one is made (tasks_per_host: a local
// backend's slots) only the backend itself says, Backend::capabilities().
BackendCapabilities backend_capabilities(std::string_view name);
// The backends that can do what `capability` says, in registry order (for messages).
std::vector<std::string_view> backends_with(bool BackendCapabilities::*capability);
// Whether the backend renders job scripts (Slurm): values that reach one must be #SBATCH-safe.
bool backend_renders_job_scripts(std::string_view name);

// Throws std::invalid_argument naming the known backends for an unknown name.
std::unique_ptr<Backend> make_backend(const BackendOptions& options);
// Tasks as processes on this host, whatever the campaign's backend (builds on the host,
// proposers): make_backend with the registry's own backend for it.
std::unique_ptr<Backend> make_host_backend(BackendOptions options);
std::vector<std::string_view> backend_names();

}  // namespace flotilla::jobs

// MpiBackend.h — runs batches of tasks as MPI worker jobs on this machine (internal; reached
// through make_backend("mpi")).
//
// Each job: the queued tasks are written to a manifest (flotilla-worker kernel commands become
// in-process kernel tasks, Manifest.h), `mpirun -n RANKS flotilla-worker MANIFEST` runs them
// (mpirun itself is run by a one-slot local backend: process group, output capture), and the
// job file is read while it grows, so results come back as they are recorded. When mpirun ends,
// every task of the job without a record comes back as `lost` (a rank died, taking the job with
// it), with mpirun's verdict as the reason; the caller decides whether to run it again (with the
// next attempt number, in a later job).
// Ranks: BackendOptions::ranks; 0 means slots + 1 (rank 0 only dispatches), and slots 0 means
// one worker per core. More ranks than cores adds --oversubscribe; as root, the
// allow-run-as-root variables are set. Same threading rules as the local backend.
#pragma once

#include <deque>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "flotilla/jobs/Backend.h"
#include "flotilla/results/JobFile.h"

namespace flotilla::jobs {

class MpiBackend final : public Backend {
 public:
  explicit MpiBackend(const BackendOptions& options);
  ~MpiBackend() override;

  std::string_view name() const override { return "mpi"; }
  // Its worker ranks, spread over the allocation's nodes when it runs inside one.
  BackendCapabilities capabilities() const override;
  void submit(std::vector<TaskSpec> tasks) override;
  std::vector<TaskResult> collect(std::chrono::milliseconds wait) override;
  // A job's tasks are not observable one by one: at most one per worker rank counts as running.
  std::size_t queued() const override;
  std::size_t running() const override;
  void cancel_all() override;

  unsigned ranks() const { return m_ranks; }
  const std::filesystem::path& folder() const { return m_dir; }  // its private folder (PrivateDir.h)

 private:
  struct Job {
    std::filesystem::path manifest, output;
    std::unordered_map<std::uint64_t, TaskSpec> pending;  // ids are unique within a job
    std::optional<results::JobFileReader> reader;
    bool cancelled = false;
  };

  void start_job();
  void read_records();
  void finish_job(const TaskResult& mpirun);
  std::size_t workers() const { return m_ranks > 1 ? m_ranks - 1 : 1; }

  unsigned m_ranks;
  std::filesystem::path m_dir;  // manifests and job files, private, removed with the backend
  std::string m_worker;         // flotilla-worker's path; empty: not found
  std::unique_ptr<Backend> m_launcher;
  std::deque<TaskSpec> m_queue;
  std::unique_ptr<Job> m_job;
  std::vector<TaskResult> m_ready;    // done, not yet returned by collect()
  std::size_t m_ready_unstarted = 0;  // of those, counted as queued when they ended
  unsigned m_jobs_started = 0;
};

std::unique_ptr<Backend> make_mpi_backend(const BackendOptions& options);

// The mpirun command line for a job (pure, for tests): `mpiexec -n R --bind-to none
// [--oversubscribe] WORKER MANIFEST`.
std::vector<std::string> mpirun_argv(const std::string& mpiexec, unsigned ranks, unsigned cores,
                                     const std::string& worker, const std::filesystem::path& manifest);

const std::vector<BackendSetting>& mpi_backend_settings();

}  // namespace flotilla::jobs

// FakeSlurm.h — a tiny Slurm inside the test process, behind the SlurmClient interface the Slurm
// backend is given, so the backend's parts and the backend contract suite run without a cluster.
//
// What it simulates (and no more):
//  - submit(): the job gets the next id (from 1000) and is PENDING; an array job stands for its
//    elements, as one pending record and then one record per element, as squeue shows them.
//  - Every query() is one step of Slurm's scheduler. A pending job that the test does not hold,
//    whose afterok dependencies completed, starts: RUNNING, DIR/slurm_job_id written (the job
//    script's first line), and for each element the script's worker command runs as a process:
//    `fake-slurm-worker MANIFEST SLOTS` in place of `srun flotilla-worker MANIFEST`, which runs
//    the manifest's tasks on the job's task ranks and appends each result to the job file as the
//    worker's rank 0 does. A pending job whose dependency ended otherwise is CANCELLED
//    (--kill-on-invalid-dep). An element whose process exited ends COMPLETED (status 0) or FAILED.
//  - cancel(): CANCELLED at once, its processes sent SIGTERM as slurmstepd would.
//  - The test decides the rest: hold new jobs PENDING and start them (hold_new, start), end a job
//    with any state (end: NODE_FAIL, TIMEOUT ...; its processes killed), let it vanish from the
//    queue (forget), refuse the next submissions (refuse_next), add jobs of the same user that are
//    not the campaign's (add_user_job), set MaxArraySize, and allow allocations at once.
// Not simulated: nodes, partitions, time limits, priorities, accounting.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "flotilla/jobs/Backend.h"
#include "flotilla/jobs/Slurm.h"
#include "slurm/SlurmResources.h"

namespace flotilla::jobs::test {

class FakeSlurm {
 public:
  FakeSlurm();
  ~FakeSlurm();  // kills every process a job still runs
  FakeSlurm(const FakeSlurm&) = delete;
  FakeSlurm& operator=(const FakeSlurm&) = delete;

  // A client on this Slurm, for the backend to own; the FakeSlurm must outlive it.
  std::unique_ptr<SlurmClient> client();

  // One scheduler step without a query (query() takes one itself).
  void step();
  void hold_new(bool hold) { m_hold_new = hold; }
  void start(std::uint32_t id);
  void end(std::uint32_t id, JobState state);
  void forget(std::uint32_t id);
  void refuse_next(SubmitRejected rejection, int times = 1);
  void add_user_job(JobStatus job) { m_foreign.push_back(std::move(job)); }
  void set_max_array_size(std::uint32_t size) { m_max_array_size = size; }
  // allocate_now() grants the request at once (a RUNNING job with no process: the backend's
  // launcher runs its script) instead of refusing it.
  void allow_allocations(bool allow) { m_allocations = allow; }

  // What the backend asked for, in order.
  const std::vector<JobRequest>& submitted() const { return m_requests; }
  std::vector<std::uint32_t> ids() const;
  JobState state(std::uint32_t id) const;
  const std::set<std::uint32_t>& cancelled() const { return m_cancelled; }
  int queries() const { return m_queries; }
  // Waits (up to 30 s) until every process of every job has exited.
  void wait_for_processes();

 private:
  friend class FakeSlurmClient;
  struct Element {
    std::uint32_t index = 0;  // array index; 0 for a plain job
    JobState state = JobState::pending;
    pid_t pid = 0;  // its worker process while it runs
  };
  struct FakeJob {
    std::uint32_t id = 0;
    JobRequest request;
    JobState state = JobState::pending;  // of the whole job
    std::string reason;
    bool held = false;
    bool vanished = false;
    bool allocation = false;  // made by allocate_now: it ends when released
    std::vector<Element> elements;
  };

  SubmitOutcome submit(const JobRequest& request);
  std::vector<JobStatus> query(const std::vector<std::uint32_t>& ids);
  void cancel(std::uint32_t id);
  std::vector<JobStatus> user_jobs();
  std::optional<std::uint32_t> allocate_now(const JobRequest& request);
  void release(std::uint32_t id, int wait_status);

  FakeJob& job(std::uint32_t id);
  const FakeJob* find(std::uint32_t id) const;
  std::optional<bool> dependency_met(const FakeJob& job) const;  // nullopt: not yet
  void launch(FakeJob& job);
  void reap(FakeJob& job);
  void stop(FakeJob& job, int signal);
  std::vector<JobStatus> records(const FakeJob& job) const;

  std::map<std::uint32_t, FakeJob> m_jobs;
  std::vector<JobRequest> m_requests;
  std::vector<JobStatus> m_foreign;
  std::vector<SubmitRejected> m_refusals;
  std::set<std::uint32_t> m_cancelled;
  std::uint32_t m_next_id = 1000;
  std::uint32_t m_max_array_size = 1001;
  bool m_hold_new = false;
  bool m_allocations = false;
  int m_queries = 0;
};

// The task ranks of a job (ranks less the dispatcher, rank 0), as flotilla-worker runs it.
int task_ranks(const JobRequest& request);

// Slurm settings for a backend on a FakeSlurm: jobs in `jobs_dir`, one node of `slots` task
// ranks and the dispatcher.
SlurmResources fake_slurm_resources(const std::filesystem::path& jobs_dir, unsigned slots);

// The Slurm backend on `slurm` (jobs/src/slurm/SlurmBackend.h) with `settings`.
std::unique_ptr<Backend> make_fake_slurm_backend(FakeSlurm& slurm, const BackendOptions& options,
                                                 const SlurmResources& settings);

}  // namespace flotilla::jobs::test

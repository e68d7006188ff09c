// SlurmResources.h — what one Slurm backend runs with (internal): its settings (SlurmSettings.h)
// resolved for the stages it serves, and the campaign's options every backend gets
// (BackendOptions: job folder, job names, attempts, hold mode). Made once by make_slurm_backend
// (slurm_resources), read by every part of the backend.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "flotilla/jobs/Backend.h"
#include "flotilla/jobs/SlurmSettings.h"

namespace flotilla::jobs {

struct SlurmResources {
  std::string client = "api";             // "api" (libslurm) or "sbatch" (the commands)
  SlurmShape shape;                       // for tasks whose `resources` has no entry in `stages`
  std::map<std::string, SlurmShape, std::less<>> stages;  // TaskSpec::resources -> its allocation
  std::filesystem::path workdir;          // manifests, job results and logs; absolute
  std::string job_prefix = "flotilla";    // job names: PREFIX-N
  int max_attempts = 3;                   // tries per task across failed, lost or preempted jobs
  int max_submit_jobs = 0;                // the user's pending + running jobs allowed at once; 0: no limit
  std::chrono::milliseconds poll_interval{2000};  // SlurmSettings::poll_interval
  bool hold = false;                      // write the next job's folder, submit nothing (Backend::held)
  std::string start = "batch";            // SlurmSettings::start
  std::vector<std::string> setup;         // resources.setup: commands each job script runs first
  std::string launcher = "srun";          // how a job starts its ranks: "srun" or "mpirun" (Open MPI's)
  std::string srun_mpi = "pmix";          // srun --mpi=THIS
};

// The settings (options.config, a SlurmSettings; its defaults when null) for options.stages: the
// first stage's allocation is the default, each stage's its own. Jobs of the stage "build" are
// batch jobs, as they have always been.
SlurmResources slurm_resources(const BackendOptions& options);

}  // namespace flotilla::jobs

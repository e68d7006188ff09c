// JobRequests.h — what the Slurm backend asks Slurm for (pure): a job's request and script from
// its tasks' resource set, and the SBATCH_* variables of the environment checked once at start.
//
// Invariants: the script's first line writes the job's id to DIR/slurm_job_id (so a job
// submitted by hand is identifiable; flotilla's own are named in their journal); every job is --no-requeue (the backend
// re-runs unreported tasks at once in a new job); on GPU nodes, rank 0 (the dispatcher) holds no GPU.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "Job.h"
#include "SlurmResources.h"

namespace flotilla::jobs::slurm {

// The allocation of jobs whose tasks name `resources` (TaskSpec::resources): its stage's, or the
// default shape.
const SlurmShape& shape_of(const SlurmResources& settings, const std::string& resources);

// The request (and so the script) of `job`: its shape, the worker command on its manifest(s),
// resources.setup first, the launcher (srun or mpirun), `dependency` ("afterok:ID:...", or "").
JobRequest job_request(const Job& job, const SlurmResources& settings, const std::filesystem::path& worker,
                       const std::string& dependency);

// sbatch applies the SBATCH_* variables of its environment over a script's #SBATCH lines; the
// api client applies those of SbatchOptions.h the same way. Throws std::invalid_argument naming
// each variable that would break flotilla's jobs, or that `client` ("api") cannot apply as
// sbatch would; says the applied ones as notices.
void check_sbatch_environment(std::string_view client, const Notice& notice);

}  // namespace flotilla::jobs::slurm

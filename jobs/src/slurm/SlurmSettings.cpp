// SlurmSettings.cpp — the settings of the Slurm backend ([resources] and its per-stage sections
// [resources.explore] / [resources.evaluate] / [resources.build], docs/slurm.md), declared next to the backend.
#include "SlurmBackend.h"

namespace flotilla::jobs {

// The settings of backend "slurm" (job shapes, the client, job folders, limits), declared here and registered with it (Backend.cpp):
// the scheduler's one option table takes them for the INI reader, the command line and --help.
const std::vector<BackendSetting>& slurm_backend_settings() {
  static const std::vector<BackendSetting> settings = {
      {"resources.partition", "", "slurm: partition (default: the cluster's default)"},
      {"resources.nodes", "1", "slurm: nodes per job"},
      {"resources.ranks_per_node", "2", "slurm: flotilla-worker ranks per node"},
      {"resources.gpus_per_node", "0", "slurm: --gpus-per-node"},
      {"resources.time_limit", "30m", "slurm: time limit per job"},
      {"resources.account", "", "slurm: account to charge"},
      {"resources.qos", "", "slurm: quality of service"},
      {"resources.slurm_client", "api", "slurm: submit through libslurm (api) or the sbatch command"},
      {"resources.slurm_start", "batch",
       "slurm: batch (every job a batch job), or allocate (a job with free nodes is allocated at once and its "
       "script run from this host, without Slurm's up to 1 s wait for a batch job; api client only)"},
      {"resources.jobs_dir", "", "slurm: where job scripts, manifests and job results go "
                                               "(default: RESULTS.jobs beside the results file)"},
      {"resources.sbatch", "",
       "slurm: further sbatch options for every job, e.g. '--constraint=gb200 --exclusive --mem=0' (each --name=value "
       "or --name; known: --constraint --exclusive --mem --mem-per-cpu --reservation --wckey --exclude --nodelist "
       "--cpus-per-task --comment --licenses --mail-user --mail-type --nice; docs/slurm.md)"},
      {"resources.setup", "",
       "slurm: a command every job script runs first, e.g. 'module load cuda/12.4' (words quoted, no shell syntax; "
       "repeatable, in order)",
       true},
      {"resources.launcher", "srun",
       "slurm: how a job starts its worker ranks: srun (srun --mpi=resources.srun_mpi) or mpirun (Open MPI's, inside the "
       "allocation; batch jobs only)"},
      {"resources.srun_mpi", "pmix", "slurm: srun's --mpi plugin (pmix, pmix_v4, pmi2, ...: srun --mpi=list names yours)"},
      {"resources.max_submit_jobs", "0",
       "slurm: the user's pending and running jobs allowed at once, as the site's MaxSubmitJobs (0 = no limit)"},
      // Per-stage allocations: [resources.explore] / [resources.evaluate] override the keys above
      // for that stage's jobs (docs/slurm.md).
      {"resources.explore.partition", "", "slurm: partition of explore jobs"},
      {"resources.explore.nodes", "", "slurm: nodes per explore job"},
      {"resources.explore.ranks_per_node", "", "slurm: worker ranks per node in explore jobs"},
      {"resources.explore.gpus_per_node", "", "slurm: --gpus-per-node of explore jobs"},
      {"resources.explore.time_limit", "", "slurm: time limit per explore job"},
      {"resources.explore.qos", "", "slurm: quality of service of explore jobs"},
      {"resources.explore.sbatch", "", "slurm: sbatch options of explore jobs (instead of resources.sbatch)"},
      {"resources.evaluate.partition", "", "slurm: partition of evaluate jobs"},
      {"resources.evaluate.nodes", "", "slurm: nodes per evaluate job"},
      {"resources.evaluate.ranks_per_node", "", "slurm: worker ranks per node in evaluate jobs"},
      {"resources.evaluate.gpus_per_node", "", "slurm: --gpus-per-node of evaluate jobs"},
      {"resources.evaluate.time_limit", "", "slurm: time limit per evaluate job"},
      {"resources.evaluate.qos", "", "slurm: quality of service of evaluate jobs"},
      {"resources.evaluate.sbatch", "", "slurm: sbatch options of evaluate jobs (instead of resources.sbatch)"},
      // Build jobs (build.on = job, docs/build.md): one node and no GPUs unless said otherwise.
      {"resources.build.partition", "", "slurm: partition of build jobs (build.on = job), e.g. CPU nodes"},
      {"resources.build.nodes", "", "slurm: nodes per build job (default 1)"},
      {"resources.build.ranks_per_node", "", "slurm: worker ranks per node in build jobs: builds at once + 1"},
      {"resources.build.gpus_per_node", "", "slurm: --gpus-per-node of build jobs (default 0)"},
      {"resources.build.time_limit", "", "slurm: time limit per build job"},
      {"resources.build.qos", "", "slurm: quality of service of build jobs"},
      {"resources.build.sbatch", "", "slurm: sbatch options of build jobs (instead of resources.sbatch)"},
  };
  return settings;
}

}  // namespace flotilla::jobs

// SlurmSettings.h — the Slurm backend's own settings: what [resources] and its per-stage sections
// [resources.explore], [resources.evaluate] and [resources.build] say (docs/slurm.md). The
// backend's registry row declares the keys and reads them into a SlurmSettings
// (jobs/src/slurm/SlurmSettings.cpp, read_slurm_settings); the scheduler passes the object
// through (BackendOptions::config) and never looks inside. `flotilla status`, `cancel` and
// `sbatch` read the client and the folders from it (slurm_settings).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "flotilla/jobs/BackendSettings.h"
#include "flotilla/jobs/SbatchOptions.h"

namespace flotilla::jobs {

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
  bool operator==(const SlurmShape&) const = default;
};

struct SlurmSettings final : BackendConfig {
  std::string client = "api";             // resources.slurm_client: "api" (libslurm) or "sbatch" (the commands)
  SlurmShape shape;                       // [resources]
  // [resources.STAGE] over [resources], for each stage that has a section: explore, evaluate,
  // and build (one node and no GPUs unless its section says otherwise).
  std::map<std::string, SlurmShape, std::less<>> stages;
  int max_submit_jobs = 0;                // the user's pending + running jobs allowed at once; 0: no limit
  // resources.slurm_poll: the least time between two queries of the jobs' states (one query for
  // all of them), so a campaign's calls to slurmctld per minute stay the same however many jobs it has.
  std::chrono::milliseconds poll_interval{2000};
  // "batch": every job is a batch job. "allocate": a job that depends on no other and is not an
  // array is first allocated at once when its nodes are free (as `salloc --immediate`), and its
  // script runs from a launcher on this host that outlives flotilla; otherwise a batch job.
  std::string start = "batch";
  std::vector<std::string> setup;         // resources.setup: commands each job script runs first
  std::string launcher = "srun";          // how a job starts its ranks: "srun" or "mpirun" (Open MPI's)
  std::string srun_mpi = "pmix";          // srun --mpi=THIS

  // A stage's allocation: its section's, else [resources].
  const SlurmShape& stage(std::string_view name) const {
    auto it = stages.find(name);
    return it == stages.end() ? shape : it->second;
  }
  // A job of every node's worker ranks at once (evaluate.shards = auto).
  unsigned tasks_at_once() const override { return static_cast<unsigned>(shape.nodes * shape.ranks_per_node); }
};

// The Slurm backend's row: reads and checks its keys (SettingsSource's errors name file, line
// and key).
std::shared_ptr<const BackendConfig> read_slurm_settings(SettingsSource& source);

// The Slurm row's settings among every row's (read_backend_configs); its defaults when absent.
const SlurmSettings& slurm_settings(const BackendConfigs& configs);

}  // namespace flotilla::jobs

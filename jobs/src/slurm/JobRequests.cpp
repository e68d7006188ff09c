// JobRequests.cpp — the Slurm backend's job requests and scripts, and the SBATCH_* environment
// check (JobRequests.h).
#include "JobRequests.h"

#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "flotilla/jobs/SbatchOptions.h"

namespace flotilla::jobs::slurm {

const SlurmShape& shape_of(const SlurmResources& settings, const std::string& resources) {
  auto it = settings.stages.find(resources);
  return it == settings.stages.end() ? settings.shape : it->second;
}

JobRequest job_request(const Job& job, const SlurmResources& settings, const std::filesystem::path& worker_path,
                       const std::string& dependency) {
  const auto& shape = shape_of(settings, job.resources);
  auto what = job.resources.empty() ? std::string() : " (" + job.resources + ")";
  const bool array = !job.array.empty();
  JobRequest r{
      .name = job.name,
      .partition = shape.partition,
      .nodes = shape.nodes,
      .ranks_per_node = shape.ranks_per_node,
      .gpus_per_node = shape.gpus_per_node,
      .time_limit = shape.time_limit,
      .account = shape.account,
      .qos = shape.qos,
      .dependency = dependency,
      .array = job.array,
      .requeue = false,
      .workdir = job.dir,
      .output = job.dir / (array ? "slurm-%A_%a.out" : "slurm-%j.out"),
      .extra = shape.extra,
      .comments = {fmt::format("flotilla job {}: {} tasks{} from manifest.json", job.name, job.tasks.size(), what),
                   array ? "a job array: element E runs the tasks of manifest-E.json and writes results-E.h5"
                         : "flotilla-worker ranks pull tasks from rank 0, which writes each result to "
                           "results.h5 as it completes",
                   "slurm_job_id: this job's id, for a `flotilla run` that did not submit it (a job submitted by hand)",
                   "--no-requeue: after a node failure flotilla runs the unreported tasks again in a "
                   "new job, at once (Slurm would hold a requeued job for minutes)"},
      .commands = {"echo \"${SLURM_ARRAY_JOB_ID:-$SLURM_JOB_ID}\" > slurm_job_id"}};
  if (!settings.setup.empty())
    r.comments.push_back(
        "resources.setup: its lines run first, with set +u (module scripts read unset variables); "
        "a line that fails ends the job, named in its output");
  for (std::size_t i = 0; i < settings.setup.size(); ++i)
    r.commands.push_back(render_setup_line(settings.setup[i], i + 1));
  const std::string worker = fmt::format("{} {}", shell_quote(worker_path.string()),
                                         array ? "manifest-${SLURM_ARRAY_TASK_ID}.json" : "manifest.json");
  const auto srun = fmt::format("srun --mpi={}", settings.srun_mpi);
  // The allocation's nodes, one a line: an allocation run by `flotilla run-allocation` has no
  // SLURM_JOB_NODELIST, so squeue names them.
  const std::string node_list =
      "scontrol show hostnames \"${SLURM_JOB_NODELIST:-$(squeue -h -j \"$SLURM_JOB_ID\" -o %N)}\"";
  // Rank 0 dispatches and runs no task, so on GPU nodes it holds no GPU (Placement.h): the first
  // node runs it beside ranks_per_node task ranks, and every GPU has a rank that runs tasks.
  const int dispatcher = shape.gpus_per_node > 0 ? 1 : 0;
  const int ranks = shape.nodes * shape.ranks_per_node + dispatcher;
  if (dispatcher && settings.launcher != "mpirun")
    r.comments.push_back(
        fmt::format("rank 0 only dispatches and holds no GPU: the first node runs it beside {} "
                    "task ranks (--overcommit: it needs no CPU of its own)",
                    shape.ranks_per_node));
  if (settings.launcher == "mpirun") {
    // Open MPI's mpirun reads the allocation from Slurm and starts its daemons on the nodes
    // through srun. The hostfile gives each node ranks_per_node slots, the first one the
    // dispatcher's too: mapped by slot, ranks 0..r land on the first node.
    r.comments.push_back("resources.launcher = mpirun: Open MPI's mpirun starts the ranks on the allocation's nodes");
    r.commands.push_back(
        fmt::format("{} | awk -v r={} -v extra={} '{{ print $0 \" slots=\" (NR == 1 ? r + extra : r) }}' "
                    "> hostfile",
                    node_list, shape.ranks_per_node, dispatcher));
    r.commands.push_back(
        fmt::format("mpirun -n {} --hostfile hostfile --map-by slot --bind-to none {}", ranks, worker));
  } else if (!dispatcher) {
    // The step's shape is spelled out: an allocation run by `flotilla run-allocation` has no batch
    // environment to take it from.
    r.commands.push_back(
        fmt::format("{} --nodes={} --ntasks-per-node={} {}", srun, shape.nodes, shape.ranks_per_node, worker));
  } else if (shape.nodes == 1) {
    r.commands.push_back(fmt::format("{} --nodes=1 --ntasks={} --overcommit --gpus-per-node={} {}", srun, ranks,
                                     shape.gpus_per_node, worker));
  } else {
    // Block distribution alone may put the extra rank on any node: the hostfile names the
    // first node once more than the others.
    r.commands.push_back(
        fmt::format("{} | awk -v r={} 'NR == 1 {{ print }} {{ for (i = 0; i < r; i++) print }}' "
                    "> hostfile",
                    node_list, shape.ranks_per_node));
    r.commands.push_back(
        fmt::format("SLURM_HOSTFILE=hostfile {} --nodes={} --ntasks={} "
                    "--distribution=arbitrary --overcommit --gpus-per-node={} {}",
                    srun, shape.nodes, ranks, shape.gpus_per_node, worker));
  }
  if (!dependency.empty())
    r.comments.push_back(
        fmt::format("starts once the {} job(s) it depends on completed; Slurm cancels it if they fail", job.after));
  return r;
}

// sbatch applies the SBATCH_* variables of its environment over a script's #SBATCH lines, so
// with the sbatch client they reach every job whether flotilla knows them or not; the api
// client applies those of SbatchOptions.h the same way. A variable that would break flotilla's
// jobs, or that the api client cannot apply as sbatch would, stops the run here, named;
// the ones applied are said once, so that a job landing elsewhere than the campaign file says
// is never a surprise.
void check_sbatch_environment(std::string_view client, const Notice& notice) {
  const auto environment = read_sbatch_environment(process_environment());
  std::vector<std::string> errors = environment.refused;
  errors.insert(errors.end(), environment.malformed.begin(), environment.malformed.end());
  if (client == "api")
    for (const auto& name : environment.unsupported)
      errors.push_back(
          fmt::format("{}: sbatch would apply it, but libslurm's job description (resources.slurm_client "
                      "= api) has no way to: unset it, or use resources.slurm_client = sbatch",
                      name));
  if (!errors.empty())
    throw std::invalid_argument(fmt::format("the environment's SBATCH_* variables: {}", fmt::join(errors, "; ")));
  if (!notice) return;
  for (const auto& option : environment.applied)
    notice("sbatch_environment", fmt::format("{} from the environment (SBATCH_*) applies to every job, over the "
                                             "campaign's settings, as sbatch does",
                                             to_string(option)));
  for (const auto& name : environment.unsupported)
    notice("sbatch_environment", fmt::format("{} is in the environment: sbatch applies it to every job", name));
}

}  // namespace flotilla::jobs::slurm

// SlurmSettings.cpp — the settings of the Slurm backend ([resources] and its per-stage sections
// [resources.explore] / [resources.evaluate] / [resources.build], docs/slurm.md): declared here,
// read and checked here (read_slurm_settings, the backend's registry row), and resolved for the
// stages one backend serves (slurm_resources). Nothing outside jobs/src/slurm knows a key of them.
#include "flotilla/jobs/SlurmSettings.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include <fmt/format.h>

#include "SlurmBackend.h"
#include "SlurmResources.h"
#include "flotilla/jobs/Command.h"
#include "flotilla/jobs/Slurm.h"

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
      {"resources.slurm_poll", "2s",
       "slurm: the least time between two queries of the jobs' states (one query for all jobs; results and job "
       "starts are seen from the job folders in between)"},
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

namespace flotilla::jobs {
namespace {

// A Slurm partition, account or QOS as one sbatch option value: letters, digits and _ . -
// (partitions also a comma-separated list).
void check_slurm_name(SettingsSource& r, std::string_view key, bool list) {
  const auto value = r.text(key);
  if (value.empty()) return;
  const bool ok = std::all_of(value.begin(), value.end(), [&](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' || (list && c == ',');
  });
  if (!ok)
    r.fail(key, list ? "is not a Slurm partition name or list (letters, digits, _ . - and commas)"
                     : "is not a Slurm name (letters, digits, _ . -)");
}

// resources.sbatch (or a stage's): the options, checked against SbatchOptions.h's table.
std::vector<SbatchOption> read_sbatch_options(SettingsSource& r, const std::string& key) {
  std::vector<SbatchOption> options;
  if (!r.given(key)) return options;
  try {
    options = parse_sbatch_options(r.text(key));
  } catch (const std::invalid_argument& e) {  // the message quotes the option it is about
    r.fail_bare(key, e.what());
  }
  return options;
}

std::chrono::minutes time_limit(SettingsSource& r, const std::string& key) {
  const auto limit = r.duration(key);
  if (limit < std::chrono::minutes(1)) r.fail(key, "is shorter than a minute");
  return std::chrono::duration_cast<std::chrono::minutes>(limit);
}

// A stage's Slurm allocation: [resources] with the keys its [resources.STAGE] section gives.
SlurmShape read_stage_shape(SettingsSource& r, const SlurmShape& base, std::string_view stage) {
  SlurmShape shape = base;
  auto key = [&](std::string_view name) { return fmt::format("resources.{}.{}", stage, name); };
  if (r.given(key("sbatch"))) shape.extra = read_sbatch_options(r, key("sbatch"));
  if (r.given(key("partition"))) shape.partition = r.text(key("partition"));
  if (r.given(key("qos"))) shape.qos = r.text(key("qos"));
  check_slurm_name(r, key("partition"), true);
  check_slurm_name(r, key("qos"), false);
  if (r.given(key("nodes"))) shape.nodes = static_cast<int>(r.integer(key("nodes"), 1, 100'000));
  if (r.given(key("ranks_per_node"))) shape.ranks_per_node = static_cast<int>(r.integer(key("ranks_per_node"), 1, 4096));
  if (r.given(key("gpus_per_node"))) shape.gpus_per_node = static_cast<int>(r.integer(key("gpus_per_node"), 0, 64));
  if (r.given(key("time_limit"))) shape.time_limit = time_limit(r, key("time_limit"));
  return shape;
}

void read_setup(SettingsSource& r, SlurmSettings& s) {
  const auto lines = r.all("resources.setup");
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const auto& line = lines[i];
    if (line.empty()) r.fail("resources.setup", "is empty", i);
    if (std::any_of(line.begin(), line.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 && c != '\t'; }))
      r.fail("resources.setup", "holds a control character: a job script's line cannot carry it", i);
    try {
      render_setup_line(line, 1);
    } catch (const CommandError& e) {
      r.fail("resources.setup", e.what(), i);
    }
    s.setup.push_back(line);
  }
}

}  // namespace

std::shared_ptr<const BackendConfig> read_slurm_settings(SettingsSource& r) {
  auto s = std::make_shared<SlurmSettings>();
  s->shape.partition = r.text("resources.partition");
  s->shape.nodes = static_cast<int>(r.integer("resources.nodes", 1, 100'000));
  s->shape.ranks_per_node = static_cast<int>(r.integer("resources.ranks_per_node", 1, 4096));
  s->shape.gpus_per_node = static_cast<int>(r.integer("resources.gpus_per_node", 0, 64));
  s->shape.time_limit = time_limit(r, "resources.time_limit");
  s->shape.account = r.text("resources.account");
  s->shape.qos = r.text("resources.qos");
  check_slurm_name(r, "resources.partition", true);
  check_slurm_name(r, "resources.account", false);
  check_slurm_name(r, "resources.qos", false);
  s->client = r.choice("resources.slurm_client", {"api", "sbatch"});
  s->start = r.choice("resources.slurm_start", {"batch", "allocate"});
  if (s->start == "allocate" && s->client != "api")
    r.fail("resources.slurm_start",
           "needs resources.slurm_client = api: the sbatch client has no way to allocate at once and release with a "
           "status");
  // The job folder (a setting of every backend) is written into #SBATCH --chdir and --output
  // lines: no blank, no control character.
  if (const auto dir = r.text("resources.jobs_dir"); !dir.empty() && !is_sbatch_value(dir))
    r.fail("resources.jobs_dir", "holds a blank or a control character, which a job script's #SBATCH lines cannot carry");
  s->max_submit_jobs = static_cast<int>(r.integer("resources.max_submit_jobs", 0, 1'000'000));
  s->poll_interval = r.duration("resources.slurm_poll");
  if (s->poll_interval < std::chrono::milliseconds(100))
    r.fail("resources.slurm_poll", "is shorter than 100ms (each poll is a query of slurmctld)");
  s->launcher = r.choice("resources.launcher", {"srun", "mpirun"});
  if (s->launcher == "mpirun" && s->start == "allocate")
    r.fail("resources.launcher",
           "needs resources.slurm_start = batch: an allocation made at once runs its script outside a Slurm step, "
           "where mpirun would not see the allocation");
  s->srun_mpi = r.text("resources.srun_mpi");
  check_slurm_name(r, "resources.srun_mpi", false);
  if (s->srun_mpi.empty()) r.fail("resources.srun_mpi", "is empty (srun --mpi=list names the plugins)");
  s->shape.extra = read_sbatch_options(r, "resources.sbatch");
  read_setup(r, *s);
  for (const char* stage : {"explore", "evaluate", "build"}) s->stages[stage] = read_stage_shape(r, s->shape, stage);
  // A build is one process on one node; GPUs only when asked for.
  auto& build = s->stages["build"];
  if (!r.given("resources.build.nodes")) build.nodes = 1;
  if (!r.given("resources.build.gpus_per_node")) build.gpus_per_node = 0;
  return s;
}

const SlurmSettings& slurm_settings(const BackendConfigs& configs) {
  static const SlurmSettings defaults;
  const auto* s = dynamic_cast<const SlurmSettings*>(configs.find("slurm").get());
  return s ? *s : defaults;
}

SlurmResources slurm_resources(const BackendOptions& options) {
  static const SlurmSettings defaults;
  const auto* config = dynamic_cast<const SlurmSettings*>(options.config.get());
  const SlurmSettings& s = config ? *config : defaults;
  SlurmResources r{.client = s.client,
                   .shape = s.stage(options.stages.empty() ? std::string() : options.stages.front()),
                   .workdir = options.jobs_dir,
                   .job_prefix = options.job_prefix,
                   .max_attempts = options.max_attempts,
                   .max_submit_jobs = s.max_submit_jobs,
                   .poll_interval = s.poll_interval,
                   .hold = options.hold,
                   .start = s.start,
                   .setup = s.setup,
                   .launcher = s.launcher,
                   .srun_mpi = s.srun_mpi};
  for (const auto& stage : options.stages) r.stages[stage] = s.stage(stage);
  if (!options.stages.empty() && std::all_of(options.stages.begin(), options.stages.end(),
                                             [](const std::string& stage) { return stage == "build"; }))
    r.start = "batch";
  return r;
}

}  // namespace flotilla::jobs

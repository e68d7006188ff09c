// CommandTable.cpp — the one table of `flotilla` subcommands (Commands.h): what each takes and
// what its help says. The dispatcher, `--help`, the man pages and the completions read it.
#include <fmt/format.h>

#include "Commands.h"
#include "flotilla/search/Strategy.h"

namespace flotilla::cli {
namespace {

po::options_description help_only() {
  po::options_description desc("options");
  desc.add_options()("help,h", "show this help");
  return desc;
}

po::options_description run_allocation_options() {
  po::options_description desc = help_only();
  desc.add_options()("launcher", "be the detached launcher itself (without it, start one and return once it runs)");
  return desc;
}

std::string strategies() {
  return fmt::format("strategies: {}\n", fmt::join(search::strategy_names(), ", "));
}

constexpr std::string_view kRunDescription =
    "Runs the campaign that CAMPAIGN.ini describes: explores candidates, verifies the best, confirms their "
    "speed-up over the baseline and reports the winner. When the results file already exists, the campaign "
    "resumes from it: recorded tasks never run again, and a changed setting that recorded results depend on is "
    "refused, naming it.\n\n"
    "Every campaign setting can be given on the command line as --section.key=VALUE; precedence is default < "
    "file < command line. The campaign file's syntax, its comments ('#' after a blank and outside quotes, `\\#` "
    "for a literal one) and the placeholders of its commands ({candidate}, {repeat}, {shard}, {shards}, "
    "{report}, {files}, the parameters' names, and {{ and }} for literal braces) are described in docs/config.md "
    "(installed as share/doc/flotilla/docs/config.md); every key is listed below.\n\n"
    "Exit status: 0 done, 1 bad input or setup, 3 nothing verified, 4 stopped by `flotilla cancel`, "
    "130 interrupted (run the same command again to resume).";

constexpr std::string_view kStatusDescription =
    "Prints the campaign's summary (as `flotilla results summary` does), its run state (running, finished, "
    "interrupted, cancelled or stopped) and a table of its Slurm jobs: job id, name, Slurm's state with its reason, "
    "the phase the job's journal records (done or ended where Slurm saw the job end and no run has journalled it "
    "yet), tasks and recorded results. Every state comes from one query to Slurm. It never changes anything.";

constexpr std::string_view kCancelDescription =
    "Cancels the campaign's pending and running Slurm jobs. A running `flotilla run` of the campaign is first "
    "asked to stop: it resubmits nothing and exits 4. Recorded results are kept, and the next `flotilla run` "
    "resumes the rest.";

constexpr std::string_view kSbatchDescription =
    "Writes the next batch's Slurm job folder (job.sh and manifest.json under resources.jobs_dir) without "
    "submitting it, for you to read and submit with `sbatch`. The next `flotilla run` finds the job, follows it "
    "while it runs and records its results. A staged campaign (intent.stages = bottleneck) cannot be written "
    "this way.";

constexpr std::string_view kReplayDescription =
    "Runs a search strategy against a recorded tuning space (a CSV file with one column per parameter and one per "
    "metric, or a Kernel Tuner cache, optionally gzipped) instead of hardware, and reports how close it gets to "
    "the known optimum: best found / optimum, and the evaluations it took to come within 5% and 1%. Deterministic "
    "for a seed. With --warm-start, another recorded space of the same kernel (another GPU's, say) warm-starts every "
    "repeat, and the report sets the cold and the warm statistics of the same seeds side by side.";

constexpr std::string_view kResultsDescription =
    "Offline analysis of campaign files, finished, running or crashed: summaries, histories, tables, "
    "comparisons across campaigns, Pareto fronts, parameter importance, exports and plots. Every subcommand "
    "prints aligned text for people and, with --json, one JSON object for scripts; `flotilla results SUBCOMMAND "
    "--help` lists its options.";

constexpr std::string_view kRunAllocationDescription =
    "Internal: started by the Slurm backend with resources.slurm_start = allocate. Runs JOB_DIR/job.sh inside "
    "the Slurm allocation JOB_ID, detached from flotilla, and releases the allocation with the script's exit "
    "status when it ends. Without --launcher it starts the launcher (flotilla run-allocation --launcher, a "
    "session of its own) and returns once the launcher has named itself in JOB_DIR/launcher.";

std::string results_list() {
  std::string out = "subcommands (flotilla results SUBCOMMAND --help lists its options):\n";
  for (const auto& s : results_subcommands())
    out += fmt::format("  {:<8} {}\n  {:<8} {}\n", s.name, s.synopsis, "", s.what);
  return out;
}

}  // namespace

const std::vector<CommandInfo>& command_table() {
  static const std::vector<CommandInfo> table = {
      {"run", "CAMPAIGN.ini [--section.key=VALUE ...] [--no-live] [--cancel-on-interrupt]", "run or resume a campaign",
       kRunDescription, run_options, Operands::campaign, 1, SettingsUse::all, {}, nullptr, false, run_command},
      {"results", "SUBCOMMAND FILE.h5 ... [options] [--json]",
       "analyse campaign files: summary, history, top, compare, pareto, params, export, plot, tests",
       kResultsDescription, help_only, Operands::subcommand, 1, SettingsUse::none, {}, results_list, false,
       results_command},
      {"status", "CAMPAIGN.ini [--section.key=VALUE ...]", "the campaign's progress and its Slurm jobs",
       kStatusDescription, help_only, Operands::campaign, 1, SettingsUse::overrides,
       {"campaign.results", "resources.jobs_dir", "resources.slurm_client"}, nullptr, false, status_command},
      {"cancel", "CAMPAIGN.ini [--section.key=VALUE ...]", "cancel the campaign's pending and running Slurm jobs",
       kCancelDescription, help_only, Operands::campaign, 1, SettingsUse::overrides,
       {"campaign.results", "resources.jobs_dir", "resources.slurm_client"}, nullptr, false, cancel_command},
      {"sbatch", "CAMPAIGN.ini [--section.key=VALUE ...]", "write the next batch's Slurm job script, to submit by hand",
       kSbatchDescription, help_only, Operands::campaign, 1, SettingsUse::overrides,
       {"campaign.results", "resources.jobs_dir", "resources.partition", "resources.nodes", "resources.time_limit",
        "resources.account", "resources.qos", "resources.sbatch", "resources.setup"},
       nullptr, false, sbatch_command},
      {"replay", "SPACE.csv|CACHE.json[.gz] [--strategy S] [--budget N] [--repeats R] [--seed K] [--warm-start OTHER] [--json]",
       "replay a search strategy on a recorded tuning space", kReplayDescription, replay_options,
       Operands::recorded_space, 1, SettingsUse::none, {}, strategies, false, replay_command},
      {"run-allocation", "[--launcher] JOB_ID JOB_DIR", "(internal) run a job folder's script in an allocation made at once",
       kRunAllocationDescription, run_allocation_options, Operands::job, 2, SettingsUse::none, {}, nullptr, true,
       run_allocation_command},
  };
  return table;
}

const CommandInfo* find_command(std::string_view name) {
  for (const auto& c : command_table())
    if (c.name == name) return &c;
  return nullptr;
}

}  // namespace flotilla::cli

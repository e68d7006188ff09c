// Options.cpp — the one table of campaign settings. The INI reader, the command-line parser and
// `flotilla run --help` are all generated from it, so they cannot disagree.
#include "flotilla/scheduler/Options.h"

#include <boost/program_options.hpp>

#include "flotilla/jobs/Backend.h"

namespace po = boost::program_options;

namespace flotilla::scheduler {

const std::vector<OptionDecl>& option_table() {
  static const std::vector<OptionDecl> table = [] {
  std::vector<OptionDecl> rows = {
      {"campaign.name", "", false, false, "campaign name (default: the config file's name without .ini)"},
      {"campaign.results", "", false, false, "HDF5 results file (default: NAME.h5 in the working directory)"},
      {"campaign.seed", "1", false, false, "seed of every random choice"},
      {"campaign.workdir", "", false, false,
       "where every task runs, on every backend, and what relative paths in commands mean (default: the directory "
       "`flotilla run` is started in; a relative path in the campaign file is relative to the file's folder, so "
       "`workdir = .` is the campaign file's folder); on Slurm it must be on a file system the nodes share"},
      {"intent.objective", "", false, false,
       "metric to optimise, as printed by the explore command, or wall_time: flotilla times the command itself "
       "(seconds, minimized; this or intent.objectives is required)"},
      {"intent.direction", "maximize", false, false, "maximize or minimize"},
      {"intent.objectives", "", false, false,
       "several objectives instead of one: METRIC:min or METRIC:max, separated by commas (e.g. 'time_s:min, "
       "residual:min'); every member of their Pareto front is verified and intent.pick chooses the winner "
       "(docs/objectives.md)"},
      {"intent.pick", "knee", false, false,
       "with several objectives, which verified front member wins: knee (closest to every objective's best, each "
       "scaled to [0, 1] over the front), weighted W1,W2,... (least weighted sum of those scaled values) or "
       "lexicographic (best by the first objective, ties by the next)"},
      {"intent.baseline", "", false, false, "reference configuration, e.g. 'tile_x=32 tile_y=8'"},
      {"intent.target", "", false, false, "stop once a verified candidate reaches this objective"},
      {"intent.on_baseline_failure", "stop", false, false,
       "stop (the campaign ends with the baseline's reason when the baseline fails to explore or to verify: "
       "without a measured, verified reference nothing can be confirmed) or continue (search anyway, e.g. to find "
       "a variant that passes tests the baseline fails)"},
      {"intent.stages", "none", false, false,
       "none (one search over the space) or bottleneck (profile, tune the component with the largest share, "
       "re-profile; one results file per stage, RESULTS.stageK.h5)"},
      {"intent.stage_threshold", "0.03", false, false,
       "stages = bottleneck: stop when a stage gains less than this fraction"},
      {"intent.component", "", false, true,
       "NAME: SHARE_METRIC: PARAMS, a component of the profile, the explore command's metric of its share "
       "of the time, and the [space] parameters that tune it (repeatable)"},
      {"space.param", "", true, true, "NAME: int|real|enum|ordinal: VALUES (repeatable)"},
      {"space.constraint", "", false, true, "expression over parameters that must hold (repeatable)"},
      // The build stage (docs/build.md): code variants compiled per candidate, once per build key.
      {"build.command", "", false, false,
       "build command run before a candidate is explored (no shell; {param} and {build_dir}, the build's own "
       "folder); one build per distinct command text with the values of the parameters it names"},
      {"build.timeout", "10m", false, false, "per-build limit (ms, s, m, h; 0 = none)"},
      {"build.parallel", "0", false, false, "builds at a time, on the host flotilla runs on (0: its CPUs)"},
      {"build.on", "auto", false, false,
       "where builds run: host (where flotilla runs), job (Slurm jobs of their own on [resources.build], which "
       "explore jobs follow), or auto (job with the slurm backend, else host)"},
      {"build.env", "", false, true,
       "NAME=VALUE set in the build's environment; VALUE is a template over the parameters ({param}) and "
       "{build_dir}, and part of the build key; no shell (repeatable)"},
      {"build.inputs", "", false, false,
       "files and folders the build reads (sources, patches), blank-separated, relative to the working folder: "
       "their content is part of every build key and of the results' fingerprint"},
      {"build.dir", "", false, false,
       "where the build folders go (default: RESULTS.builds beside the results file); on Slurm it must be on a file "
       "system the nodes share"},
      {"explore.command", "", false, false,
       "benchmark command; {param} is replaced by its value (required, unless intent.objective is counted from the "
       "evaluate stage's tests: tests.passed or tests.GROUP)"},
      {"explore.env", "", false, true,
       "NAME=VALUE set in the benchmark's environment; VALUE is a template like the command's ({param}); no shell "
       "(repeatable)"},
      {"explore.repeats", "3", false, false, "benchmark runs per candidate (the median counts)"},
      {"explore.max_repeats", "auto", false, false,
       "adaptive repeats: a candidate whose interval still contains the incumbent's objective gets `repeats` more "
       "runs, up to this many in all; one clearly worse stops (racing). auto = 2 x repeats; = repeats turns it off"},
      {"explore.timeout", "60s", false, false, "per-run limit (ms, s, m, h; 0 = none)"},
      {"explore.exclusive", "false", false, false,
       "local backend: no other task runs beside a benchmark run (quieter, slower); evaluate shards always share"},
      {"explore.warmup", "auto", false, false,
       "runs of each candidate before its repeats (and of each side before a confirmation), recorded and never "
       "counted; auto: 1 with intent.objective = wall_time (flotilla times the command), else 0"},
      {"evaluate.command", "", false, false, "verification command per shard; also gets {shard} and {shards}"},
      {"evaluate.env", "", false, true, "NAME=VALUE set in the verification's environment, as explore.env (repeatable)"},
      {"evaluate.shards", "1", false, false,
       "test shards per candidate; all must pass. auto: one per slot (resources.slots, else the CPUs; on Slurm "
       "nodes x ranks_per_node)"},
      {"evaluate.timeout", "60s", false, false, "per-shard limit"},
      {"evaluate.gate", "top 3 per round", false, false, "which candidates are verified: 'top K per round' or 'all'"},
      // Per-test outcomes (docs/tests.md): the suite kind, where its report goes, and the test gate.
      {"evaluate.suite", "exit", false, false,
       "what a shard reports: exit (its exit code), gtest (a GoogleTest binary, sharded by GTEST_SHARD_INDEX), "
       "ctest (a ctest command line, e.g. 'ctest --test-dir build'; shards by test number), "
       "lit (an LLVM lit command line without test paths; shards by test path), pytest (a pytest command line "
       "without test paths; shards by node id), "
       "files (one command per shard over {files}, a list of files from evaluate.files), per_file (one command per "
       "file, {file}, of evaluate.files), junit or tap (the command writes {report})"},
      {"evaluate.files", "", false, false, "suite = files or per_file: the test files, relative to the working directory: glob patterns separated by blanks, ** for any "
       "number of directories, @LIST for a file of one path a line"},
      {"evaluate.paths", "", false, false,
       "suite = lit or pytest: where the runner finds its tests (files or directories separated by blanks, relative "
       "to the working directory); flotilla lists the tests there and gives each shard its own"},
      {"evaluate.list", "", false, false,
       "suite = junit or tap: a command that prints the test names, one a line, before the shards run, so a test the "
       "shards do not report is caught as not run; none accepts the reports as complete"},
      {"evaluate.report", "tap", false, false, "suite = files: the format the command writes to {report}: tap or junit"},
      {"evaluate.summary", "", false, false,
       "suite = per_file: a PCRE2 pattern with named groups, e.g. (?<errors>\\d+) errors out of (?<tests>\\d+) tests; "
       "its last match in a file's output gives the file's numbers, and no match fails the file"},
      {"evaluate.pass_when", "", false, false,
       "suite = per_file: a muparser expression over the summary's groups and exit_code that decides a file's pass "
       "(e.g. errors == 0); without it the exit code decides"},
      {"evaluate.parallel", "0", false, false,
       "suite = per_file: checker processes at a time in a shard (0: the CPUs the shard may use)"},
      {"evaluate.no_drop", "", false, false,
       "suite = per_file with require = no_regression: summary groups (e.g. tests) whose number in a file may not "
       "fall below the baseline's: a candidate that runs fewer checks in a file regresses on it"},
      {"evaluate.require", "all_pass", false, false,
       "test gate of a suite: all_pass, or no_regression (no test that passed for the baseline fails, and at least "
       "as many pass)"},
      {"evaluate.rerun_failures", "true", false, false,
       "suite = gtest: run the failed tests once more; both outcomes are recorded, a pass on the re-run is flaky"},
      // Confirmation (docs/verdicts.md): a winner's speed-up is measured against the baseline in
      // interleaved pairs until its interval decides.
      {"confirm.enabled", "true", false, false,
       "confirm a candidate's speed-up over the baseline in interleaved pairs before it is reported as the winner"},
      {"confirm.confidence", "0.95", false, false,
       "confidence of the speed-up's interval, simultaneous over the sequential looks"},
      {"confirm.min_effect", "0.02", false, false,
       "smallest gain worth reporting: confirmed faster means the interval lies above 1 + this"},
      {"confirm.max_pairs", "100", false, false, "most candidate/reference pairs one confirmation runs"},
      {"confirm.tries", "2", false, false,
       "candidates confirmed per round at most, best first, until one is confirmed faster"},
      {"confirm.head_to_head", "true", false, false,
       "measure candidates confirmed faster whose intervals overlap the winner's against it in interleaved pairs, "
       "and name a tie"},
      // Proposers (docs/propose.md): programs that write code changes while the campaign runs.
      {"propose.command", "", false, false,
       "a proposer: an argv template (no shell) run when the search needs candidates, with {context} (a JSON file "
       "flotilla writes: what the last round showed), {out} (an empty folder it fills with NAME.patch and "
       "NAME.json), {index}, {seed}, {round}; each NAME.patch becomes a candidate built, explored, verified and "
       "confirmed like a declared one"},
      {"propose.tree", "", false, false,
       "the source tree the patches are written against (relative to the working folder); {tree} in commands is a "
       "private copy of it with the candidate's chain of patches applied; its content is part of the fingerprint"},
      {"propose.timeout", "10m", false, false, "per proposer run (ms, s, m, h; 0 = none); past it the run is killed"},
      {"propose.when", "every_round", false, false,
       "every_round, exhausted (once the declared space is spent) or stall N (after N rounds without a confirmed "
       "gain)"},
      {"propose.max_per_round", "4", false, false, "proposals accepted per round at most, over the whole fleet"},
      {"propose.budget", "16", false, false,
       "proposals in all (accepted and refused; a run that writes nothing counts as one)"},
      {"propose.parallel", "1", false, false,
       "proposer processes at once, each told its index ({index}, 0-based) and seed ({seed}): a fleet"},
      {"search.strategy", "bayes-genetic", false, false,
       "search strategy: bayes-genetic, bayes, bayes-local, random, grid, sobol, genetic, annealing, local, "
       "hyperband, bandit, nsga2, parego, bayes-escape, bayes-climb (docs/search.md); with several objectives the "
       "default is parego, with search.fidelity hyperband"},
      {"search.fidelity", "", false, false,
       "a [space] parameter (e.g. a problem size) whose values, in the order declared, are ever more faithful and "
       "costly evaluations: hyperband explores new candidates at the first value and promotes the best third to "
       "the next; only the last value is verified or wins, and the best candidate of the highest lower value is "
       "measured at the last before the campaign ends (docs/search.md#fidelity)"},
      {"search.warm_start", "", false, false,
       "a finished campaign's results file (OTHER.h5) over the same parameters and objective, e.g. on another GPU or "
       "compiler: its outcomes are given to the strategy as advice, never as results of this campaign "
       "(docs/search.md#warm-start)"},
      {"search.budget", "32", false, false, "candidates to explore, the baseline not counted (0: verify the baseline alone)"},
      {"search.batch", "8", false, false, "candidates per round"},
      {"resources.backend", "local", false, false, "where tasks run: local, mpi or slurm"},
      {"resources.max_attempts", "3", false, false, "tries per task when jobs fail, are preempted or lose a node"},
      {"resources.jobs_dir", "", false, false,
       "where backends keep their job files: Slurm's job scripts, manifests and job results, the mpi backend's "
       "private folders (default: RESULTS.jobs beside the results file)"},
      // Each backend's own settings are declared next to it (jobs::backend_settings()) and
      // appended below, so they reach the INI reader, the command line and --help the same way.
  };
  for (const auto& setting : jobs::backend_settings())
    rows.push_back({setting.key, setting.default_value, false, setting.multi, setting.help});
  return rows;
  }();
  return table;
}

const OptionDecl* find_option(std::string_view key) {
  for (const auto& decl : option_table())
    if (decl.key == key) return &decl;
  return nullptr;
}

po::options_description campaign_options() {
  po::options_description all("Campaign settings ([section] key in the file, --section.key=VALUE here)");
  for (const auto& decl : option_table()) {
    std::string help(decl.help);
    if (!decl.default_value.empty()) help += " [" + std::string(decl.default_value) + "]";
    if (decl.required) help += " (required)";
    auto* value = decl.multi ? po::value<std::vector<std::string>>()->composing() : po::value<std::vector<std::string>>();
    all.add_options()(std::string(decl.key).c_str(), value->value_name("VALUE"), help.c_str());
  }
  return all;
}

}  // namespace flotilla::scheduler

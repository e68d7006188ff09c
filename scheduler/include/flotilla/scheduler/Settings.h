// Settings.h — a campaign file plus command-line overrides, validated into typed settings.
//
// One declaration table (Options.cpp) feeds three views: the INI file read with
// Boost.Program_options, the command line (--section.key=value), and `flotilla run --help`.
// Precedence: default < file < command line; a key given on the command line replaces every
// value of that key in the file. Errors name file, line, section and key, e.g.
//   quickstart.ini:12: [space] param 'tile_x': '8..x' is not an integer range
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/program_options/options_description.hpp>

#include "flotilla/jobs/BackendSettings.h"
#include "flotilla/results/Objectives.h"
#include "flotilla/results/TestOutcomes.h"
#include "flotilla/scheduler/Stages.h"
#include "flotilla/search/Space.h"
#include "flotilla/suites/Sharding.h"

namespace flotilla::scheduler {

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Which explored candidates go on to evaluation in each round.
struct Gate {
  enum class Kind { top, all } kind = Kind::top;
  int top = 3;
  std::string text() const;
};

struct Settings {
  std::filesystem::path config_path;
  std::string config_text;

  std::string name;
  std::filesystem::path results;
  std::filesystem::path campaign_results;  // absolute; a staged campaign's stages keep the campaign's
  std::filesystem::path workdir;  // absolute: where every task runs (campaign.workdir, else where flotilla started)
  // [explore] env / [evaluate] env: NAME and VALUE template of each, in order.
  std::vector<std::pair<std::string, std::string>> explore_env, evaluate_env;
  std::uint64_t seed = 1;

  std::string objective;
  bool maximize = true;
  // intent.objective = tests.passed or tests.GROUP: counted from the evaluate stage's tests, with
  // no explore stage; every candidate is evaluated and confirmation is off (counts are exact).
  bool tests_objective() const { return objective.starts_with("tests."); }
  // intent.objectives (docs/objectives.md): two or more objectives, the first being `objective`
  // and `maximize`; empty: one objective. The campaign verifies every member of their Pareto
  // front and `pick` chooses the winner from the verified ones.
  std::vector<results::Goal> objectives;
  results::PickRule pick;
  std::optional<std::string> baseline;   // canonical configuration text
  std::optional<double> target;
  bool stop_on_baseline_failure = true;  // [intent] on_baseline_failure = stop (Planning.h baseline_failure)
  // [intent] stages = bottleneck: one search stage per component, largest share first
  // (Stages.h, StagedRun.cpp); false: one search stage over the whole space.
  bool staged = false;
  double stage_threshold = 0.03;
  std::vector<Component> components;     // [intent] component, in file order
  // Set by StagedRun for each stage's campaign: what a proposer is told of the stage.
  struct StageInfo {
    int index = 0;
    std::string component, share_metric;
    std::vector<std::string> params;
    double share = 0;                          // the component's share of the profile
    std::map<std::string, double> profile;     // every component's share
  };
  std::optional<StageInfo> stage;

  search::Space space;

  // [build] (docs/build.md): a candidate's code variant is built before it is explored, once per
  // distinct build key (Builds.h), in its own folder under build_root, given to every command
  // as {build_dir}. Builds run on this host, build_parallel at a time (0: its CPUs).
  std::string build_command;             // empty: no build stage
  std::vector<std::pair<std::string, std::string>> build_env;  // [build] env: NAME=TEMPLATE
  // build.inputs (BuildInputs.h): what the build reads that can change, and the digest of their
  // content when the settings were loaded; part of every build key and of the fingerprint.
  std::vector<std::string> build_inputs;
  std::string build_inputs_digest;
  // What a build depends on: the command and its env lines, as one text whose placeholders
  // make the build key (Builds.h). The command alone when there are no env lines.
  std::string build_template() const;
  std::chrono::milliseconds build_timeout{600'000};
  unsigned build_parallel = 0;
  std::filesystem::path build_root;      // absolute; default RESULTS.builds
  // build.on: where builds run. false: on this host (local and mpi backends, or build.on = host);
  // true: as Slurm jobs of their own on [resources.build] (the default with the slurm backend).
  bool build_jobs = false;
  // Said once before the campaign runs, not errors (e.g. a build folder the nodes may not share).
  std::vector<std::string> warnings;

  // [propose] (docs/propose.md): a proposer writes code candidates while the campaign runs.
  struct Propose {
    std::string command;                    // empty: no proposer
    std::filesystem::path tree;             // absolute; empty: none ({tree} unknown)
    std::string tree_digest;                // the tree's content when the settings were loaded
    std::chrono::milliseconds timeout{600'000};
    enum class When { every_round, exhausted, stall } when = When::every_round;
    int stall_rounds = 0;                   // when = stall: rounds without a confirmed gain
    int max_per_round = 4;
    int budget = 16;
    int parallel = 1;
    bool active() const { return !command.empty(); }
  } propose;

  std::string explore_command;
  int repeats = 3;
  int max_repeats = 6;                   // adaptive repeats stop here (docs/verdicts.md)
  std::chrono::milliseconds explore_timeout{60'000};
  bool explore_exclusive = false;        // local backend: nothing runs beside a benchmark run
  int warmup = 0;                        // discarded runs before a candidate's repeats

  // Confirmation of speed-ups (docs/verdicts.md).
  bool confirm = true;
  double confirm_confidence = 0.95;
  double confirm_min_effect = 0.02;
  int confirm_max_pairs = 100;
  int confirm_tries = 2;
  bool confirm_head_to_head = true;  // finalists measured against the winner (docs/verdicts.md, "Ties")

  std::string evaluate_command;          // empty: no evaluate stage, nothing is verified
  int shards = 1;
  std::chrono::milliseconds evaluate_timeout{60'000};
  Gate gate;
  // Per-test outcomes (evaluate.suite != exit; SuiteStage.h, docs/tests.md). With a suite, each
  // shard writes a report, and a candidate is verified by the test gate over all of its tests.
  suites::SuiteKind suite = suites::SuiteKind::exit;
  std::string suite_files;               // suite = files: the glob
  std::string suite_list;                // suite = junit or tap: the listing command, or "none"
  std::string suite_paths;               // suite = lit or pytest: where the runner finds its tests (blank-separated)
  suites::SuiteKind suite_report = suites::SuiteKind::tap;   // suite = files: tap or junit
  // suite = per_file (suites/PerFile.h): one checker process per file, `suite_parallel` at a time
  // in a shard (0: the shard's CPUs), evaluate_timeout per file; judged by the exit code, or by
  // the summary pattern's named groups and pass_when. no_drop: groups whose per-file number may
  // not fall below the baseline's (no_regression).
  std::string suite_summary, suite_pass_when;
  int suite_parallel = 0;
  std::vector<std::string> suite_no_drop;
  results::TestGate require = results::TestGate::all_pass;
  bool rerun_failures = true;
  std::filesystem::path tests_dir;       // reports and lists: RESULTS.tests

  std::string strategy = "bayes-genetic";  // the default of search.strategy (Options.cpp)
  // search.fidelity (docs/search.md#fidelity): a [space] parameter whose declared values are ever
  // more faithful evaluations (hyperband's rungs); its last value is full fidelity, the only one
  // verified, confirmed or the winner. Empty: none.
  std::string fidelity;
  std::string fidelity_full() const;  // the parameter's last value, as configurations write it
  // search.warm_start (docs/search.md#warm-start): a finished campaign's results file over the
  // same parameters, whose outcomes the strategy is given as advice. Empty: none.
  std::filesystem::path warm_start;
  std::size_t budget = 32;
  std::size_t batch = 8;

  std::string backend = "local";
  unsigned slots = 0;
  bool pin = true;                       // local backend: slots pinned to their own CPUs
  unsigned ranks = 0;                    // mpi backend: 0 = slots + 1
  // Where backends keep their job files (resources.jobs_dir; default RESULTS.jobs): a batch
  // system's job folders, the mpi backend's private folders.
  std::filesystem::path jobs_dir;
  // Every backend's own [resources] settings, each read and checked by its registry row
  // (jobs/BackendSettings.h); the campaign's backend gets its own through BackendOptions::config.
  jobs::BackendConfigs backends;
  int max_attempts = 3;

  // "key = value" lines of every setting that recorded results depend on; a resumed campaign
  // must have the same (budget, batch, strategy, seed, slots and timeouts may change).
  std::string fingerprint() const;
};

// Why results recorded under the fingerprint `recorded` cannot be resumed by a campaign whose
// fingerprint is `now` ("explore.env changed from 'A=1' to 'A=2'; ..."), or nullopt when they can.
// A fingerprint written before flotilla recorded the working folder and the env lines (it has no
// "fingerprint = 2" line) is compared without them, so older results files still resume.
std::optional<std::string> fingerprint_change(const std::string& recorded, const std::string& now);

// The declarations as Boost.Program_options sees them (also used for --help).
boost::program_options::options_description campaign_options();

// Reads `file`, applies `overrides` (e.g. {"--search.budget=64"}), validates. Throws ConfigError.
Settings load_settings(const std::filesystem::path& file, const std::vector<std::string>& overrides);

// Parses "500ms", "20s", "2m", "1h" or "0" (no limit); nullopt when malformed.
std::optional<std::chrono::milliseconds> parse_duration(std::string_view text);

}  // namespace flotilla::scheduler

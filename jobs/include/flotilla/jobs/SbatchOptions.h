// SbatchOptions.h — the sbatch options a campaign passes through (`resources.sbatch`) and the
// SBATCH_* variables of the environment, from one table, so that both Slurm clients treat them
// alike: the sbatch client renders them as #SBATCH lines (and sbatch reads the variables
// itself), the api client sets the same fields of libslurm's job description. Pure: the
// environment comes in as a list, and nothing here talks to Slurm (docs/slurm.md).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace flotilla::jobs {

// One option as sbatch spells it: "--constraint=gb200" is {"constraint", "gb200"}, the switch
// "--exclusive" is {"exclusive", ""}.
struct SbatchOption {
  std::string name;
  std::string value;
  bool operator==(const SbatchOption&) const = default;
};

// What the table knows of one sbatch option.
struct SbatchFlag {
  std::string_view name;         // without the dashes
  std::string_view environment;  // the SBATCH_* variable sbatch reads for it; empty: none
  bool takes_value;
};

// The options flotilla passes through: those the api client can set too. Options flotilla sets
// itself (job name, nodes, tasks, partition, output, array, ...) have their own settings.
const std::vector<SbatchFlag>& sbatch_pass_through_flags();

// Parses `resources.sbatch`: options separated by blanks, each "--name=value" or "--name" for a
// switch. Throws std::invalid_argument naming the option and why: not a known pass-through option
// (the message lists them), one flotilla sets itself (it names the setting to use), a switch
// given a value, or an option missing its value. A value is checked as its field needs (a memory
// size, a count).
std::vector<SbatchOption> parse_sbatch_options(std::string_view text);

// "--constraint=gb200", as a #SBATCH line carries it.
std::string to_string(const SbatchOption& option);

// Memory as sbatch reads it ("64G", "500M", "1024", "2T"; K M G T, default M) in MiB (a K amount
// is rounded up); nullopt when malformed.
std::optional<std::uint64_t> parse_memory_mib(std::string_view text);

// A time limit as Slurm reads it: "MM", "MM:SS", "HH:MM:SS", "D-HH", "D-HH:MM", "D-HH:MM:SS",
// in whole minutes (seconds rounded up); nullopt when malformed or unlimited.
std::optional<std::chrono::minutes> parse_slurm_time(std::string_view text);

// The SBATCH_* variables of an environment ("NAME=VALUE" entries), sorted out by what sbatch
// does with them and what the api client can do the same way:
struct SbatchEnvironment {
  // Variables of options both clients apply: the pass-through table's, and the allocation
  // fields partition, account, qos and time (SBATCH_PARTITION, _ACCOUNT, _QOS, _TIMELIMIT), as
  // options ({"partition", "debug"}). As sbatch, a variable beats the script's #SBATCH line.
  std::vector<SbatchOption> applied;
  // Variables that would change what flotilla relies on (its job names, output files, arrays,
  // requeue, the environment its ranks get, the cluster it queries): "SBATCH_JOB_NAME: why".
  std::vector<std::string> refused;
  // Other SBATCH_* variables: sbatch applies them, libslurm's job description cannot.
  std::vector<std::string> unsupported;
  // Malformed values of applied variables: "SBATCH_TIMELIMIT=abc: why".
  std::vector<std::string> malformed;
};
SbatchEnvironment read_sbatch_environment(const std::vector<std::string>& environment);

// The process's own environment as a list, for read_sbatch_environment.
std::vector<std::string> process_environment();

}  // namespace flotilla::jobs

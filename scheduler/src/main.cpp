// main.cpp — the `flotilla` command line: dispatches to the subcommands listed here.
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <string_view>

#include <fmt/format.h>

#include "Commands.h"

namespace {

constexpr const char* kUsage = R"(flotilla — turns an intent into a verified result

usage:
  flotilla run CAMPAIGN.ini [--section.key=VALUE ...]   run or resume a campaign
  flotilla results summary FILE.h5 [--json] [--top K]   summarise a campaign's results
  flotilla results SUBCOMMAND FILE.h5 ... [--json]      history, top, compare, pareto, params,
                                                        export, plot (flotilla results --help)
  flotilla status CAMPAIGN.ini                          the campaign's progress and its Slurm jobs
  flotilla cancel CAMPAIGN.ini                          cancel the campaign's pending and running Slurm jobs
  flotilla sbatch CAMPAIGN.ini                          write the next batch's Slurm job script, to submit by hand
  flotilla run-allocation JOB_ID JOB_DIR                (internal) run a job folder's script in an allocation
                                                        made at once (resources.slurm_start = allocate)
  flotilla replay SPACE.csv|CACHE.json[.gz] [...]       replay a search strategy on a recorded space
  flotilla --version
  flotilla COMMAND --help                               options of a command

exit codes: 0 done, 1 bad input or setup, 3 nothing verified, 130 interrupted (resumable)
)";

struct Command {
  std::string_view name;
  int (*run)(const std::vector<std::string>&);
};

// The one list of subcommands.
constexpr Command kCommands[] = {
    {"run", flotilla::cli::run_command},
    {"results", flotilla::cli::results_command},
    {"status", flotilla::cli::status_command},
    {"cancel", flotilla::cli::cancel_command},
    {"sbatch", flotilla::cli::sbatch_command},
    {"run-allocation", flotilla::cli::run_allocation_command},
    {"replay", flotilla::cli::replay_command},
};

}  // namespace

// What a command printed must have reached its reader: `flotilla results export > /dev/full`
// is a failure, not a success with the data lost.
int checked_output(const std::string& name, int status) {
  errno = 0;
  std::cout.flush();
  if (std::cout) return status;
  const int error = errno;
  std::cerr << "flotilla " << name << ": cannot write to standard output"
            << (error ? std::string(": ") + std::strerror(error) : std::string()) << '\n';
  return status == 0 ? 1 : status;
}

int main(int argc, char** argv) {
  // Files and folders flotilla makes (results, job folders, manifests whose commands a worker
  // runs) are never writable by others, whatever umask it was started with.
  ::umask(::umask(0) | 022);
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << kUsage;
    return args.empty() ? 1 : 0;
  }
  if (args[0] == "--version") {
    std::cout << "flotilla " << FLOTILLA_VERSION << '\n';
    return 0;
  }
  const std::string name = args[0];
  args.erase(args.begin());
  for (const auto& command : kCommands) {
    if (command.name != name) continue;
    try {
      return checked_output(name, command.run(args));
    } catch (const std::exception& e) {
      checked_output(name, 1);
      std::cerr << "flotilla " << name << ": " << e.what() << '\n';
      return 1;
    }
  }
  std::cerr << fmt::format("flotilla: unknown command '{}'\n\n{}", name, kUsage);
  return 1;
}

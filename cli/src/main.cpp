// main.cpp — the `flotilla` command line: dispatches to the subcommands of the command table
// (CommandTable.cpp). A command's `--help` is answered here, from the table, on stdout with exit
// 0 (`flotilla results SUBCOMMAND --help` by `results`, from its own table). Too few operands is
// a usage error: the usage on stderr, exit 1.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <string_view>

#include <fmt/format.h>

#include "Commands.h"
#include "flotilla/results/Printable.h"

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

namespace {

bool asks_for_help(const std::vector<std::string>& args) {
  return std::any_of(args.begin(), args.end(), [](const std::string& a) { return a == "--help" || a == "-h"; });
}

int dispatch(const std::string& name, const std::vector<std::string>& args) {
  if (name == "help") return flotilla::cli::help_command(args);
  const auto* command = flotilla::cli::find_command(name);
  if (!command) {
    std::cerr << fmt::format("flotilla: unknown command '{}'\n\n{}", name, flotilla::cli::usage_text());
    return 1;
  }
  // A command with subcommands answers its own subcommands' --help.
  const bool subcommands = command->operands == flotilla::cli::Operands::subcommand;
  if (subcommands ? !args.empty() && (args[0] == "--help" || args[0] == "-h") : asks_for_help(args)) {
    std::cout << flotilla::cli::command_help(*command);
    return 0;
  }
  if (!subcommands && args.size() < command->min_operands) {
    std::cerr << flotilla::cli::short_usage(*command);
    return 1;
  }
  return command->run(args);
}

}  // namespace

int main(int argc, char** argv) {
  // Files and folders flotilla makes (results, job folders, manifests whose commands a worker
  // runs) are never writable by others, whatever umask it was started with.
  ::umask(::umask(0) | 022);
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::cerr << flotilla::cli::usage_text();
    return 1;
  }
  if (args[0] == "--help" || args[0] == "-h") {
    std::cout << flotilla::cli::usage_text();
    return checked_output("--help", 0);
  }
  if (args[0] == "--version") {
    std::cout << "flotilla " << FLOTILLA_VERSION << '\n';
    return checked_output("--version", 0);
  }
  const std::string name = args[0];
  args.erase(args.begin());
  try {
    return checked_output(name, dispatch(name, args));
  } catch (const std::exception& e) {
    checked_output(name, 1);
    // Errors quote task output and names read from files: shown escaped (Printable.h).
    std::cerr << "flotilla " << name << ": " << flotilla::results::printable(e.what()) << '\n';
    return 1;
  }
}

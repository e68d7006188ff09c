// Commands.h — the subcommands of `flotilla`, each in its own file, listed once in main.cpp.
// A command takes the arguments after its name and returns the process exit code; bad input
// throws (main prints "flotilla COMMAND: message" and exits 1).
#pragma once

#include <string>
#include <vector>

namespace flotilla::cli {

int run_command(const std::vector<std::string>& args);      // RunCommand.cpp
int results_command(const std::vector<std::string>& args);  // ResultsCommand.cpp
int status_command(const std::vector<std::string>& args);   // SlurmCommands.cpp
int cancel_command(const std::vector<std::string>& args);   // SlurmCommands.cpp
int sbatch_command(const std::vector<std::string>& args);   // SlurmCommands.cpp
int run_allocation_command(const std::vector<std::string>& args);  // SlurmCommands.cpp
int replay_command(const std::vector<std::string>& args);   // ReplayCommand.cpp

}  // namespace flotilla::cli

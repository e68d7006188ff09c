// Commands.h — the subcommands of `flotilla`, each in its own file, and the one table of them
// (CommandTable.cpp) that the dispatcher (main.cpp), every `--help`, the man pages and the shell
// completions (Help.cpp) are generated from, so they cannot disagree.
// A command takes the arguments after its name and returns the process exit code; bad input
// throws (main prints "flotilla COMMAND: message" and exits 1). `--help` never reaches a command
// but `results`, which has subcommands of its own: the dispatcher answers it from the table.
#pragma once

#include <boost/program_options.hpp>
#include <iosfwd>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace flotilla::cli {

namespace po = boost::program_options;

int run_command(const std::vector<std::string>& args);      // RunCommand.cpp
int results_command(const std::vector<std::string>& args);  // ResultsCommand.cpp
int status_command(const std::vector<std::string>& args);   // SlurmCommands.cpp
int cancel_command(const std::vector<std::string>& args);   // SlurmCommands.cpp
int sbatch_command(const std::vector<std::string>& args);   // SlurmCommands.cpp
int run_allocation_command(const std::vector<std::string>& args);  // SlurmCommands.cpp
int replay_command(const std::vector<std::string>& args);   // ReplayCommand.cpp
int help_command(const std::vector<std::string>& args);     // Help.cpp

// The options a command parses; its --help, man page and completion list the same.
po::options_description run_options();     // RunCommand.cpp
po::options_description replay_options();  // ReplayCommand.cpp

// What a command's arguments are, for the usage check and the completions.
enum class Operands { campaign, results_files, recorded_space, job, subcommand };

// Which campaign settings (scheduler/src/Options.cpp) a command takes as --section.key=VALUE.
enum class SettingsUse { none, all, overrides };

struct CommandInfo {
  std::string_view name;
  std::string_view synopsis;     // the arguments after "flotilla NAME"
  std::string_view summary;      // one line: the command list, the man page's NAME
  std::string_view description;  // paragraphs separated by blank lines: --help and the man page
  po::options_description (*options)();  // the command's own options, --help included
  Operands operands;
  std::size_t min_operands;      // fewer is a usage error (usage on stderr, exit 1)
  SettingsUse settings;
  std::vector<std::string_view> relevant;  // SettingsUse::overrides: the keys that matter most here
  std::string (*epilog)();       // may be null: more text after the options (e.g. the strategies)
  bool internal;                 // started by flotilla itself: no man page, no completion
  int (*run)(const std::vector<std::string>& args);
};

// The one list of subcommands, in the order the usage lists them.
const std::vector<CommandInfo>& command_table();
const CommandInfo* find_command(std::string_view name);

// `flotilla results` subcommands (ResultsCommand.cpp): their names, synopses and options.
struct ResultsSubcommandInfo {
  std::string_view name, synopsis, what;
  po::options_description options;
};
std::vector<ResultsSubcommandInfo> results_subcommands();

// The views of the table (Help.cpp, ManPages.cpp, Completions.cpp).
std::string usage_text();                          // `flotilla --help`
std::string command_help(const CommandInfo& c);    // `flotilla NAME --help`
std::string short_usage(const CommandInfo& c);     // the usage error's text
po::options_description settings_of(const CommandInfo& c);  // campaign settings it lists
void write_man_pages(const std::string& dir, std::ostream& log);
std::string bash_completion();
std::string zsh_completion();

}  // namespace flotilla::cli

// Help.cpp — `flotilla --help`, `flotilla COMMAND --help` and `flotilla help`, all generated from
// the command table (CommandTable.cpp) and the option tables (Options.cpp, each command's
// options), like the man pages (ManPages.cpp) and the shell completions (Completions.cpp).
//
// Help asked for goes to stdout and exits 0; a usage error goes to stderr and exits 1.
// `flotilla help --man DIR` and `flotilla help --completion bash|zsh [FILE]` are for the build,
// which installs what they write (cmake/FlotillaInstall.cmake).
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "Commands.h"
#include "flotilla/scheduler/Settings.h"

namespace flotilla::cli {
namespace {

// Paragraphs (separated by blank lines) filled to `width` columns.
std::string fill(std::string_view text, std::size_t width = 100) {
  std::string out, line;
  for (std::size_t begin = 0; begin <= text.size();) {
    auto end = std::min(text.find("\n\n", begin), text.size());
    std::istringstream in{std::string(text.substr(begin, end - begin))};
    for (std::string word; in >> word;) {
      if (!line.empty() && line.size() + 1 + word.size() > width) out += std::exchange(line, {}) + '\n';
      line += (line.empty() ? "" : " ") + word;
    }
    out += std::exchange(line, {}) + '\n';
    begin = end + 2;
    if (begin <= text.size()) out += '\n';
  }
  return out;
}

int write_to(const std::string& file, const std::string& text) {
  if (file.empty() || file == "-") {
    std::cout << text;
    return 0;
  }
  std::ofstream out(file);
  out << text;
  out.close();
  if (!out) throw std::runtime_error(fmt::format("cannot write {}", file));
  return 0;
}

}  // namespace

std::string usage_text() {
  std::string out = "flotilla — turns an intent into a verified result\n\nusage:\n";
  for (const auto& c : command_table())
    out += fmt::format("  flotilla {} {}\n      {}\n", c.name, c.synopsis, c.summary);
  out +=
      "  flotilla help [COMMAND]  |  flotilla COMMAND --help\n      the options of a command\n"
      "  flotilla --version\n\n"
      "exit codes: 0 done, 1 bad input or setup, 3 nothing verified, 4 stopped by `flotilla cancel`,\n"
      "            130 interrupted (resumable)\n"
      "campaign files, command placeholders and comments: docs/config.md (share/doc/flotilla/docs/config.md)\n";
  return out;
}

po::options_description settings_of(const CommandInfo& c) {
  if (c.settings == SettingsUse::all) return scheduler::campaign_options();
  po::options_description some(
      "campaign settings that matter here (any key `flotilla run --help` lists, as --section.key=VALUE)");
  if (c.settings == SettingsUse::none) return some;
  const auto all = scheduler::campaign_options();
  for (const auto& option : all.options())
    for (auto key : c.relevant)
      if (option->long_name() == key) some.add(option);
  return some;
}

std::string command_help(const CommandInfo& c) {
  std::ostringstream out;
  out << fmt::format("usage: flotilla {} {}\n\n", c.name, c.synopsis) << fill(c.description) << '\n' << c.options();
  if (c.settings != SettingsUse::none) out << '\n' << settings_of(c);
  if (c.epilog) out << '\n' << c.epilog();
  return out.str();
}

std::string short_usage(const CommandInfo& c) {
  return fmt::format("usage: flotilla {} {}\n(`flotilla {} --help` lists its options)\n", c.name, c.synopsis, c.name);
}

int help_command(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::cout << usage_text();
    return 0;
  }
  const std::string& first = args[0];
  if (first == "--man") {
    if (args.size() != 2) throw std::invalid_argument("usage: flotilla help --man DIR");
    write_man_pages(args[1], std::cout);
    return 0;
  }
  if (first == "--completion" || first.starts_with("--completion=")) {
    auto shell = first == "--completion" ? (args.size() > 1 ? args[1] : "") : first.substr(13);
    const std::size_t operands = first == "--completion" ? 2 : 1;
    if (args.size() > operands + 1 || (shell != "bash" && shell != "zsh"))
      throw std::invalid_argument("usage: flotilla help --completion bash|zsh [FILE]");
    return write_to(args.size() > operands ? args[operands] : "", shell == "bash" ? bash_completion() : zsh_completion());
  }
  if (first == "results" && args.size() > 1) {
    std::vector<std::string> rest(args.begin() + 1, args.end());
    rest.push_back("--help");
    return results_command(rest);
  }
  const auto* c = find_command(first);
  if (!c) throw std::invalid_argument(fmt::format("unknown command '{}' (flotilla --help lists them)", first));
  std::cout << command_help(*c);
  return 0;
}

}  // namespace flotilla::cli

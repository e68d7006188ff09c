// Settings.cpp — reading a campaign file and command-line overrides into Settings.
//
// The file is read by parse_ini (Ini.h: every line accounted for, '#' in values kept), the
// command line by Boost.Program_options, both against the one option table. Every value is
// kept with where it came from ("quickstart.ini:12", "command line") until it is validated.
#include "flotilla/scheduler/Settings.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include <boost/program_options.hpp>
#include <fmt/format.h>

#include "Ini.h"
#include "flotilla/jobs/Backend.h"
#include "flotilla/jobs/Slurm.h"
#include "flotilla/scheduler/Options.h"

namespace po = boost::program_options;

namespace flotilla::scheduler {
namespace {

std::string section_of(std::string_view key) { return std::string(key.substr(0, key.find('.'))); }
std::string name_of(std::string_view key) {
  auto dot = key.find('.');
  return std::string(dot == std::string_view::npos ? key : key.substr(dot + 1));
}

std::string unknown_key_message(const std::string& key) {
  if (key.find('.') == std::string::npos) return fmt::format("key '{}' is outside any [section]", key);
  std::vector<std::string> known;
  for (const auto& decl : option_table())
    if (section_of(decl.key) == section_of(key)) known.push_back(name_of(decl.key));
  if (known.empty()) return fmt::format("unknown section [{}]", section_of(key));
  return fmt::format("[{}] unknown key '{}' (known: {})", section_of(key), name_of(key), fmt::join(known, ", "));
}

// A command's comment that holds a placeholder: almost surely a '#' meant for the command.
void check_comment(const IniEntry& entry, const std::string& where) {
  static constexpr std::string_view commands[] = {"build.command", "explore.command", "evaluate.command",
                                                  "evaluate.list"};
  if (std::find(std::begin(commands), std::end(commands), entry.key) == std::end(commands)) return;
  const auto open = entry.comment.find('{');
  if (open == std::string::npos || entry.comment.find('}', open) == std::string::npos) return;
  throw ConfigError(fmt::format(
      "{}: [{}] {}: the comment after '#' holds a placeholder ('{}'): a '#' after a blank starts a comment; write "
      "\\# if it belongs to the command",
      where, section_of(entry.key), name_of(entry.key), entry.comment));
}

// A relative campaign.workdir written in a campaign file means the file's own folder, so a campaign
// that reads files beside it (`workdir = .`) runs wherever it is started from and wherever it is
// installed; on the command line it means the current directory, as any path there does.
std::string workdir_in_file(const std::filesystem::path& file, const std::string& value) {
  const std::filesystem::path path(value);
  if (value.empty() || path.is_absolute()) return value;
  return (std::filesystem::absolute(file).parent_path() / path).lexically_normal().string();
}

RawValues read_file(const std::filesystem::path& file, const std::string& text) {
  const auto display = file.filename().string();
  RawValues raw;
  for (const auto& entry : parse_ini(text, display)) {
    const auto where = fmt::format("{}:{}", display, entry.line);
    if (!find_option(entry.key)) throw ConfigError(fmt::format("{}: {}", where, unknown_key_message(entry.key)));
    check_comment(entry, where);
    const bool workdir = entry.key == "campaign.workdir";
    raw[entry.key].push_back({workdir ? workdir_in_file(file, entry.value) : entry.value, where});
  }
  return raw;
}

RawValues read_overrides(const std::vector<std::string>& args) {
  po::parsed_options parsed(nullptr);
  // No guessing of abbreviated keys (the file accepts none either), so no "ambiguous option"
  // error: its what() expands Boost's %canonical_option% placeholder with the argument's own
  // text, and an argument holding that placeholder made it loop for ever (fuzz_settings,
  // tests/fuzz/fuzz_settings/regressions). Any other Boost error is named without its what()
  // when an argument holds a '%', for the same reason.
  const int style = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
  try {
    parsed = po::command_line_parser(args).options(campaign_options()).style(style).allow_unregistered().run();
  } catch (const po::error& e) {
    for (const auto& arg : args)
      if (arg.find('%') != std::string::npos)
        throw ConfigError(fmt::format("command line: cannot read the options ({})", fmt::join(args, " ")));
    throw ConfigError(fmt::format("command line: {}", e.what()));
  }
  RawValues raw;
  for (const auto& option : parsed.options) {
    if (option.unregistered || option.string_key.empty()) {
      auto shown = option.original_tokens.empty() ? option.string_key : option.original_tokens.front();
      throw ConfigError(fmt::format("command line: unknown option '{}'", shown));
    }
    for (const auto& value : option.value) raw[option.string_key].push_back({value, "command line"});
  }
  return raw;
}

}  // namespace

std::optional<std::chrono::milliseconds> parse_duration(std::string_view text) {
  std::size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  if (digits == 0 || digits > 9) return std::nullopt;
  long long n = std::stoll(std::string(text.substr(0, digits)));
  auto unit = text.substr(digits);
  if (unit == "ms") return std::chrono::milliseconds(n);
  if (unit == "s" || (unit.empty() && n == 0)) return std::chrono::milliseconds(n * 1000);
  if (unit == "m") return std::chrono::milliseconds(n * 60'000);
  if (unit == "h") return std::chrono::milliseconds(n * 3'600'000);
  return std::nullopt;
}

Settings load_settings(const std::filesystem::path& file, const std::vector<std::string>& overrides) {
  std::error_code error;
  const auto status = std::filesystem::status(file, error);
  if (!error && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
    throw ConfigError(fmt::format("{}: is not a campaign file but a {}", file.string(),
                                  std::filesystem::is_directory(status) ? "directory" : "special file"));
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ConfigError(fmt::format("{}: cannot open campaign file: {}", file.string(), std::strerror(errno)));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto display = file.filename().string();
  auto raw = merge_sources(read_file(file, text), read_overrides(overrides));
  auto settings = validate(std::move(raw), display);
  settings.config_path = file;
  settings.config_text = std::move(text);
  if (settings.name.empty()) {
    // From the file's name, with anything a job folder or Slurm job name cannot hold made '_'.
    settings.name = file.stem().string();
    for (char& c : settings.name)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '+' && c != '-') c = '_';
    if (settings.name.empty() || settings.name.front() == '.' || settings.name.front() == '-')
      settings.name.insert(0, "campaign");
  }
  if (settings.results.empty()) settings.results = settings.name + ".h5";
  settings.campaign_results = std::filesystem::absolute(settings.results).lexically_normal();
  if (settings.jobs_dir.empty()) settings.jobs_dir = settings.results.string() + ".jobs";
  if (jobs::backend_renders_job_scripts(settings.backend) && !jobs::is_sbatch_value(std::filesystem::absolute(settings.jobs_dir).string()))
    throw ConfigError(fmt::format("{}: the job folder '{}' holds a blank or a control character, which a job script's "
                                  "#SBATCH lines cannot carry: set [resources] jobs_dir",
                                  display, std::filesystem::absolute(settings.jobs_dir).string()));
  settings.tests_dir = settings.results.string() + ".tests";
  if (!settings.build_command.empty()) {
    if (settings.build_root.empty()) settings.build_root = settings.results.string() + ".builds";
    settings.build_root = std::filesystem::absolute(settings.build_root).lexically_normal();
    // Builds run on this host and the tasks may run on others: they must see the same folder.
    if (jobs::backend_renders_job_scripts(settings.backend) && settings.build_root.string().starts_with("/tmp/"))
      settings.warnings.push_back(fmt::format(
          "{}: the build folder {} is under /tmp, which the nodes of a Slurm job usually do not share with this host: "
          "set [build] dir to a shared file system",
          display, settings.build_root.string()));
  }
  return settings;
}

}  // namespace flotilla::scheduler

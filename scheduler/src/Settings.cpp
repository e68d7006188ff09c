// Settings.cpp — reading a campaign file and command-line overrides into Settings.
//
// Boost.Program_options does the INI and command-line parsing; it does not report line numbers,
// so a small locator maps the k-th occurrence of "section.key" to its line for error messages.
// Every value is kept with where it came from until it is validated.
#include "flotilla/scheduler/Settings.h"

#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include <boost/program_options.hpp>
#include <fmt/format.h>

#include "Options.h"

namespace po = boost::program_options;

namespace flotilla::scheduler {
namespace {

std::string trimmed(std::string_view s) {
  auto b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  return std::string(s.substr(b, s.find_last_not_of(" \t\r") - b + 1));
}

// Line numbers of every "key = value" line, per "section.key", in file order.
std::map<std::string, std::vector<int>> locate_keys(const std::string& text) {
  std::map<std::string, std::vector<int>> lines;
  std::istringstream in(text);
  std::string line, section;
  for (int number = 1; std::getline(in, line); ++number) {
    auto t = trimmed(line);
    if (t.empty() || t[0] == '#' || t[0] == ';') continue;
    if (t.front() == '[' && t.back() == ']') {
      section = trimmed(t.substr(1, t.size() - 2));
    } else if (auto eq = t.find('='); eq != std::string::npos) {
      lines[(section.empty() ? "" : section + ".") + trimmed(t.substr(0, eq))].push_back(number);
    }
  }
  return lines;
}

int first_syntax_error_line(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    auto t = trimmed(line);
    if (t.empty() || t[0] == '#' || t[0] == ';' || (t.front() == '[' && t.back() == ']')) continue;
    if (t.find('=') == std::string::npos) return number;
  }
  return 0;
}

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

RawValues read_file(const std::filesystem::path& file, const std::string& text) {
  const auto display = file.filename().string();
  std::istringstream in(text);
  po::parsed_options parsed(nullptr);
  try {
    parsed = po::parse_config_file(in, campaign_options(), /*allow_unregistered=*/true);
  } catch (const po::error& e) {
    throw ConfigError(fmt::format("{}:{}: {}", display, first_syntax_error_line(text), e.what()));
  }
  auto lines = locate_keys(text);
  std::map<std::string, std::size_t> seen;
  RawValues raw;
  for (const auto& option : parsed.options) {
    auto& occurrences = lines[option.string_key];
    auto k = seen[option.string_key]++;
    int line = k < occurrences.size() ? occurrences[k] : 0;
    auto where = fmt::format("{}:{}", display, line);
    if (option.unregistered) throw ConfigError(fmt::format("{}: {}", where, unknown_key_message(option.string_key)));
    for (const auto& value : option.value) raw[option.string_key].push_back({trimmed(value), where});
  }
  return raw;
}

RawValues read_overrides(const std::vector<std::string>& args) {
  po::parsed_options parsed(nullptr);
  try {
    parsed = po::command_line_parser(args).options(campaign_options()).allow_unregistered().run();
  } catch (const po::error& e) {
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
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ConfigError(fmt::format("{}: cannot open campaign file: {}", file.string(), std::strerror(errno)));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto display = file.filename().string();
  auto raw = merge_sources(read_file(file, text), read_overrides(overrides));
  auto settings = validate(std::move(raw), display);
  settings.config_path = file;
  settings.config_text = std::move(text);
  if (settings.name.empty()) settings.name = file.stem().string();
  if (settings.results.empty()) settings.results = settings.name + ".h5";
  if (settings.slurm.jobs_dir.empty()) settings.slurm.jobs_dir = settings.results.string() + ".jobs";
  settings.tests_dir = settings.results.string() + ".tests";
  return settings;
}

}  // namespace flotilla::scheduler

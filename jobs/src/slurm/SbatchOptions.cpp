// SbatchOptions.cpp — resources.sbatch and the SBATCH_* variables (SbatchOptions.h).
#include "flotilla/jobs/SbatchOptions.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "flotilla/jobs/Slurm.h"

namespace flotilla::jobs {
namespace {

// The options flotilla sets itself for its jobs, and the setting that says what they get.
constexpr std::pair<std::string_view, std::string_view> kOwnOptions[] = {
    {"job-name", "campaign.name"},         {"J", "campaign.name"},
    {"partition", "resources.partition"},  {"p", "resources.partition"},
    {"nodes", "resources.nodes"},          {"N", "resources.nodes"},
    {"ntasks-per-node", "resources.ranks_per_node"}, {"ntasks", "resources.ranks_per_node"},
    {"n", "resources.ranks_per_node"},     {"gpus-per-node", "resources.gpus_per_node"},
    {"gpus", "resources.gpus_per_node"},   {"G", "resources.gpus_per_node"},
    {"gres", "resources.gpus_per_node"},   {"time", "resources.time_limit"},
    {"t", "resources.time_limit"},         {"account", "resources.account"},
    {"A", "resources.account"},            {"qos", "resources.qos"},
    {"q", "resources.qos"},                {"chdir", "resources.jobs_dir"},
    {"D", "resources.jobs_dir"},
};
// Options flotilla's job handling depends on: no setting changes them.
constexpr std::string_view kFixedOptions[] = {"output", "o", "error", "e", "array", "a", "dependency", "d",
                                              "requeue", "no-requeue", "kill-on-invalid-dep", "export",
                                              "wait", "W", "parsable", "hold", "H", "input", "i", "clusters",
                                              "M", "open-mode", "wrap"};

// SBATCH_* variables that would change what flotilla relies on, with the reason.
constexpr std::pair<std::string_view, std::string_view> kRefusedVariables[] = {
    {"SBATCH_JOB_NAME", "flotilla names its jobs (PREFIX-N) and finds them by name after a restart"},
    {"SBATCH_OUTPUT", "flotilla reads each job's output from its job folder"},
    {"SBATCH_ERROR", "flotilla reads each job's output from its job folder"},
    {"SBATCH_ARRAY_INX", "flotilla decides which jobs are arrays, and their indices name tasks"},
    {"SBATCH_REQUEUE", "flotilla runs a lost task again itself, as its next attempt; Slurm's requeue would run it twice"},
    {"SBATCH_EXPORT", "flotilla's ranks need the environment flotilla was started in"},
    {"SBATCH_WAIT", "flotilla follows its jobs itself and must not block in sbatch"},
    {"SBATCH_CLUSTERS", "flotilla submits to and queries one cluster"},
    {"SLURM_CLUSTERS", "flotilla submits to and queries one cluster"},
    {"SBATCH_INPUT", "a job's standard input is not used"},
    {"SBATCH_GPUS", "use resources.gpus_per_node: flotilla lays out its ranks by GPUs per node"},
    {"SBATCH_GPUS_PER_NODE", "use resources.gpus_per_node: flotilla lays out its ranks by GPUs per node"},
    {"SBATCH_GPUS_PER_TASK", "use resources.gpus_per_node: flotilla lays out its ranks by GPUs per node"},
    {"SBATCH_GRES", "use resources.gpus_per_node: flotilla lays out its ranks by GPUs per node"},
};
// SBATCH_* variables that change only how sbatch itself behaves, or ask for what flotilla's
// jobs already have: nothing to apply, nothing to refuse.
constexpr std::string_view kIgnoredVariables[] = {"SBATCH_DEBUG", "SBATCH_IGNORE_PBS", "SBATCH_NO_REQUEUE"};
// The allocation fields flotilla sets, which sbatch lets these variables override.
constexpr std::pair<std::string_view, std::string_view> kAllocationVariables[] = {
    {"SBATCH_PARTITION", "partition"}, {"SBATCH_ACCOUNT", "account"},
    {"SBATCH_QOS", "qos"},             {"SBATCH_TIMELIMIT", "time"}};

constexpr std::string_view kMailTypes[] = {"NONE",       "BEGIN",         "END",           "FAIL",
                                           "REQUEUE",    "ALL",           "TIME_LIMIT",    "TIME_LIMIT_90",
                                           "TIME_LIMIT_80", "TIME_LIMIT_50", "ARRAY_TASKS", "INVALID_DEPEND",
                                           "STAGE_OUT"};

template <typename T>
std::optional<T> parse_number(std::string_view text) {
  T value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// Why `value` is no good for option `name`, or "" when it is.
std::string value_problem(std::string_view name, std::string_view value) {
  if (!is_sbatch_value(value)) return "holds a blank or a control character";
  if (name == "mem" || name == "mem-per-cpu")
    return parse_memory_mib(value) ? "" : "is not a memory size (e.g. 64G, 500M; K M G T, default M)";
  if (name == "cpus-per-task") {
    auto n = parse_number<int>(value);
    return n && *n >= 1 && *n <= 65535 ? "" : "is not a CPU count from 1 to 65535";
  }
  if (name == "nice") {
    auto n = parse_number<long long>(value);
    return n && *n >= -2147483645LL && *n <= 2147483645LL ? "" : "is not an integer within Slurm's nice range";
  }
  if (name == "mail-type") {
    std::string_view rest = value;
    while (!rest.empty()) {
      auto comma = rest.find(',');
      auto word = rest.substr(0, comma);
      if (std::find(std::begin(kMailTypes), std::end(kMailTypes), word) == std::end(kMailTypes))
        return fmt::format("names '{}', which is not one of {}", word, fmt::join(kMailTypes, ","));
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
  }
  if (name == "time") return parse_slurm_time(value) ? "" : "is not a Slurm time limit (MM, HH:MM:SS, D-HH:MM, ...)";
  return "";
}

const SbatchFlag* find_flag(std::string_view name) {
  for (const auto& flag : sbatch_pass_through_flags())
    if (flag.name == name) return &flag;
  return nullptr;
}

}  // namespace

const std::vector<SbatchFlag>& sbatch_pass_through_flags() {
  static const std::vector<SbatchFlag> flags = {
      {"constraint", "SBATCH_CONSTRAINT", true},   {"exclusive", "SBATCH_EXCLUSIVE", false},
      {"mem", "SBATCH_MEM_PER_NODE", true},        {"mem-per-cpu", "SBATCH_MEM_PER_CPU", true},
      {"reservation", "SBATCH_RESERVATION", true}, {"wckey", "SBATCH_WCKEY", true},
      {"exclude", "", true},                       {"nodelist", "", true},
      {"cpus-per-task", "", true},                 {"comment", "", true},
      {"licenses", "", true},                      {"mail-user", "", true},
      {"mail-type", "", true},                     {"nice", "", true},
  };
  return flags;
}

std::vector<SbatchOption> parse_sbatch_options(std::string_view text) {
  std::vector<SbatchOption> options;
  std::size_t at = 0;
  while (at < text.size()) {
    if (text[at] == ' ' || text[at] == '\t') {
      ++at;
      continue;
    }
    const auto end = std::min(text.find_first_of(" \t", at), text.size());
    const std::string_view word = text.substr(at, end - at);
    at = end;
    if (!word.starts_with("--") || word.size() == 2)
      throw std::invalid_argument(fmt::format(
          "'{}' is not an option: write each as --name=value or --name (short forms such as -C are not read)", word));
    const auto equals = word.find('=');
    SbatchOption option{std::string(word.substr(2, equals == std::string_view::npos ? word.npos : equals - 2)),
                        equals == std::string_view::npos ? std::string() : std::string(word.substr(equals + 1))};
    for (const auto& [own, setting] : kOwnOptions)
      if (own == option.name)
        throw std::invalid_argument(fmt::format("'--{}' is set by flotilla for every job: use {}", option.name, setting));
    if (std::find(std::begin(kFixedOptions), std::end(kFixedOptions), option.name) != std::end(kFixedOptions))
      throw std::invalid_argument(
          fmt::format("'--{}' is set by flotilla for every job, which depends on it (docs/slurm.md)", option.name));
    const auto* flag = find_flag(option.name);
    if (!flag) {
      std::vector<std::string> known;
      for (const auto& f : sbatch_pass_through_flags()) known.push_back(fmt::format("--{}", f.name));
      throw std::invalid_argument(fmt::format("'--{}' is not an option flotilla passes through; it knows {}",
                                              option.name, fmt::join(known, " ")));
    }
    if (!flag->takes_value && equals != std::string_view::npos)
      throw std::invalid_argument(fmt::format("'--{}' takes no value", option.name));
    if (flag->takes_value) {
      if (option.value.empty()) throw std::invalid_argument(fmt::format("'--{}' needs a value (--{}=VALUE)", option.name, option.name));
      if (auto problem = value_problem(option.name, option.value); !problem.empty())
        throw std::invalid_argument(fmt::format("'--{}={}': the value {}", option.name, option.value, problem));
    }
    options.push_back(std::move(option));
  }
  return options;
}

std::string to_string(const SbatchOption& option) {
  return option.value.empty() ? fmt::format("--{}", option.name) : fmt::format("--{}={}", option.name, option.value);
}

std::optional<std::uint64_t> parse_memory_mib(std::string_view text) {
  if (text.empty()) return std::nullopt;
  std::uint64_t scale_kib = 1024;  // no suffix: M
  if (const char unit = text.back(); unit < '0' || unit > '9') {
    switch (unit) {
      case 'K': case 'k': scale_kib = 1; break;
      case 'M': case 'm': scale_kib = 1024; break;
      case 'G': case 'g': scale_kib = 1024ULL * 1024; break;
      case 'T': case 't': scale_kib = 1024ULL * 1024 * 1024; break;
      default: return std::nullopt;
    }
    text.remove_suffix(1);
  }
  auto n = parse_number<std::uint64_t>(text);
  if (!n || *n > (UINT64_C(1) << 40) / scale_kib) return std::nullopt;  // beyond a pebibyte: a typo
  return (*n * scale_kib + 1023) / 1024;
}

std::optional<std::chrono::minutes> parse_slurm_time(std::string_view text) {
  std::optional<long long> days;
  if (auto dash = text.find('-'); dash != std::string_view::npos) {
    days = parse_number<long long>(text.substr(0, dash));
    if (!days || *days < 0 || *days > 100'000) return std::nullopt;
    text = text.substr(dash + 1);
  }
  std::vector<long long> parts;
  for (;;) {
    const auto colon = text.find(':');
    auto part = parse_number<long long>(text.substr(0, colon));
    if (!part || *part < 0 || *part > 1'000'000'000) return std::nullopt;
    parts.push_back(*part);
    if (colon == std::string_view::npos) break;
    text = text.substr(colon + 1);
  }
  if (parts.size() > 3) return std::nullopt;
  const auto part = [&](std::size_t i) { return i < parts.size() ? parts[i] : 0LL; };
  long long seconds = 0;
  if (days) seconds = ((*days * 24 + part(0)) * 60 + part(1)) * 60 + part(2);  // D-HH[:MM[:SS]]
  else if (parts.size() == 1) seconds = part(0) * 60;                           // MM
  else if (parts.size() == 2) seconds = part(0) * 60 + part(1);                 // MM:SS
  else seconds = (part(0) * 60 + part(1)) * 60 + part(2);                       // HH:MM:SS
  if (seconds <= 0) return std::nullopt;  // 0 and -1 mean unlimited to Slurm: flotilla's jobs have a limit
  return std::chrono::minutes((seconds + 59) / 60);
}

SbatchEnvironment read_sbatch_environment(const std::vector<std::string>& environment) {
  SbatchEnvironment out;
  for (const auto& entry : environment) {
    const auto equals = entry.find('=');
    if (equals == std::string::npos) continue;
    const std::string_view name = std::string_view(entry).substr(0, equals);
    const std::string value = entry.substr(equals + 1);
    if (!name.starts_with("SBATCH_") && name != "SLURM_CLUSTERS") continue;
    if (std::find(std::begin(kIgnoredVariables), std::end(kIgnoredVariables), name) != std::end(kIgnoredVariables))
      continue;
    auto refused = std::find_if(std::begin(kRefusedVariables), std::end(kRefusedVariables),
                                [&](const auto& r) { return r.first == name; });
    if (refused != std::end(kRefusedVariables)) {
      out.refused.push_back(fmt::format("{}: {}", name, refused->second));
      continue;
    }
    std::optional<SbatchOption> option;
    for (const auto& [variable, field] : kAllocationVariables)
      if (variable == name) option = SbatchOption{std::string(field), value};
    for (const auto& flag : sbatch_pass_through_flags())
      if (!flag.environment.empty() && flag.environment == name)
        option = SbatchOption{std::string(flag.name), flag.takes_value ? value : std::string()};
    if (!option) {
      out.unsupported.push_back(std::string(name));
      continue;
    }
    const bool takes_value = option->name != "exclusive";
    if (takes_value && value.empty()) {
      out.malformed.push_back(fmt::format("{}=: empty", name));
    } else if (auto problem = takes_value ? value_problem(option->name, value) : std::string(); !problem.empty()) {
      out.malformed.push_back(fmt::format("{}={}: the value {}", name, value, problem));
    } else {
      out.applied.push_back(std::move(*option));
    }
  }
  return out;
}

std::vector<std::string> process_environment() {
  std::vector<std::string> out;
  for (char** e = environ; *e; ++e) out.emplace_back(*e);
  return out;
}

}  // namespace flotilla::jobs

// ManifestTask.cpp — TaskSpec <-> manifest task: recognising a flotilla-kernel command so that
// the worker can run it in-process.
//
// The mapping is deliberately conservative: anything flotilla-kernel's own option parser might
// read differently (abbreviated or repeated options, --help, --shard without --verify, a value
// that looks like an option) stays a command, so a task's result never depends on which way it
// ran. Parameter values are not checked here: the worker checks them with the same code the
// executable uses, and produces the same message.
#include <cctype>
#include <charconv>
#include <optional>
#include <set>

#include "flotilla/jobs/Manifest.h"
#include "flotilla/jobs/Metrics.h"

namespace flotilla::jobs {
namespace {

bool is_family_name(std::string_view word) {
  if (word.empty() || word == "list" || word == "help") return false;
  for (char c : word)
    if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_'))
      return false;
  return true;
}

bool parse_int(std::string_view text, int& value) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size() && !text.empty();
}

std::string param_name(std::string_view option) {
  std::string name(option);
  for (char& c : name) c = c == '-' ? '_' : c;
  return name;
}

// The kernel task an argv describes, or nullopt when it is not a clean flotilla-kernel call.
std::optional<KernelTask> kernel_task_of(const std::vector<std::string>& argv) {
  if (argv.size() < 2 || std::filesystem::path(argv[0]).filename() != "flotilla-kernel") return std::nullopt;
  if (!is_family_name(argv[1])) return std::nullopt;
  KernelTask task;
  task.family = argv[1];
  std::set<std::string> seen;
  bool shard_given = false;
  for (std::size_t i = 2; i < argv.size(); ++i) {
    std::string_view word = argv[i];
    if (!word.starts_with("--") || word.size() < 3) return std::nullopt;
    word.remove_prefix(2);
    std::optional<std::string> value;
    if (const auto eq = word.find('='); eq != std::string_view::npos) {
      value = std::string(word.substr(eq + 1));
      word = word.substr(0, eq);
    }
    if (!seen.insert(std::string(word)).second || word == "help" || word == "h") return std::nullopt;
    if (word == "verify") {
      if (value) return std::nullopt;
      task.mode = KernelMode::verify;
      continue;
    }
    if (!value) {
      if (i + 1 >= argv.size() || argv[i + 1].starts_with("-")) return std::nullopt;
      value = argv[++i];
    }
    if (word == "shard" || word == "shards") {
      if (!parse_int(*value, word == "shard" ? task.shard : task.shards)) return std::nullopt;
      shard_given = true;
    } else {
      task.params[param_name(word)] = *value;
    }
  }
  if (shard_given && task.mode != KernelMode::verify) return std::nullopt;  // the CLI's usage error
  if (task.shards < 1 || task.shard < 0 || task.shard >= task.shards) return std::nullopt;
  task.argv = argv;
  return task;
}

}  // namespace

ManifestTask to_manifest_task(const TaskSpec& spec) {
  ManifestTask task{spec.id, spec.attempt, {}};
  std::optional<KernelTask> kernel;
  // A kernel run in-process touches no file, so the working directory does not matter to it. A
  // timed task (objective wall_time, Metrics.h) is a process of its own: the runner times that.
  if (spec.env.empty() && spec.fresh_dir.empty() && spec.objective != kWallTimeMetric)
    kernel = kernel_task_of(spec.argv);
  if (kernel) {
    kernel->timeout = spec.timeout;
    kernel->objective = spec.objective;
    task.work = std::move(*kernel);
  } else {
    task.work = CommandTask{spec.argv, spec.timeout, spec.env, spec.workdir, spec.objective, spec.fresh_dir};
  }
  return task;
}

TaskSpec to_task_spec(std::uint64_t id, int attempt, const CommandTask& command) {
  TaskSpec spec;
  spec.id = id;
  spec.argv = command.argv;
  spec.timeout = command.timeout;
  spec.env = command.env;
  spec.workdir = command.workdir;
  spec.objective = command.objective;
  spec.fresh_dir = command.fresh_dir;
  spec.attempt = attempt;
  return spec;
}

}  // namespace flotilla::jobs

// Manifest.h — the tasks of one MPI worker job, as the JSON file that `flotilla-worker
// MANIFEST.json` runs (written by the mpi and Slurm backends), and the struct it maps to.
//
//   {"flotilla_manifest": 1, "job": "campaign-17", "output": "campaign-17.h5",
//    "tasks": [
//      {"id": 4096, "attempt": 0, "kind": "command", "argv": ["sh", "-c", "..."],
//       "timeout_ms": 60000, "env": {"OMP_NUM_THREADS": "1"}, "workdir": "", "objective": "gflops"},
//      {"id": 8388608, "kind": "kernel", "family": "stencil", "params": {"tile_x": "16"},
//       "mode": "verify", "shard": 1, "shards": 4, "timeout_ms": 60000, "objective": "",
//       "argv": ["flotilla-kernel", "stencil", "--tile-x", "16", "--verify", ...]}]}
//
// Rules: ids are opaque to the worker (the scheduler's encoded trial keys) and echoed with the
// attempt in the job file; "output" is relative to the manifest's directory unless absolute;
// optional fields take the defaults of the structs below; unknown fields are errors. A kernel
// task runs a built-in kernel family in-process; its "argv" (optional) is the equivalent
// flotilla-kernel command, run as a process when the worker cannot run the variant in-process.
// Everything here is pure: read/write_manifest only add the file.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "flotilla/jobs/Task.h"

namespace flotilla::jobs {

inline constexpr int kManifestVersion = 1;

struct CommandTask {
  std::vector<std::string> argv;  // never through a shell
  std::chrono::milliseconds timeout{0};
  std::vector<std::pair<std::string, std::string>> env;
  std::filesystem::path workdir;
  std::string objective;
  std::filesystem::path fresh_dir;  // TaskSpec::fresh_dir: emptied where the task starts, just before
};

enum class KernelMode { benchmark, verify };

struct KernelTask {
  std::string family;                         // a kernels::find_family name
  std::map<std::string, std::string> params;  // as text; missing ones take their defaults
  KernelMode mode = KernelMode::benchmark;
  int shard = 0;  // verify mode only
  int shards = 1;
  std::chrono::milliseconds timeout{0};  // checked when the variant returns (in-process)
  std::string objective;
  std::vector<std::string> argv;  // the equivalent flotilla-kernel command, or empty
};

struct ManifestTask {
  std::uint64_t id = 0;
  int attempt = 0;
  std::variant<CommandTask, KernelTask> work;
};

struct Manifest {
  std::string job;
  std::filesystem::path output;  // the job's HDF5 results file
  std::vector<ManifestTask> tasks;
};

// What went wrong and where: "job.json: tasks[3].kind: expected \"command\" or \"kernel\", got \"x\"".
class ManifestError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::string manifest_to_json(const Manifest& manifest);
// `source` names the text in errors (the file's name).
Manifest manifest_from_json(std::string_view text, std::string_view source);

// The file forms; read_manifest resolves a relative "output" against the manifest's directory.
void write_manifest(const std::filesystem::path& path, const Manifest& manifest);
Manifest read_manifest(const std::filesystem::path& path);

// The manifest task for a backend's TaskSpec: a kernel task when the argv runs flotilla-kernel
// with options that map cleanly onto a family's parameters (`--tile-x 8` -> tile_x=8, `--verify
// --shard S --shards N`) and needs no env or workdir; otherwise a command task.
ManifestTask to_manifest_task(const TaskSpec& spec);
// The TaskSpec that runs a command task (or a kernel task's argv) as a process.
TaskSpec to_task_spec(std::uint64_t id, int attempt, const CommandTask& command);

}  // namespace flotilla::jobs

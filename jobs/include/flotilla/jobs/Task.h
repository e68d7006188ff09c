// Task.h — what a backend runs (TaskSpec) and what comes back (TaskResult).
//
// A task is one process started from an argv (never through a shell); the MPI worker runs a
// flotilla-kernel argv in-process instead, with the same result (docs/worker.md). Its result says
// how it ended and which metrics its output carried (protocol in Metrics.h). Expected failures — a
// non-zero exit, a crash, a timeout, garbage output, a missing objective — are values in
// TaskResult, never exceptions.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace flotilla::jobs {

using MetricList = std::vector<std::pair<std::string, double>>;

struct TaskSpec {
  std::uint64_t id = 0;                 // the caller's key; echoed in TaskResult, opaque here
  std::vector<std::string> argv;        // argv[0] is looked up on PATH
  std::chrono::milliseconds timeout{0}; // 0: no limit; on expiry the whole process group is killed
  std::vector<std::pair<std::string, std::string>> env;  // added to (or replacing in) the environment
  std::filesystem::path workdir;        // empty: the caller's working directory
  // Emptied (removed, then made again) by the process runner where and just before the task
  // starts, on the host that runs it: a build's folder on the node of its build job. Empty: none.
  std::filesystem::path fresh_dir;
  std::string objective;                // metric that must be present for status ok; empty: none
  int attempt = 0;                      // retry number, from 0; echoed in TaskResult, opaque here
  // Local backend: no other task runs beside an exclusive one (a benchmark repeat measured
  // without a neighbour on the machine). Other backends run a task alone in its slot anyway.
  bool exclusive = false;
  // Slurm backend only (others run tasks as they come):
  std::string resources;                // which allocation the task needs ("explore", "evaluate");
                                        // tasks with different values go to different jobs
  std::string after;                    // the job starts once the active jobs of this resource set
                                        // ended well (afterok); empty: no dependency
  int array_index = -1;                 // >= 0: the job is a job array, this task runs in element
                                        // array_index (e.g. its shard); -1: no array
};

// lost: the task's executor died (an MPI rank, a node) before the task reported, so it never
// ran to completion; the caller may run it again with the next attempt number.
enum class TaskStatus { ok, failed, timeout, cancelled, lost };
std::string_view to_string(TaskStatus status);

struct TaskResult {
  std::uint64_t id = 0;
  TaskStatus status = TaskStatus::failed;
  double start = 0;                     // seconds since the epoch
  double end = 0;
  int exit_code = 0;                    // exit status, or 128+signal when killed by a signal
  std::string reason;                   // empty when ok; e.g. "exit code 3", "killed by signal 11 (SIGSEGV)",
                                        // "timed out after 2s", "objective 'gflops' missing from output"
  std::string output_tail;              // last kOutputTailBytes of stdout+stderr, interleaved
  MetricList metrics;                   // in the order they were printed; a later value of a name replaces it
  std::optional<double> objective;      // the objective metric's value, when the spec named one
  int attempt = 0;                      // the spec's attempt
  int rank = 0;                         // where it ran: MPI rank (0 for the local backend),
  std::string host;                     //   host name,
  std::string device;                   //   "cpu" or the CUDA_VISIBLE_DEVICES the task saw
  std::string cores;                    //   the CPUs it was pinned to ("0", "2-3"); empty: not pinned
  std::string slurm_job;                //   the Slurm job ("812", "813_4"); empty: not under Slurm
};

inline constexpr std::size_t kOutputTailBytes = 1024;

}  // namespace flotilla::jobs

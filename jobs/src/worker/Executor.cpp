// Executor.cpp — one task, in-process or as a process (Executor.h).
#include "Executor.h"

#include <csignal>
#include <filesystem>
#include <vector>

#include "process/Outcome.h"
#include "process/TaskRun.h"
#include "Signals.h"
#include "flotilla/jobs/Metrics.h"
#include "flotilla/jobs/Programs.h"
#include "flotilla/kernels/Family.h"
#include "flotilla/kernels/Run.h"

namespace flotilla::jobs::worker {
namespace {

// Whether the registry can run the variant as given; otherwise its argv (the executable) decides.
bool runs_in_process(const KernelTask& kernel) {
  const kernels::KernelFamily* family = kernels::find_family(kernel.family);
  if (!family) return false;
  for (const auto& [name, value] : kernel.params) {
    bool declared = false;
    for (const auto& decl : family->params()) declared = declared || decl.name == name;
    if (!declared) return false;
  }
  return true;
}

// The worker's own directory goes first on commands' PATH, as the local backend puts flotilla's:
// flotilla-kernel and the other programs installed beside it are found inside Slurm and mpirun
// jobs too, whatever PATH the job inherited.
std::vector<std::filesystem::path> own_directory() {
  auto dir = install_dir();
  if (dir.empty()) return {};
  return {std::move(dir)};
}

}  // namespace

Executor::Executor(Placement placement)
    : m_placement(std::move(placement)),
      m_processes(make_backend({.name = "local", .slots = 1, .path_prepend = own_directory()})) {}

TaskResult Executor::run(const ManifestTask& task) {
  if (termination_requested()) exit_terminated();
  TaskResult result;
  if (const auto* command = std::get_if<CommandTask>(&task.work)) {
    result = run_command(task, *command);
  } else {
    const auto& kernel = std::get<KernelTask>(task.work);
    if (!runs_in_process(kernel) && !kernel.argv.empty())
      result = run_command(task, CommandTask{kernel.argv, kernel.timeout, {}, {}, kernel.objective});
    else
      result = run_kernel(kernel);
  }
  result.id = task.id;
  result.attempt = task.attempt;
  result.rank = m_placement.rank;
  result.host = m_placement.host;
  result.device = m_placement.device;
  result.cores = m_placement.cores;
  result.slurm_job = m_placement.slurm_job;
  return result;
}

TaskResult Executor::run_kernel(const KernelTask& kernel) {
  TaskResult result;
  result.start = epoch_seconds();
  const auto started = std::chrono::steady_clock::now();
  kernels::RunReport report = kernels::run_variant(
      {kernel.family, kernel.params, kernel.mode == KernelMode::verify, kernel.shard, kernel.shards});
  const auto elapsed = std::chrono::steady_clock::now() - started;
  result.end = epoch_seconds();
  // One stream, as a process's stdout and stderr share one pipe; each run writes to only one.
  std::string text = report.err.empty() ? std::move(report.out) : report.out + report.err;
  ExitInfo exit;
  exit.wait_status = (report.exit_code & 0xff) << 8;  // what waitpid reports for that exit status
  exit.timeout = kernel.timeout;
  if (kernel.timeout.count() > 0 && elapsed > kernel.timeout) {
    // What the local backend would have done at the deadline: kill the process before it
    // printed anything (flotilla-kernel prints its results at the end).
    exit.timed_out = true;
    exit.wait_status = SIGKILL;
    text.clear();
  }
  MetricCollector metrics;
  metrics.feed(text);
  metrics.finish();
  Outcome outcome = classify(exit, metrics.error(), metrics.metrics(), kernel.objective);
  result.status = outcome.status;
  result.exit_code = outcome.exit_code;
  result.reason = std::move(outcome.reason);
  result.objective = outcome.objective;
  if (text.size() > kOutputTailBytes) text.erase(0, text.size() - kOutputTailBytes);
  result.output_tail = std::move(text);
  result.metrics = metrics.metrics();
  return result;
}

TaskResult Executor::run_command(const ManifestTask& task, const CommandTask& command) {
  m_processes->submit({to_task_spec(task.id, task.attempt, command)});
  for (;;) {
    auto results = m_processes->collect(std::chrono::milliseconds(200));
    if (!results.empty()) return std::move(results.front());
    if (termination_requested()) {
      m_processes->cancel_all();  // kills the command's whole process group, and reaps it
      exit_terminated();
    }
  }
}

}  // namespace flotilla::jobs::worker

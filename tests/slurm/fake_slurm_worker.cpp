// fake_slurm_worker MANIFEST SLOTS — what a job of the fake Slurm (FakeSlurm.h) runs in place of
// `srun flotilla-worker MANIFEST`: the manifest's tasks on SLOTS slots of the local backend, each
// result appended to the manifest's job file as soon as it is known, as flotilla-worker's rank 0
// does (docs/worker.md), from a process of its own as on a cluster (the backend reads the file
// while it grows). No MPI: the results file, not the ranks, is what the Slurm backend sees.
// A file left by an earlier run of the manifest is reopened and only tasks without a record run.
// SIGTERM (the job cancelled) ends the running tasks and exits 143 without recording them.
// Exit status: 0 when every task has a record, 1 for a bad manifest or job file, 2 for bad usage.
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <set>

#include "flotilla/jobs/Backend.h"
#include "flotilla/jobs/JobResults.h"
#include "flotilla/jobs/Manifest.h"
#include "flotilla/jobs/Placement.h"
#include "flotilla/results/JobFile.h"

namespace fj = flotilla::jobs;
namespace fr = flotilla::results;

namespace {

volatile std::sig_atomic_t g_terminate = 0;

double epoch_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The process a task runs as: a command task's argv, or a kernel task's flotilla-kernel command.
fj::TaskSpec task_spec(const fj::ManifestTask& task) {
  if (const auto* command = std::get_if<fj::CommandTask>(&task.work))
    return fj::to_task_spec(task.id, task.attempt, *command);
  const auto& kernel = std::get<fj::KernelTask>(task.work);
  return fj::to_task_spec(task.id, task.attempt,
                          fj::CommandTask{kernel.argv, kernel.timeout, {}, {}, kernel.objective});
}

int run(const fj::Manifest& manifest, unsigned slots) {
  const bool rerun = std::filesystem::exists(manifest.output);
  auto out = rerun ? fr::JobFileWriter::open_for_append(manifest.output)
                   : fr::JobFileWriter::create(manifest.output,
                                               {manifest.job, manifest.tasks.size(), fj::host_name(), epoch_now(), ""});
  std::set<std::pair<std::uint64_t, std::int32_t>> recorded;
  for (const auto& key : out.recorded()) recorded.insert(key);
  // Rank 1 runs every task here (rank 0 dispatches): where the results ran, as the worker says.
  const fr::RankRecord rank{1, fj::host_name(), "cpu", "", fj::current_slurm_job()};
  if (!rerun) out.add_rank(rank);
  auto processes = fj::make_backend({.name = "local", .slots = slots, .pin = false});
  std::vector<fj::TaskSpec> specs;
  for (const auto& task : manifest.tasks)
    if (!recorded.contains({task.id, task.attempt})) specs.push_back(task_spec(task));
  processes->submit(specs);
  while (processes->queued() + processes->running() > 0) {
    if (g_terminate) {
      processes->cancel_all();
      while (processes->queued() + processes->running() > 0) processes->collect(std::chrono::milliseconds(100));
      return 128 + SIGTERM;
    }
    for (auto& result : processes->collect(std::chrono::milliseconds(50))) {
      result.rank = rank.rank;
      result.slurm_job = rank.slurm_job;
      const auto record = fj::to_job_record(std::move(result));
      out.append({&record, 1});
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: fake_slurm_worker MANIFEST SLOTS\n";
    return 2;
  }
  std::signal(SIGTERM, [](int) { g_terminate = 1; });
  try {
    return run(fj::read_manifest(argv[1]), static_cast<unsigned>(std::max(1, std::atoi(argv[2]))));
  } catch (const std::exception& e) {
    std::cerr << "fake_slurm_worker: " << e.what() << '\n';
    return 1;
  }
}

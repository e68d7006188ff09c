// main.cpp — flotilla-worker MANIFEST.json: runs one job's tasks on the ranks of an MPI job
// (mpirun, or srun --mpi=pmix inside a Slurm allocation) and writes their results to the job
// file the manifest names (results/JobFile.h). Design: docs/worker.md.
//
// Every rank binds its device, then rank 0 reads the manifest and broadcasts it; every rank
// parses it. Rank 0 opens the job file: a file left by an earlier run of the same manifest is
// reopened and only tasks without a record run, so rerunning a job after a failure finishes it.
// Exit status: 0 when every task has a record (failed tasks included), 1 for a bad manifest or
// job file (the message names the file and field), 2 for bad arguments. Broken invariants and
// MPI errors end the whole job (MPI_Abort). Rank 0 ends with one JSON line of figures.
#include <sys/stat.h>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>

#include "Dispatcher.h"
#include "Mpi.h"
#include "Signals.h"
#include "flotilla/jobs/Manifest.h"
#include "flotilla/kernels/Runtime.h"

namespace fj = flotilla::jobs;
namespace mpi = flotilla::jobs::mpi;

namespace {

constexpr int kExitSetup = 1;
constexpr int kExitUsage = 2;

double epoch_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Rank 0's text on every rank; `error` too, so that all ranks give up together.
std::string read_on_root(const std::string& path, int rank, std::string& error) {
  std::string text;
  if (rank == 0) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream bytes;
    if (in && (bytes << in.rdbuf()))
      text = bytes.str();
    else
      error = path + ": cannot read the manifest";
  }
  mpi::broadcast(error, 0);
  if (error.empty()) mpi::broadcast(text, 0);
  return text;
}

struct JobSetup {
  std::optional<flotilla::results::JobFileWriter> out;
  std::vector<std::uint64_t> todo;  // positions in the manifest's task list
  std::size_t already_recorded = 0;
};

// Rank 0: create the job file, or reopen it and skip what it has recorded.
JobSetup open_job_file(const fj::Manifest& manifest) {
  namespace fr = flotilla::results;
  JobSetup setup;
  std::set<std::pair<std::uint64_t, std::int32_t>> recorded;
  if (std::filesystem::exists(manifest.output)) {
    setup.out.emplace(fr::JobFileWriter::open_for_append(manifest.output));
    for (const auto& key : setup.out->recorded()) recorded.insert(key);
  } else {
    setup.out.emplace(fr::JobFileWriter::create(
        manifest.output, {manifest.job, manifest.tasks.size(), fj::host_name(), epoch_now(), ""}));
  }
  for (std::uint64_t i = 0; i < manifest.tasks.size(); ++i) {
    if (recorded.contains({manifest.tasks[i].id, manifest.tasks[i].attempt}))
      ++setup.already_recorded;
    else
      setup.todo.push_back(i);
  }
  return setup;
}

void broadcast_todo(std::vector<std::uint64_t>& todo) {
  std::string bytes(reinterpret_cast<const char*>(todo.data()), todo.size() * sizeof(std::uint64_t));
  mpi::broadcast(bytes, 0);
  todo.resize(bytes.size() / sizeof(std::uint64_t));
  if (!bytes.empty()) std::memcpy(todo.data(), bytes.data(), bytes.size());  // nothing to do: data() may be null
}

int run(const mpi::Session& session, const std::vector<std::string>& args, const fj::DeviceChoice& device) {
  const int rank = session.rank();
  if (args.size() != 1 || args[0] == "--help" || args[0] == "-h") {
    if (rank == 0) std::cerr << "usage: flotilla-worker MANIFEST.json   (under mpirun or srun; see docs/worker.md)\n";
    return args.size() == 1 ? 0 : kExitUsage;
  }
  const std::filesystem::path path = args[0];
  std::string error;
  const std::string text = read_on_root(path.string(), rank, error);
  std::optional<fj::Manifest> manifest;
  JobSetup setup;
  if (error.empty()) {
    try {
      manifest = fj::manifest_from_json(text, path.string());
      if (manifest->output.is_relative()) manifest->output = path.parent_path() / manifest->output;
      if (rank == 0) setup = open_job_file(*manifest);
    } catch (const std::exception& e) {  // a ManifestError is the same on every rank
      error = e.what();
    }
    mpi::broadcast(error, 0);  // a job-file error is rank 0's alone
  }
  if (!error.empty()) {
    if (rank == 0) std::cerr << "flotilla-worker: " << error << "\n";
    return kExitSetup;
  }
  broadcast_todo(setup.todo);
  // Where Slurm (or mpirun's binding) put this rank: its CPUs, recorded with every result.
  const fj::Placement placement{rank, fj::host_name(), device.device, fj::cpu_list_text(fj::allowed_cpus()),
                                fj::current_slurm_job()};
  fj::worker::DispatchStats stats;
  if (session.size() > 1 && rank == 0) {
    stats = fj::worker::Dispatcher(setup.todo.size(), session.size(), *setup.out).run();
  } else {
    flotilla::kernels::Runtime kokkos;  // once per executing rank, for every in-process kernel
    fj::worker::Executor executor(placement);
    if (session.size() == 1)
      stats = fj::worker::run_alone(manifest->tasks, setup.todo, executor, *setup.out);
    else
      fj::worker::serve(manifest->tasks, setup.todo, executor, placement);
  }
  if (rank == 0) {
    const nlohmann::ordered_json summary{
        {"job", manifest->job},
        {"ranks", session.size()},
        {"tasks", stats.tasks},
        {"already_recorded", setup.already_recorded},
        {"seconds", stats.seconds},
        {"tasks_per_s", stats.seconds > 0 ? static_cast<double>(stats.tasks) / stats.seconds : 0.0},
        {"batches", stats.batches},
        {"largest_batch", stats.largest_batch},
        {"commits", stats.commits},
        {"worker_busy_s", stats.busy_seconds},
        {"dispatcher_cpu_s", stats.cpu_seconds}};
    std::cout << summary.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  ::umask(::umask(0) | 022);  // job files are never writable by others, whatever the umask
  // Before MPI and CUDA start: either may open the GPU, and must see only this rank's.
  const fj::DeviceChoice device = fj::choose_device(fj::current_device_env());
  if (device.visible) ::setenv("CUDA_VISIBLE_DEVICES", device.visible->c_str(), 1);
  fj::worker::install_termination_handlers();
  std::optional<mpi::Session> session;
  try {
    session.emplace(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "flotilla-worker: " << e.what() << "\n";
    return kExitSetup;
  }
  try {
    return run(*session, std::vector<std::string>(argv + 1, argv + argc), device);
  } catch (const std::exception& e) {
    std::cerr << "flotilla-worker: rank " << session->rank() << ": " << e.what() << "\n";
    session->abort(kExitSetup);
  }
}

// SlurmAllocation.cpp — the launcher of a job allocated at once (resources.slurm_start =
// allocate): `flotilla run-allocation ID DIR` runs DIR/job.sh inside allocation ID and releases
// the allocation with the script's status when it ends, from a process of its own session, so
// the job outlives the flotilla that started it as a batch job does.
//
// Why a launcher on this host: Slurm 22.05 starts a batch job only at its next once-a-second
// scheduling tick, while an allocation is made inside its RPC (docs/slurm.md). The price is a
// process on the submitting host for the job's life. The launcher holds an flock on
// DIR/launcher.lock for as long as it lives, so a scheduler can tell it is gone (killed, or its
// host rebooted) without trusting a pid that may be a zombie or reused; it then cancels the
// allocation rather than leave it to its time limit (SlurmBackend).
#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "flotilla/jobs/Placement.h"
#include "flotilla/jobs/Slurm.h"
#include "flotilla/jobs/Subprocess.h"
#include "flotilla/jobs/Task.h"
#include "process/Process.h"

extern char** environ;

namespace flotilla::jobs {
namespace {

// The launcher's environment, set in its own process before job.sh starts: flotilla's, without
// the SLURM_* variables of a job flotilla may itself run in (they would describe that job to
// srun), plus the allocation's id.
void set_launcher_environment(std::uint32_t id) {
  std::vector<std::string> slurm_names;
  for (char** e = environ; *e; ++e) {
    const std::string_view entry(*e);
    if (entry.starts_with("SLURM_") && !entry.starts_with("SLURM_CONF="))
      slurm_names.emplace_back(entry.substr(0, entry.find('=')));
  }
  for (const auto& name : slurm_names) ::unsetenv(name.c_str());
  ::setenv("SLURM_JOB_ID", std::to_string(id).c_str(), 1);
  ::setenv("SLURM_JOBID", std::to_string(id).c_str(), 1);
}

// Releases the allocation with the script's status. slurmctld may be restarting or failing over:
// retry for about five minutes, then cancel, so the nodes are never held to the time limit.
int release_allocation(std::uint32_t id, int status) {
  auto client = make_slurm_client("api");
  for (int attempt = 0, wait_s = 1; attempt < 9; ++attempt, wait_s = std::min(60, wait_s * 2)) {
    try {
      client->release(id, status);
      return 0;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "flotilla run-allocation: cannot release allocation %u (try %d): %s\n", id, attempt + 1,
                   e.what());
    }
    std::this_thread::sleep_for(std::chrono::seconds(wait_s));
  }
  try {
    client->cancel(id);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "flotilla run-allocation: cannot cancel allocation %u either: %s\n", id, e.what());
  }
  return 1;
}

// The name this launcher gives itself in DIR/launcher: "HOST PID".
std::string launcher_record(pid_t pid) { return fmt::format("{} {}", host_name(), pid); }

}  // namespace

int start_allocation_launcher(std::uint32_t id, const std::filesystem::path& dir,
                              const std::vector<std::string>& launcher) {
  if (!std::filesystem::exists(dir / "job.sh"))
    throw std::runtime_error(fmt::format("{}: no job script to run in allocation {}", (dir / "job.sh").string(), id));
  if (launcher_alive(dir) == std::optional<bool>(true))
    throw std::runtime_error(fmt::format("{}: a launcher of allocation {} already runs ({})", dir.string(), id,
                                         (dir / "launcher").string()));
  std::error_code ignored;
  std::filesystem::remove(dir / "launcher", ignored);  // a dead launcher's name must not be taken for the new one's
  std::fflush(nullptr);
  // Through the one process runner: a session of its own (a Ctrl-C meant for flotilla's process
  // group does not reach the job), not dying with us (it outlives this process, which exits as
  // soon as the launcher has named itself), our stdout and stderr (the job's output file).
  const Spawner spawner({});
  auto started = spawner.start(TaskSpec{.argv = launcher, .workdir = dir}, {.out = STDOUT_FILENO, .err = STDERR_FILENO},
                               /*die_with_parent=*/false, /*new_session=*/true);
  if (const auto* failure = std::get_if<SpawnFailure>(&started))
    throw std::runtime_error(fmt::format("cannot start the launcher of allocation {}: {}", id, failure->reason));
  const pid_t child = std::get<pid_t>(started);
  // The launcher names itself in DIR/launcher once it holds the lock: from then on launcher_alive
  // can tell whether it lives. Until then, it may fail (its lock taken, job.sh gone): say so.
  const auto expected = launcher_record(child);
  for (auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);;) {
    std::string line;
    if (std::ifstream in(dir / "launcher"); in && std::getline(in, line) && line == expected) return 0;
    if (has_exited(child)) {
      const int status = wait_blocking(child);
      throw std::runtime_error(fmt::format(
          "the launcher of allocation {} ended ({}) before it named itself in {}; its output is the job's", id,
          WIFEXITED(status) ? fmt::format("exit code {}", WEXITSTATUS(status))
                            : fmt::format("signal {}", WTERMSIG(status)),
          (dir / "launcher").string()));
    }
    if (std::chrono::steady_clock::now() > deadline) {
      kill_group(child);
      wait_blocking(child);
      throw std::runtime_error(
          fmt::format("the launcher of allocation {} did not name itself in {} within 60 s: killed it", id,
                      (dir / "launcher").string()));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

int run_allocation_launcher(std::uint32_t id, const std::filesystem::path& dir) {
  // Held from before DIR/launcher names this process to its end (the descriptor is close-on-exec:
  // job.sh does not keep it once we are gone).
  const auto lock_path = dir / "launcher.lock";
  const int lock_fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd < 0 || flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    std::fprintf(stderr, "flotilla run-allocation: cannot lock %s: %s\n", lock_path.c_str(), std::strerror(error));
    return 1;
  }
  // Renamed into place, so a reader never sees half of it.
  const auto tmp = dir / "launcher.tmp";
  std::ofstream(tmp) << launcher_record(getpid()) << '\n';
  std::filesystem::rename(tmp, dir / "launcher");

  set_launcher_environment(id);
  // The one process runner, no timeout (the allocation's time limit is the job's), output as the
  // launcher's. job.sh dies with its launcher: a launcher that is gone leaves an allocation the
  // scheduler cancels (abandoned_allocation), so nothing must go on running in it unowned.
  using Output = SubprocessSpec::Output;
  const auto run = run_subprocess(
      {.argv = {"/bin/bash", "job.sh"}, .workdir = dir, .stdout_to = Output::inherit, .stderr_to = Output::inherit});
  if (!run.started)
    std::fprintf(stderr, "flotilla run-allocation: cannot start /bin/bash job.sh in %s: %s\n", dir.c_str(),
                 run.error.c_str());
  int code = run.started ? run.exit_code : 127;  // as a shell reports a command it could not start
  const int status = run.started ? run.wait_status : 127 << 8;  // what Slurm records for the allocation
  if (release_allocation(id, status) != 0 && code == 0) code = 1;
  std::fflush(nullptr);
  return code;
}

std::optional<bool> launcher_alive(const std::filesystem::path& dir) {
  if (!std::filesystem::exists(dir / "launcher")) return std::nullopt;
  const int fd = open((dir / "launcher.lock").c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::optional<bool> alive;
  if (flock(fd, LOCK_EX | LOCK_NB) == 0)
    alive = false;  // nobody holds it: the launcher is gone (our lock goes with the close)
  else if (errno == EWOULDBLOCK)
    alive = true;
  close(fd);
  return alive;  // nullopt: the lock cannot be tested here (e.g. a file system without locks)
}

}  // namespace flotilla::jobs

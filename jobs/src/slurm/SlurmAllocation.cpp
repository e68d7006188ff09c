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

// The detached child: runs the script, waits for it, releases the allocation. Never returns.
// It runs in a process of its own (run-allocation's), single-threaded, so it may allocate.
[[noreturn]] void run_script_and_release(std::uint32_t id, const std::filesystem::path& dir, int lock_fd) {
  setsid();  // its own session: a signal to flotilla's process group (Ctrl-C) does not reach the job
  // Only stdin, stdout, stderr and the lock go on: an inherited descriptor of flotilla's (its
  // campaign file, with HDF5's lock on it) must not live as long as the job.
  if (lock_fd > 3) close_range(3, lock_fd - 1, 0);
  close_range(lock_fd + 1, ~0U, 0);
  // Default dispositions and no blocked signal, whatever flotilla had: an ignored SIGCHLD would
  // make waitpid fail, and the script's srun must be killable as usual.
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) sigaction(sig, &default_action, nullptr);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);

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
  _exit(code);
}

}  // namespace

int run_in_allocation(std::uint32_t id, const std::filesystem::path& dir) {
  if (!std::filesystem::exists(dir / "job.sh"))
    throw std::runtime_error(fmt::format("{}: no job script to run in allocation {}", (dir / "job.sh").string(), id));
  // Taken before the fork and kept by the child alone (the parent closes its copy): from the
  // moment DIR/launcher names the launcher, its lock is held.
  const auto lock_path = dir / "launcher.lock";
  const int lock_fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd < 0 || flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    if (lock_fd >= 0) close(lock_fd);
    throw std::runtime_error(fmt::format("cannot lock {}: {}", lock_path.string(), std::strerror(error)));
  }
  std::fflush(nullptr);
  const pid_t child = fork();
  if (child < 0) {
    const int error = errno;
    close(lock_fd);
    throw std::runtime_error(fmt::format("cannot fork the launcher of allocation {}: {}", id, std::strerror(error)));
  }
  if (child == 0) run_script_and_release(id, dir, lock_fd);
  close(lock_fd);  // the lock stays with the child's copy of the descriptor
  // Written before this process exits, so whoever waited for it finds the file; renamed into
  // place, so a reader never sees half of it.
  const auto tmp = dir / "launcher.tmp";
  std::ofstream(tmp) << host_name() << ' ' << child << '\n';
  std::filesystem::rename(tmp, dir / "launcher");
  return 0;
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

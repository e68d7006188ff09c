// SlurmAllocation.cpp — the launcher of a job allocated at once (resources.slurm_start =
// allocate): `flotilla run-allocation ID DIR` runs DIR/job.sh inside allocation ID and releases
// the allocation with the script's status when it ends, from a process of its own session, so
// the job outlives the flotilla that started it exactly as a batch job does.
//
// Why a launcher on this host: Slurm 22.05 starts a batch job only at its next once-a-second
// scheduling tick, while an allocation is made inside its RPC (docs/slurm.md). The price is a
// process on the submitting host for the job's life; if that host goes down, the allocation
// stays until its time limit, or until a flotilla on this host sees the launcher gone and
// cancels it (SlurmBackend).
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "flotilla/jobs/Slurm.h"

extern char** environ;

namespace flotilla::jobs {
namespace {

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

// The launcher's environment: flotilla's, without the SLURM_* variables of a job flotilla may
// itself run in (they would describe that job to srun), plus the allocation's id.
std::vector<std::string> launcher_environment(std::uint32_t id) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string_view entry(*e);
    if (entry.starts_with("SLURM_") && !entry.starts_with("SLURM_CONF=")) continue;
    env.emplace_back(entry);
  }
  env.push_back(fmt::format("SLURM_JOB_ID={}", id));
  env.push_back(fmt::format("SLURM_JOBID={}", id));
  return env;
}

// The detached child: runs the script, waits for it, releases the allocation. Never returns.
[[noreturn]] void run_script_and_release(std::uint32_t id, const std::filesystem::path& dir) {
  setsid();  // its own session: a signal to flotilla's process group (Ctrl-C) does not reach the job
  // Only stdin, stdout and stderr go on: an inherited descriptor of flotilla's (its campaign
  // file, with HDF5's lock on it) must not live as long as the job.
  close_range(3, ~0U, 0);
  auto env = launcher_environment(id);
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string bash = "/bin/bash", script = "job.sh";
  char* argv[] = {bash.data(), script.data(), nullptr};
  int status = 127 << 8;  // as a shell reports a command it could not start
  pid_t pid = -1;
  if (chdir(dir.c_str()) != 0)
    std::fprintf(stderr, "flotilla run-allocation: cannot enter %s: %s\n", dir.c_str(), std::strerror(errno));
  else if (int rc = posix_spawn(&pid, argv[0], nullptr, nullptr, argv, envp.data()); rc != 0)
    std::fprintf(stderr, "flotilla run-allocation: cannot start /bin/bash job.sh: %s\n", std::strerror(rc));
  else
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  try {
    make_slurm_client("api")->release(id, status);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "flotilla run-allocation: cannot release allocation %u: %s\n", id, e.what());
    code = code == 0 ? 1 : code;
  }
  std::fflush(nullptr);
  _exit(code);
}

}  // namespace

int run_in_allocation(std::uint32_t id, const std::filesystem::path& dir) {
  if (!std::filesystem::exists(dir / "job.sh"))
    throw std::runtime_error(fmt::format("{}: no job script to run in allocation {}", (dir / "job.sh").string(), id));
  std::fflush(nullptr);
  const pid_t child = fork();
  if (child < 0) throw std::runtime_error(fmt::format("cannot fork the launcher of allocation {}: {}", id, std::strerror(errno)));
  if (child == 0) run_script_and_release(id, dir);
  // Written before this process exits, so whoever waited for it finds the file; renamed into
  // place, so a reader never sees half of it.
  const auto tmp = dir / "launcher.tmp";
  std::ofstream(tmp) << host_name() << ' ' << child << '\n';
  std::filesystem::rename(tmp, dir / "launcher");
  return 0;
}

std::optional<int> local_launcher(const std::filesystem::path& dir) {
  std::ifstream in(dir / "launcher");
  std::string host;
  int pid = 0;
  if (!(in >> host >> pid) || pid <= 0 || host != host_name()) return std::nullopt;
  return pid;
}

}  // namespace flotilla::jobs

// Subprocess.h — the one way flotilla starts a helper program and waits for it: discovery
// listings, squeue/sbatch/scancel, the allocation launcher, gnuplot. (Tasks are started the
// same way, by the local backend, which does not wait: Process.h.)
//
// Rules, the same for every child:
//  - an argv, never a shell; argv[0] found on `path_prepend` then PATH, by the one rule of
//    Programs.h (find_program), which tasks use too;
//  - stdin is `input` (or /dev/null); stdout and stderr are captured (up to capture_limit bytes
//    each: the first ones, or with capture_tail the last ones; the rest dropped and said so),
//    written to a file, dropped, or the caller's own;
//  - the child leads a process group of its own (or, with new_session, a session), and a
//    timeout kills that whole group: a helper that hangs (squeue on a wedged slurmctld) is an
//    error after `timeout`, never a hung scheduler; timeout 0 means none, for work whose own
//    limit applies (a job script under its allocation's time limit);
//  - it dies with the scheduler (PR_SET_PDEATHSIG) unless `outlives_us` (a launcher of a job
//    that must outlive flotilla).
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace flotilla::jobs {

struct SubprocessSpec {
  std::vector<std::string> argv;
  std::vector<std::pair<std::string, std::string>> env;  // added to (or replacing in) the environment
  std::filesystem::path workdir;                         // empty: the caller's
  std::string input;                                     // written to stdin, then closed
  std::chrono::milliseconds timeout{0};
  // to_stdout: stderr joins stdout; inherit: the caller's own stdout or stderr.
  enum class Output { capture, file, append, discard, to_stdout, inherit };
  Output stdout_to = Output::capture;
  Output stderr_to = Output::capture;
  std::filesystem::path stdout_file, stderr_file;
  std::size_t capture_limit = 64 << 20;
  // Keep the last capture_limit bytes, not the first: for output whose verdict comes at its end
  // (a checker's summary line), held in at most twice the limit.
  bool capture_tail = false;
  bool outlives_us = false;   // no PR_SET_PDEATHSIG, and a session of its own
  std::vector<std::filesystem::path> path_prepend;
};

struct SubprocessResult {
  bool started = false;
  std::string error;          // why it did not start ("cannot execute 'x': No such file or directory")
  int exit_code = -1;         // its exit status, or 128 + signal
  int wait_status = 0;        // as waitpid gave it (what a job's release reports to Slurm)
  bool timed_out = false;
  std::string out, err;       // captured output
  pid_t pid = -1;
  bool ok() const { return started && !timed_out && exit_code == 0; }
  // "exit code 3", "killed by signal 9 (SIGKILL)", "timed out after 30s", or the start error.
  std::string describe(std::chrono::milliseconds timeout) const;
};

// Runs it to the end (or its timeout) and returns what happened; never throws for the child's
// failures, only for the scheduler's own (no pipes left).
SubprocessResult run_subprocess(const SubprocessSpec& spec);

}  // namespace flotilla::jobs

// Signals.cpp — termination flag, handlers and parent-death signal (Signals.h).
#include "Signals.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <initializer_list>

namespace flotilla::jobs::worker {
namespace {

volatile std::sig_atomic_t g_terminate = 0;

// Kills the process group of every child of the main thread (the rank's commands: each leads its
// own group). Async-signal-safe: raw system calls and a stack buffer only. A child is unreaped
// while it is listed, so its pid (and group id) cannot belong to anyone else yet.
void kill_child_groups() {
  char path[64] = "/proc/self/task/";
  char digits[16];
  int length = 0;
  for (pid_t pid = ::getpid(); pid > 0 && length < 15; pid /= 10) digits[length++] = static_cast<char>('0' + pid % 10);
  std::size_t at = 16;
  while (length > 0) path[at++] = digits[--length];
  for (const char c : {'/', 'c', 'h', 'i', 'l', 'd', 'r', 'e', 'n', '\0'}) path[at++] = c;
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;  // a kernel without CONFIG_PROC_CHILDREN: the rank's own checks remain
  char buffer[4096];
  const ssize_t size = ::read(fd, buffer, sizeof buffer);
  ::close(fd);
  pid_t child = 0;
  for (ssize_t i = 0; i <= size; ++i) {
    if (i < size && buffer[i] >= '0' && buffer[i] <= '9') {
      child = child * 10 + (buffer[i] - '0');
    } else if (child > 0) {
      ::kill(-child, SIGKILL);
      ::kill(child, SIGKILL);
      child = 0;
    }
  }
}

// mpirun follows SIGTERM with SIGKILL within a second, often before the main thread looks at the
// flag, so the commands' groups are killed here, at once.
extern "C" void on_terminate(int) {
  g_terminate = 1;
  kill_child_groups();
}

}  // namespace

void install_termination_handlers() {
  struct sigaction action {};
  action.sa_handler = on_terminate;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: a wait in poll() ends early, so the flag is seen soon
  for (int signal : {SIGTERM, SIGINT, SIGHUP}) ::sigaction(signal, &action, nullptr);
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() == 1) g_terminate = 1;  // the parent died before prctl took effect
}

bool termination_requested() { return g_terminate != 0; }

void exit_terminated() { std::_Exit(128 + SIGTERM); }

}  // namespace flotilla::jobs::worker

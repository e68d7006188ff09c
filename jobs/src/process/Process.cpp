// Process.cpp — starting one task: a vfork-style clone, then exec (Process.h).
//
// Exec errors travel from the child through a close-on-exec "report" pipe: end-of-file means the
// exec succeeded, a ChildReport means it did not. PATH lookup happens in the parent, by the one
// rule of Programs.h (execvp is not async-signal-safe and would search the scheduler's PATH, not
// the task's).
#include "Process.h"

#include "Containment.h"
#include "flotilla/jobs/Programs.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <mutex>
#include <set>
#include <csignal>
#include <optional>
#include <stdexcept>
#include <system_error>

extern char** environ;

namespace flotilla::jobs {

// Built before fork; the child only reads it. The char* arrays point into the strings, so a plan
// is filled in place and never moved afterwards.
struct ExecPlan {
  std::string path;  // argv[0] resolved on PATH, or argv[0] itself when it contains '/'
  std::vector<std::string> argv_text, env_text;
  std::vector<char*> argv, envp;
  std::string workdir;
  bool pin = false;  // set the child's CPU affinity to `cpus` before exec
  cpu_set_t cpus{};
  bool die_with_parent = true;  // PR_SET_PDEATHSIG (SIGKILL when the starting thread ends)
  bool new_session = false;     // setsid() instead of a process group of its own
  int cgroup_procs = -1;        // a task cgroup's cgroup.procs: joined before exec (Containment.h)
  bool subreaper = false;       // PR_SET_CHILD_SUBREAPER, kept across exec (Containment.h)

  void seal() {
    for (auto& text : argv_text) argv.push_back(text.data());
    argv.push_back(nullptr);
    for (auto& text : env_text) envp.push_back(text.data());
    envp.push_back(nullptr);
  }
};

namespace {

// What the child writes to the report pipe when it cannot exec.
struct ChildReport {
  enum Stage : int { setup, chdir, exec } stage;
  int error;
};

std::string error_text(int error) { return std::generic_category().message(error); }

int exit_code_for(int error) { return error == ENOENT ? 127 : 126; }  // the shell's convention

// Limits another process can exhaust for a while (a task that forked 10,000 processes): the
// start is tried again, never charged to the task that could not start.
bool transient_error(int error) { return error == EAGAIN || error == ENOMEM || error == EMFILE || error == ENFILE; }

SpawnFailure cannot_start(const TaskSpec& spec, int error) {
  return {"cannot start '" + spec.argv.front() + "': " + error_text(error), 127, transient_error(error)};
}

std::vector<std::string> build_environment(const TaskSpec& spec, const std::string& path,
                                           bool set_path) {
  std::vector<std::string> env;
  const auto assign = [&env](const std::string& key, const std::string& value) {
    const std::string prefix = key + "=";
    for (auto& entry : env)
      if (entry.starts_with(prefix)) return void(entry = prefix + value);
    env.push_back(prefix + value);
  };
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry)
    env.emplace_back(*entry);
  for (const auto& [key, value] : spec.env) assign(key, value);
  if (set_path) assign("PATH", path);  // tasks see the same PATH their argv[0] was found on
  return env;
}

// False with errno set (EMFILE, ENFILE): the task fails to start, the backend carries on.
bool make_pipe(Fd& read_end, Fd& write_end) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return false;
  read_end = Fd(fds[0]);
  write_end = Fd(fds[1]);
  return true;
}

[[noreturn]] void report_and_exit(int report_fd, ChildReport::Stage stage) {
  const ChildReport report{stage, errno};
  [[maybe_unused]] auto written = ::write(report_fd, &report, sizeof report);
  ::_exit(127);
}

// Runs in the child, in the parent's memory (see fork_and_exec): async-signal-safe calls only,
// no allocation, and nothing written but its own stack. It starts with every signal blocked, and
// resets every handler before unblocking, so no handler of the parent ever runs here.
[[noreturn]] void exec_child(const ExecPlan& plan, int in_fd, int out_fd, int err_fd, int report_fd,
                             pid_t parent) {
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &default_action, nullptr);  // undo SIG_IGN
  if (plan.new_session) ::setsid();
  else ::setpgid(0, 0);
  // Before anything else can run: every process the task starts is then inside (Containment.h).
  if (plan.cgroup_procs >= 0 && ::write(plan.cgroup_procs, "0", 1) != 1) report_and_exit(report_fd, ChildReport::setup);
  if (plan.subreaper && ::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) report_and_exit(report_fd, ChildReport::setup);
  if (plan.die_with_parent) {
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) report_and_exit(report_fd, ChildReport::setup);
    if (::getppid() != parent) ::_exit(127);  // the scheduler died before prctl took effect
  }
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  if (::dup2(in_fd, 0) < 0 || ::dup2(out_fd, 1) < 0 || ::dup2(err_fd, 2) < 0)
    report_and_exit(report_fd, ChildReport::setup);
  ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);  // fds others opened without O_CLOEXEC stay ours
  if (plan.pin && ::sched_setaffinity(0, sizeof plan.cpus, &plan.cpus) != 0) report_and_exit(report_fd, ChildReport::setup);
  if (!plan.workdir.empty() && ::chdir(plan.workdir.c_str()) != 0)
    report_and_exit(report_fd, ChildReport::chdir);
  ::execve(plan.path.c_str(), plan.argv.data(), plan.envp.data());
  report_and_exit(report_fd, ChildReport::exec);
}

struct ChildArgs {
  const ExecPlan* plan;
  int in_fd, out_fd, err_fd, report_fd;
  pid_t parent;
};

int child_entry(void* raw) {
  const auto* args = static_cast<const ChildArgs*>(raw);
  exec_child(*args->plan, args->in_fd, args->out_fd, args->err_fd, args->report_fd, args->parent);
}

// The child's own stack: it must not run on the frames of the parent, whose memory it shares.
constexpr std::size_t kChildStackBytes = 64 * 1024;

// Reads the child's report: empty when the exec succeeded.
std::optional<ChildReport> read_report(const Fd& report) {
  ChildReport message{};
  for (;;) {
    const ssize_t n = ::read(report.get(), &message, sizeof message);
    if (n < 0 && errno == EINTR) continue;
    if (n == static_cast<ssize_t>(sizeof message)) return message;
    if (n <= 0) return std::nullopt;
    return ChildReport{ChildReport::setup, EIO};  // a torn report: should not happen
  }
}

SpawnFailure describe(const ChildReport& report, const TaskSpec& spec) {
  const std::string error = error_text(report.error);
  switch (report.stage) {
    case ChildReport::chdir:
      return {"cannot change directory to '" + spec.workdir.string() + "': " + error, 127};
    case ChildReport::exec:
      return {"cannot execute '" + spec.argv.front() + "': " + error, exit_code_for(report.error)};
    case ChildReport::setup:
      break;
  }
  return cannot_start(spec, report.error);
}

// TaskSpec::fresh_dir, emptied here, on the host that starts the task and just before it does
// (a build job's folder on its node: no shell needed to empty it there). Relative to the task's
// working directory, as the task would see it.
std::optional<SpawnFailure> make_fresh_dir(const TaskSpec& spec) {
  if (spec.fresh_dir.empty()) return std::nullopt;
  const auto dir = spec.fresh_dir.is_relative() && !spec.workdir.empty() ? spec.workdir / spec.fresh_dir : spec.fresh_dir;
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  if (!ec) std::filesystem::create_directories(dir, ec);
  if (ec) return SpawnFailure{"cannot empty the folder '" + dir.string() + "': " + ec.message(), 1};
  return std::nullopt;
}

Fd open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  const long fd = ::syscall(SYS_pidfd_open, pid, 0);  // Linux >= 5.3; the fd is close-on-exec
  if (fd >= 0) return Fd(static_cast<int>(fd));
#endif
  (void)pid;
  return Fd();  // the backend falls back to polling waitpid
}

}  // namespace

Spawner::Spawner(std::vector<std::filesystem::path> path_prepend)
    : m_path_prepend(std::move(path_prepend)),
      m_dev_null(::open("/dev/null", O_RDONLY | O_CLOEXEC)) {
  if (!m_dev_null) throw std::system_error(errno, std::generic_category(), "open /dev/null");
}

// The prepended folders, then the task's PATH (its env's, else ours): Programs.h.
std::string Spawner::search_path(const TaskSpec& spec) const {
  std::string base = inherited_path();
  for (const auto& [key, value] : spec.env)
    if (key == "PATH") base = value;
  return jobs::search_path(m_path_prepend, base);
}

SpawnResult Spawner::spawn(const TaskSpec& spec, const std::vector<int>& cpus, int cgroup_procs) const {
  if (spec.argv.empty()) return SpawnFailure{"empty command", 127};
  const std::string path = search_path(spec);
  auto found = find_program(spec.argv.front(), path, spec.workdir);
  if (const int* error = std::get_if<int>(&found))
    return SpawnFailure{"cannot execute '" + spec.argv.front() + "': " + error_text(*error),
                        exit_code_for(*error)};
  if (auto failure = make_fresh_dir(spec)) return *failure;
  ExecPlan plan{std::move(std::get<std::string>(found)),
                spec.argv,
                build_environment(spec, path, !m_path_prepend.empty()),
                {},
                {},
                spec.workdir.string()};
  plan.pin = !cpus.empty();
  for (const int cpu : cpus) CPU_SET(cpu, &plan.cpus);
  plan.cgroup_procs = cgroup_procs;
  plan.subreaper = cgroup_procs < 0 && containment() == ContainmentKind::subreaper;
  plan.seal();
  return fork_and_exec(plan, spec);
}

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define FLOTILLA_THREAD_SANITIZER 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define FLOTILLA_THREAD_SANITIZER 1
#endif

namespace {

// The children started here and not yet reaped (started_here): in subreaper mode any other
// child is an adopted orphan.
std::mutex g_children_mutex;
std::set<pid_t> g_children;

void remember_child(pid_t pid) {
  std::lock_guard lock(g_children_mutex);
  g_children.insert(pid);
}

void forget_child(pid_t pid) {
  std::lock_guard lock(g_children_mutex);
  g_children.erase(pid);
}

}  // namespace

bool started_here(pid_t pid) {
  std::lock_guard lock(g_children_mutex);
  return g_children.contains(pid);
}

void keep_child(pid_t pid) { remember_child(pid); }

// Starts the child with vfork semantics on a stack of its own, every signal blocked meanwhile
// (exec_child resets the handlers before unblocking). Returns its pid, or -errno.
static pid_t clone_child(const ChildArgs& args) {
  sigset_t all, previous;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &previous);
#ifdef FLOTILLA_THREAD_SANITIZER
  // ThreadSanitizer's runtime cannot follow a child that shares its memory (CLONE_VM: it aborts
  // in ForkAfter), so its builds fork. The child does the same work and the parent still waits
  // for the exec through the report pipe; only the copy of the page tables is extra.
  const pid_t pid = ::fork();
  if (pid == 0) child_entry(const_cast<ChildArgs*>(&args));
#else
  std::vector<char> stack(kChildStackBytes);
  const pid_t pid = ::clone(child_entry, stack.data() + stack.size(), CLONE_VM | CLONE_VFORK | SIGCHLD,
                            const_cast<ChildArgs*>(&args));
#endif
  const int error = errno;
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  if (pid > 0) remember_child(pid);
  return pid < 0 ? -error : pid;
}

std::variant<pid_t, SpawnFailure> Spawner::start(const TaskSpec& spec, ChildIo io, bool die_with_parent,
                                                  bool new_session) const {
  if (spec.argv.empty()) return SpawnFailure{"empty command", 127};
  const std::string path = search_path(spec);
  auto found = find_program(spec.argv.front(), path, spec.workdir);
  if (const int* error = std::get_if<int>(&found))
    return SpawnFailure{"cannot execute '" + spec.argv.front() + "': " + error_text(*error), exit_code_for(*error)};
  ExecPlan plan{std::move(std::get<std::string>(found)), spec.argv, build_environment(spec, path, !m_path_prepend.empty()),
                {}, {}, spec.workdir.string()};
  plan.die_with_parent = die_with_parent;
  plan.new_session = new_session;
  plan.seal();
  Fd report_read, report_write;
  if (!make_pipe(report_read, report_write)) {
    return cannot_start(spec, errno);
  }
  const int dev_null = m_dev_null.get();
  const ChildArgs args{&plan, io.in >= 0 ? io.in : dev_null, io.out >= 0 ? io.out : dev_null,
                       io.err >= 0 ? io.err : dev_null, report_write.get(), ::getpid()};
  const pid_t pid = clone_child(args);
  if (pid < 0) return cannot_start(spec, -pid);
  report_write.reset();
  if (auto report = read_report(report_read)) {
    wait_blocking(pid);
    return describe(*report, spec);
  }
  return pid;
}

SpawnResult Spawner::fork_and_exec(const ExecPlan& plan, const TaskSpec& spec) const {
  Fd out_read, out_write, report_read, report_write;
  if (!make_pipe(out_read, out_write) || !make_pipe(report_read, report_write)) {
    return cannot_start(spec, errno);
  }
  // vfork semantics, as glibc's posix_spawn (which cannot set PR_SET_PDEATHSIG): the child
  // shares our memory on a stack of its own, and we are suspended until it has exec'd or exited.
  // fork() would copy the page tables of every mapping only for exec to drop them: in an MPI
  // worker rank (hundreds of mapped libraries) that halved the rate of starting commands.
  const ChildArgs args{&plan, m_dev_null.get(), out_write.get(), out_write.get(), report_write.get(), ::getpid()};
  const auto started = std::chrono::steady_clock::now();
  const pid_t pid = clone_child(args);
  if (pid < 0) return cannot_start(spec, -pid);
  // No setpgid(pid, pid) here: the child has made itself a group leader before it could exec.
  out_write.reset();
  report_write.reset();
  if (auto report = read_report(report_read)) {
    wait_blocking(pid);
    return describe(*report, spec);
  }
  ::fcntl(out_read.get(), F_SETFL, ::fcntl(out_read.get(), F_GETFL) | O_NONBLOCK);
  return SpawnedProcess{pid, open_pidfd(pid), std::move(out_read), started};
}

void kill_group(pid_t pgid) {
  ::kill(-pgid, SIGKILL);
  ::kill(pgid, SIGKILL);
}

bool has_exited(pid_t pid) {
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0)
    return errno == ECHILD;  // reaped elsewhere: it has certainly exited
  return info.si_pid == pid;
}

bool group_exists(pid_t pgid) { return ::kill(-pgid, 0) == 0 || errno == EPERM; }

int wait_blocking(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) {
      forget_child(pid);
      return -1;
    }
  forget_child(pid);
  return status;
}

}  // namespace flotilla::jobs

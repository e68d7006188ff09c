// flotilla-per-file — one shard of a per_file suite, run as one task (docs/tests.md).
//
// Runs the checker once per file of the shard's list, up to --parallel at a time, each through
// jobs' process runner (an argv, no shell, a process group of its own, --timeout per file kills
// that group), judges each run (suites/PerFile.h: exit code, or summary pattern and pass_when)
// and writes one JSON report with every file's outcome, duration, message and numbers. Of each
// checker's output only the last suites::kKeptOutputBytes are kept (its verdict is at the end),
// so memory and the report stay bounded whatever a checker prints.
//
//   flotilla-per-file --files LIST --report FILE [--relative-to DIR] [--parallel N] [--timeout MS]
//                     [--summary REGEX] [--pass-when EXPR] [--tmp DIR] -- CHECKER ARG...
//
// In the checker's words, {file} is the file's path (as the list gives it) and {tmpdir} a fresh
// empty folder for this file alone, removed after its run. They are made under --tmp DIR
// (default $TMPDIR or /tmp), and DIR itself is removed at the end: the scheduler gives each
// shard attempt a DIR of its own and removes it when the task ends, however it ended (even
// SIGKILL, which leaves this program no chance to). Tests are named by the file's path
// relative to --relative-to (default: the working directory), as the scheduler names the files.
// Exit status: 0 when the report is written (failing files are the gate's business), 2 for bad
// usage, 3 when the list cannot be read or the report cannot be written.
// Nothing is left behind: on SIGTERM, SIGINT or SIGHUP every running checker's process group is
// killed and the temporary folders are removed before it exits (128 + the signal); checkers
// also die with it (PR_SET_PDEATHSIG) if it is killed outright.
#include <fmt/format.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "flotilla/jobs/Subprocess.h"
#include "flotilla/suites/FilePatterns.h"
#include "flotilla/suites/PerFile.h"

namespace {

namespace fs = std::filesystem;
namespace suites = flotilla::suites;

constexpr int kUsageError = 2;
constexpr int kIoError = 3;

struct Options {
  fs::path files, report, relative_to;
  int parallel = 0;  // 0: the CPUs this process may run on
  std::chrono::milliseconds timeout{0};
  std::string summary, pass_when;
  fs::path tmp;  // empty: $TMPDIR or /tmp, and only the per-file folders are ours
  std::vector<std::string> checker;
};

[[noreturn]] void usage(const std::string& why) {
  fmt::print(stderr,
             "flotilla-per-file: {}\nusage: flotilla-per-file --files LIST --report FILE [--relative-to DIR] "
             "[--parallel N] [--timeout MS] [--summary REGEX] [--pass-when EXPR] [--tmp DIR] -- CHECKER ARG...\n",
             why);
  std::exit(kUsageError);
}

long long whole_number(std::string_view flag, const char* text) {
  char* end = nullptr;
  const long long v = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0' || v < 0) usage(fmt::format("{}: '{}' is not a whole number >= 0", flag, text));
  return v;
}

Options parse(int argc, char** argv) {
  Options o;
  int i = 1;
  for (; i < argc && std::string_view(argv[i]) != "--"; ++i) {
    const std::string_view flag = argv[i];
    if (i + 1 >= argc) usage(fmt::format("{} needs a value", flag));
    const char* value = argv[++i];
    if (flag == "--files")
      o.files = value;
    else if (flag == "--report")
      o.report = value;
    else if (flag == "--relative-to")
      o.relative_to = value;
    else if (flag == "--parallel")
      o.parallel = static_cast<int>(whole_number(flag, value));
    else if (flag == "--timeout")
      o.timeout = std::chrono::milliseconds(whole_number(flag, value));
    else if (flag == "--summary")
      o.summary = value;
    else if (flag == "--pass-when")
      o.pass_when = value;
    else if (flag == "--tmp")
      o.tmp = value;
    else
      usage(fmt::format("unknown option '{}'", flag));
  }
  for (++i; i < argc; ++i) o.checker.emplace_back(argv[i]);
  if (o.files.empty() || o.report.empty() || o.checker.empty())
    usage("--files, --report and the checker after -- are required");
  if (!o.pass_when.empty() && o.summary.empty()) usage("--pass-when needs --summary (its groups are its variables)");
  if (o.relative_to.empty()) o.relative_to = fs::current_path();
  return o;
}

int cpus_we_may_use() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

// The temporary folders of the runs in flight, removed after each run and on a signal.
std::mutex g_temporary_mutex;
std::set<fs::path> g_temporary;

fs::path make_temporary_folder(const fs::path& root) {
  const char* base = std::getenv("TMPDIR");
  std::string pattern =
      ((root.empty() ? fs::path(base && *base ? base : "/tmp") : root) / "flotilla-per-file.XXXXXX").string();
  if (!::mkdtemp(pattern.data()))
    throw std::runtime_error(fmt::format("mkdtemp {}: {}", pattern, std::strerror(errno)));
  std::lock_guard lock(g_temporary_mutex);
  return *g_temporary.insert(pattern).first;
}

void remove_temporary_folder(const fs::path& folder) {
  std::error_code ignored;
  fs::remove_all(folder, ignored);
  std::lock_guard lock(g_temporary_mutex);
  g_temporary.erase(folder);
}

// Our children are checkers, each leading its own process group: every thread's children (the
// thread that forked is their parent) are killed with their groups.
void kill_running_checkers() {
  std::error_code ec;
  for (const auto& task : fs::directory_iterator("/proc/self/task", ec)) {
    std::ifstream in(task.path() / "children");
    for (pid_t pid; in >> pid;) {
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);  // in case it has not made its group yet
    }
  }
}

fs::path g_tmp_root;  // --tmp, removed with everything in it on a signal
// Held by whichever ends the process: the signal watcher (which never lets go) or main before it
// writes the report. So a stopped run never writes a report of checkers it killed itself, and
// exits 128 + the signal, however the race between them goes.
std::mutex g_ending;
std::atomic<bool> g_stopping{false};  // set first on a signal: no worker starts another checker

// Waits for a stop signal (blocked in every thread, so only this one takes it), then leaves
// nothing behind.
void watch_signals(sigset_t signals) {
  int signal = 0;
  while (sigwait(&signals, &signal) != 0) {
  }
  g_stopping = true;
  g_ending.lock();  // never unlocked: this thread ends the process
  kill_running_checkers();
  {
    std::lock_guard lock(g_temporary_mutex);
    for (const auto& folder : g_temporary) {
      std::error_code ignored;
      fs::remove_all(folder, ignored);
    }
    std::error_code ignored;
    if (!g_tmp_root.empty()) fs::remove_all(g_tmp_root, ignored);
  }
  std::_Exit(128 + signal);
}

std::string test_name(const std::string& file, const fs::path& relative_to) {
  const std::string relative = fs::path(file).lexically_relative(relative_to).string();
  return relative.empty() ? file : relative;
}

suites::FileRun run_checker(const Options& o, const std::string& file) {
  const bool wants_tmpdir = std::any_of(o.checker.begin(), o.checker.end(),
                                        [](const auto& w) { return w.find("{tmpdir}") != std::string::npos; });
  auto argv = suites::checker_argv(o.checker, file);
  fs::path tmpdir;
  if (wants_tmpdir) {
    try {
      tmpdir = make_temporary_folder(o.tmp);
    } catch (const std::runtime_error& e) {  // the file cannot run: an error, with the reason
      return {.signal = -1, .ended = fmt::format("cannot make its {{tmpdir}}: {}", e.what())};
    }
    for (auto& word : argv)
      for (auto at = word.find("{tmpdir}"); at != std::string::npos; at = word.find("{tmpdir}", at))
        word.replace(at, 8, tmpdir.string());
  }
  using Output = flotilla::jobs::SubprocessSpec::Output;
  const auto start = std::chrono::steady_clock::now();
  auto r = flotilla::jobs::run_subprocess({.argv = std::move(argv),
                                           .timeout = o.timeout,
                                           .stdout_to = Output::capture,
                                           .stderr_to = Output::to_stdout,
                                           .capture_limit = suites::kKeptOutputBytes,
                                           .capture_tail = true});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!tmpdir.empty()) remove_temporary_folder(tmpdir);
  suites::FileRun run{.exit_code = r.exit_code,
                      .timed_out = r.timed_out,
                      .seconds = seconds,
                      .output = std::move(r.out),
                      .ended = r.describe(o.timeout)};
  if (!r.started)
    run.signal = -1, run.ended = r.error;  // judged as an error, with the reason
  else if (WIFSIGNALED(r.wait_status))
    run.signal = WTERMSIG(r.wait_status);
  return run;
}

bool write_report(const fs::path& path, const std::string& text) {
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) return false;
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  return !ec;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  std::optional<suites::SummaryPattern> summary;
  std::optional<suites::PassCondition> pass_when;
  try {
    if (!o.summary.empty()) summary.emplace(o.summary);
    if (!o.pass_when.empty()) pass_when.emplace(o.pass_when, summary->names());
  } catch (const suites::PatternError& e) {
    usage(e.what());
  }
  std::ifstream list_in(o.files, std::ios::binary);
  if (!list_in) {
    fmt::print(stderr, "flotilla-per-file: {}: cannot read the list of files: {}\n", o.files.string(),
               std::strerror(errno));
    return kIoError;
  }
  const std::string list_text{std::istreambuf_iterator<char>(list_in), std::istreambuf_iterator<char>()};
  const auto files = suites::parse_file_list(list_text);

  if (!o.tmp.empty()) {
    std::error_code ec;
    fs::create_directories(o.tmp, ec);
    if (ec) {
      fmt::print(stderr, "flotilla-per-file: {}: cannot make the temporary folder: {}\n", o.tmp.string(), ec.message());
      return kIoError;
    }
    g_tmp_root = o.tmp;
  }
  sigset_t signals;
  sigemptyset(&signals);
  for (int s : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&signals, s);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);  // inherited by every thread started below
  std::thread(watch_signals, signals).detach();

  const int parallel = static_cast<int>(
      std::min<std::size_t>(std::max<std::size_t>(files.size(), 1), o.parallel > 0 ? o.parallel : cpus_we_may_use()));
  std::vector<suites::TestResult> results(files.size());
  std::atomic<std::size_t> next{0};
  std::mutex judge_mutex;  // PassCondition evaluates through one parser
  const auto work = [&] {
    for (std::size_t i; !g_stopping && (i = next++) < files.size();) {
      auto run = run_checker(o, files[i]);
      std::lock_guard lock(judge_mutex);
      results[i] = suites::judge_file(test_name(files[i], o.relative_to), run, summary ? &*summary : nullptr,
                                      pass_when ? &*pass_when : nullptr);
    }
  };
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> workers;
  for (int w = 0; w < parallel; ++w) workers.emplace_back(work);
  for (auto& w : workers) w.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  g_ending.lock();  // never unlocked: a signal that came first ends the process from its thread

  if (!o.tmp.empty()) {
    std::error_code ignored;
    fs::remove_all(o.tmp, ignored);
  }
  if (!write_report(o.report, suites::write_per_file_report(results))) {
    fmt::print(stderr, "flotilla-per-file: {}: cannot write the report: {}\n", o.report.string(), std::strerror(errno));
    return kIoError;
  }
  std::map<std::string_view, int> counts;
  for (const auto& r : results) ++counts[flotilla::results::to_string(r.outcome)];
  std::string tally;
  for (const auto& [outcome, count] : counts)
    tally += fmt::format("{}{} {}", tally.empty() ? "" : ", ", count, outcome);
  fmt::print("flotilla-per-file: {} files in {:.3f} s, {} at a time: {}\n", files.size(), seconds, parallel, tally);
  return 0;
}

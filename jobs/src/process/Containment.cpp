// Containment.cpp — task cgroups, or this process as a child subreaper (Containment.h).
#include "Containment.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string_view>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "Process.h"

namespace flotilla::jobs {
namespace {

namespace fs = std::filesystem;

struct State {
  ContainmentKind kind = ContainmentKind::subreaper;
  std::string description;
  fs::path base;  // cgroup mode: CGROUP/flotilla-PID, this process's parent of its task groups
  fs::path own;   // cgroup mode: CGROUP, where other schedulers' groups are
};

// A task group's name: task-N, with the hash of its campaign's tag when it has one (task-N-HASH),
// so that a resumed campaign ends only what its own killed scheduler left.
std::string tag_suffix(std::string_view tag) {
  if (tag.empty()) return {};
  std::uint64_t hash = 0xcbf29ce484222325ULL;  // FNV-1a 64
  for (unsigned char c : tag) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return fmt::format("-{:016x}", hash);
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The cgroup v2 folder this process is in: the cgroup2 mount (/proc/self/mountinfo) joined with
// its path in /proc/self/cgroup ("0::/PATH"), less the mount's own root within the hierarchy.
std::optional<fs::path> own_cgroup(std::string& why) {
  std::string own;
  {
    std::istringstream lines(read_text("/proc/self/cgroup"));
    for (std::string line; std::getline(lines, line);)
      if (line.starts_with("0::")) own = line.substr(3);
  }
  if (own.empty()) return why = "this process is in no cgroup v2 hierarchy", std::nullopt;
  std::istringstream lines(read_text("/proc/self/mountinfo"));
  for (std::string line; std::getline(lines, line);) {
    // ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER
    const auto dash = line.find(" - ");
    if (dash == std::string::npos || !std::string_view(line).substr(dash + 3).starts_with("cgroup2 ")) continue;
    std::istringstream fields(line.substr(0, dash));
    std::string id, parent, device, root, mountpoint;
    fields >> id >> parent >> device >> root >> mountpoint;
    if (!own.starts_with(root)) continue;
    const auto rest = root == "/" ? own : own.substr(root.size());
    return fs::path(mountpoint) / fs::path(rest).relative_path();
  }
  return why = "no cgroup v2 file system is mounted", std::nullopt;
}

bool pid_alive(long pid) { return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH; }

// The processes in `group` and in the groups below it (a task that runs flotilla-per-file or a
// worker has groups of its own inside).
std::vector<pid_t> members(const fs::path& group) {
  std::vector<pid_t> pids;
  std::istringstream lines(read_text(group / "cgroup.procs"));
  for (long pid; lines >> pid;) pids.push_back(static_cast<pid_t>(pid));
  std::error_code ec;
  for (fs::directory_iterator it(group, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_directory(ec))
      for (pid_t pid : members(it->path())) pids.push_back(pid);
  return pids;
}

// Removes an empty group and the groups below it, deepest first.
void remove_groups(const fs::path& group) {
  std::error_code ec;
  for (fs::directory_iterator it(group, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_directory(ec)) remove_groups(it->path());
  ::rmdir(group.c_str());
}

std::string comm_of(pid_t pid) {
  auto text = read_text(fmt::format("/proc/{}/comm", pid));
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text.empty() ? "?" : text;
}

// Kills every member of `group` and waits until it is empty (a second at most); true if it is.
bool empty_group(const fs::path& group) {
  bool have_kill = false;  // cgroup.kill: Linux 5.14 and later; else each member is signalled
  if (const int fd = ::open((group / "cgroup.kill").c_str(), O_WRONLY | O_CLOEXEC); fd >= 0) {
    have_kill = ::write(fd, "1", 1) == 1;
    ::close(fd);
  }
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  for (;;) {
    const auto left = members(group);
    if (left.empty()) return true;
    if (!have_kill)
      for (pid_t pid : left) ::kill(pid, SIGKILL);
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// A killed scheduler leaves CGROUP/flotilla-PID/task-N[-HASH] groups whose processes it can no
// longer end. Those of the campaign `tag` (untagged ones when `tag` is empty) are emptied and
// removed, and so is a dead scheduler's folder once it holds no group.
void clear_dead_schedulers(const fs::path& parent, std::string_view tag, std::vector<Leftover>& killed) {
  const std::string suffix = tag_suffix(tag);
  std::error_code ec;
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
    const auto name = it->path().filename().string();
    if (!name.starts_with("flotilla-") || !it->is_directory()) continue;
    const long pid = std::strtol(name.c_str() + 9, nullptr, 10);
    if (pid <= 0 || pid_alive(pid)) continue;
    std::error_code inner;
    for (fs::directory_iterator task(it->path(), inner), stop; !inner && task != stop; task.increment(inner)) {
      const auto group = task->path().filename().string();
      if (!task->is_directory() || !group.starts_with("task-")) continue;
      const auto dash = group.find('-', 5);
      const std::string group_suffix = dash == std::string::npos ? std::string() : group.substr(dash);
      if (group_suffix != suffix) continue;
      for (pid_t member : members(task->path())) killed.push_back({member, comm_of(member)});
      if (empty_group(task->path())) remove_groups(task->path());
    }
    remove_groups(it->path());  // keeps what another campaign's groups still hold
  }
}

State detect() {
  State s;
  const char* forced = std::getenv("FLOTILLA_CONTAINMENT");
  const std::string_view wanted = forced ? forced : "";
  std::string why;
  if (wanted == "subreaper") {
    why = "FLOTILLA_CONTAINMENT=subreaper";
  } else if (auto own = own_cgroup(why)) {
    std::vector<Leftover> untagged;  // a killed worker's, a test's: nobody else would end them
    clear_dead_schedulers(*own, "", untagged);
    const auto base = *own / fmt::format("flotilla-{}", ::getpid());
    std::error_code ec;
    const auto probe = base / "task-probe";
    if (::mkdir(base.c_str(), 0755) != 0 && errno != EEXIST) {
      why = fmt::format("cannot create {}: {}", base.string(), std::strerror(errno));
    } else if (::mkdir(probe.c_str(), 0755) != 0) {
      why = fmt::format("cannot create {}: {}", probe.string(), std::strerror(errno));
      ::rmdir(base.c_str());
    } else {
      // A process may be moved there only with write access to the common ancestor's procs:
      // ours. The probe moves nothing; opening is the check.
      const int fd = ::open((probe / "cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
      const int error = errno;
      ::rmdir(probe.c_str());
      if (fd < 0) {
        why = fmt::format("cannot write {}: {}", (own->string() + "/cgroup.procs"), std::strerror(error));
        ::rmdir(base.c_str());
      } else {
        ::close(fd);
        s.kind = ContainmentKind::cgroup;
        s.base = base;
        s.own = *own;
        s.description = fmt::format("cgroup v2 ({})", base.string());
        return s;
      }
    }
  }
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  s.kind = ContainmentKind::subreaper;
  s.description = fmt::format("child subreaper ({})", why);
  return s;
}

// This process's folder of task groups goes when it exits (its groups went with their tasks).
struct Owner {
  State state = detect();
  ~Owner() {
    if (!state.base.empty()) remove_groups(state.base);
  }
};

State& state() {
  static Owner owner;
  return owner.state;
}

std::atomic<std::uint64_t> g_groups{0};

}  // namespace

ContainmentKind containment() { return state().kind; }

std::vector<Leftover> kill_dead_schedulers_tasks(std::string_view tag) {
  std::vector<Leftover> killed;
  if (state().kind == ContainmentKind::cgroup && !tag.empty()) clear_dead_schedulers(state().own, tag, killed);
  return killed;
}
std::string describe_containment() { return state().description; }

std::unique_ptr<TaskCgroup> TaskCgroup::create(std::string_view campaign_tag) {
  const auto& s = state();
  if (s.kind != ContainmentKind::cgroup) return nullptr;
  auto dir = s.base / fmt::format("task-{}{}", ++g_groups, tag_suffix(campaign_tag));
  if (::mkdir(dir.c_str(), 0755) != 0) return nullptr;
  Fd procs(::open((dir / "cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC));
  if (!procs) {
    ::rmdir(dir.c_str());
    return nullptr;
  }
  return std::unique_ptr<TaskCgroup>(new TaskCgroup(std::move(dir), std::move(procs)));
}

TaskCgroup::~TaskCgroup() {
  m_procs.reset();
  if (::rmdir(m_dir.c_str()) == 0) return;
  if (empty_group(m_dir)) remove_groups(m_dir);
}

std::vector<Leftover> TaskCgroup::kill_all(pid_t spared_group) {
  std::vector<Leftover> named;
  for (pid_t pid : members(m_dir))
    if (spared_group <= 0 || ::getpgid(pid) != spared_group) named.push_back({pid, comm_of(pid)});
  empty_group(m_dir);
  return named;
}

std::vector<Leftover> kill_adopted_orphans() {
  std::vector<Leftover> killed;
  if (state().kind != ContainmentKind::subreaper) return killed;
  for (int pass = 0; pass < 2; ++pass) {  // a second pass for one that forked while it was killed
    std::vector<pid_t> children;
    std::error_code ec;
    for (fs::directory_iterator it("/proc/self/task", ec), end; !ec && it != end; it.increment(ec)) {
      std::istringstream words(read_text(it->path() / "children"));
      for (long pid; words >> pid;) children.push_back(static_cast<pid_t>(pid));
    }
    for (pid_t pid : children) {
      if (started_here(pid)) continue;
      siginfo_t info{};
      const bool exited = ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
                          info.si_pid == pid;
      if (!exited) {
        killed.push_back({pid, comm_of(pid)});
        ::kill(pid, SIGKILL);
      }
      ::waitpid(pid, nullptr, 0);  // ours to reap, killed or exited by itself
    }
  }
  return killed;
}

}  // namespace flotilla::jobs

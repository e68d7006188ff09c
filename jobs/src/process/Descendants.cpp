// Descendants.cpp — leftover processes, found by the token in their environment (Descendants.h).
#include "Descendants.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <set>

namespace flotilla::jobs {
namespace {

// Whether /proc/PID/environ holds the NUL-separated entry `wanted` ("NAME=VALUE").
bool environ_has(const char* pid, std::string_view wanted) {
  char path[300];  // "/proc/" + a d_name of up to 255 bytes + the file name
  std::snprintf(path, sizeof path, "/proc/%s/environ", pid);
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;  // gone, or another user's
  std::string text;
  std::array<char, 16384> buffer;
  for (ssize_t n; (n = ::read(fd, buffer.data(), buffer.size())) > 0;) text.append(buffer.data(), static_cast<std::size_t>(n));
  ::close(fd);
  for (std::size_t begin = 0; begin < text.size();) {
    const std::size_t end = text.find('\0', begin);
    const std::string_view entry(text.data() + begin, (end == std::string::npos ? text.size() : end) - begin);
    if (entry == wanted) return true;
    if (end == std::string::npos) break;
    begin = end + 1;
  }
  return false;
}

std::string command_of(const char* pid) {
  char path[300];  // "/proc/" + a d_name of up to 255 bytes + the file name
  std::snprintf(path, sizeof path, "/proc/%s/comm", pid);
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "?";
  char name[64] = {};
  const ssize_t n = ::read(fd, name, sizeof name - 1);
  ::close(fd);
  std::string text(name, n > 0 ? static_cast<std::size_t>(n) : 0);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

}  // namespace

bool running(pid_t pid);

std::vector<Leftover> processes_with(std::string_view variable, std::string_view value, pid_t spared_group) {
  std::string wanted(variable);
  wanted += '=';
  wanted += value;
  std::vector<Leftover> found;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return found;
  const pid_t self = ::getpid();
  while (const dirent* entry = ::readdir(proc)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    const pid_t pid = static_cast<pid_t>(std::strtol(entry->d_name, nullptr, 10));
    if (pid == self || !environ_has(entry->d_name, wanted) || !running(pid)) continue;
    if (spared_group > 0 && ::getpgid(pid) == spared_group) continue;  // killed with its group already
    found.push_back({pid, command_of(entry->d_name)});
  }
  ::closedir(proc);
  return found;
}

// Whether the process still runs: a zombie (killed, not yet reaped by its parent) does not.
bool running(pid_t pid) {
  char path[300];  // "/proc/" + a d_name of up to 255 bytes + the file name
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char text[512] = {};
  const ssize_t n = ::read(fd, text, sizeof text - 1);
  ::close(fd);
  if (n <= 0) return false;
  const char* close = std::strrchr(text, ')');
  return close != nullptr && close[1] == ' ' && close[2] != 'Z' && close[2] != 'X';
}

std::vector<Leftover> kill_processes_with(std::string_view variable, std::string_view value, pid_t spared_group) {
  std::vector<Leftover> killed;
  std::set<pid_t> seen;
  for (int pass = 0; pass < 2; ++pass) {
    for (const auto& leftover : processes_with(variable, value, spared_group)) {
      if (!running(leftover.pid)) continue;
      ::kill(leftover.pid, SIGKILL);
      if (seen.insert(leftover.pid).second) killed.push_back(leftover);
    }
  }
  // SIGKILL is delivered, not waited for: wait (up to a second) until each one has died, so
  // what the caller does next (a pipe's end, the next scan) sees them gone.
  for (int tick = 0; tick < 100; ++tick) {
    if (std::none_of(killed.begin(), killed.end(), [](const Leftover& l) { return running(l.pid); })) break;
    ::usleep(10'000);
  }
  return killed;
}

std::string describe(const std::vector<Leftover>& killed) {
  std::string text = std::to_string(killed.size()) + (killed.size() == 1 ? " process (" : " processes (");
  for (std::size_t i = 0; i < killed.size() && i < 5; ++i)
    text += (i ? ", " : "") + std::to_string(killed[i].pid) + " " + killed[i].command;
  if (killed.size() > 5) text += ", ...";
  return text + ")";
}

}  // namespace flotilla::jobs

// BackendTestUtil.h — helpers shared by the backend tests: task builders, a run-to-completion
// loop with a hard limit (a broken backend fails the test instead of hanging it), process probes
// and scratch directories.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "flotilla/jobs/Backend.h"

namespace flotilla::jobs::test {

using SteadyClock = std::chrono::steady_clock;

inline TaskSpec sh_task(std::uint64_t id, std::string script, std::string objective = "",
                        std::chrono::milliseconds timeout = std::chrono::milliseconds(0)) {
  TaskSpec spec;
  spec.id = id;
  spec.argv = {"/bin/sh", "-c", std::move(script)};
  spec.objective = std::move(objective);
  spec.timeout = timeout;
  return spec;
}

inline TaskSpec argv_task(std::uint64_t id, std::vector<std::string> argv,
                          std::string objective = "") {
  TaskSpec spec;
  spec.id = id;
  spec.argv = std::move(argv);
  spec.objective = std::move(objective);
  return spec;
}

// Collects until `expected` results came back or `limit` passed.
inline std::vector<TaskResult> collect_results(
    Backend& backend, std::size_t expected, std::chrono::seconds limit = std::chrono::seconds(60)) {
  std::vector<TaskResult> results;
  const auto deadline = SteadyClock::now() + limit;
  while (results.size() < expected && SteadyClock::now() < deadline)
    for (auto& result : backend.collect(std::chrono::milliseconds(500)))
      results.push_back(std::move(result));
  return results;
}

inline TaskResult run_one(Backend& backend, TaskSpec spec) {
  backend.submit({std::move(spec)});
  auto results = collect_results(backend, 1);
  EXPECT_EQ(results.size(), 1u);
  return results.empty() ? TaskResult{} : results.front();
}

inline double epoch_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

inline double seconds_since(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

// Alive means running or sleeping; a zombie (possibly never reaped in a container) is dead.
inline bool process_alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const auto paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] != 'Z';
}

inline bool becomes_dead(pid_t pid, std::chrono::seconds limit = std::chrono::seconds(5)) {
  const auto deadline = SteadyClock::now() + limit;
  while (process_alive(pid) && SteadyClock::now() < deadline) usleep(20'000);
  return !process_alive(pid);
}

// A fresh directory under /tmp, removed with the object.
class ScratchDir {
 public:
  ScratchDir() {
    static int counter = 0;
    m_path = std::filesystem::temp_directory_path() /
             ("flotilla-jobs-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::create_directories(m_path);
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(m_path, ignored);
  }
  const std::filesystem::path& path() const { return m_path; }

 private:
  std::filesystem::path m_path;
};

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace flotilla::jobs::test

// SlurmBackendFixture.h — the Slurm backend on a fake Slurm (FakeSlurm.h), its jobs in a scratch
// folder, its notices kept: what the tests of the backend's parts share.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "BackendTestUtil.h"
#include "FakeSlurm.h"
#include "flotilla/jobs/JobPhase.h"

namespace flotilla::jobs::test {

class SlurmBackendTest : public ::testing::Test {
 protected:
  SlurmBackendTest() : settings(fake_slurm_resources(m_jobs.path(), 2)) {}

  // A backend on the fake Slurm with `settings`; a second one on the same folder is a restarted
  // scheduler.
  std::unique_ptr<Backend> make() {
    BackendOptions options{.name = "slurm", .path_prepend = path_prepend};
    options.notice = [this](std::string kind, std::string message) {
      notices.emplace_back(std::move(kind), std::move(message));
    };
    return make_fake_slurm_backend(slurm, options, settings);
  }

  const std::filesystem::path& jobs_dir() const { return m_jobs.path(); }

  // The job folders, in the order their names sort (PREFIX-PID-N: the order they were made in,
  // for N < 10).
  std::vector<std::filesystem::path> folders() const {
    std::vector<std::filesystem::path> out;
    for (const auto& entry : std::filesystem::directory_iterator(jobs_dir()))
      if (std::filesystem::exists(entry.path() / "manifest.json")) out.push_back(entry.path());
    std::sort(out.begin(), out.end());
    return out;
  }

  // The kinds of the notices said so far, in order, and the message of the first of `kind`.
  std::vector<std::string> notice_kinds() const {
    std::vector<std::string> out;
    for (const auto& [kind, message] : notices) out.push_back(kind);
    return out;
  }
  std::string notice(const std::string& kind) const {
    for (const auto& [k, message] : notices)
      if (k == kind) return message;
    return "(no " + kind + " notice)";
  }

  // The journal's lines as "EVENT PHASE DETAIL" (without the time).
  static std::vector<std::string> journal(const std::filesystem::path& dir) {
    std::vector<std::string> out;
    std::ifstream in(dir / "events");
    for (std::string line; std::getline(in, line);) out.push_back(line.substr(line.find(' ') + 1));
    return out;
  }

 private:
  ScratchDir m_jobs;  // before the fake Slurm, whose jobs write into it

 protected:
  FakeSlurm slurm;
  SlurmResources settings;
  std::vector<std::filesystem::path> path_prepend;
  std::vector<std::pair<std::string, std::string>> notices;
};

}  // namespace flotilla::jobs::test

// BuildStage.h — runs the builds of a campaign's candidates (docs/build.md), once per build key.
//
// Builds run on the host flotilla runs on, whatever the backend, through a local backend of
// their own (the same process runner as every task: an argv, no shell, a process group killed
// on timeout), build.parallel at a time, each with the campaign's working directory as its
// current directory and its own folder as {build_dir}. A folder is emptied before its build
// runs, so a build a killed run left half done starts again from nothing. Every candidate gets
// one build trial (kind build, index 0): the candidate that ran the build its real outcome, the
// others that share its key a copy of it (metric built_by names the one that ran it).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "flotilla/jobs/Backend.h"
#include "flotilla/results/Store.h"
#include "flotilla/scheduler/Settings.h"

namespace flotilla::scheduler {

using Values = std::map<std::string, std::string, std::less<>>;

class BuildStage {
 public:
  BuildStage(const Settings& settings, std::vector<std::filesystem::path> path_prepend, std::string campaign_tag);
  bool active() const { return !m_s.build_command.empty(); }

  // The build folder of a candidate with these parameter values (absolute).
  std::filesystem::path folder(const Values& values) const;

  // Builds what the candidates `ids` still need, given every recorded trial, and hands each new
  // build trial to `record` as soon as it is known. `values_of` gives a candidate's parameter
  // values; `stopping` is polled while builds run, and a true cancels them (nothing recorded
  // for them: they run again on resume).
  void run(const std::vector<std::int64_t>& ids, const std::vector<results::TrialRecord>& trials,
           const std::function<Values(std::int64_t)>& values_of,
           const std::function<void(results::TrialRecord)>& record, const std::function<bool()>& stopping);

 private:
  const Settings& m_s;
  std::vector<std::filesystem::path> m_path_prepend;
  std::string m_campaign_tag;
};

}  // namespace flotilla::scheduler

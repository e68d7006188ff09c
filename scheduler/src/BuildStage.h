// BuildStage.h — runs the builds of a campaign's candidates (docs/build.md), once per build key.
//
// Builds run through a backend of their own, made by the factory the campaign gives: a local
// backend on the host flotilla runs on (the same process runner as every task: an argv, no
// shell, a process group killed on timeout; build.parallel at a time), or, with build.on = job,
// Slurm jobs on [resources.build] whose folders sit in JOBS_DIR/builds. Each build runs with the
// campaign's working directory as its current directory and its own folder as {build_dir}. A
// folder is emptied before its build runs, so a build a killed run left half done starts again
// from nothing: here for a local build; for a Slurm build where its task starts, by the process
// runner there (TaskSpec::fresh_dir), because a restarted run may take up the earlier run's build
// job (still running, or ended with its result in its folder) instead of building again, and
// must not empty the folder from under it.
// Every candidate gets one build trial (kind build, index 0): the candidate that ran the build
// its real outcome, the others that share its key a copy of it (metric built_by names the one
// that ran it). The round's explore tasks are submitted only once its builds have ended, which
// is what Slurm's afterok would give, except that a failed build costs only its own candidates
// (under afterok their explore jobs would wait forever, DependencyNeverSatisfied).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "flotilla/jobs/Backend.h"
#include "flotilla/results/Store.h"
#include "flotilla/scheduler/Settings.h"

namespace flotilla::scheduler {

using Values = std::map<std::string, std::string, std::less<>>;

class BuildStage {
 public:
  // The backend the builds of one round run on (called once per round that has builds to run).
  using BackendFactory = std::function<std::unique_ptr<jobs::Backend>()>;
  BuildStage(const Settings& settings, BackendFactory make_backend);
  bool active() const { return !m_s.build_command.empty(); }

  // The build folder of a candidate with these parameter values (absolute).
  std::filesystem::path folder(const Values& values) const;

  // Builds what the candidates `ids` still need, given every recorded trial, and hands each new
  // build trial to `record` as soon as it is known. `values_of` gives a candidate's parameter
  // values; `stopping` is polled while builds run. On a stop, build jobs that outlive flotilla
  // (Slurm) are left running when `leave_running` says so, and taken up by the next run; other
  // builds are cancelled (nothing recorded for them: they run again on resume). Returns how many
  // jobs were left running. A backend in hold mode that wrote a build job instead of submitting
  // it ends the run at once; held() then names the job.
  std::size_t run(const std::vector<std::int64_t>& ids, const std::vector<results::TrialRecord>& trials,
                  const std::function<Values(std::int64_t)>& values_of,
                  const std::function<void(results::TrialRecord)>& record, const std::function<bool()>& stopping,
                  const std::function<bool()>& leave_running);
  const std::optional<jobs::HeldJob>& held() const { return m_held; }

 private:
  const Settings& m_s;
  BackendFactory m_make_backend;
  std::optional<jobs::HeldJob> m_held;  // hold mode: the build job written instead of submitted
};

}  // namespace flotilla::scheduler

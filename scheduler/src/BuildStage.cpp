// BuildStage.cpp — the build stage's I/O: folders and build processes (BuildStage.h).
#include "BuildStage.h"

#include <fmt/format.h>

#include <stdexcept>

#include "flotilla/jobs/Command.h"
#include "flotilla/results/Analysis.h"
#include "flotilla/scheduler/Builds.h"
#include "flotilla/scheduler/Ingest.h"
#include "ChoiceValues.h"

namespace flotilla::scheduler {
namespace {

// The latest build trial of each candidate.
std::map<std::int64_t, const results::TrialRecord*> latest_builds(const std::vector<results::TrialRecord>& trials) {
  std::map<std::int64_t, const results::TrialRecord*> latest;
  for (const auto& t : trials)
    if (t.kind == results::TrialKind::build) {
      auto& slot = latest[t.candidate];
      if (!slot || t.attempt >= slot->attempt) slot = &t;
    }
  return latest;
}

// Where a build's whole output goes: beside its folder, which the build may empty or fill as it
// likes. The task's output tail is only its last kilobyte; a report names this file.
std::filesystem::path log_path(const std::filesystem::path& build_folder) { return build_folder.string() + ".log"; }

// The build's argv, its whole output kept in `log`: a fixed script, the build's own words passed
// as its arguments, never parsed by this shell. The log's last kilobyte is the task's output, so
// its tail (and a compiler's error line in it) is recorded as any task's is.
std::vector<std::string> logged(std::vector<std::string> argv, const std::filesystem::path& log) {
  argv.insert(argv.begin(), {"sh", "-c", R"(log=$0; "$@" > "$log" 2>&1; status=$?; tail -c 1000 "$log"; exit $status)",
                             log.string()});
  return argv;
}

// A build's outcome as a candidate's build trial: anything but success is build_failed. Its
// attempt is the candidate's planned one plus the times the build was lost and run again
// (`retries`), so a lost build's result is recorded as the attempt that produced it. A failed
// build's tail ends with the note naming its full log (results::build_output reads it back).
results::TrialRecord build_trial(const jobs::TaskResult& r, const BuildNeed& need, std::int64_t built_by, int retries,
                                 const std::filesystem::path& log) {
  auto t = *to_trial_record(r);
  t.candidate = need.candidate;
  t.kind = results::TrialKind::build;
  t.index = 0;
  t.attempt = need.attempt + retries;
  if (t.status != results::TrialStatus::ok) {
    t.status = results::TrialStatus::build_failed;
    t.reason = "build failed: " + (r.reason.empty() ? "no reason given" : r.reason);
    t.output_tail += results::build_log_note(log.string());
  }
  t.metrics.push_back({"built_by", static_cast<double>(built_by)});
  return t;
}

}  // namespace

BuildStage::BuildStage(const Settings& settings, BackendFactory make_backend)
    : m_s(settings), m_make_backend(std::move(make_backend)) {}

std::filesystem::path BuildStage::folder(const Values& values) const {
  return m_s.build_root / build_folder_name(build_key(m_s.build_template(), values));
}

std::size_t BuildStage::run(const std::vector<std::int64_t>& ids, const std::vector<results::TrialRecord>& trials,
                            const std::function<Values(std::int64_t)>& values_of,
                            const std::function<void(results::TrialRecord)>& record,
                            const std::function<bool()>& stopping, const std::function<bool()>& leave_running) {
  if (!active()) return 0;
  const auto latest = latest_builds(trials);
  const auto key_of = [&](std::int64_t id) { return build_key(m_s.build_template(), values_of(id)); };
  const auto usable = [&](const results::TrialRecord& t) {
    return t.status != results::TrialStatus::ok ||
           std::filesystem::is_directory(m_s.build_root / build_folder_name(key_of(t.candidate)));
  };
  // What is recorded and still holds, by key; and who still needs a build.
  std::map<std::string, KnownBuild> known;
  for (const auto& [id, t] : latest)
    if (usable(*t)) known.try_emplace(key_of(id), KnownBuild{id, t->status == results::TrialStatus::ok});
  std::vector<BuildNeed> needs;
  for (auto id : ids) {
    auto it = latest.find(id);
    if (it != latest.end() && usable(*it->second)) continue;
    needs.push_back({id, key_of(id), it == latest.end() ? 0 : it->second->attempt + 1});
  }
  const auto plan = plan_builds(needs, known);
  // Copied before any is recorded: `trials` may be the caller's list that record() appends to,
  // and `latest` points into it.
  std::vector<results::TrialRecord> shared_trials;
  for (const auto& shared : plan.shared) {
    auto t = *latest.at(shared.from);
    t.candidate = shared.need.candidate;
    t.attempt = shared.need.attempt;
    std::erase_if(t.metrics, [](const auto& m) { return m.name == "built_by"; });
    t.metrics.push_back({"built_by", static_cast<double>(shared.from)});
    shared_trials.push_back(std::move(t));
  }
  for (auto& t : shared_trials) record(std::move(t));
  if (plan.run.empty()) return 0;

  auto backend = m_make_backend();
  // A build's task id is the candidate that runs it and the attempt: stable across runs, so a
  // restarted run's Slurm backend takes up the earlier run's job of the same build; a build run
  // again because its folder is gone (the next attempt) is a new task, never an old result.
  std::map<std::uint64_t, const BuildPlan::Build*> by_task;
  std::map<std::uint64_t, std::filesystem::path> log_of;
  std::vector<jobs::TaskSpec> specs;
  for (const auto& build : plan.run) {
    const auto& first = build.candidates.front();
    auto values = values_of(first.candidate);
    const auto dir = folder(values);
    values["build_dir"] = dir.string();
    apply_choice_values(m_s.space, values);  // the key was made from labels; commands get values
    auto argv = logged(jobs::render_argv(m_s.build_command, values), log_path(dir));
    std::filesystem::path fresh_dir;
    if (m_s.build_jobs) {
      // Emptied on the build job's node, just before the build (see BuildStage.h), by the process
      // runner that starts it there (TaskSpec::fresh_dir): no shell.
      fresh_dir = dir;
      std::filesystem::create_directories(dir.parent_path());
    } else {
      // A folder without a recorded success is what a killed or failed build left: start afresh.
      std::filesystem::remove_all(dir);
      std::filesystem::create_directories(dir);
    }
    if (first.attempt < 0 || first.attempt > 0xffff)
      throw std::runtime_error(fmt::format("candidate {}: build attempt {} is past the 65,535 a build task id holds",
                                           first.candidate, first.attempt));
    const auto id = static_cast<std::uint64_t>(first.candidate) << 16 | static_cast<std::uint64_t>(first.attempt);
    by_task[id] = &build;
    log_of[id] = log_path(dir);
    specs.push_back({.id = id, .argv = std::move(argv), .timeout = m_s.build_timeout, .workdir = m_s.workdir,
                     .fresh_dir = std::move(fresh_dir), .attempt = first.attempt, .resources = "build"});
    specs.back().env = jobs::render_env(m_s.build_env, values);
  }
  std::map<std::uint64_t, jobs::TaskSpec> spec_of;
  for (const auto& spec : specs) spec_of[spec.id] = spec;
  backend->submit(std::move(specs));
  // A build's outcome is every candidate's of its key.
  const auto record_build = [&](const jobs::TaskResult& r) {
    const auto& build = *by_task.at(r.id);
    const int retries = r.attempt - build.candidates.front().attempt;
    for (const auto& need : build.candidates)
      record(build_trial(r, need, build.candidates.front().candidate, retries, log_of.at(r.id)));
  };
  bool cancelling = false;
  while (backend->queued() + backend->running() > 0) {
    if (stopping() && !cancelling) {
      // As the campaign's own jobs (Campaign::obey_stop): build jobs that outlive flotilla keep
      // running when asked, and the next run takes them up; everything else is cancelled.
      if (backend->capabilities().outlives_scheduler && leave_running()) {
        for (const auto& r : backend->collect(std::chrono::milliseconds(0)))
          if (r.status != jobs::TaskStatus::cancelled && r.status != jobs::TaskStatus::lost) record_build(r);
        return backend->detach();
      }
      backend->cancel_all();
      cancelling = true;
    }
    const auto collected = backend->collect(std::chrono::milliseconds(200));
    if ((m_held = backend->held())) return 0;  // nothing runs until a person submits the job
    for (const auto& r : collected) {
      // Cancelled, or lost while stopping, is not a result: built again on resume.
      if (r.status == jobs::TaskStatus::cancelled || (r.status == jobs::TaskStatus::lost && stopping())) continue;
      // Lost with its node or job (Slurm): not the build's fault, so built again, as any task
      // is, up to max_attempts; a lost build is not a failed one.
      if (should_requeue(r, m_s.max_attempts)) {
        auto again = spec_of.at(r.id);
        again.attempt = r.attempt + 1;
        backend->submit({again});
        continue;
      }
      record_build(r);
    }
  }
  return 0;
}

}  // namespace flotilla::scheduler

// Ingest.cpp — TaskResult -> TrialRecord, and idempotent ingest of worker job files (Ingest.h).
#include "flotilla/scheduler/Ingest.h"

#include <cmath>

#include "flotilla/jobs/JobResults.h"
#include "flotilla/scheduler/Planning.h"

namespace flotilla::scheduler {
namespace {

results::TrialStatus trial_status(jobs::TaskStatus status) {
  switch (status) {
    case jobs::TaskStatus::ok:
      return results::TrialStatus::ok;
    case jobs::TaskStatus::timeout:
      return results::TrialStatus::timeout;
    case jobs::TaskStatus::cancelled:
      return results::TrialStatus::cancelled;
    case jobs::TaskStatus::failed:
    case jobs::TaskStatus::lost:
      break;  // a lost task that is not run again has failed
  }
  return results::TrialStatus::failed;
}

}  // namespace

std::optional<results::TrialRecord> to_trial_record(const jobs::TaskResult& r) {
  if (r.status == jobs::TaskStatus::cancelled) return std::nullopt;
  const TaskKey key = decode_task_id(r.id);
  results::TrialRecord t{.candidate = key.candidate,
                         .kind = key.kind,
                         .index = key.index,
                         .attempt = r.attempt,
                         .status = trial_status(r.status),
                         .start = r.start,
                         .end = r.end,
                         .exit_code = r.exit_code,
                         .objective = r.objective.value_or(std::nan("")),
                         .reason = r.reason,
                         .output_tail = r.output_tail};
  for (const auto& [name, value] : r.metrics) t.metrics.push_back({name, value});
  t.rank = r.rank;
  t.host = r.host;
  t.device = r.device;
  t.cores = r.cores;
  t.slurm_job = r.slurm_job;
  return t;
}

bool should_requeue(const jobs::TaskResult& result, int max_attempts) {
  return result.status == jobs::TaskStatus::lost && result.attempt + 1 < max_attempts;
}

IngestReport ingest_job_file(results::Store& store, const std::filesystem::path& job_file) {
  IngestReport report;
  // One flush for the whole file: until the commit the job file is the durable copy, and
  // ingesting it again is idempotent.
  results::Store::Group group(store);
  for (const auto& result : jobs::read_job_results(job_file)) {
    auto trial = to_trial_record(result);
    if (!trial)
      ++report.not_trials;
    else if (store.add_trial(*trial))
      report.added.push_back(std::move(*trial));
    else
      ++report.already_recorded;
  }
  group.commit();
  return report;
}

}  // namespace flotilla::scheduler

// JobResults.cpp — TaskResult <-> job file record (JobResults.h).
#include "flotilla/jobs/JobResults.h"

#include <cmath>

namespace flotilla::jobs {
namespace {

results::TrialStatus stored_status(TaskStatus status) {
  switch (status) {
    case TaskStatus::ok:
      return results::TrialStatus::ok;
    case TaskStatus::timeout:
      return results::TrialStatus::timeout;
    case TaskStatus::cancelled:
      return results::TrialStatus::cancelled;
    case TaskStatus::failed:
    case TaskStatus::lost:
      break;
  }
  return results::TrialStatus::failed;
}

TaskStatus task_status(results::TrialStatus status) {
  switch (status) {
    case results::TrialStatus::ok:
      return TaskStatus::ok;
    case results::TrialStatus::timeout:
      return TaskStatus::timeout;
    case results::TrialStatus::cancelled:
      return TaskStatus::cancelled;
    case results::TrialStatus::failed:
    case results::TrialStatus::build_failed:  // builds never run in a job; a failure all the same
      break;
  }
  return TaskStatus::failed;
}

}  // namespace

results::JobRecord to_job_record(TaskResult result) {
  results::JobRecord record;
  record.id = result.id;
  record.attempt = result.attempt;
  record.status = stored_status(result.status);
  record.start = result.start;
  record.end = result.end;
  record.exit_code = result.exit_code;
  record.objective = result.objective.value_or(std::nan(""));
  record.reason = std::move(result.reason);
  record.output_tail = std::move(result.output_tail);
  record.metrics.reserve(result.metrics.size());
  for (auto& [name, value] : result.metrics) record.metrics.push_back({std::move(name), value});
  record.rank = result.rank;
  record.host = std::move(result.host);
  record.device = std::move(result.device);
  record.cores = std::move(result.cores);
  record.slurm_job = std::move(result.slurm_job);
  return record;
}

TaskResult from_job_record(const results::JobRecord& record) {
  TaskResult result;
  result.id = record.id;
  result.status = task_status(record.status);
  result.start = record.start;
  result.end = record.end;
  result.exit_code = record.exit_code;
  result.reason = record.reason;
  result.output_tail = record.output_tail;
  for (const auto& metric : record.metrics) result.metrics.emplace_back(metric.name, metric.value);
  if (!std::isnan(record.objective)) result.objective = record.objective;
  result.attempt = record.attempt;
  result.rank = record.rank;
  result.host = record.host;
  result.device = record.device;
  result.cores = record.cores;
  result.slurm_job = record.slurm_job;
  return result;
}

std::vector<TaskResult> read_job_results(const std::filesystem::path& job_file) {
  std::vector<TaskResult> results;
  for (const auto& record : results::read_job_file(job_file).records) results.push_back(from_job_record(record));
  return results;
}

}  // namespace flotilla::jobs

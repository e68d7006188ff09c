// JobResults.h — a worker job's HDF5 results file (results/JobFile.h) as jobs::TaskResult
// values, the form every backend returns: what the mpi and Slurm backends read after (or while)
// a job runs, and what the worker writes.
//
// Status mapping: ok, failed, timeout and cancelled are stored as the campaign's trial statuses;
// lost is never stored (a lost task has, by definition, no record).
#pragma once

#include <filesystem>
#include <vector>

#include "flotilla/jobs/Task.h"
#include "flotilla/results/JobFile.h"

namespace flotilla::jobs {

results::JobRecord to_job_record(TaskResult result);  // by value: a temporary's text is moved
TaskResult from_job_record(const results::JobRecord& record);

// Every result in the file, in the order they were recorded. Throws results::StoreError naming
// the file when it is missing or not a job file.
std::vector<TaskResult> read_job_results(const std::filesystem::path& job_file);

}  // namespace flotilla::jobs

// SlurmJobFolder.h — one Slurm job's folder in jobs_dir (internal to jobs): manifest.json lists
// every task of the job; a job array also has manifest-E.json per element E (the element's tasks,
// written by that element's worker to results-E.h5); a plain job's worker writes results.h5.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <vector>

#include "flotilla/jobs/Task.h"

namespace flotilla::jobs {

// Writes the folder's manifests. `elements` maps an array index (as Slurm numbers it) to the
// positions in `tasks` of that element's tasks; empty for a plain job.
void write_job_folder(const std::filesystem::path& dir, const std::string& name, const std::vector<const TaskSpec*>& tasks,
                      const std::map<std::uint32_t, std::vector<std::size_t>>& elements);

// Every result the job's workers recorded (results.h5 and each results-E.h5 present).
std::vector<TaskResult> read_job_folder_results(const std::filesystem::path& dir);

}  // namespace flotilla::jobs

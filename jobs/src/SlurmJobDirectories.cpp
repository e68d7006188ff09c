// SlurmJobDirectories.cpp — what `flotilla status` and `flotilla cancel` read: the Slurm
// backend's job folders.
#include <algorithm>
#include <fstream>

#include "flotilla/jobs/JobResults.h"
#include "flotilla/jobs/Manifest.h"
#include "flotilla/jobs/Slurm.h"

namespace flotilla::jobs {

std::vector<JobDirectory> list_job_directories(const std::filesystem::path& jobs_dir) {
  std::vector<JobDirectory> jobs;
  if (!std::filesystem::is_directory(jobs_dir)) return jobs;
  for (const auto& entry : std::filesystem::directory_iterator(jobs_dir)) {
    if (!std::filesystem::exists(entry.path() / "manifest.json")) continue;
    JobDirectory job{.dir = entry.path(), .name = entry.path().filename().string()};
    std::ifstream(entry.path() / "slurm_job_id") >> job.slurm_id;
    job.tasks = read_manifest(entry.path() / "manifest.json").tasks.size();
    if (std::filesystem::exists(entry.path() / "results.h5"))
      job.results = read_job_results(entry.path() / "results.h5").size();
    jobs.push_back(std::move(job));
  }
  std::sort(jobs.begin(), jobs.end(), [](const auto& a, const auto& b) {
    return std::filesystem::last_write_time(a.dir / "manifest.json") < std::filesystem::last_write_time(b.dir / "manifest.json");
  });
  return jobs;
}

}  // namespace flotilla::jobs

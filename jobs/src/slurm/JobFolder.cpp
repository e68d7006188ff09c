// JobFolder.cpp — the Slurm backend's job folders: naming and writing them, reading their
// results, and listing them for `flotilla status` and `flotilla cancel` (JobFolder.h).
#include "JobFolder.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "flotilla/jobs/JobPhase.h"
#include "flotilla/jobs/JobResults.h"
#include "flotilla/jobs/Manifest.h"
#include "flotilla/jobs/Slurm.h"

namespace flotilla::jobs::slurm {

NewFolder new_job_folder(const std::filesystem::path& workdir, const std::string& prefix, int& counter) {
  NewFolder folder;
  // A fresh folder every time: a reused one would mix an earlier job's results and job id with
  // this job's manifest.
  do {
    folder.name = fmt::format("{}-{}-{}", prefix, getpid(), ++counter);
    folder.dir = workdir / folder.name;
  } while (std::filesystem::exists(folder.dir));
  // The prefix is a checked campaign name (Validate.cpp); a folder outside jobs_dir would
  // still be a bug, and one that writes where nobody looks.
  auto base = workdir.lexically_normal();
  if (!base.has_filename()) base = base.parent_path();  // "jobs/" as "jobs"
  if (folder.dir.lexically_normal().parent_path() != base)
    throw std::invalid_argument(
        fmt::format("job folder {} would lie outside {}", folder.dir.string(), workdir.string()));
  return folder;
}

void write_job_folder(const std::filesystem::path& dir, const std::string& name,
                      const std::vector<const TaskSpec*>& tasks,
                      const std::map<std::uint32_t, std::vector<std::size_t>>& elements) {
  std::filesystem::create_directories(dir);
  Manifest all{.job = name, .output = dir / "results.h5"};
  for (const auto* spec : tasks) all.tasks.push_back(to_manifest_task(*spec));
  write_manifest(dir / "manifest.json", all);
  for (const auto& [index, positions] : elements) {
    Manifest element{.job = name + "_" + std::to_string(index),
                     .output = dir / ("results-" + std::to_string(index) + ".h5")};
    for (auto i : positions) element.tasks.push_back(all.tasks[i]);
    write_manifest(dir / ("manifest-" + std::to_string(index) + ".json"), element);
  }
}

bool is_results_file(const std::filesystem::path& path) {
  const auto file = path.filename().string();
  return file == "results.h5" || (file.starts_with("results-") && file.ends_with(".h5"));
}

std::vector<TaskResult> read_job_folder_results(const std::filesystem::path& dir) {
  std::vector<TaskResult> results;
  if (!std::filesystem::is_directory(dir)) return results;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (!is_results_file(entry.path())) continue;
    for (auto& r : read_job_results(entry.path())) results.push_back(std::move(r));
  }
  return results;
}

namespace {

std::uint32_t id_in_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::uint32_t id = 0;
  return in >> id ? id : 0;
}

}  // namespace

FolderRecord read_folder_record(const std::filesystem::path& dir) {
  FolderRecord record;
  try {
    if (auto replay = read_job_journal(dir)) {
      record.phase = replay->phase;
      record.slurm_id = replay->slurm_id;
      record.allocated = replay->allocated;
      record.launching = replay->launching;
    }
  } catch (const std::invalid_argument& e) {
    record.unreadable = e.what();
  }
  if (record.slurm_id != 0 || record.launching != 0) return record;
  // The job's own slurm_job_id, or an older flotilla's markers (see the header).
  record.slurm_id = id_in_file(dir / "slurm_job_id");
  const auto allocation = id_in_file(dir / "allocation");
  if (record.slurm_id == 0) record.launching = allocation;
  record.allocated = record.slurm_id != 0 && allocation != 0;
  return record;
}

}  // namespace flotilla::jobs::slurm

namespace flotilla::jobs {

std::vector<JobDirectory> list_job_directories(const std::filesystem::path& jobs_dir) {
  std::vector<JobDirectory> jobs;
  if (!std::filesystem::is_directory(jobs_dir)) return jobs;
  for (const auto& entry : std::filesystem::directory_iterator(jobs_dir)) {
    if (!std::filesystem::exists(entry.path() / "manifest.json")) continue;
    const auto record = slurm::read_folder_record(entry.path());
    JobDirectory job{.dir = entry.path(), .name = entry.path().filename().string(), .slurm_id = record.slurm_id};
    job.tasks = read_manifest(entry.path() / "manifest.json").tasks.size();
    job.results = slurm::read_job_folder_results(entry.path()).size();
    if (!record.unreadable.empty())
      job.phase = "unreadable";  // a restarted run says why, and decides from the job's slurm_job_id
    else if (std::filesystem::exists(entry.path() / "events"))
      job.phase = std::string(to_string(record.phase));
    jobs.push_back(std::move(job));
  }
  std::sort(jobs.begin(), jobs.end(), [](const auto& a, const auto& b) {
    return std::filesystem::last_write_time(a.dir / "manifest.json") <
           std::filesystem::last_write_time(b.dir / "manifest.json");
  });
  return jobs;
}

JobView job_view(const JobDirectory& job, const std::vector<JobStatus>& records, bool reachable) {
  JobView view{.state = "?", .phase = job.phase.empty() ? "-" : job.phase};
  if (job.slurm_id == 0) {
    view.state = "NOT_SUBMITTED";
    return view;
  }
  if (!reachable) return view;
  const auto said = [](const JobStatus& s) {
    const auto word = std::string(to_string(s.state));
    return s.reason.empty() ? word : word + " (" + s.reason + ")";
  };
  const auto active = std::find_if(records.begin(), records.end(), [](const auto& s) { return !is_terminal(s.state); });
  if (active != records.end()) {
    view.state = said(*active);
    return view;
  }
  const auto failed =
      std::find_if(records.begin(), records.end(), [](const auto& s) { return s.state != JobState::completed; });
  view.state = records.empty() ? "ENDED" : said(failed == records.end() ? records.front() : *failed);
  const auto phase = job_phase_from_string(job.phase);
  if (!(phase && is_final(*phase)) && job.phase != "unreadable")
    view.phase = !records.empty() && failed == records.end() ? "done" : "ended";
  return view;
}

}  // namespace flotilla::jobs

// Job.cpp — the helpers every part of the Slurm backend shares (Job.h).
#include "Job.h"

#include <fstream>

#include <fmt/format.h>

namespace flotilla::jobs::slurm {

double epoch_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string launcher_text(const std::filesystem::path& dir) {
  std::ifstream in(dir / "launcher");
  std::string host, pid;
  return in >> host >> pid ? fmt::format("pid {} on {}", pid, host) : std::string("unknown");
}

std::optional<JobState> ended_state(const std::vector<JobStatus>& records) {
  if (records.empty()) return JobState::unknown;
  JobState worst = JobState::completed;
  for (const auto& s : records) {
    if (!is_terminal(s.state)) return std::nullopt;
    if (s.state != JobState::completed && worst == JobState::completed) worst = s.state;
  }
  return worst;
}

std::map<std::uint32_t, std::vector<JobStatus>> query_records(SlurmClient& client,
                                                              const std::vector<std::uint32_t>& ids) {
  std::map<std::uint32_t, std::vector<JobStatus>> records;
  for (auto& s : client.query(ids)) records[s.array_job_id != 0 ? s.array_job_id : s.id].push_back(std::move(s));
  return records;
}

}  // namespace flotilla::jobs::slurm

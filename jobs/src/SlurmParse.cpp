// SlurmParse.cpp — parsers of sbatch/squeue output for the command-line Slurm client (pure).
#include <charconv>

#include <nlohmann/json.hpp>

#include "flotilla/jobs/Slurm.h"

namespace flotilla::jobs {

std::optional<std::uint32_t> parse_sbatch_parsable(std::string_view out) {
  auto end = out.find_first_of(";\n");
  auto digits = out.substr(0, end);
  std::uint32_t id = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), id);
  if (digits.empty() || ec != std::errc{} || ptr != digits.data() + digits.size()) return std::nullopt;
  return id;
}

std::vector<JobStatus> parse_squeue_json(std::string_view text) {
  auto json = nlohmann::json::parse(text);  // throws nlohmann::json::parse_error on garbage
  std::vector<JobStatus> statuses;
  for (const auto& job : json.at("jobs")) {
    JobStatus s;
    s.id = job.at("job_id").get<std::uint32_t>();
    s.state = job_state_from_name(job.value("job_state", std::string("UNKNOWN")));
    s.exit_code = job.value("exit_code", 0);
    s.reason = job.value("state_reason", std::string());
    if (s.reason == "None") s.reason.clear();
    s.array_job_id = job.value("array_job_id", 0u);
    if (job.contains("array_task_id") && job["array_task_id"].is_number()) s.array_task_id = job["array_task_id"].get<std::uint32_t>();
    s.name = job.value("name", std::string());
    s.user_id = job.value("user_id", 0u);
    statuses.push_back(std::move(s));
  }
  return statuses;
}

}  // namespace flotilla::jobs

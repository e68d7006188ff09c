// SlurmParse.cpp — parsers of sbatch/squeue output for the command-line Slurm client (pure).
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>

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

namespace {
std::optional<std::uint64_t> parse_count(std::string_view digits) {
  std::uint64_t value = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || ec != std::errc{} || ptr != digits.data() + digits.size()) return std::nullopt;
  return value;
}
}  // namespace

std::uint32_t array_expression_size(std::string_view expression) {
  expression = expression.substr(0, expression.find('%'));  // "%10": a throttle, not elements
  std::uint64_t total = 0;
  while (!expression.empty()) {
    const auto comma = expression.find(',');
    std::string_view item = expression.substr(0, comma);
    expression = comma == std::string_view::npos ? std::string_view() : expression.substr(comma + 1);
    std::uint64_t step = 1;
    if (const auto colon = item.find(':'); colon != std::string_view::npos) {
      const auto parsed = parse_count(item.substr(colon + 1));
      if (!parsed || *parsed == 0) return 1;
      step = *parsed;
      item = item.substr(0, colon);
    }
    const auto dash = item.find('-');
    const auto first = parse_count(item.substr(0, dash));
    const auto last = dash == std::string_view::npos ? first : parse_count(item.substr(dash + 1));
    if (!first || !last || *last < *first) return 1;
    total += (*last - *first) / step + 1;
  }
  return total == 0 ? 1 : static_cast<std::uint32_t>(std::min<std::uint64_t>(total, UINT32_MAX));
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
    if (job.contains("array_task_string") && job["array_task_string"].is_string())
      s.submit_count = array_expression_size(job["array_task_string"].get<std::string>());
    statuses.push_back(std::move(s));
  }
  return statuses;
}

}  // namespace flotilla::jobs

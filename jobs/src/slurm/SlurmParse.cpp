// SlurmParse.cpp — parsers of sbatch/squeue output for the command-line Slurm client (pure).
#include <climits>
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>
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

namespace {

[[noreturn]] void bad_squeue_output(const std::string& what) { throw std::invalid_argument("squeue --json: " + what); }

// Job ids, array ids and user ids are unsigned 32-bit in Slurm: anything else is not squeue's
// output (nlohmann's get<std::uint32_t> would wrap -1 or 2^32 + 1 into another job's id).
std::optional<std::uint32_t> id_member(const nlohmann::json& job, const char* name, std::size_t index) {
  const auto it = job.find(name);
  if (it == job.end() || it->is_null()) return std::nullopt;
  if (!it->is_number_unsigned() || it->get<std::uint64_t>() > UINT32_MAX)
    bad_squeue_output(fmt::format("jobs[{}].{}: expected an unsigned 32-bit integer, got {}", index, name,
                                  it->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)));
  return it->get<std::uint32_t>();
}

// An exit code is an int: a number outside its range (1.8e20) is not squeue's output, and
// converting it would be undefined (found by fuzz_slurm).
int exit_code_member(const nlohmann::json& job, std::size_t index) {
  const auto it = job.find("exit_code");
  if (it == job.end() || it->is_null()) return 0;
  const bool in_range = it->is_number_unsigned() ? it->get<std::uint64_t>() <= INT_MAX
                        : it->is_number_integer() ? it->get<std::int64_t>() >= INT_MIN && it->get<std::int64_t>() <= INT_MAX
                                                  : false;
  if (!in_range)
    bad_squeue_output(fmt::format("jobs[{}].exit_code: expected an integer, got {}", index,
                                  it->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)));
  return static_cast<int>(it->get<std::int64_t>());
}

JobStatus job_status(const nlohmann::json& job, std::size_t index) {
  if (!job.is_object()) bad_squeue_output(fmt::format("jobs[{}]: expected an object", index));
  JobStatus s;
  const auto id = id_member(job, "job_id", index);
  if (!id) bad_squeue_output(fmt::format("jobs[{}]: no job_id", index));
  s.id = *id;
  s.state = job_state_from_name(job.value("job_state", std::string("UNKNOWN")));
  s.exit_code = exit_code_member(job, index);
  s.reason = job.value("state_reason", std::string());
  if (s.reason == "None") s.reason.clear();
  s.array_job_id = id_member(job, "array_job_id", index).value_or(0);
  s.array_task_id = id_member(job, "array_task_id", index);
  s.name = job.value("name", std::string());
  s.user_id = id_member(job, "user_id", index).value_or(0);
  if (job.contains("array_task_string") && job["array_task_string"].is_string())
    s.submit_count = array_expression_size(job["array_task_string"].get<std::string>());
  return s;
}

}  // namespace

std::vector<JobStatus> parse_squeue_json(std::string_view text) {
  const auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) bad_squeue_output("the output is not JSON");
  if (!json.is_object() || !json.contains("jobs") || !json.at("jobs").is_array())
    bad_squeue_output("the output has no 'jobs' list");
  std::vector<JobStatus> statuses;
  const auto& jobs = json.at("jobs");
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    try {
      statuses.push_back(job_status(jobs[i], i));
    } catch (const nlohmann::json::exception& error) {  // a field of another type than squeue writes
      bad_squeue_output(fmt::format("jobs[{}]: {}", i, error.what()));
    }
  }
  return statuses;
}

}  // namespace flotilla::jobs

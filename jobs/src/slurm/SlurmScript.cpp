// SlurmScript.cpp — pure pieces of the Slurm layer: job scripts, job states, array splitting.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <stdexcept>

#include "flotilla/jobs/Command.h"
#include "flotilla/jobs/Slurm.h"

namespace flotilla::jobs {

// Quotes a value for a POSIX shell only when it needs it, so scripts stay readable.
std::string shell_quote(std::string_view value) {
  if (!value.empty() && value.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+./:=,@%") ==
                            std::string_view::npos)
    return std::string(value);
  std::string quoted = "'";
  for (char c : value) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

bool is_sbatch_value(std::string_view value) {
  return !value.empty() && std::none_of(value.begin(), value.end(), [](char c) {
    return static_cast<unsigned char>(c) <= 0x20 || c == 0x7f;
  });
}

namespace {

// A comment's text on one line: control bytes (a newline first of all) become blanks.
std::string one_line(std::string_view text) {
  std::string out(text);
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  return out;
}

constexpr std::string_view kStateNames[] = {"PENDING",   "RUNNING",  "COMPLETED", "FAILED",   "CANCELLED",
                                            "TIMEOUT",   "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE",
                                            "OUT_OF_MEMORY", "UNKNOWN"};

}  // namespace

std::string render_job_script(const JobRequest& r) {
  std::string s = "#!/bin/bash\n";
  auto line = [&](std::string_view option, const auto& value) {
    const std::string text = fmt::format("{}", value);
    if (!is_sbatch_value(text))
      throw std::invalid_argument(fmt::format("job script: --{} value '{}' holds a blank or a control character: it "
                                              "would not stay one #SBATCH option",
                                              option, one_line(text)));
    s += fmt::format("#SBATCH --{}={}\n", option, text);
  };
  line("job-name", r.name);
  if (!r.partition.empty()) line("partition", r.partition);
  line("nodes", r.nodes);
  line("ntasks-per-node", r.ranks_per_node);
  if (r.gpus_per_node > 0) line("gpus-per-node", r.gpus_per_node);
  line("time", fmt::format("{}:{:02}:00", r.time_limit.count() / 60, r.time_limit.count() % 60));
  if (!r.account.empty()) line("account", r.account);
  if (!r.qos.empty()) line("qos", r.qos);
  if (!r.dependency.empty()) {
    line("dependency", r.dependency);
    s += "#SBATCH --kill-on-invalid-dep=yes\n";  // a dependency that can never be met cancels the job
  }
  if (!r.array.empty()) line("array", r.array);
  if (!r.requeue) s += "#SBATCH --no-requeue\n";
  if (!r.workdir.empty()) line("chdir", r.workdir.string());
  if (!r.output.empty()) line("output", r.output.string());
  for (const auto& option : r.extra) {
    if (!option.value.empty()) line(option.name, option.value);
    else s += fmt::format("#SBATCH --{}\n", option.name);
  }
  s += "\n";
  auto comments = r.comments;
  if (!r.extra.empty()) {
    std::vector<std::string> extra;
    for (const auto& option : r.extra) extra.push_back(to_string(option));
    comments.push_back(fmt::format("the last {} #SBATCH line(s) come from resources.sbatch: {}", extra.size(),
                                   fmt::join(extra, " ")));
  }
  for (const auto& comment : comments) s += "# " + one_line(comment) + "\n";
  if (!comments.empty()) s += "\n";
  s += "set -euo pipefail\n";
  for (const auto& [name, value] : r.exports) s += fmt::format("export {}={}\n", name, shell_quote(value));
  for (const auto& command : r.commands) s += command + "\n";
  return s;
}

std::string render_setup_line(std::string_view line, std::size_t number) {
  std::string words;
  for (const auto& word : split_command(line)) words += (words.empty() ? "" : " ") + shell_quote(word);
  return fmt::format("set +u; {} || {{ echo {} >&2; exit 1; }}; set -u", words,
                     shell_quote(fmt::format("flotilla: resources.setup line {} failed: {}", number, one_line(line))));
}

std::string_view to_string(JobState state) { return kStateNames[static_cast<int>(state)]; }

JobState job_state_from_name(std::string_view name) {
  for (int i = 0; i < static_cast<int>(std::size(kStateNames)); ++i)
    if (kStateNames[i] == name) return static_cast<JobState>(i);
  return JobState::unknown;
}

bool is_terminal(JobState state) {
  return state != JobState::pending && state != JobState::running && state != JobState::unknown;
}

std::vector<std::pair<std::uint32_t, std::uint32_t>> split_array(std::uint32_t count, std::uint32_t max_array_size) {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> ranges;
  const std::uint32_t chunk = max_array_size == 0 ? count : max_array_size;
  for (std::uint32_t first = 0; first < count; first += chunk)
    ranges.emplace_back(first, std::min(count, first + chunk) - 1);
  return ranges;
}

std::vector<ArrayPiece> plan_array_pieces(const std::vector<std::uint32_t>& elements, std::uint32_t max_array_size) {
  std::vector<ArrayPiece> pieces;
  const std::uint32_t width = max_array_size == 0 ? 1001 : max_array_size;  // 1001: Slurm's default
  for (auto element : elements) {
    const std::uint32_t offset = element / width * width;
    if (pieces.empty() || pieces.back().offset != offset) pieces.push_back(ArrayPiece{.offset = offset});
    pieces.back().elements.push_back(element);
  }
  for (auto& piece : pieces) {  // runs of consecutive indices as "a-b"
    for (std::size_t i = 0; i < piece.elements.size();) {
      std::size_t j = i;
      while (j + 1 < piece.elements.size() && piece.elements[j + 1] == piece.elements[j] + 1) ++j;
      const auto first = piece.elements[i] - piece.offset, last = piece.elements[j] - piece.offset;
      piece.spec += (piece.spec.empty() ? "" : ",") + (first == last ? std::to_string(first) : fmt::format("{}-{}", first, last));
      i = j + 1;
    }
  }
  return pieces;
}

}  // namespace flotilla::jobs

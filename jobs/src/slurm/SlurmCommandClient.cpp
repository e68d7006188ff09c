// SlurmCommandClient.cpp — SlurmClient over the sbatch, squeue and scancel commands, for sites
// where libslurm's version does not match the cluster's. The script goes to sbatch on stdin;
// every other setting is in the script's #SBATCH lines, the same script a person would submit.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "PartitionAdvice.h"
#include "SlurmClients.h"
#include "flotilla/jobs/Subprocess.h"

namespace flotilla::jobs {
namespace {

struct Captured {
  int status = -1;
  std::string out;  // stdout and stderr
};

// How long one Slurm command may take: slurmctld answers in milliseconds, or is wedged.
constexpr auto kCommandTimeout = std::chrono::seconds(60);

// Runs argv (no shell) with `input` on stdin; returns its exit status and output. A command that
// does not start, or runs past kCommandTimeout, is an error; a query (safe to repeat) is tried
// `tries` times first.
Captured run_capture(const std::vector<std::string>& argv, const std::string& input, int tries = 1) {
  SubprocessResult r;
  for (int attempt = 0; attempt < tries; ++attempt) {
    r = run_subprocess({.argv = argv, .input = input, .timeout = kCommandTimeout,
                        .stderr_to = SubprocessSpec::Output::to_stdout});
    if (!r.started) throw std::runtime_error(fmt::format("cannot run '{}': {}", argv[0], r.error));
    if (!r.timed_out) return Captured{r.exit_code, std::move(r.out)};
  }
  throw std::runtime_error(fmt::format("'{}' {}{}", fmt::join(argv, " "), r.describe(kCommandTimeout),
                                       tries > 1 ? fmt::format(", {} times", tries) : std::string()));
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// squeue may print warnings before its JSON; output without any '{' reaches parse_squeue_json
// empty, which says it is not JSON (substr(npos) would throw std::out_of_range instead).
std::string_view squeue_json(const std::string& out) {
  const auto brace = out.find('{');
  return brace == std::string::npos ? std::string_view() : std::string_view(out).substr(brace);
}

class CommandClient final : public SlurmClient {
 public:
  std::string_view name() const override { return "sbatch"; }

  SubmitOutcome submit(const JobRequest& r) override {
    // Never repeated: a submission that timed out may have gone through, and a second would
    // run the tasks twice.
    auto result = run_capture({"sbatch", "--parsable"}, render_job_script(r));
    auto id = result.status == 0 ? parse_sbatch_parsable(result.out) : std::nullopt;
    if (id) return Submitted{*id};
    // A partition that is drained or inactive refuses submissions until it is UP again.
    const bool limit = result.out.find("QOSMaxSubmitJob") != std::string::npos ||
                       result.out.find("AssocMaxSubmitJob") != std::string::npos ||
                       result.out.find("Resource temporarily unavailable") != std::string::npos ||
                       result.out.find("Required partition not available") != std::string::npos;
    // sbatch may print a line of its own ("invalid partition specified: X") before Slurm's error.
    auto message = first_line(result.out);
    if (const auto at = result.out.find("Batch job submission failed"); at != std::string::npos && at >= message.size()) {
      const auto line_start = result.out.rfind('\n', at) + 1;  // npos + 1 == 0
      message += "; " + first_line(result.out.substr(line_start));
    }
    return SubmitRejected{message.starts_with("sbatch:") ? message : "sbatch: " + message, limit};
  }

  std::vector<JobStatus> query(const std::vector<std::uint32_t>& ids) override {
    if (ids.empty()) return {};
    std::string list;
    for (auto id : ids) list += (list.empty() ? "" : ",") + std::to_string(id);
    auto result = run_capture({"squeue", "--json", "--jobs", list}, "", 3);
    if (result.status != 0) {
      // squeue exits non-zero when every listed job has been purged: that is "absent", not an error.
      if (result.out.find("Invalid job id") != std::string::npos) return {};
      throw std::runtime_error(fmt::format("squeue: {}", first_line(result.out)));
    }
    // squeue 22.05 ignores --jobs with --json and lists every job: filter here.
    std::vector<JobStatus> statuses;
    for (auto& s : parse_squeue_json(squeue_json(result.out)))
      if (std::find(ids.begin(), ids.end(), s.id) != ids.end() ||
          std::find(ids.begin(), ids.end(), s.array_job_id) != ids.end())
        statuses.push_back(std::move(s));
    return statuses;
  }

  void cancel(std::uint32_t id) override { run_capture({"scancel", std::to_string(id)}, "", 3); }
  // No command ends an allocation with an exit status; this client never makes one (allocate_now
  // is the default nullopt), so releasing is cancelling.
  void release(std::uint32_t id, int) override { cancel(id); }

  std::vector<JobStatus> user_jobs() override {
    auto result = run_capture({"squeue", "--json"}, "", 3);
    if (result.status != 0) throw std::runtime_error(fmt::format("squeue: {}", first_line(result.out)));
    auto statuses = parse_squeue_json(squeue_json(result.out));
    std::erase_if(statuses, [uid = getuid()](const JobStatus& s) { return s.user_id != uid; });
    return statuses;
  }

  std::vector<PartitionLimits> partitions() override {
    auto result = run_capture({"scontrol", "show", "partition", "--oneliner"}, "", 3);
    return result.status == 0 ? slurm::parse_partitions(result.out) : std::vector<PartitionLimits>();
  }

  std::uint32_t max_array_size() override {
    auto result = run_capture({"scontrol", "show", "config"}, "", 3);
    auto pos = result.out.find("MaxArraySize");
    if (pos == std::string::npos) return 1001;  // Slurm's default
    return static_cast<std::uint32_t>(std::stoul(result.out.substr(result.out.find('=', pos) + 1)));
  }
};

}  // namespace

std::unique_ptr<SlurmClient> make_command_client() { return std::make_unique<CommandClient>(); }

std::unique_ptr<SlurmClient> make_slurm_client(std::string_view name) {
  if (name == "api") return make_api_client();
  if (name == "sbatch") return make_command_client();
  throw std::invalid_argument(fmt::format("unknown Slurm client '{}' (known: api, sbatch)", name));
}

}  // namespace flotilla::jobs

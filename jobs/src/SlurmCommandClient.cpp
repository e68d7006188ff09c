// SlurmCommandClient.cpp — SlurmClient over the sbatch, squeue and scancel commands, for sites
// where libslurm's version does not match the cluster's. The script goes to sbatch on stdin;
// every other setting is in the script's #SBATCH lines, the same script a person would submit.
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "SlurmClients.h"

extern char** environ;

namespace flotilla::jobs {
namespace {

struct Captured {
  int status = -1;
  std::string out;  // stdout and stderr
};

// Runs argv (no shell) with `input` on stdin; returns its exit status and output.
Captured run_capture(const std::vector<std::string>& argv, const std::string& input) {
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, out[1], 2);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(in[0]);
  close(out[1]);
  if (rc != 0) {
    close(in[1]);
    close(out[0]);
    throw std::runtime_error(fmt::format("cannot run '{}': {}", argv[0], std::strerror(rc)));
  }
  // Write stdin and read output together, so a large script cannot deadlock on full pipes.
  Captured c;
  std::size_t written = 0;
  if (input.empty()) close(in[1]), in[1] = -1;
  std::array<char, 65536> buf{};
  for (;;) {
    pollfd fds[2] = {{out[0], POLLIN, 0}, {in[1], POLLOUT, 0}};
    if (poll(fds, in[1] >= 0 ? 2 : 1, -1) < 0 && errno != EINTR) break;
    if (in[1] >= 0 && (fds[1].revents & (POLLOUT | POLLERR))) {
      auto n = write(in[1], input.data() + written, input.size() - written);
      if (n > 0) written += static_cast<std::size_t>(n);
      if (n < 0 || written == input.size()) close(in[1]), in[1] = -1;
    }
    if (fds[0].revents & (POLLIN | POLLHUP)) {
      auto n = read(out[0], buf.data(), buf.size());
      if (n <= 0) break;
      c.out.append(buf.data(), static_cast<std::size_t>(n));
    }
  }
  if (in[1] >= 0) close(in[1]);
  close(out[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  c.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return c;
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

class CommandClient final : public SlurmClient {
 public:
  std::string_view name() const override { return "sbatch"; }

  SubmitOutcome submit(const JobRequest& r) override {
    auto result = run_capture({"sbatch", "--parsable"}, render_job_script(r));
    auto id = result.status == 0 ? parse_sbatch_parsable(result.out) : std::nullopt;
    if (id) return Submitted{*id};
    const bool limit = result.out.find("QOSMaxSubmitJob") != std::string::npos ||
                       result.out.find("AssocMaxSubmitJob") != std::string::npos ||
                       result.out.find("Resource temporarily unavailable") != std::string::npos;
    auto message = first_line(result.out);
    return SubmitRejected{message.starts_with("sbatch:") ? message : "sbatch: " + message, limit};
  }

  std::vector<JobStatus> query(const std::vector<std::uint32_t>& ids) override {
    if (ids.empty()) return {};
    std::string list;
    for (auto id : ids) list += (list.empty() ? "" : ",") + std::to_string(id);
    auto result = run_capture({"squeue", "--json", "--jobs", list}, "");
    if (result.status != 0) {
      // squeue exits non-zero when every listed job has been purged: that is "absent", not an error.
      if (result.out.find("Invalid job id") != std::string::npos) return {};
      throw std::runtime_error(fmt::format("squeue: {}", first_line(result.out)));
    }
    // squeue 22.05 ignores --jobs with --json and lists every job: filter here.
    std::vector<JobStatus> statuses;
    for (auto& s : parse_squeue_json(result.out.substr(result.out.find('{'))))
      if (std::find(ids.begin(), ids.end(), s.id) != ids.end() ||
          std::find(ids.begin(), ids.end(), s.array_job_id) != ids.end())
        statuses.push_back(std::move(s));
    return statuses;
  }

  void cancel(std::uint32_t id) override { run_capture({"scancel", std::to_string(id)}, ""); }
  // No command ends an allocation with an exit status; this client never makes one (allocate_now
  // is the default nullopt), so releasing is cancelling.
  void release(std::uint32_t id, int) override { cancel(id); }

  std::vector<JobStatus> user_jobs() override {
    auto result = run_capture({"squeue", "--json"}, "");
    if (result.status != 0) throw std::runtime_error(fmt::format("squeue: {}", first_line(result.out)));
    auto statuses = parse_squeue_json(result.out.substr(result.out.find('{')));
    std::erase_if(statuses, [uid = getuid()](const JobStatus& s) { return s.user_id != uid; });
    return statuses;
  }

  std::uint32_t max_array_size() override {
    auto result = run_capture({"scontrol", "show", "config"}, "");
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

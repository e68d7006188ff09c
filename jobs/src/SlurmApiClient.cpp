// SlurmApiClient.cpp — SlurmClient over libslurm 22.05: one checked wrapper per call, libslurm
// types confined to this file.
//
// Pitfalls handled (docs/slurm.md): slurm_init() must come first; job descriptions need an
// environment, a work_dir and a script starting with "#!"; job_state_string() is not public in
// 22.05, so states come from our own table; a purged or unknown job is simply absent.
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <unistd.h>

#include <csignal>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "SlurmClients.h"

extern char** environ;

namespace flotilla::jobs {
namespace {

std::string slurm_error(std::string_view call) {
  int e = slurm_get_errno();
  return fmt::format("{}: {} (errno {})", call, slurm_strerror(e), e);
}

// Submit limits: back off and retry rather than fail the campaign.
bool is_limit(int error) {
  return error == ESLURM_ACCOUNTING_POLICY || error == ESLURM_QOS_THRES || error == EAGAIN ||
         error == ESLURM_JOB_HELD;
}

std::string reason_text(std::uint16_t reason) {
  switch (reason) {
    case WAIT_NO_REASON: return {};
    case WAIT_DEPENDENCY: return "Dependency";
    case WAIT_DEP_INVALID: return "DependencyNeverSatisfied";
    case WAIT_RESOURCES: return "Resources";
    case WAIT_PRIORITY: return "Priority";
    case WAIT_QOS_MAX_SUB_JOB: return "QOSMaxSubmitJobPerUserLimit";
    case WAIT_ASSOC_MAX_SUB_JOB: return "AssocMaxSubmitJobLimit";
    // Why a job stays pending, as squeue names it (the progress line shows it).
    case WAIT_PART_NODE_LIMIT: return "PartitionNodeLimit";
    case WAIT_PART_TIME_LIMIT: return "PartitionTimeLimit";
    case WAIT_PART_DOWN: return "PartitionDown";
    case WAIT_PART_INACTIVE: return "PartitionInactive";
    case WAIT_HELD: return "JobHeldAdmin";
    case WAIT_HELD_USER: return "JobHeldUser";
    case WAIT_TIME: return "BeginTime";
    case WAIT_RESERVATION: return "Reservation";
    case WAIT_NODE_NOT_AVAIL: return "ReqNodeNotAvail";
    case WAIT_QOS_MAX_JOB_PER_USER: return "QOSMaxJobsPerUserLimit";
    case WAIT_ASSOC_MAX_JOBS: return "AssocMaxJobsLimit";
    default: return fmt::format("reason {}", reason);
  }
}

// A job description for a request, owning the strings libslurm's struct points into.
struct Description {
  explicit Description(const JobRequest& r)
      : name(r.name), partition(r.partition), account(r.account), qos(r.qos), dependency(r.dependency),
        array(r.array), workdir(r.workdir.string()), output(r.output.string()) {
    slurm_init_job_desc_msg(&desc);
    auto& d = desc;
    d.name = name.data();
    if (!partition.empty()) d.partition = partition.data();
    if (!account.empty()) d.account = account.data();
    if (!qos.empty()) d.qos = qos.data();
    if (!dependency.empty()) d.dependency = dependency.data();
    if (!array.empty()) d.array_inx = array.data();
    d.min_nodes = static_cast<std::uint32_t>(r.nodes);
    d.ntasks_per_node = static_cast<std::uint16_t>(r.ranks_per_node);
    d.num_tasks = static_cast<std::uint32_t>(r.nodes * r.ranks_per_node);
    d.time_limit = static_cast<std::uint32_t>(r.time_limit.count());
    if (r.gpus_per_node > 0) {
      tres = fmt::format("gres:gpu:{}", r.gpus_per_node);
      d.tres_per_node = tres.data();
    }
    d.work_dir = workdir.data();
    if (!output.empty()) d.std_out = output.data();
    int env_size = 0;
    while (environ[env_size]) ++env_size;
    d.environment = environ;
    d.env_size = static_cast<std::uint32_t>(env_size);
    d.user_id = getuid();
    d.group_id = getgid();
    if (!dependency.empty()) d.bitflags |= KILL_INV_DEP;
    if (!r.requeue) d.requeue = 0;
  }
  Description(const Description&) = delete;
  Description& operator=(const Description&) = delete;
  job_desc_msg_t desc;
  std::string name, partition, account, qos, dependency, array, workdir, output, tres;
};

class ApiClient final : public SlurmClient {
 public:
  ApiClient() {
    // slurm_init() calls fatal() and exits the process when it finds no configuration; say it
    // ourselves, as an error the caller can report.
    const char* conf = std::getenv("SLURM_CONF");
    const std::filesystem::path path = conf ? conf : "/etc/slurm/slurm.conf";
    if (!std::filesystem::exists(path))
      throw std::runtime_error(fmt::format("no Slurm configuration at {} (set SLURM_CONF, or use "
                                           "--resources.slurm_client=sbatch for a configless cluster)",
                                           path.string()));
    static std::once_flag once;  // slurm_init reads $SLURM_CONF once per process
    std::call_once(once, [] { slurm_init(nullptr); });
  }
  std::string_view name() const override { return "api"; }

  SubmitOutcome submit(const JobRequest& r) override {
    auto script = render_job_script(r);
    Description d(r);
    d.desc.script = script.data();
    submit_response_msg_t* response = nullptr;
    if (slurm_submit_batch_job(&d.desc, &response) != SLURM_SUCCESS)
      return SubmitRejected{slurm_error("slurm_submit_batch_job"), is_limit(slurm_get_errno())};
    Submitted s{response->job_id};
    slurm_free_submit_response_response_msg(response);
    return s;
  }

  std::optional<std::uint32_t> allocate_now(const JobRequest& r) override {
    Description d(r);
    d.desc.immediate = 1;  // allocated inside this call, or refused: never left pending
    resource_allocation_response_msg_t* response = nullptr;
    if (slurm_allocate_resources(&d.desc, &response) != SLURM_SUCCESS) return std::nullopt;  // busy, or refused
    const std::uint32_t id = response->job_id;
    const bool allocated = response->node_list != nullptr;
    slurm_free_resource_allocation_response_msg(response);
    if (!allocated) {  // queued after all (should not happen with immediate): leave the batch path to it
      cancel(id);
      return std::nullopt;
    }
    return id;
  }

  void release(std::uint32_t id, int wait_status) override {
    if (slurm_complete_job(id, static_cast<std::uint32_t>(wait_status)) != SLURM_SUCCESS &&
        slurm_get_errno() != ESLURM_ALREADY_DONE && slurm_get_errno() != ESLURM_INVALID_JOB_ID)
      throw std::runtime_error(slurm_error(fmt::format("slurm_complete_job({})", id)));
  }

  std::vector<JobStatus> query(const std::vector<std::uint32_t>& ids) override {
    std::set<std::uint32_t> wanted(ids.begin(), ids.end());
    return load_jobs([&](const slurm_job_info_t& job) {
      return wanted.contains(job.job_id) || wanted.contains(job.array_job_id);
    });
  }

  std::vector<JobStatus> user_jobs() override {
    const auto uid = getuid();
    return load_jobs([&](const slurm_job_info_t& job) { return job.user_id == uid; });
  }

  void cancel(std::uint32_t id) override {
    if (slurm_kill_job(id, SIGKILL, 0) != SLURM_SUCCESS && slurm_get_errno() != ESLURM_ALREADY_DONE &&
        slurm_get_errno() != ESLURM_INVALID_JOB_ID)
      throw std::runtime_error(slurm_error(fmt::format("slurm_kill_job({})", id)));
  }

  std::uint32_t max_array_size() override {
    slurm_conf_t* conf = nullptr;
    if (slurm_load_ctl_conf(0, &conf) != SLURM_SUCCESS) throw std::runtime_error(slurm_error("slurm_load_ctl_conf"));
    auto size = conf->max_array_sz;
    slurm_free_ctl_conf(conf);
    return size;
  }

 private:
  // One slurm_load_jobs call; the statuses of the jobs `keep` accepts.
  template <class Keep>
  std::vector<JobStatus> load_jobs(Keep keep) {
    job_info_msg_t* msg = nullptr;
    if (slurm_load_jobs(0, &msg, SHOW_ALL) != SLURM_SUCCESS) throw std::runtime_error(slurm_error("slurm_load_jobs"));
    std::vector<JobStatus> statuses;
    for (std::uint32_t i = 0; i < msg->record_count; ++i) {
      const auto& job = msg->job_array[i];
      if (!keep(job)) continue;
      JobStatus s{.id = job.job_id,
                  .state = job_state_from_name(kApiStateNames[std::min<std::uint32_t>(job.job_state & JOB_STATE_BASE, 11)]),
                  .exit_code = static_cast<int>(job.exit_code),
                  .reason = reason_text(job.state_reason),
                  .array_job_id = job.array_job_id,
                  .name = job.name ? job.name : "",
                  .user_id = job.user_id};
      if (job.array_job_id != 0 && job.array_task_id != NO_VAL) s.array_task_id = job.array_task_id;
      if (job.array_task_str != nullptr) s.submit_count = array_expression_size(job.array_task_str);
      statuses.push_back(std::move(s));
    }
    slurm_free_job_info_msg(msg);
    return statuses;
  }

  // enum job_states order (JOB_PENDING ... JOB_OOM); our JobState names for each.
  static constexpr const char* kApiStateNames[] = {"PENDING",   "RUNNING",  "SUSPENDED", "COMPLETED",
                                                   "CANCELLED", "FAILED",   "TIMEOUT",   "NODE_FAIL",
                                                   "PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY"};
};

}  // namespace

std::unique_ptr<SlurmClient> make_api_client() { return std::make_unique<ApiClient>(); }

}  // namespace flotilla::jobs

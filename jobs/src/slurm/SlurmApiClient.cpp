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
#include <deque>
#include <filesystem>
#include <mutex>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "SlurmClients.h"

extern char** environ;

// Exported by libslurm 22.05 (slurm_protocol_defs.c) but not declared in its public headers.
extern "C" const char* slurm_job_reason_string(enum job_state_reason inx);

namespace flotilla::jobs {
namespace {

std::string slurm_error(std::string_view call) {
  int e = slurm_get_errno();
  return fmt::format("{}: {} (errno {})", call, slurm_strerror(e), e);
}

// Submit limits: back off and retry rather than fail the campaign.
bool is_limit(int error) {
  // A drained or inactive partition (ESLURM_PARTITION_NOT_AVAIL) takes jobs again once it is UP.
  return error == ESLURM_ACCOUNTING_POLICY || error == ESLURM_QOS_THRES || error == EAGAIN ||
         error == ESLURM_JOB_HELD || error == ESLURM_PARTITION_NOT_AVAIL;
}

// Slurm's own name of a pending job's reason ("Resources", "JobHeldUser"), as squeue prints it.
std::string reason_text(std::uint16_t reason) {
  if (reason == WAIT_NO_REASON) return {};
  const char* name = slurm_job_reason_string(static_cast<job_state_reason>(reason));
  return name ? std::string(name) : fmt::format("reason {}", reason);
}

std::uint16_t mail_type_mask(std::string_view list) {
  std::uint16_t mask = 0;
  while (!list.empty()) {
    const auto comma = list.find(',');
    const auto word = list.substr(0, comma);
    if (word == "BEGIN") mask |= MAIL_JOB_BEGIN;
    else if (word == "END") mask |= MAIL_JOB_END;
    else if (word == "FAIL") mask |= MAIL_JOB_FAIL;
    else if (word == "REQUEUE") mask |= MAIL_JOB_REQUEUE;
    else if (word == "TIME_LIMIT") mask |= MAIL_JOB_TIME100;
    else if (word == "TIME_LIMIT_90") mask |= MAIL_JOB_TIME90;
    else if (word == "TIME_LIMIT_80") mask |= MAIL_JOB_TIME80;
    else if (word == "TIME_LIMIT_50") mask |= MAIL_JOB_TIME50;
    else if (word == "STAGE_OUT") mask |= MAIL_JOB_STAGE_OUT;
    else if (word == "ARRAY_TASKS") mask |= MAIL_ARRAY_TASKS;
    else if (word == "INVALID_DEPEND") mask |= MAIL_INVALID_DEPEND;
    else if (word == "ALL") mask |= MAIL_JOB_BEGIN | MAIL_JOB_END | MAIL_JOB_FAIL | MAIL_JOB_REQUEUE |
                                    MAIL_JOB_STAGE_OUT | MAIL_INVALID_DEPEND;
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
  }
  return mask;
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
    for (const auto& option : r.extra) apply(option);
  }

  // Sets the field sbatch sets for `option` (SbatchOptions.h: every pass-through option, and
  // the allocation fields an SBATCH_* variable may override). Values were checked when read.
  void apply(const SbatchOption& option) {
    auto& d = desc;
    const auto& name = option.name;
    const auto text = [&] { return owned.emplace_back(option.value).data(); };
    if (name == "partition") d.partition = text();
    else if (name == "account") d.account = text();
    else if (name == "qos") d.qos = text();
    else if (name == "time") d.time_limit = static_cast<std::uint32_t>(parse_slurm_time(option.value)->count());
    else if (name == "constraint") d.features = text();
    else if (name == "exclusive") d.shared = JOB_SHARED_NONE;
    else if (name == "mem") d.pn_min_memory = *parse_memory_mib(option.value);
    else if (name == "mem-per-cpu") d.pn_min_memory = *parse_memory_mib(option.value) | MEM_PER_CPU;
    else if (name == "reservation") d.reservation = text();
    else if (name == "wckey") d.wckey = text();
    else if (name == "exclude") d.exc_nodes = text();
    else if (name == "nodelist") d.req_nodes = text();
    else if (name == "cpus-per-task") d.cpus_per_task = static_cast<std::uint16_t>(std::stoi(option.value));
    else if (name == "comment") d.comment = text();
    else if (name == "licenses") d.licenses = text();
    else if (name == "mail-user") d.mail_user = text();
    else if (name == "mail-type") d.mail_type = mail_type_mask(option.value);
    else if (name == "nice") d.nice = static_cast<std::uint32_t>(NICE_OFFSET + std::stoll(option.value));
    else throw std::logic_error(fmt::format("the api client has no field for --{}", name));
  }
  Description(const Description&) = delete;
  Description& operator=(const Description&) = delete;
  job_desc_msg_t desc;
  std::string name, partition, account, qos, dependency, array, workdir, output, tres;
  std::deque<std::string> owned;  // the values of applied options (a deque never moves them)
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

  // sbatch reads the SBATCH_* variables of its environment and lets them beat the script's
  // #SBATCH lines; libslurm does not, so the same are applied here, after the request's own.
  // (SlurmBackend refuses to start on the variables neither client should honour.)
  void apply_environment(Description& d) const {
    for (const auto& option : m_environment) d.apply(option);
  }

  SubmitOutcome submit(const JobRequest& r) override {
    auto script = render_job_script(r);
    Description d(r);
    apply_environment(d);
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
    apply_environment(d);
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

  std::vector<PartitionLimits> partitions() override {
    partition_info_msg_t* msg = nullptr;
    if (slurm_load_partitions(0, &msg, SHOW_ALL) != SLURM_SUCCESS)
      throw std::runtime_error(slurm_error("slurm_load_partitions"));
    std::vector<PartitionLimits> out;
    for (std::uint32_t i = 0; i < msg->record_count; ++i) {
      const auto& p = msg->partition_array[i];
      const auto up = p.state_up;
      out.push_back({.name = p.name ? p.name : "",
                     .is_default = (p.flags & PART_FLAG_DEFAULT) != 0,
                     .state = up == PARTITION_UP ? "UP" : up == PARTITION_DOWN ? "DOWN" : up == PARTITION_DRAIN ? "DRAIN"
                                                                                                  : "INACTIVE",
                     .max_nodes = p.max_nodes == INFINITE ? std::nullopt : std::optional(p.max_nodes),
                     .total_nodes = p.total_nodes,
                     .max_time = p.max_time == INFINITE || p.max_time == NO_VAL
                                     ? std::nullopt
                                     : std::optional(std::chrono::minutes(p.max_time))});
    }
    slurm_free_partition_info_msg(msg);
    return out;
  }

  std::uint32_t max_array_size() override {
    slurm_conf_t* conf = nullptr;
    if (slurm_load_ctl_conf(0, &conf) != SLURM_SUCCESS) throw std::runtime_error(slurm_error("slurm_load_ctl_conf"));
    auto size = conf->max_array_sz;
    slurm_free_ctl_conf(conf);
    return size;
  }

 private:
  // One call for the calling user's jobs (slurm_load_job_user: on a shared cluster the answer
  // holds this user's jobs, not every user's, as slurm_load_jobs's would); the statuses of the
  // jobs `keep` accepts. Every job flotilla follows is the user's own.
  template <class Keep>
  std::vector<JobStatus> load_jobs(Keep keep) {
    job_info_msg_t* msg = nullptr;
    if (slurm_load_job_user(&msg, getuid(), SHOW_ALL) != SLURM_SUCCESS)
      throw std::runtime_error(slurm_error("slurm_load_job_user"));
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

 private:
  std::vector<SbatchOption> m_environment = read_sbatch_environment(process_environment()).applied;
};

}  // namespace

std::unique_ptr<SlurmClient> make_api_client() { return std::make_unique<ApiClient>(); }

}  // namespace flotilla::jobs

// SlurmBackend.cpp — see SlurmBackend.h.
#include "SlurmBackend.h"

#include <unistd.h>

#include <algorithm>
#include <deque>
#include <fstream>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "flotilla/jobs/JobResults.h"
#include "flotilla/jobs/Manifest.h"
#include "flotilla/jobs/Slurm.h"

namespace flotilla::jobs {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kPollInterval = std::chrono::milliseconds(250);

double epoch_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::filesystem::path find_worker(const std::vector<std::filesystem::path>& dirs) {
  for (const auto& dir : dirs)
    if (std::filesystem::exists(dir / "flotilla-worker")) return std::filesystem::absolute(dir / "flotilla-worker");
  return "flotilla-worker";  // on the compute nodes' PATH
}

struct Job {
  std::uint32_t slurm_id = 0;      // 0 while waiting to be submitted
  std::string name;
  std::filesystem::path dir;
  std::vector<std::uint64_t> tasks;
  Clock::time_point next_try{};    // back-off after a submit-limit rejection
  int tries = 0;
};

class SlurmBackend final : public Backend {
 public:
  explicit SlurmBackend(const BackendOptions& o)
      : m_r(o.slurm), m_client(make_slurm_client(o.slurm.client)), m_worker(find_worker(o.path_prepend)) {
    if (m_r.workdir.empty()) m_r.workdir = std::filesystem::current_path() / "flotilla-jobs";
    m_r.workdir = std::filesystem::absolute(m_r.workdir);
    std::filesystem::create_directories(m_r.workdir);
    scan_earlier_jobs();
  }
  ~SlurmBackend() override { cancel_all(); }

  std::string_view name() const override { return "slurm"; }

  void submit(std::vector<TaskSpec> tasks) override {
    std::erase_if(tasks, [&](TaskSpec& spec) { return take_earlier_result(spec); });
    if (tasks.empty()) return;
    Job job;
    job.name = fmt::format("{}-{}-{}", m_r.job_prefix, getpid(), ++m_counter);
    job.dir = m_r.workdir / job.name;
    std::filesystem::create_directories(job.dir);
    Manifest manifest{.job = job.name, .output = job.dir / "results.h5"};
    for (auto& spec : tasks) {
      job.tasks.push_back(spec.id);
      manifest.tasks.push_back(to_manifest_task(spec));
      m_pending[spec.id] = std::move(spec);
    }
    write_manifest(job.dir / "manifest.json", manifest);
    try_submit(job);
    m_jobs.push_back(std::move(job));
  }

  std::vector<TaskResult> collect(std::chrono::milliseconds wait) override {
    const auto deadline = Clock::now() + wait;
    for (;;) {
      for (auto& job : m_jobs)
        if (job.slurm_id == 0 && Clock::now() >= job.next_try) try_submit(job);
      if (Clock::now() - m_last_poll >= kPollInterval) poll();
      if (!m_ready.empty() || Clock::now() >= deadline) break;
      std::this_thread::sleep_for(std::min<Clock::duration>(std::chrono::milliseconds(50), deadline - Clock::now()));
    }
    std::vector<TaskResult> out(std::make_move_iterator(m_ready.begin()), std::make_move_iterator(m_ready.end()));
    m_ready.clear();
    return out;
  }

  std::size_t queued() const override { return count_tasks(false) + m_ready.size(); }
  std::size_t running() const override { return count_tasks(true); }

  void cancel_all() override {
    for (auto& job : m_jobs) {
      if (job.slurm_id != 0) m_client->cancel(job.slurm_id);
      finish(job, "cancelled by flotilla", TaskStatus::cancelled);
    }
    m_jobs.clear();
  }

 private:
  std::size_t count_tasks(bool running) const {
    std::size_t n = 0;
    for (const auto& job : m_jobs)
      if ((m_running.contains(job.slurm_id)) == running) n += job.tasks.size();
    return n;
  }

  void try_submit(Job& job) {
    JobRequest request{.name = job.name, .partition = m_r.partition, .nodes = m_r.nodes,
                       .ranks_per_node = m_r.ranks_per_node, .gpus_per_node = m_r.gpus_per_node,
                       .time_limit = m_r.time_limit, .account = m_r.account, .qos = m_r.qos, .workdir = job.dir,
                       .output = job.dir / "slurm-%j.out",
                       .comments = {fmt::format("flotilla job {}: {} tasks from manifest.json", job.name, job.tasks.size()),
                                    "flotilla-worker ranks pull tasks from rank 0, which writes each result to "
                                    "results.h5 as it completes"},
                       .commands = {fmt::format("srun --mpi=pmix {} manifest.json", m_worker.string())}};
    auto outcome = m_client->submit(request);
    if (auto* ok = std::get_if<Submitted>(&outcome)) {
      job.slurm_id = ok->id;
      std::ofstream(job.dir / "job.sh") << render_job_script(request);  // what ran, for people
      std::ofstream(job.dir / "slurm_job_id") << ok->id << '\n';       // for a restarted scheduler
      return;
    }
    const auto& rejected = std::get<SubmitRejected>(outcome);
    if (rejected.limit) {  // back off: 1, 2, 4 ... 30 s
      job.next_try = Clock::now() + std::chrono::seconds(std::min(30, 1 << std::min(job.tries++, 5)));
      return;
    }
    // Anything else (no such partition, Slurm unreachable) is a setup error, not a trial result:
    // recording it would burn the campaign's budget on failures that say nothing about candidates.
    throw std::runtime_error(fmt::format("Slurm refused job {} ({}): {}", job.name,
                                         (job.dir / "manifest.json").string(), rejected.message));
  }

  void poll() {
    m_last_poll = Clock::now();
    std::vector<std::uint32_t> ids;
    for (const auto& job : m_jobs)
      if (job.slurm_id != 0) ids.push_back(job.slurm_id);
    if (ids.empty()) {
      std::erase_if(m_jobs, [](const Job& j) { return j.tasks.empty(); });
      return;
    }
    std::map<std::uint32_t, JobStatus> states;
    for (auto& s : m_client->query(ids)) states[s.id] = std::move(s);
    m_running.clear();
    for (auto& job : m_jobs) {
      if (job.slurm_id == 0) continue;
      auto it = states.find(job.slurm_id);
      if (it != states.end() && !is_terminal(it->second.state)) {
        if (it->second.state == JobState::running) m_running.insert(job.slurm_id);
        continue;
      }
      auto how = it == states.end() ? std::string("vanished from the queue") : fmt::format("ended {}", to_string(it->second.state));
      finish(job, fmt::format("Slurm job {} ({}) {} before this task reported", job.slurm_id, job.name, how),
             TaskStatus::lost);
      job.tasks.clear();
    }
    std::erase_if(m_jobs, [](const Job& j) { return j.tasks.empty(); });
  }

  // A restarted scheduler resubmits the tasks it has no result for. Jobs of an earlier run in
  // workdir may hold them: a result already in a job's results.h5 is taken as it is, and a task
  // whose job is still pending or running is followed in that job instead of being submitted twice.
  void scan_earlier_jobs() {
    std::vector<std::uint32_t> ids;
    std::map<std::uint32_t, Job> jobs;
    for (const auto& entry : std::filesystem::directory_iterator(m_r.workdir)) {
      std::ifstream id_file(entry.path() / "slurm_job_id");
      std::uint32_t id = 0;
      if (!(id_file >> id) || !std::filesystem::exists(entry.path() / "manifest.json")) continue;
      Job job{.slurm_id = id, .name = entry.path().filename().string(), .dir = entry.path()};
      for (const auto& task : read_manifest(entry.path() / "manifest.json").tasks) job.tasks.push_back(task.id);
      ids.push_back(id);
      jobs[id] = std::move(job);
    }
    if (ids.empty()) return;
    std::set<std::uint32_t> active;
    for (const auto& status : m_client->query(ids))
      if (!is_terminal(status.state)) active.insert(status.id);
    for (auto& [id, job] : jobs) {
      if (active.contains(id)) {
        for (auto task : job.tasks) m_adoptable[task] = id;
        m_earlier_jobs[id] = std::move(job);
      } else if (std::filesystem::exists(job.dir / "results.h5")) {
        for (auto& r : read_job_results(job.dir / "results.h5"))
          if (r.status == TaskStatus::ok || r.status == TaskStatus::failed || r.status == TaskStatus::timeout)
            m_earlier_results[r.id] = std::move(r);
      }
    }
  }

  bool take_earlier_result(TaskSpec& spec) {
    if (auto it = m_earlier_results.find(spec.id); it != m_earlier_results.end() && it->second.attempt == spec.attempt) {
      m_ready.push_back(std::move(it->second));
      m_earlier_results.erase(it);
      return true;
    }
    auto adopt = m_adoptable.find(spec.id);
    if (adopt == m_adoptable.end()) return false;
    auto& earlier = m_earlier_jobs[adopt->second];
    auto existing = std::find_if(m_jobs.begin(), m_jobs.end(), [&](const Job& j) { return j.slurm_id == earlier.slurm_id; });
    if (existing == m_jobs.end()) {
      m_jobs.push_back(Job{.slurm_id = earlier.slurm_id, .name = earlier.name, .dir = earlier.dir});
      existing = std::prev(m_jobs.end());
    }
    existing->tasks.push_back(spec.id);
    m_adoptable.erase(adopt);
    m_pending[spec.id] = std::move(spec);
    return true;
  }

  // Takes the job's recorded results; every other task of the job comes back as `status`.
  void finish(const Job& job, const std::string& reason, TaskStatus status) {
    auto results_file = job.dir / "results.h5";
    if (std::filesystem::exists(results_file)) {
      for (auto& r : read_job_results(results_file)) {
        if (!m_pending.erase(r.id)) continue;  // not ours, or already returned
        m_ready.push_back(std::move(r));
      }
    }
    for (auto id : job.tasks) {
      auto it = m_pending.find(id);
      if (it == m_pending.end()) continue;
      TaskResult lost{.id = id, .status = status, .start = epoch_seconds(), .end = epoch_seconds(), .exit_code = 0,
                      .reason = reason, .attempt = it->second.attempt};
      m_ready.push_back(std::move(lost));
      m_pending.erase(it);
    }
  }

  SlurmResources m_r;
  std::unique_ptr<SlurmClient> m_client;
  std::filesystem::path m_worker;
  std::map<std::uint64_t, TaskSpec> m_pending;  // submitted, no result returned yet
  std::vector<Job> m_jobs;
  std::set<std::uint32_t> m_running;
  std::deque<TaskResult> m_ready;
  std::map<std::uint64_t, TaskResult> m_earlier_results;   // from finished jobs of an earlier run
  std::map<std::uint64_t, std::uint32_t> m_adoptable;      // task -> still active job of an earlier run
  std::map<std::uint32_t, Job> m_earlier_jobs;
  Clock::time_point m_last_poll{};
  int m_counter = 0;
};

}  // namespace

std::unique_ptr<Backend> make_slurm_backend(const BackendOptions& options) {
  return std::make_unique<SlurmBackend>(options);
}

}  // namespace flotilla::jobs

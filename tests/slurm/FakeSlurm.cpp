// FakeSlurm.cpp — the fake Slurm of the Slurm backend's unit tests (FakeSlurm.h).
#include "FakeSlurm.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "slurm/SlurmBackend.h"

extern char** environ;

namespace flotilla::jobs::test {
namespace {

// "0-2,5,7-9" (as the backend writes array specs) as its indices.
std::vector<std::uint32_t> array_indices(const std::string& spec) {
  std::vector<std::uint32_t> out;
  std::size_t begin = 0;
  while (begin < spec.size()) {
    auto end = spec.find(',', begin);
    if (end == std::string::npos) end = spec.size();
    const auto range = spec.substr(begin, end - begin);
    const auto dash = range.find('-');
    const auto first = static_cast<std::uint32_t>(std::stoul(range.substr(0, dash)));
    const auto last =
        dash == std::string::npos ? first : static_cast<std::uint32_t>(std::stoul(range.substr(dash + 1)));
    for (auto i = first; i <= last; ++i) out.push_back(i);
    begin = end + 1;
  }
  return out;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

bool exited(pid_t pid, int& status, bool block) { return ::waitpid(pid, &status, block ? 0 : WNOHANG) == pid; }

}  // namespace

// The handle the backend owns: every call goes to the FakeSlurm.
class FakeSlurmClient final : public SlurmClient {
 public:
  explicit FakeSlurmClient(FakeSlurm& slurm) : m_slurm(slurm) {}
  std::string_view name() const override { return "fake"; }
  SubmitOutcome submit(const JobRequest& request) override { return m_slurm.submit(request); }
  std::vector<JobStatus> query(const std::vector<std::uint32_t>& ids) override { return m_slurm.query(ids); }
  void cancel(std::uint32_t id) override { m_slurm.cancel(id); }
  std::vector<JobStatus> user_jobs() override { return m_slurm.user_jobs(); }
  std::uint32_t max_array_size() override { return m_slurm.m_max_array_size; }
  std::optional<std::uint32_t> allocate_now(const JobRequest& request) override {
    return m_slurm.allocate_now(request);
  }
  void release(std::uint32_t id, int wait_status) override { m_slurm.release(id, wait_status); }

 private:
  FakeSlurm& m_slurm;
};

int task_ranks(const JobRequest& request) {
  const int ranks = request.nodes * request.ranks_per_node + (request.gpus_per_node > 0 ? 1 : 0);
  return std::max(1, ranks - 1);
}

SlurmResources fake_slurm_resources(const std::filesystem::path& jobs_dir, unsigned slots) {
  SlurmResources r;
  r.client = "fake";
  r.workdir = jobs_dir;
  r.job_prefix = "fake";
  r.shape.nodes = 1;
  r.shape.ranks_per_node = static_cast<int>(slots) + 1;  // rank 0 dispatches
  // Every query is a step of the fake's scheduler (jobs start and end only then): the tests keep
  // the pace they were written for rather than resources.slurm_poll's 2 s.
  r.poll_interval = std::chrono::milliseconds(250);
  return r;
}

std::unique_ptr<Backend> make_fake_slurm_backend(FakeSlurm& slurm, const BackendOptions& options,
                                                 const SlurmResources& settings) {
  return make_slurm_backend(settings, options, slurm.client());
}

FakeSlurm::FakeSlurm() = default;

FakeSlurm::~FakeSlurm() {
  for (auto& [id, job] : m_jobs) stop(job, SIGKILL);
}

std::unique_ptr<SlurmClient> FakeSlurm::client() { return std::make_unique<FakeSlurmClient>(*this); }

SubmitOutcome FakeSlurm::submit(const JobRequest& request) {
  if (!m_refusals.empty()) {
    auto refusal = m_refusals.front();
    m_refusals.erase(m_refusals.begin());
    return refusal;
  }
  FakeJob job{.id = m_next_id, .request = request, .held = m_hold_new};
  for (auto index : request.array.empty() ? std::vector<std::uint32_t>{0} : array_indices(request.array))
    job.elements.push_back({.index = index});
  m_next_id += 1 + static_cast<std::uint32_t>(request.array.empty() ? 0 : job.elements.size());  // element ids
  m_requests.push_back(request);
  const auto id = job.id;
  m_jobs.emplace(id, std::move(job));
  return Submitted{id};
}

std::optional<std::uint32_t> FakeSlurm::allocate_now(const JobRequest& request) {
  if (!m_allocations) return std::nullopt;
  FakeJob job{.id = m_next_id++, .request = request, .state = JobState::running, .allocation = true};
  job.elements.push_back({.state = JobState::running});  // the backend's launcher runs its script
  m_requests.push_back(request);
  const auto id = job.id;
  m_jobs.emplace(id, std::move(job));
  return id;
}

void FakeSlurm::release(std::uint32_t id, int wait_status) {
  end(id, wait_status == 0 ? JobState::completed : JobState::failed);
}

std::vector<JobStatus> FakeSlurm::query(const std::vector<std::uint32_t>& ids) {
  ++m_queries;
  step();
  std::vector<JobStatus> out;
  for (auto id : ids)
    if (const auto* job = find(id))
      for (auto& record : records(*job)) out.push_back(std::move(record));
  return out;
}

std::vector<JobStatus> FakeSlurm::user_jobs() {
  std::vector<JobStatus> out = m_foreign;
  for (const auto& [id, job] : m_jobs)
    for (auto& record : records(job)) out.push_back(std::move(record));
  return out;
}

void FakeSlurm::cancel(std::uint32_t id) {
  m_cancelled.insert(id);
  auto* known = find(id);
  if (!known || is_terminal(known->state)) return;
  auto& j = job(id);
  stop(j, SIGTERM);  // reaped at a later step, as slurmstepd ends a step
  j.state = JobState::cancelled;
  for (auto& e : j.elements)
    if (!is_terminal(e.state)) e.state = JobState::cancelled;
}

void FakeSlurm::step() {
  for (auto& [id, job] : m_jobs) {
    reap(job);
    if (job.state != JobState::pending || job.vanished) continue;
    const auto met = dependency_met(job);
    if (met == false) {  // --kill-on-invalid-dep
      job.state = JobState::cancelled;
      job.reason = "DependencyNeverSatisfied";
      for (auto& e : job.elements) e.state = JobState::cancelled;
    } else if (!met) {
      job.reason = "Dependency";
    } else if (job.held) {
      job.reason = "Resources";
    } else {
      launch(job);
    }
  }
}

void FakeSlurm::start(std::uint32_t id) {
  auto& j = job(id);
  j.held = false;
  if (j.state == JobState::pending) launch(j);
}

void FakeSlurm::end(std::uint32_t id, JobState state) {
  auto& j = job(id);
  stop(j, SIGKILL);
  j.state = state;
  for (auto& e : j.elements)
    if (!is_terminal(e.state)) e.state = state;
}

void FakeSlurm::forget(std::uint32_t id) {
  auto& j = job(id);
  stop(j, SIGKILL);
  j.vanished = true;
}

void FakeSlurm::refuse_next(SubmitRejected rejection, int times) {
  for (int i = 0; i < times; ++i) m_refusals.push_back(rejection);
}

std::vector<std::uint32_t> FakeSlurm::ids() const {
  std::vector<std::uint32_t> out;
  for (const auto& [id, job] : m_jobs) out.push_back(id);
  return out;
}

JobState FakeSlurm::state(std::uint32_t id) const {
  const auto* j = find(id);
  return j ? j->state : JobState::unknown;
}

void FakeSlurm::wait_for_processes() {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (;;) {
    bool any = false;
    for (auto& [id, job] : m_jobs) {
      reap(job);
      for (const auto& e : job.elements) any = any || e.pid > 0;
    }
    if (!any || std::chrono::steady_clock::now() > deadline) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

FakeSlurm::FakeJob& FakeSlurm::job(std::uint32_t id) {
  auto it = m_jobs.find(id);
  if (it == m_jobs.end()) throw std::out_of_range("fake Slurm: no job " + std::to_string(id));
  return it->second;
}

const FakeSlurm::FakeJob* FakeSlurm::find(std::uint32_t id) const {
  auto it = m_jobs.find(id);
  return it == m_jobs.end() ? nullptr : &it->second;
}

// "afterok:ID:ID": met once every job completed, never once one ended otherwise.
std::optional<bool> FakeSlurm::dependency_met(const FakeJob& job) const {
  const auto& dependency = job.request.dependency;
  if (dependency.empty()) return true;
  if (!dependency.starts_with("afterok:")) throw std::invalid_argument("fake Slurm: dependency " + dependency);
  bool waiting = false;
  for (auto id : array_indices(replace_all(dependency.substr(8), ":", ","))) {
    const auto* other = find(id);
    if (!other || other->state == JobState::completed) continue;
    if (is_terminal(other->state)) return false;
    waiting = true;
  }
  return waiting ? std::nullopt : std::optional(true);
}

// What the job script does once it starts: record its id, then run the worker on each element's
// manifest, its output where Slurm would put it.
void FakeSlurm::launch(FakeJob& job) {
  const auto& r = job.request;
  job.state = JobState::running;
  job.reason.clear();
  std::ofstream(r.workdir / "slurm_job_id") << job.id << '\n';
  const bool array = !r.array.empty();
  for (std::size_t i = 0; i < job.elements.size(); ++i) {
    auto& e = job.elements[i];
    const auto index = std::to_string(e.index);
    const auto manifest = r.workdir / (array ? "manifest-" + index + ".json" : "manifest.json");
    const auto own_id = std::to_string(array ? job.id + 1 + i : job.id);
    const auto output = replace_all(
        replace_all(replace_all(r.output.string(), "%j", own_id), "%A", std::to_string(job.id)), "%a", index);
    std::vector<std::string> args{FLOTILLA_FAKE_SLURM_WORKER, manifest.string(), std::to_string(task_ranks(r))};
    std::vector<std::string> env;
    for (char** v = environ; *v; ++v) env.emplace_back(*v);
    env.push_back("SLURM_JOB_ID=" + own_id);
    if (array) {
      env.push_back("SLURM_ARRAY_JOB_ID=" + std::to_string(job.id));
      env.push_back("SLURM_ARRAY_TASK_ID=" + index);
    }
    std::vector<char*> argv, envp;
    for (auto& a : args) argv.push_back(a.data());
    for (auto& v : env) envp.push_back(v.data());
    argv.push_back(nullptr);
    envp.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, output.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    pid_t pid = 0;
    const int error = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    if (error != 0) throw std::runtime_error(std::string("fake Slurm: cannot start ") + argv[0]);
    e.pid = pid;
    e.state = JobState::running;
  }
}

// Elements whose worker exited end COMPLETED or FAILED; the job ends when all have.
void FakeSlurm::reap(FakeJob& job) {
  bool all_ended = true;
  JobState worst = JobState::completed;
  for (auto& e : job.elements) {
    int status = 0;
    if (e.pid > 0 && exited(e.pid, status, false)) {
      e.pid = 0;
      if (e.state == JobState::running)
        e.state = WIFEXITED(status) && WEXITSTATUS(status) == 0 ? JobState::completed : JobState::failed;
    }
    all_ended = all_ended && is_terminal(e.state);
    if (is_terminal(e.state) && e.state != JobState::completed) worst = e.state;
  }
  if (job.state == JobState::running && all_ended && !job.allocation) job.state = worst;
}

void FakeSlurm::stop(FakeJob& job, int signal) {
  for (auto& e : job.elements) {
    if (e.pid <= 0) continue;
    ::kill(e.pid, signal);
    int status = 0;
    if (signal == SIGKILL && exited(e.pid, status, true)) e.pid = 0;
  }
}

std::vector<JobStatus> FakeSlurm::records(const FakeJob& job) const {
  if (job.vanished) return {};
  const JobStatus base{.id = job.id,
                       .state = job.state,
                       .reason = job.state == JobState::pending ? job.reason : "",
                       .name = job.request.name,
                       .user_id = static_cast<std::uint32_t>(::getuid())};
  if (job.request.array.empty()) return {base};
  const bool started = std::any_of(job.elements.begin(), job.elements.end(),
                                   [](const Element& e) { return e.state != JobState::pending; }) &&
                       job.state != JobState::pending;
  if (!started) {  // one record for every pending element, as squeue shows a pending array
    auto pending = base;
    pending.array_job_id = job.id;
    pending.submit_count = static_cast<std::uint32_t>(job.elements.size());
    return {pending};
  }
  std::vector<JobStatus> out;
  for (std::size_t i = 0; i < job.elements.size(); ++i) {
    auto element = base;
    element.id = job.id + 1 + static_cast<std::uint32_t>(i);
    element.state = job.elements[i].state;
    element.array_job_id = job.id;
    element.array_task_id = job.elements[i].index;
    out.push_back(element);
  }
  return out;
}

}  // namespace flotilla::jobs::test

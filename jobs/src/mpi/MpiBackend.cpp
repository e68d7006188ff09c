// MpiBackend.cpp — jobs of flotilla-worker under mpirun (MpiBackend.h).
//
// Invariants: at most one job runs at a time; a task is in exactly one of m_queue, the job's
// pending map or m_ready until collect() returns it; a record is matched to its task by id and
// attempt, so a stray or repeated record never produces a second result.
#include "MpiBackend.h"

#include <unistd.h>

#include <algorithm>
#include <thread>

#include "process/PrivateDir.h"
#include "process/TaskRun.h"
#include "flotilla/jobs/JobResults.h"
#include "flotilla/jobs/Manifest.h"
#include "flotilla/jobs/Programs.h"

#ifndef FLOTILLA_MPIEXEC
#define FLOTILLA_MPIEXEC "mpiexec"
#endif

namespace flotilla::jobs {
namespace {

constexpr std::size_t kMaxJobTasks = 1'000'000;
// How long one wait for mpirun lasts before the job file is looked at again.
constexpr std::chrono::milliseconds kPollSlice{50};

unsigned cores() { return std::max(1u, std::thread::hardware_concurrency()); }

unsigned resolve_ranks(const BackendOptions& options) {
  if (options.ranks > 0) return options.ranks;
  return (options.slots > 0 ? options.slots : cores()) + 1;
}

// The line of mpirun's output that says what went wrong, if any.
std::string notable_line(const std::string& output) {
  std::string best;
  std::size_t begin = 0;
  while (begin < output.size()) {
    std::size_t end = output.find('\n', begin);
    if (end == std::string::npos) end = output.size();
    const std::string line = output.substr(begin, end - begin);
    begin = end + 1;
    if (line.find_first_not_of(" -\t\r") == std::string::npos) continue;
    if (best.find("noticed") == std::string::npos) best = line;  // "mpirun noticed that process rank 1 ..."
  }
  return best.size() > 200 ? best.substr(0, 200) + "..." : best;
}

TaskResult ended_result(const TaskSpec& spec, TaskStatus status, int exit_code, std::string reason) {
  TaskResult result;
  result.id = spec.id;
  result.attempt = spec.attempt;
  result.status = status;
  result.start = result.end = epoch_seconds();
  result.exit_code = exit_code;
  result.reason = std::move(reason);
  return result;
}

}  // namespace

std::vector<std::string> mpirun_argv(const std::string& mpiexec, unsigned ranks, unsigned cores,
                                     const std::string& worker, const std::filesystem::path& manifest) {
  // --bind-to none: each rank's tasks (and forked commands) may use whichever core is free.
  std::vector<std::string> argv{mpiexec, "-n", std::to_string(ranks), "--bind-to", "none"};
  if (ranks > cores) argv.push_back("--oversubscribe");
  argv.push_back(worker);
  argv.push_back(manifest.string());
  return argv;
}

MpiBackend::MpiBackend(const BackendOptions& options)
    : m_ranks(resolve_ranks(options)),
      m_worker(find_program_path("flotilla-worker", search_path(options.path_prepend, inherited_path())).string()),
      m_launcher(make_backend({.name = "local", .slots = 1, .path_prepend = options.path_prepend})) {
  // The campaign's own folder when it gives one, else $TMPDIR; a fresh mode-0700 folder either
  // way, so no other user can predict, pre-make or swap the manifest a job runs (PrivateDir.h).
  // Absolute: mpirun starts the ranks in the job's folder, where a relative path means another place.
  const auto root = std::filesystem::absolute(options.jobs_dir.empty() ? std::filesystem::temp_directory_path()
                                                                       : options.jobs_dir);
  remove_stale_private_dirs(root, "flotilla-mpi");
  m_dir = make_private_dir(root, "flotilla-mpi");
}

BackendCapabilities MpiBackend::capabilities() const {
  unsigned nodes = 1;
  if (const char* text = std::getenv("SLURM_JOB_NUM_NODES")) nodes = std::max(1, std::atoi(text));
  const auto per_host = static_cast<unsigned>((workers() + nodes - 1) / nodes);
  return {.tasks_per_host = per_host, .tasks_per_host_setting = "resources.ranks"};
}

MpiBackend::~MpiBackend() {
  if (m_job) cancel_all();
  m_job.reset();
  std::error_code ignored;
  std::filesystem::remove_all(m_dir, ignored);
}

void MpiBackend::submit(std::vector<TaskSpec> tasks) {
  for (auto& task : tasks) m_queue.push_back(std::move(task));
}

std::size_t MpiBackend::queued() const {
  const std::size_t pending = m_job ? m_job->pending.size() : 0;
  return m_queue.size() + (pending > workers() ? pending - workers() : 0) + m_ready_unstarted;
}

std::size_t MpiBackend::running() const {
  const std::size_t pending = m_job ? m_job->pending.size() : 0;
  return std::min(pending, static_cast<std::size_t>(workers())) + m_ready.size() - m_ready_unstarted;
}

void MpiBackend::start_job() {
  auto job = std::make_unique<Job>();
  const std::string name = "job-" + std::to_string(m_jobs_started++);
  job->manifest = m_dir / (name + ".json");
  job->output = m_dir / (name + ".h5");
  Manifest manifest{name, job->output, {}};
  std::deque<TaskSpec> later;  // a repeated id waits for the next job
  while (!m_queue.empty() && job->pending.size() < kMaxJobTasks) {
    TaskSpec spec = std::move(m_queue.front());
    m_queue.pop_front();
    if (job->pending.contains(spec.id)) {
      later.push_back(std::move(spec));
      continue;
    }
    manifest.tasks.push_back(to_manifest_task(spec));
    job->pending.emplace(spec.id, std::move(spec));
  }
  m_queue.insert(m_queue.begin(), std::make_move_iterator(later.begin()), std::make_move_iterator(later.end()));
  if (m_worker.empty()) {  // nothing a retry could fix
    for (const auto& [id, spec] : job->pending)
      m_ready.push_back(ended_result(spec, TaskStatus::failed, 127, "cannot find flotilla-worker on PATH"));
    return;
  }
  write_manifest(job->manifest, manifest);
  TaskSpec mpirun;
  mpirun.id = m_jobs_started;
  mpirun.argv = mpirun_argv(FLOTILLA_MPIEXEC, m_ranks, cores(), m_worker, job->manifest);
  if (::geteuid() == 0) mpirun.env = {{"OMPI_ALLOW_RUN_AS_ROOT", "1"}, {"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"}};
  m_launcher->submit({std::move(mpirun)});
  m_job = std::move(job);
}

std::vector<TaskResult> MpiBackend::collect(std::chrono::milliseconds wait) {
  const auto until = std::chrono::steady_clock::now() + wait;
  for (;;) {
    if (!m_job && !m_queue.empty()) start_job();
    if (!m_job) break;
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    const auto ended = m_launcher->collect(std::clamp(left, std::chrono::milliseconds(0), kPollSlice));
    read_records();
    if (!ended.empty()) finish_job(ended.front());
    if (!m_ready.empty() || std::chrono::steady_clock::now() >= until) break;
  }
  m_ready_unstarted = 0;
  return std::exchange(m_ready, {});
}

void MpiBackend::read_records() {
  Job& job = *m_job;
  try {
    // The worker creates the file once it has read the manifest; until it has switched it to
    // SWMR mode, opening fails and is simply tried again on the next poll.
    if (!job.reader && std::filesystem::exists(job.output))
      job.reader.emplace(results::JobFileReader::open(job.output));
    if (!job.reader) return;
    for (const auto& record : job.reader->read_new()) {
      const auto it = job.pending.find(record.id);
      if (it == job.pending.end() || it->second.attempt != record.attempt) continue;
      m_ready.push_back(from_job_record(record));
      job.pending.erase(it);
    }
  } catch (const results::StoreError&) {
    job.reader.reset();  // read again from a fresh open next time: records are matched, never doubled
  }
}

void MpiBackend::finish_job(const TaskResult& mpirun) {
  read_records();
  Job& job = *m_job;
  const std::string verdict = mpirun.reason.empty() ? "mpirun exit code 0" : "mpirun " + mpirun.reason;
  const std::string line = notable_line(mpirun.output_tail);
  std::string reason = "rank died before the task reported (" + verdict + (line.empty() ? "" : ": " + line) + ")";
  // The known cause inside an allocation whose nodes share a host (docs/slurm.md): said where
  // the user reads the failure, not only in the docs.
  if (mpirun.status != TaskStatus::ok && std::getenv("SLURM_JOB_ID") && !std::getenv("OMPI_MCA_btl"))
    reason += "; inside a Slurm allocation Open MPI's shared-memory transport can crash when nodes share a host: "
              "try OMPI_MCA_btl=self,tcp (docs/slurm.md)";
  const std::size_t unstarted = job.pending.size() > workers() ? job.pending.size() - workers() : 0;
  for (const auto& [id, spec] : job.pending) {
    if (job.cancelled)
      m_ready.push_back(ended_result(spec, TaskStatus::cancelled, 0, "cancelled"));
    else
      m_ready.push_back(ended_result(spec, TaskStatus::lost, mpirun.exit_code, reason));
  }
  if (job.cancelled) m_ready_unstarted += unstarted;
  const auto files = {job.manifest, job.output};
  m_job.reset();  // closes the reader before the files go
  std::error_code ignored;
  for (const auto& file : files) std::filesystem::remove(file, ignored);
}

void MpiBackend::cancel_all() {
  for (const auto& spec : m_queue) m_ready.push_back(ended_result(spec, TaskStatus::cancelled, 0, "cancelled"));
  m_ready_unstarted += m_queue.size();
  m_queue.clear();
  if (!m_job) return;
  m_job->cancelled = true;
  m_launcher->cancel_all();
  for (;;) {
    const auto ended = m_launcher->collect(std::chrono::seconds(1));
    if (!ended.empty()) return finish_job(ended.front());
  }
}

std::unique_ptr<Backend> make_mpi_backend(const BackendOptions& options) {
  return std::make_unique<MpiBackend>(options);
}

// The settings of backend "mpi" (ranks), declared here and registered with it (Backend.cpp):
// the scheduler's one option table takes them for the INI reader, the command line and --help.
const std::vector<BackendSetting>& mpi_backend_settings() {
  static const std::vector<BackendSetting> settings = {
      {"resources.ranks", "0", "mpi: MPI ranks per job, rank 0 dispatching (0 = slots + 1)"},
  };
  return settings;
}

}  // namespace flotilla::jobs

// SlurmBackend.cpp — see SlurmBackend.h.
//
// A job's life: tasks wait in m_unsent until the next collect(); make_jobs() writes one folder
// per resource set (a job array cut at MaxArraySize into several); submit_waiting() submits each
// once its back-off, the user's MaxSubmitJobs and the jobs it depends on allow; poll() follows
// every active job with one query, streams the results its workers record while it runs (SWMR
// reads of its results files, refreshed every 50 ms between queries), and when a job (every
// element of an array) has ended, returns the rest of its recorded results and its other tasks
// as lost. A job whose every task has reported is done for the campaign at once: the worker's
// results file holds them, and waiting for Slurm to see the job end (MPI_Finalize, srun and
// the batch script exiting, the next query) would only delay the campaign.
#include "SlurmBackend.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include <algorithm>
#include <deque>
#include <fstream>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "flotilla/jobs/JobResults.h"
#include "flotilla/jobs/Manifest.h"
#include "flotilla/jobs/Slurm.h"
#include "SlurmJobFolder.h"

namespace flotilla::jobs {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kPollInterval = std::chrono::milliseconds(250);  // Slurm queries
constexpr auto kReadInterval = std::chrono::milliseconds(50);   // open results files of running jobs
constexpr auto kSoonPollInterval = std::chrono::milliseconds(50);  // queries while a job waits on one
// slurm_start = allocate: how long a job may wait for the campaign's own allocations that are
// ending (every task reported, the launcher releasing) to free their nodes, after one refusal;
// and how long no allocation is tried after a refusal that was not ours (each refused request
// leaves a FAILED job record in Slurm).
constexpr auto kOwnAllocationWait = std::chrono::seconds(2);
constexpr auto kAllocatePause = std::chrono::seconds(10);

double epoch_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::filesystem::path find_program(const std::vector<std::filesystem::path>& dirs, const std::string& name) {
  for (const auto& dir : dirs)
    if (std::filesystem::exists(dir / name)) return std::filesystem::absolute(dir / name);
  return name;  // on PATH (the compute nodes' PATH, for flotilla-worker)
}

extern "C" char** environ;

struct Job {
  std::uint32_t slurm_id = 0;      // 0 while waiting to be submitted
  std::string name;
  std::string resources;           // TaskSpec::resources of its tasks
  std::filesystem::path dir;
  std::vector<std::uint64_t> tasks;
  std::string after;               // TaskSpec::after of its tasks
  std::string array;               // array indices ("0-2,5"); empty: a plain job
  Clock::time_point next_try{};    // back-off after a submit-limit rejection
  int tries = 0;
  std::map<std::filesystem::path, results::JobFileReader> readers;  // results files being written
  bool allocated = false;          // allocated at once, run by a launcher (DIR/launcher, DIR/launcher.lock)
  bool orphaned = false;           // its launcher died before releasing it, and flotilla cancelled it
  Clock::time_point created = Clock::now();
  bool waits_for_own = false;      // refused once while the campaign's own allocations were ending
};

// "pid PID on HOST" from DIR/launcher, for messages.
std::string launcher_text(const std::filesystem::path& dir) {
  std::ifstream in(dir / "launcher");
  std::string host, pid;
  return in >> host >> pid ? fmt::format("pid {} on {}", pid, host) : std::string("unknown");
}

// How a job ended, from the states of its records (an array has one per element, and one for
// the elements still pending): nullopt while any is pending or running.
std::optional<JobState> ended_state(const std::vector<const JobStatus*>& records) {
  if (records.empty()) return JobState::unknown;  // vanished from the queue
  JobState worst = JobState::completed;
  for (const auto* s : records) {
    if (!is_terminal(s->state)) return std::nullopt;
    if (s->state != JobState::completed && worst == JobState::completed) worst = s->state;
  }
  return worst;
}

class SlurmBackend final : public Backend {
 public:
  explicit SlurmBackend(const BackendOptions& o)
      : m_r(o.slurm), m_notice(o.notice), m_client(make_slurm_client(o.slurm.client)),
        m_worker(find_program(o.path_prepend, "flotilla-worker")), m_flotilla(find_program(o.path_prepend, "flotilla")) {
    if (m_r.start != "batch" && m_r.start != "allocate")
      throw std::invalid_argument(fmt::format("unknown Slurm start '{}' (batch or allocate)", m_r.start));
    if (m_r.workdir.empty()) m_r.workdir = std::filesystem::current_path() / "flotilla-jobs";
    m_r.workdir = std::filesystem::absolute(m_r.workdir);
    std::filesystem::create_directories(m_r.workdir);
    scan_earlier_jobs();
  }
  // Jobs outlive the scheduler (a restart re-attaches through their folders): nothing is
  // cancelled here, and no Slurm call can throw from a destructor.
  ~SlurmBackend() override = default;

  std::string_view name() const override { return "slurm"; }
  BackendCapabilities capabilities() const override { return {.dependencies = true, .outlives_scheduler = true}; }

  // Forgets every task; submitted jobs keep running and their folders say what they hold.
  // Jobs not yet submitted are not: their tasks are simply unrecorded, and run again later.
  std::size_t detach() override {
    std::size_t left = 0;
    for (const auto& job : m_jobs)
      if (job.slurm_id != 0) ++left;
    m_unsent.clear();
    m_jobs.clear();
    m_pending.clear();
    m_ready.clear();
    m_running.clear();
    return left;
  }

  // Tasks wait here until the next collect(), so the tasks submitted between two collects (a
  // batch, or every lost task of a failed job) become one job per resource set, not one each.
  void submit(std::vector<TaskSpec> tasks) override {
    std::erase_if(tasks, [&](TaskSpec& spec) { return take_earlier_result(spec); });
    for (auto& spec : tasks) {
      m_unsent[spec.resources].push_back(spec.id);
      m_pending[spec.id] = std::move(spec);
    }
  }

  std::vector<TaskResult> collect(std::chrono::milliseconds wait) override {
    const auto deadline = Clock::now() + wait;
    make_jobs();
    for (;;) {
      submit_waiting();
      if (Clock::now() - m_last_poll >= (m_poll_soon ? kSoonPollInterval : kPollInterval))
        poll();
      else if (Clock::now() - m_last_read >= kReadInterval)
        read_running();
      if (!m_ready.empty() || Clock::now() >= deadline) break;
      std::this_thread::sleep_for(std::min<Clock::duration>(std::chrono::milliseconds(10), deadline - Clock::now()));
    }
    std::vector<TaskResult> out(std::make_move_iterator(m_ready.begin()), std::make_move_iterator(m_ready.end()));
    m_ready.clear();
    return out;
  }

  std::size_t queued() const override {
    std::size_t unsent = 0;
    for (const auto& [resources, ids] : m_unsent) unsent += ids.size();
    return count_tasks(false) + unsent + m_ready.size();
  }
  std::size_t running() const override { return count_tasks(true); }

  void cancel_all() override {
    for (auto& [resources, ids] : m_unsent)
      finish(Job{.tasks = std::move(ids)}, "cancelled by flotilla", TaskStatus::cancelled);
    m_unsent.clear();
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

  const SlurmShape& shape_of(const std::string& resources) const {
    auto it = m_r.stages.find(resources);
    return it == m_r.stages.end() ? m_r.shape : it->second;
  }

  std::uint32_t max_array_size() {
    if (m_max_array_size == 0) m_max_array_size = m_client->max_array_size();
    return m_max_array_size;
  }

  // One job per resource set of the tasks submitted since the last call, or, when its tasks name
  // array elements, one job array per MaxArraySize elements. Jobs that depend on no other come
  // first, so a dependent job finds the job it waits for.
  void make_jobs() {
    std::vector<std::string> order;
    for (const auto& [resources, ids] : m_unsent)
      if (!ids.empty()) order.insert(m_pending.at(ids.front()).after.empty() ? order.begin() : order.end(), resources);
    for (const auto& resources : order) {
      auto ids = std::move(m_unsent[resources]);
      if (m_r.hold) hold_existing(ids);
      if (m_pending.at(ids.front()).array_index < 0) {
        add_job(resources, ids, nullptr);
        continue;
      }
      std::map<std::uint32_t, std::vector<std::uint64_t>> by_element;
      for (auto id : ids) by_element[static_cast<std::uint32_t>(std::max(0, m_pending.at(id).array_index))].push_back(id);
      std::vector<std::uint32_t> elements;
      for (const auto& [element, tasks] : by_element) elements.push_back(element);
      for (const auto& piece : plan_array_pieces(elements, max_array_size())) {
        std::vector<std::uint64_t> piece_ids;
        for (auto element : piece.elements) piece_ids.insert(piece_ids.end(), by_element[element].begin(), by_element[element].end());
        add_job(resources, piece_ids, &piece);
      }
    }
    m_unsent.clear();
  }

  void add_job(const std::string& resources, const std::vector<std::uint64_t>& ids, const ArrayPiece* piece) {
    Job job{.resources = resources, .tasks = ids, .after = m_pending.at(ids.front()).after};
    // A fresh folder every time: pids repeat across restarts (containers, CI), and a reused
    // folder would mix an earlier job's results and job id with this job's manifest.
    do {
      job.name = fmt::format("{}-{}-{}", m_r.job_prefix, getpid(), ++m_counter);
      job.dir = m_r.workdir / job.name;
    } while (std::filesystem::exists(job.dir));
    // The prefix is a checked campaign name (Validate.cpp); a folder outside jobs_dir would
    // still be a bug, and one that writes where nobody looks.
    auto base = m_r.workdir.lexically_normal();
    if (!base.has_filename()) base = base.parent_path();  // "jobs/" as "jobs"
    if (job.dir.lexically_normal().parent_path() != base)
      throw std::invalid_argument(fmt::format("job folder {} would lie outside {}", job.dir.string(), m_r.workdir.string()));
    std::vector<const TaskSpec*> specs;
    std::map<std::uint32_t, std::vector<std::size_t>> elements;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      specs.push_back(&m_pending.at(ids[i]));
      if (piece) elements[static_cast<std::uint32_t>(specs.back()->array_index) - piece->offset].push_back(i);
    }
    if (piece) job.array = piece->spec;
    write_job_folder(job.dir, job.name, specs, elements);
    if (m_r.hold) try_submit(job, "");  // throws JobHeld
    m_jobs.push_back(std::move(job));   // submitted by submit_waiting()
  }

  JobRequest request_for(const Job& job, const std::string& dependency) const {
    const auto& shape = shape_of(job.resources);
    auto what = job.resources.empty() ? std::string() : " (" + job.resources + ")";
    const bool array = !job.array.empty();
    JobRequest r{.name = job.name, .partition = shape.partition, .nodes = shape.nodes,
                 .ranks_per_node = shape.ranks_per_node, .gpus_per_node = shape.gpus_per_node,
                 .time_limit = shape.time_limit, .account = shape.account, .qos = shape.qos,
                 .dependency = dependency, .array = job.array, .requeue = false, .workdir = job.dir,
                 .output = job.dir / (array ? "slurm-%A_%a.out" : "slurm-%j.out"),
                 .comments = {fmt::format("flotilla job {}: {} tasks{} from manifest.json", job.name, job.tasks.size(), what),
                              array ? "a job array: element E runs the tasks of manifest-E.json and writes results-E.h5"
                                    : "flotilla-worker ranks pull tasks from rank 0, which writes each result to "
                                      "results.h5 as it completes",
                              "slurm_job_id tells a restarted `flotilla run` which job holds these tasks",
                              "--no-requeue: after a node failure flotilla runs the unreported tasks again in a "
                              "new job, at once (Slurm would hold a requeued job for minutes)"},
                 .commands = {"echo \"${SLURM_ARRAY_JOB_ID:-$SLURM_JOB_ID}\" > slurm_job_id",
                              // The step's shape is spelled out: an allocation run by `flotilla
                              // run-allocation` has no batch environment to take it from.
                              fmt::format("srun --mpi=pmix --nodes={} --ntasks-per-node={}{} {} {}", shape.nodes,
                                          shape.ranks_per_node,
                                          shape.gpus_per_node > 0 ? fmt::format(" --gpus-per-node={}", shape.gpus_per_node)
                                                                  : std::string(),
                                          shell_quote(m_worker.string()),
                                          array ? "manifest-${SLURM_ARRAY_TASK_ID}.json" : "manifest.json")}};
    if (!dependency.empty())
      r.comments.push_back(fmt::format("starts once the {} job(s) it depends on completed; Slurm cancels it if they fail",
                                       job.after));
    return r;
  }

  // Submits the jobs not yet submitted whose back-off has passed and whose dependencies are
  // submitted. With max_submit_jobs, the user's pending and running jobs are counted first (one
  // query per pass, at most every 250 ms while a job waits), so a site's MaxSubmitJobs is
  // respected rather than hit.
  void submit_waiting() {
    std::optional<std::size_t> queued;
    for (auto& job : m_jobs) {
      if (job.slurm_id != 0 || Clock::now() < job.next_try) continue;
      auto dependency = dependency_of(job);
      if (!dependency) continue;
      // An array counts as its elements, as Slurm counts it against the limit.
      const std::size_t elements = job.array.empty() ? 1 : array_expression_size(job.array);
      if (m_r.max_submit_jobs > 0) {
        if (!queued) queued = count_user_queued();
        const auto limit = static_cast<std::size_t>(m_r.max_submit_jobs);
        // A job larger than the limit alone goes once nothing else is queued (Slurm decides).
        if (*queued > 0 && *queued + elements > limit) {
          job.next_try = Clock::now() + kPollInterval;
          continue;
        }
      }
      try_submit(job, *dependency);
      if (queued && job.slurm_id != 0) *queued += elements;
    }
  }

  // "afterok:ID:ID" on the active jobs of the resource set the job comes after; "" when none is
  // active; nullopt while one of them waits to be submitted.
  std::optional<std::string> dependency_of(const Job& job) const {
    if (job.after.empty()) return std::string();
    std::string ids;
    for (const auto& other : m_jobs) {
      if (other.resources != job.after) continue;
      if (other.slurm_id == 0) return std::nullopt;
      ids += ":" + std::to_string(other.slurm_id);
    }
    return ids.empty() ? std::string() : "afterok" + ids;
  }

  std::size_t count_user_queued() {
    auto jobs = m_client->user_jobs();
    std::size_t queued = 0;
    for (const auto& j : jobs)
      if (!is_terminal(j.state)) queued += j.submit_count;
    return queued;
  }

  // `flotilla sbatch` run again before the folder it wrote was submitted: point at that folder.
  void hold_existing(const std::vector<std::uint64_t>& ids) const {
    for (const auto& [dir, tasks] : m_unsubmitted)
      if (tasks == std::set<std::uint64_t>(ids.begin(), ids.end())) throw JobHeld(dir, ids.size(), true);
  }

  void try_submit(Job& job, const std::string& dependency) {
    const auto request = request_for(job, dependency);
    if (m_r.hold) {
      std::ofstream(job.dir / "job.sh") << render_job_script(request);
      throw JobHeld(job.dir, job.tasks.size(), false);
    }
    if (m_r.start == "allocate" && job.array.empty() && dependency.empty() && Clock::now() >= m_allocate_pause) {
      const bool own_ending = !m_watched.empty() && Clock::now() < job.created + kOwnAllocationWait;
      if (job.waits_for_own && own_ending) return defer_for_own(job);
      if (auto id = m_client->allocate_now(request)) {
        if (launch(job, request, *id)) return;
      } else if (!job.waits_for_own && own_ending) {
        job.waits_for_own = true;  // the nodes may be the campaign's own, a moment from free
        return defer_for_own(job);
      } else {
        m_allocate_pause = Clock::now() + kAllocatePause;
      }
    }
    auto outcome = m_client->submit(request);
    if (auto* ok = std::get_if<Submitted>(&outcome)) {
      job.slurm_id = ok->id;
      std::ofstream(job.dir / "job.sh") << render_job_script(request);  // what ran, for people
      std::ofstream(job.dir / "slurm_job_id") << ok->id << '\n';       // for a restarted scheduler
      return;
    }
    const auto& rejected = std::get<SubmitRejected>(outcome);
    if (rejected.limit) {  // back off: 1, 2, 4 ... 30 s
      const auto wait = std::chrono::seconds(std::min(30, 1 << std::min(job.tries++, 5)));
      job.next_try = Clock::now() + wait;
      notify("slurm_submit_deferred", fmt::format("Slurm refused job {} for now ({}); trying again in {} s", job.name,
                                                  rejected.message, wait.count()));
      return;
    }
    // Anything else (no such partition, Slurm unreachable) is a setup error, not a trial result:
    // recording it would burn the campaign's budget on failures that say nothing about candidates.
    throw std::runtime_error(fmt::format("Slurm refused job {} ({}): {}", job.name,
                                         (job.dir / "manifest.json").string(), rejected.message));
  }

  void defer_for_own(Job& job) {
    job.next_try = Clock::now() + std::chrono::milliseconds(20);
    m_poll_soon = true;  // see the ending allocations end as soon as they do
  }

  // Runs an allocated job's script through `flotilla run-allocation ID DIR`, which leaves a
  // launcher of its own session behind (it outlives this process, as a batch job would) and
  // names it in DIR/launcher before it exits. Its output goes where the batch job's would. The
  // allocation's id is in DIR/allocation first, so a restarted scheduler that finds no launcher
  // beside it cancels the allocation instead of waiting for it. False when the launcher could not
  // be started: the allocation is cancelled and the job goes as a batch job.
  bool launch(Job& job, JobRequest request, std::uint32_t id) {
    request.comments.push_back(fmt::format("allocated at once as Slurm job {} (resources.slurm_start = allocate): "
                                           "`flotilla run-allocation` runs this script on the submitting host and "
                                           "releases the allocation when it ends",
                                           id));
    std::ofstream(job.dir / "allocation") << id << '\n';
    std::ofstream(job.dir / "job.sh") << render_job_script(request);
    const auto out = (job.dir / fmt::format("slurm-{}.out", id)).string();
    std::string program = m_flotilla.string(), command = "run-allocation", id_text = std::to_string(id),
                dir = job.dir.string();
    char* argv[] = {program.data(), command.data(), id_text.data(), dir.data(), nullptr};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    // Its own session, default signals, nothing blocked: a Ctrl-C meant for flotilla does not
    // reach it halfway through starting the launcher.
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    posix_spawnattr_setsigdefault(&attributes, &all);
    posix_spawnattr_setsigmask(&attributes, &none);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    pid_t pid = -1;
    int rc = posix_spawnp(&pid, argv[0], &actions, &attributes, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    int status = 0;
    if (rc == 0)
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (rc != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || !std::filesystem::exists(job.dir / "launcher")) {
      m_client->cancel(id);  // nothing runs in it: give the nodes back
      std::error_code ec;
      std::filesystem::remove(job.dir / "allocation", ec);
      notify("slurm_launcher_failed",
             fmt::format("could not start the launcher of Slurm allocation {} for job {} ({} run-allocation: {}); "
                         "cancelled it, and the job goes as a batch job",
                         id, job.name, m_flotilla.string(), rc != 0 ? std::strerror(rc) : "see " + out));
      return false;
    }
    job.slurm_id = id;
    job.allocated = true;
    std::ofstream(job.dir / "slurm_job_id") << id << '\n';
    return true;
  }

  // Allocated jobs (running, or retired and watched) whose launcher is gone without releasing
  // the allocation: nothing would end them before their time limit. Asked before Slurm is
  // queried, so a launcher that released its job and exited is seen ended by that query, not
  // cancelled. The launcher's lock says it, not its pid (a zombie, or a pid reused after a reboot).
  std::set<std::uint32_t> gone_launchers() const {
    std::set<std::uint32_t> gone;
    for (const auto& job : m_jobs)
      if (job.allocated && !job.orphaned && launcher_alive(job.dir) == false) gone.insert(job.slurm_id);
    for (const auto& [id, dir] : m_watched)
      if (launcher_alive(dir) == false) gone.insert(id);
    return gone;
  }

  void notify(std::string kind, std::string message) const {
    if (m_notice) m_notice(std::move(kind), std::move(message));
  }

  // Records of each job, keyed by its id (an array's elements by the array's id).
  std::map<std::uint32_t, std::vector<JobStatus>> query_jobs(const std::vector<std::uint32_t>& ids) {
    std::map<std::uint32_t, std::vector<JobStatus>> records;
    for (auto& s : m_client->query(ids)) records[s.array_job_id != 0 ? s.array_job_id : s.id].push_back(std::move(s));
    return records;
  }

  static std::vector<const JobStatus*> pointers(const std::vector<JobStatus>& records) {
    std::vector<const JobStatus*> out;
    for (const auto& r : records) out.push_back(&r);
    return out;
  }

  void poll() {
    m_last_poll = m_last_read = Clock::now();
    m_poll_soon = false;
    std::vector<std::uint32_t> ids;
    for (const auto& job : m_jobs)
      if (job.slurm_id != 0) ids.push_back(job.slurm_id);
    for (const auto& [id, dir] : m_watched) ids.push_back(id);
    if (ids.empty()) {
      std::erase_if(m_jobs, [](const Job& j) { return j.tasks.empty(); });
      return;
    }
    const auto gone = gone_launchers();
    auto records = query_jobs(ids);
    watch_released(records, gone);
    m_running.clear();
    for (auto& job : m_jobs) {
      if (job.slurm_id == 0) continue;
      auto& mine = records[job.slurm_id];
      auto ended = ended_state(pointers(mine));
      if (!ended && gone.contains(job.slurm_id) && !job.orphaned) {
        job.orphaned = true;  // ends CANCELLED at a later query; its unreported tasks then re-run
        notify("slurm_launcher_lost",
               fmt::format("the launcher ({}) of Slurm job {} ({}) died before releasing the allocation: "
                           "cancelled it; its unreported tasks run again",
                           launcher_text(job.dir), job.slurm_id, job.name));
        m_client->cancel(job.slurm_id);
      }
      if (!ended) {
        if (std::any_of(mine.begin(), mine.end(), [](const JobStatus& s) { return s.state == JobState::running; })) {
          m_running.insert(job.slurm_id);
          read_new_results(job);
        }
        continue;
      }
      auto how = mine.empty() ? std::string("vanished from the queue") : fmt::format("ended {}", to_string(*ended));
      if (job.orphaned) how += " (its launcher died before releasing the allocation, so flotilla cancelled it)";
      finish(job, fmt::format("Slurm job {} ({}) {} before this task reported", job.slurm_id, job.name, how),
             TaskStatus::lost);
      job.tasks.clear();
    }
    retire_reported();
  }

  // Retired allocated jobs (every task reported) until Slurm sees them end: their launcher
  // releases them, and if it died first they are cancelled here.
  void watch_released(std::map<std::uint32_t, std::vector<JobStatus>>& records, const std::set<std::uint32_t>& gone) {
    for (auto it = m_watched.begin(); it != m_watched.end();) {
      const auto id = it->first;
      if (ended_state(pointers(records[id]))) {
        it = m_watched.erase(it);
        continue;
      }
      if (gone.contains(id)) {
        notify("slurm_launcher_lost",
               fmt::format("the launcher ({}) of Slurm job {} died before releasing the allocation, after its tasks "
                           "reported: cancelled it",
                           launcher_text(it->second), id));
        m_client->cancel(id);
        it = m_watched.erase(it);
        continue;
      }
      ++it;
    }
  }

  // Between two queries: new results in the files already open for the running jobs (no
  // directory listing, no Slurm call), so a job's last result is seen within kReadInterval.
  void read_running() {
    m_last_read = Clock::now();
    bool any = false;
    for (auto& job : m_jobs) {
      if (job.slurm_id == 0 || !m_running.contains(job.slurm_id)) continue;
      for (auto it = job.readers.begin(); it != job.readers.end();) {
        try {
          for (const auto& record : it->second.read_new()) take(from_job_record(record));
          ++it;
        } catch (const results::StoreError&) {
          it = job.readers.erase(it);  // opened again at the next query
        }
      }
      any = true;
    }
    if (any) retire_reported();
  }

  // Drops the jobs whose every task has come back (none is pending any more), whatever Slurm
  // says of them yet: their results are returned and kept in their results files. Such a job is
  // left to end by itself, not cancelled.
  void retire_reported() {
    std::erase_if(m_jobs, [&](const Job& j) {
      if (j.slurm_id == 0 && !j.tasks.empty()) return false;  // not submitted yet
      const bool reported =
          std::none_of(j.tasks.begin(), j.tasks.end(), [&](std::uint64_t id) { return m_pending.contains(id); });
      if (reported) m_running.erase(j.slurm_id);
      if (reported && j.allocated && !j.orphaned) m_watched[j.slurm_id] = j.dir;
      return reported;
    });
  }

  // Results recorded so far by a running job's workers, returned as they arrive so the campaign
  // records them while the job runs. A file not yet in SWMR mode (the worker is starting) is
  // simply opened again at the next poll; finish() reads every file once more at the end.
  void read_new_results(Job& job) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(job.dir, ec)) {
      const auto file = entry.path().filename().string();
      if (file != "results.h5" && !(file.starts_with("results-") && file.ends_with(".h5"))) continue;
      try {
        auto it = job.readers.find(entry.path());
        if (it == job.readers.end()) it = job.readers.emplace(entry.path(), results::JobFileReader::open(entry.path())).first;
        for (const auto& record : it->second.read_new()) take(from_job_record(record));
      } catch (const results::StoreError&) {
        job.readers.erase(entry.path());  // results are matched by id, so reading again never doubles
      }
    }
  }

  // Returns a worker's result once, if it belongs to a task still waiting for one.
  void take(TaskResult r) {
    auto it = m_pending.find(r.id);
    if (it == m_pending.end()) return;                  // not ours, or already returned
    if (it->second.attempt != r.attempt) return;        // an earlier attempt's result: not this one
    m_pending.erase(it);
    m_ready.push_back(std::move(r));
  }

  // A restarted scheduler resubmits the tasks it has no result for. Jobs of an earlier run in
  // workdir may hold them: a result already in a job's results is taken as it is, and a task
  // whose job is still pending or running is followed in that job instead of being submitted twice.
  void scan_earlier_jobs() {
    std::vector<std::uint32_t> ids;
    std::map<std::uint32_t, Job> jobs;
    const auto by_name = submitted_by_hand();
    for (const auto& entry : std::filesystem::directory_iterator(m_r.workdir)) {
      if (!std::filesystem::exists(entry.path() / "manifest.json")) continue;
      if (abandoned_allocation(entry.path())) continue;  // its tasks are submitted again
      std::ifstream id_file(entry.path() / "slurm_job_id");
      std::uint32_t id = 0;
      if (!(id_file >> id)) {
        auto found = by_name.find(entry.path().filename().string());
        if (found == by_name.end()) {  // written by `flotilla sbatch`, not submitted (yet)
          auto& tasks = m_unsubmitted[entry.path()];
          for (const auto& task : read_manifest(entry.path() / "manifest.json").tasks) tasks.insert(task.id);
          continue;
        }
        id = found->second;
        std::ofstream(entry.path() / "slurm_job_id") << id << '\n';
      }
      Job job{.slurm_id = id, .name = entry.path().filename().string(), .dir = entry.path(),
              .allocated = std::filesystem::exists(entry.path() / "allocation")};
      for (const auto& task : read_manifest(entry.path() / "manifest.json").tasks) job.tasks.push_back(task.id);
      ids.push_back(id);
      jobs[id] = std::move(job);
    }
    if (ids.empty()) return;
    auto records = query_jobs(ids);
    for (auto& [id, job] : jobs) {
      if (!ended_state(pointers(records[id]))) {
        for (auto task : job.tasks) m_adoptable[task] = id;
        m_earlier_jobs[id] = std::move(job);
        continue;
      }
      for (auto& r : read_job_folder_results(job.dir))
        if (r.status == TaskStatus::ok || r.status == TaskStatus::failed || r.status == TaskStatus::timeout)
          m_earlier_results[r.id] = std::move(r);
      // A task this ended job held but never finished (it was cancelled, or lost its node, while
      // no scheduler watched) runs again as its next attempt: each submission of a task has an
      // attempt of its own, so a late result of the old one is never taken for the new one.
      for (const auto& task : read_manifest(job.dir / "manifest.json").tasks)
        if (!m_earlier_results.contains(task.id))
          m_next_attempt[task.id] = std::max(m_next_attempt[task.id], task.attempt + 1);
    }
  }

  // A folder whose allocation was made but whose launcher never started (the scheduler was
  // killed in between, or the launcher failed): nothing runs in it, so it is cancelled, not
  // waited for to its time limit.
  bool abandoned_allocation(const std::filesystem::path& dir) {
    std::ifstream in(dir / "allocation");
    std::uint32_t id = 0;
    if (!(in >> id) || std::filesystem::exists(dir / "slurm_job_id")) return false;
    if (std::filesystem::exists(dir / "launcher")) {  // started; killed before slurm_job_id was written
      std::ofstream(dir / "slurm_job_id") << id << '\n';
      return false;
    }
    m_client->cancel(id);
    std::filesystem::rename(dir / "allocation", dir / "allocation.cancelled");
    notify("slurm_allocation_abandoned",
           fmt::format("Slurm allocation {} ({}) was made but its launcher never started: cancelled it", id,
                       dir.filename().string()));
    return true;
  }

  // Jobs submitted by hand from a folder that has no slurm_job_id yet (the script writes it when
  // the job starts), found by name: the folder's name is the job's name.
  std::map<std::string, std::uint32_t> submitted_by_hand() {
    bool any = false;
    for (const auto& entry : std::filesystem::directory_iterator(m_r.workdir))
      any = any || (std::filesystem::exists(entry.path() / "manifest.json") &&
                    !std::filesystem::exists(entry.path() / "slurm_job_id"));
    std::map<std::string, std::uint32_t> by_name;
    if (!any) return by_name;
    for (const auto& job : m_client->user_jobs())
      if (!is_terminal(job.state) || !by_name.contains(job.name))
        by_name[job.name] = job.array_job_id != 0 ? job.array_job_id : job.id;
    return by_name;
  }

  bool take_earlier_result(TaskSpec& spec) {
    if (auto next = m_next_attempt.find(spec.id); next != m_next_attempt.end() && spec.attempt < next->second)
      spec.attempt = next->second;  // the result comes back with it (TaskResult::attempt)
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
      m_jobs.push_back(Job{.slurm_id = earlier.slurm_id, .name = earlier.name, .resources = spec.resources,
                           .dir = earlier.dir, .allocated = earlier.allocated});
      existing = std::prev(m_jobs.end());
    }
    existing->tasks.push_back(spec.id);
    m_adoptable.erase(adopt);
    m_pending[spec.id] = std::move(spec);
    return true;
  }

  // Takes the job's recorded results; every other task of the job comes back as `status`.
  void finish(const Job& job, const std::string& reason, TaskStatus status) {
    for (auto& r : read_job_folder_results(job.dir)) take(std::move(r));  // ours, not yet returned
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
  std::function<void(std::string, std::string)> m_notice;
  std::unique_ptr<SlurmClient> m_client;
  std::filesystem::path m_worker;
  std::filesystem::path m_flotilla;  // runs allocated jobs' scripts (`flotilla run-allocation`)
  std::map<std::uint64_t, TaskSpec> m_pending;  // submitted, no result returned yet
  std::vector<Job> m_jobs;
  std::set<std::uint32_t> m_running;
  std::deque<TaskResult> m_ready;
  std::map<std::uint64_t, TaskResult> m_earlier_results;   // from finished jobs of an earlier run
  std::map<std::uint64_t, std::uint32_t> m_adoptable;      // task -> still active job of an earlier run
  std::map<std::uint32_t, Job> m_earlier_jobs;
  std::map<std::uint64_t, int> m_next_attempt;             // task -> attempt after an ended earlier job's
  std::map<std::string, std::vector<std::uint64_t>> m_unsent;              // resources -> tasks for the next job
  std::map<std::filesystem::path, std::set<std::uint64_t>> m_unsubmitted;  // folders `flotilla sbatch` wrote
  std::uint32_t m_max_array_size = 0;                                      // 0: not asked yet
  std::map<std::uint32_t, std::filesystem::path> m_watched;  // retired allocated jobs, until seen ended
  Clock::time_point m_allocate_pause{};                      // no allocation tried before this
  bool m_poll_soon = false;                                  // a job waits for the next query
  Clock::time_point m_last_poll{};
  Clock::time_point m_last_read{};
  int m_counter = 0;
};

}  // namespace

std::unique_ptr<Backend> make_slurm_backend(const BackendOptions& options) {
  return std::make_unique<SlurmBackend>(options);
}

}  // namespace flotilla::jobs

// SlurmSubmit.cpp — the Slurm backend's jobs from tasks: one folder per resource set (arrays cut
// at MaxArraySize), the request and script, submission within MaxSubmitJobs and back-off, and
// allocation at once with its launcher (SlurmBackendImpl.h).
#include <unistd.h>

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "SlurmBackendImpl.h"
#include "flotilla/jobs/Subprocess.h"
#include "SlurmJobFolder.h"
#include "Process.h"
#include "flotilla/jobs/Placement.h"

namespace flotilla::jobs::slurm_backend {

// One job per resource set of the tasks submitted since the last call, or, when its tasks name
// array elements, one job array per MaxArraySize elements. Jobs that depend on no other come
// first, so a dependent job finds the job it waits for.
void SlurmBackend::make_jobs() {
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

void SlurmBackend::add_job(const std::string& resources, const std::vector<std::uint64_t>& ids, const ArrayPiece* piece) {
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

JobRequest SlurmBackend::request_for(const Job& job, const std::string& dependency) const {
  const auto& shape = shape_of(job.resources);
  auto what = job.resources.empty() ? std::string() : " (" + job.resources + ")";
  const bool array = !job.array.empty();
  JobRequest r{.name = job.name, .partition = shape.partition, .nodes = shape.nodes,
               .ranks_per_node = shape.ranks_per_node, .gpus_per_node = shape.gpus_per_node,
               .time_limit = shape.time_limit, .account = shape.account, .qos = shape.qos,
               .dependency = dependency, .array = job.array, .requeue = false, .workdir = job.dir,
               .output = job.dir / (array ? "slurm-%A_%a.out" : "slurm-%j.out"), .extra = shape.extra,
               .comments = {fmt::format("flotilla job {}: {} tasks{} from manifest.json", job.name, job.tasks.size(), what),
                            array ? "a job array: element E runs the tasks of manifest-E.json and writes results-E.h5"
                                  : "flotilla-worker ranks pull tasks from rank 0, which writes each result to "
                                    "results.h5 as it completes",
                            "slurm_job_id tells a restarted `flotilla run` which job holds these tasks",
                            "--no-requeue: after a node failure flotilla runs the unreported tasks again in a "
                            "new job, at once (Slurm would hold a requeued job for minutes)"},
               .commands = {"echo \"${SLURM_ARRAY_JOB_ID:-$SLURM_JOB_ID}\" > slurm_job_id"}};
  if (!m_r.setup.empty())
    r.comments.push_back("resources.setup: its lines run first, with set +u (module scripts read unset variables); "
                         "a line that fails ends the job, named in its output");
  for (std::size_t i = 0; i < m_r.setup.size(); ++i) r.commands.push_back(render_setup_line(m_r.setup[i], i + 1));
  const std::string worker = fmt::format("{} {}", shell_quote(m_worker.string()),
                                         array ? "manifest-${SLURM_ARRAY_TASK_ID}.json" : "manifest.json");
  const auto srun = fmt::format("srun --mpi={}", m_r.srun_mpi);
  // The allocation's nodes, one a line: an allocation run by `flotilla run-allocation` has no
  // SLURM_JOB_NODELIST, so squeue names them.
  const std::string node_list =
      "scontrol show hostnames \"${SLURM_JOB_NODELIST:-$(squeue -h -j \"$SLURM_JOB_ID\" -o %N)}\"";
  // Rank 0 dispatches and runs no task, so on GPU nodes it holds no GPU (Placement.h): the first
  // node runs it beside ranks_per_node task ranks, and every GPU has a rank that runs tasks.
  const int dispatcher = shape.gpus_per_node > 0 ? 1 : 0;
  const int ranks = shape.nodes * shape.ranks_per_node + dispatcher;
  if (dispatcher && m_r.launcher != "mpirun")
    r.comments.push_back(fmt::format("rank 0 only dispatches and holds no GPU: the first node runs it beside {} "
                                     "task ranks (--overcommit: it needs no CPU of its own)",
                                     shape.ranks_per_node));
  if (m_r.launcher == "mpirun") {
    // Open MPI's mpirun reads the allocation from Slurm and starts its daemons on the nodes
    // through srun. The hostfile gives each node ranks_per_node slots, the first one the
    // dispatcher's too: mapped by slot, ranks 0..r land on the first node.
    r.comments.push_back("resources.launcher = mpirun: Open MPI's mpirun starts the ranks on the allocation's nodes");
    r.commands.push_back(fmt::format("{} | awk -v r={} -v extra={} '{{ print $0 \" slots=\" (NR == 1 ? r + extra : r) }}' "
                                     "> hostfile",
                                     node_list, shape.ranks_per_node, dispatcher));
    r.commands.push_back(fmt::format("mpirun -n {} --hostfile hostfile --map-by slot --bind-to none {}", ranks, worker));
  } else if (!dispatcher) {
    // The step's shape is spelled out: an allocation run by `flotilla run-allocation` has no batch
    // environment to take it from.
    r.commands.push_back(fmt::format("{} --nodes={} --ntasks-per-node={} {}", srun, shape.nodes,
                                     shape.ranks_per_node, worker));
  } else if (shape.nodes == 1) {
    r.commands.push_back(fmt::format("{} --nodes=1 --ntasks={} --overcommit --gpus-per-node={} {}", srun, ranks,
                                     shape.gpus_per_node, worker));
  } else {
    // Block distribution alone may put the extra rank on any node: the hostfile names the
    // first node once more than the others.
    r.commands.push_back(fmt::format("{} | awk -v r={} 'NR == 1 {{ print }} {{ for (i = 0; i < r; i++) print }}' "
                                     "> hostfile",
                                     node_list, shape.ranks_per_node));
    r.commands.push_back(fmt::format("SLURM_HOSTFILE=hostfile {} --nodes={} --ntasks={} "
                                     "--distribution=arbitrary --overcommit --gpus-per-node={} {}",
                                     srun, shape.nodes, ranks, shape.gpus_per_node, worker));
  }
  if (!dependency.empty())
    r.comments.push_back(fmt::format("starts once the {} job(s) it depends on completed; Slurm cancels it if they fail",
                                     job.after));
  return r;
}

// Submits the jobs not yet submitted whose back-off has passed and whose dependencies are
// submitted. With max_submit_jobs, the user's pending and running jobs are counted first (one
// query per pass, at most every 250 ms while a job waits), so a site's MaxSubmitJobs is
// respected rather than hit.
void SlurmBackend::submit_waiting() {
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
std::optional<std::string> SlurmBackend::dependency_of(const Job& job) const {
  if (job.after.empty()) return std::string();
  std::string ids;
  for (const auto& other : m_jobs) {
    if (other.resources != job.after) continue;
    if (other.slurm_id == 0) return std::nullopt;
    ids += ":" + std::to_string(other.slurm_id);
  }
  return ids.empty() ? std::string() : "afterok" + ids;
}

std::size_t SlurmBackend::count_user_queued() {
  auto jobs = m_client->user_jobs();
  std::size_t queued = 0;
  for (const auto& j : jobs)
    if (!is_terminal(j.state)) queued += j.submit_count;
  return queued;
}

// `flotilla sbatch` run again before the folder it wrote was submitted: point at that folder.
void SlurmBackend::hold_existing(const std::vector<std::uint64_t>& ids) const {
  for (const auto& [dir, tasks] : m_unsubmitted)
    if (tasks == std::set<std::uint64_t>(ids.begin(), ids.end())) throw JobHeld(dir, ids.size(), true);
}

void SlurmBackend::try_submit(Job& job, const std::string& dependency) {
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
    advance(job, JobEvent::submitted, fmt::format("Slurm job {}", ok->id));
    return;
  }
  const auto& rejected = std::get<SubmitRejected>(outcome);
  if (rejected.limit) {  // back off: 1, 2, 4 ... 30 s
    const auto wait = std::chrono::seconds(std::min(30, 1 << std::min(job.tries++, 5)));
    job.next_try = Clock::now() + wait;
    advance(job, JobEvent::deferred, rejected.message);
    notify("slurm_submit_deferred", fmt::format("Slurm refused job {} for now ({}); trying again in {} s", job.name,
                                                rejected.message, wait.count()));
    return;
  }
  // Anything else (no such partition, Slurm unreachable) is a setup error, not a trial result:
  // recording it would burn the campaign's budget on failures that say nothing about candidates.
  throw std::runtime_error(fmt::format("Slurm refused job {} ({}): {}", job.name,
                                       (job.dir / "manifest.json").string(), rejected.message));
}

void SlurmBackend::defer_for_own(Job& job) {
  job.next_try = Clock::now() + std::chrono::milliseconds(20);
  m_poll_soon = true;  // see the ending allocations end as soon as they do
}

// Runs an allocated job's script through `flotilla run-allocation ID DIR`, which leaves a
// launcher of its own session behind (it outlives this process, as a batch job would) and
// names it in DIR/launcher before it exits. Its output goes where the batch job's would. The
// allocation's id is in DIR/allocation first, so a restarted scheduler that finds no launcher
// beside it cancels the allocation instead of waiting for it. False when the launcher could not
// be started: the allocation is cancelled and the job goes as a batch job.
bool SlurmBackend::launch(Job& job, JobRequest request, std::uint32_t id) {
  request.comments.push_back(fmt::format("allocated at once as Slurm job {} (resources.slurm_start = allocate): "
                                         "`flotilla run-allocation` runs this script on the submitting host and "
                                         "releases the allocation when it ends",
                                         id));
  std::ofstream(job.dir / "allocation") << id << '\n';
  std::ofstream(job.dir / "job.sh") << render_job_script(request);
  const auto out = job.dir / fmt::format("slurm-{}.out", id);
  // Its own session, and it does not die with us: a Ctrl-C meant for flotilla does not reach
  // it halfway through starting the launcher. It exits once the launcher is named.
  const auto started = run_subprocess({.argv = {m_flotilla.string(), "run-allocation", std::to_string(id), job.dir.string()},
                                       .timeout = std::chrono::seconds(60),
                                       .stdout_to = SubprocessSpec::Output::append, .stderr_to = SubprocessSpec::Output::to_stdout,
                                       .stdout_file = out, .outlives_us = true});
  if (!started.ok() || !std::filesystem::exists(job.dir / "launcher")) {
    m_client->cancel(id);  // nothing runs in it: give the nodes back
    std::error_code ec;
    std::filesystem::remove(job.dir / "allocation", ec);
    notify("slurm_launcher_failed",
           fmt::format("could not start the launcher of Slurm allocation {} for job {} ({} run-allocation: {}); "
                       "cancelled it, and the job goes as a batch job",
                       id, job.name, m_flotilla.string(),
                       started.started && !started.timed_out ? "see " + out.string() : started.describe(std::chrono::seconds(60))));
    return false;
  }
  // run-allocation has exited: its launcher is now our child if we are a subreaper
  // (Containment.h), and must never be taken for a task's orphan.
  {
    std::ifstream in(job.dir / "launcher");
    std::string host;
    long pid = 0;
    if (in >> host >> pid && host == host_name() && pid > 0) keep_child(static_cast<pid_t>(pid));
  }
  job.slurm_id = id;
  job.allocated = true;
  std::ofstream(job.dir / "slurm_job_id") << id << '\n';
  advance(job, JobEvent::allocated, fmt::format("Slurm allocation {}, launcher {}", id, launcher_text(job.dir)));
  return true;
}

}  // namespace flotilla::jobs::slurm_backend

// Allocator.cpp — jobs allocated at once and their launchers (Allocator.h).
#include "Allocator.h"

#include <fstream>

#include <fmt/format.h>

#include "process/Process.h"
#include "flotilla/jobs/Placement.h"
#include "flotilla/jobs/Subprocess.h"

namespace flotilla::jobs::slurm {

Allocator::Outcome Allocator::try_allocate(Job& job, const JobRequest& request, bool own_ending) {
  if (!job.array.empty() || !request.dependency.empty() || Clock::now() < m_pause) return Outcome::batch;
  own_ending = own_ending && Clock::now() < job.created + kOwnAllocationWait;
  if (job.waits_for_own && own_ending) return Outcome::wait;
  if (auto id = m_client.allocate_now(request)) {
    if (launch(job, request, *id)) return Outcome::allocated;
  } else if (!job.waits_for_own && own_ending) {
    job.waits_for_own = true;  // the nodes may be the campaign's own, a moment from free
    return Outcome::wait;
  } else {
    m_pause = Clock::now() + kAllocatePause;
  }
  return Outcome::batch;
}

// Runs an allocated job's script through `flotilla run-allocation ID DIR`, which leaves a
// launcher of its own session behind (it outlives this process, as a batch job would) and
// names it in DIR/launcher before it exits. Its output goes where the batch job's would. The
// allocation's id is journalled first (`launching`), so a restarted scheduler that finds no
// launcher beside it cancels the allocation instead of waiting for it. False when the launcher
// could not be started: the allocation is cancelled and the job goes as a batch job.
bool Allocator::launch(Job& job, JobRequest request, std::uint32_t id) {
  request.comments.push_back(
      fmt::format("allocated at once as Slurm job {} (resources.slurm_start = allocate): "
                  "`flotilla run-allocation` runs this script on the submitting host and "
                  "releases the allocation when it ends",
                  id));
  m_journal.advance(job, JobEvent::launching, fmt::format("Slurm allocation {}", id));
  std::ofstream(job.dir / "job.sh") << render_job_script(request);
  const auto out = job.dir / fmt::format("slurm-{}.out", id);
  // Its own session, and it does not die with us: a Ctrl-C meant for flotilla does not reach
  // it halfway through starting the launcher. It exits once the launcher is named.
  const auto started =
      run_subprocess({.argv = {m_flotilla.string(), "run-allocation", std::to_string(id), job.dir.string()},
                      .timeout = std::chrono::seconds(60),
                      .stdout_to = SubprocessSpec::Output::append,
                      .stderr_to = SubprocessSpec::Output::to_stdout,
                      .stdout_file = out,
                      .outlives_us = true});
  if (!started.ok() || !std::filesystem::exists(job.dir / "launcher")) {
    m_client.cancel(id);  // nothing runs in it: give the nodes back
    m_journal.advance(
        job, JobEvent::deferred,
        fmt::format("Slurm allocation {} cancelled: its launcher did not start; the job goes as a batch job", id));
    m_notice("slurm_launcher_failed",
             fmt::format("could not start the launcher of Slurm allocation {} for job {} ({} run-allocation: {}); "
                         "cancelled it, and the job goes as a batch job",
                         id, job.name, m_flotilla.string(),
                         started.started && !started.timed_out ? "see " + out.string()
                                                               : started.describe(std::chrono::seconds(60))));
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
  m_journal.advance(job, JobEvent::allocated,
                    fmt::format("Slurm allocation {}, launcher {}", id, launcher_text(job.dir)));
  return true;
}

}  // namespace flotilla::jobs::slurm

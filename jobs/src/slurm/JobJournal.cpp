// JobJournal.cpp — the Slurm backend's journal writer (JobJournal.h).
#include "JobJournal.h"

#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace flotilla::jobs::slurm {

void JobJournal::advance(Job& job, JobEvent event, std::string_view detail) {
  const JobPhase before = job.phase;
  job.phase = next(before, event);
  // A query that sees what was known already says nothing new: one line per change, not per poll.
  const bool observation = event == JobEvent::seen_pending || event == JobEvent::seen_running;
  if (job.phase != before || !observation) append(job.dir, event, job.phase, detail);
}

void JobJournal::append(const std::filesystem::path& dir, JobEvent event, JobPhase after, std::string_view detail) {
  if (dir.empty()) return;  // tasks that never had a job (cancelled before one was written)
  try {
    append_job_event(dir, event, after, detail);
  } catch (const std::runtime_error& e) {
    if (!std::exchange(m_failed, true))
      m_notice("slurm_journal_failed",
               fmt::format("{} (a restarted scheduler finds such a job by its name while Slurm lists it)", e.what()));
  }
}

}  // namespace flotilla::jobs::slurm

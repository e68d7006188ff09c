// JobJournal.h — the Slurm backend's writer of its jobs' journals (DIR/events, JobPhase.h): every
// change of a job's phase goes through here, so the phase held in memory and the journal a
// restarted scheduler replays never disagree.
//
// The journal is the only record the backend keeps of a job (JobFolder.h, read_folder_record).
// One that cannot be written (a full disk) is said once as a notice and the run goes on: the job
// still runs, its results still come back through its folder, and a restarted scheduler finds it
// by its name while Slurm lists it.
#pragma once

#include <filesystem>
#include <string_view>

#include "Job.h"

namespace flotilla::jobs::slurm {

class JobJournal {
 public:
  explicit JobJournal(Notice notice) : m_notice(std::move(notice)) {}

  // The job's next phase after `event` (JobPhase.h's next(): an illegal event is a bug and
  // throws), appended to DIR/events when it changes the phase or says something new.
  void advance(Job& job, JobEvent event, std::string_view detail = {});
  // A line for a job no Job stands for any more (a retired allocation still watched).
  void append(const std::filesystem::path& dir, JobEvent event, JobPhase after, std::string_view detail);

 private:
  Notice m_notice;
  bool m_failed = false;  // said once
};

}  // namespace flotilla::jobs::slurm

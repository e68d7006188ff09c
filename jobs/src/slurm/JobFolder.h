// JobFolder.h — one Slurm job's folder in jobs_dir: manifest.json lists every task of the job; a
// job array also has manifest-E.json per element E (the element's tasks, written by that
// element's worker to results-E.h5); a plain job's worker writes results.h5. The folder's name
// is the job's name, so a job submitted by hand from it is found by name.
//
// Invariant: a new job always gets a folder of its own, never one an earlier job used.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "flotilla/jobs/JobPhase.h"
#include "flotilla/jobs/Task.h"

namespace flotilla::jobs::slurm {

struct NewFolder {
  std::string name;  // PREFIX-PID-N
  std::filesystem::path dir;
};
// A name and folder in `workdir` that no job used yet (not created). Pids repeat across restarts
// (containers, CI), so the counter goes on until the folder is new. Throws std::invalid_argument
// when the folder would lie outside workdir (a prefix that is not a checked campaign name).
NewFolder new_job_folder(const std::filesystem::path& workdir, const std::string& prefix, int& counter);

// Writes the folder's manifests. `elements` maps an array index (as Slurm numbers it) to the
// positions in `tasks` of that element's tasks; empty for a plain job.
void write_job_folder(const std::filesystem::path& dir, const std::string& name,
                      const std::vector<const TaskSpec*>& tasks,
                      const std::map<std::uint32_t, std::vector<std::size_t>>& elements);

// Whether a folder entry is one of the job's results files (results.h5, results-E.h5).
bool is_results_file(const std::filesystem::path& path);

// Every result the job's workers recorded (results.h5 and each results-E.h5 present).
std::vector<TaskResult> read_job_folder_results(const std::filesystem::path& dir);

// What a job's folder says of its job. The journal (DIR/events, JobPhase.h) is the record: the
// backend writes no other file about a job. Two other sources fill what a journal does not name:
//  - DIR/slurm_job_id, which the job's script writes when the job starts: a job submitted by hand
//    from a `flotilla sbatch` folder has no journal line until a scheduler finds it;
//  - the marker files of folders written by a flotilla from before the journal named the job
//    (slurm_job_id written at submission, DIR/allocation before a launcher started): a campaign
//    may be resumed by a newer flotilla, and such folders must still be re-attached.
struct FolderRecord {
  JobPhase phase = JobPhase::written;  // where the journal ends; written without one
  std::uint32_t slurm_id = 0;          // the job that holds the folder's tasks; 0: none known
  bool allocated = false;              // allocated at once, run by a launcher
  std::uint32_t launching = 0;         // an allocation made whose launcher may never have started
  std::string unreadable;              // why the journal is not one (then the other sources decide)
};
FolderRecord read_folder_record(const std::filesystem::path& dir);

}  // namespace flotilla::jobs::slurm

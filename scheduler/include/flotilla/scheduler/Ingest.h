// Ingest.h — task results into the campaign file.
//
// One conversion from a backend's TaskResult to a trial record (its key decoded from the task
// id, Planning.h), used for every result the campaign loop collects and for worker job files
// read after the fact; so a result reads the same whichever way it arrived.
// Invariants:
//  - Ingesting is idempotent: Store::add_trial ignores a trial key it already holds, so reading
//    the same job file twice, or a file whose results were also collected live, adds nothing.
//  - A job file is recorded as one Store::Group (one flush per table, not one per trial): until
//    the commit the job file is the durable copy, and a crash before it loses nothing that
//    ingesting the file again would not add back.
//  - A cancelled result is not a trial (the task runs again on resume). A lost one (its rank
//    died) is run again in a later job while attempts remain (should_requeue); once they are
//    spent it is recorded as failed, with the reason.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <vector>

#include "flotilla/jobs/Task.h"
#include "flotilla/results/Store.h"

namespace flotilla::scheduler {

// The trial `result` records; nullopt for a cancelled result.
std::optional<results::TrialRecord> to_trial_record(const jobs::TaskResult& result);

// Whether a result means "run the task again": it was lost and `max_attempts` allows another.
bool should_requeue(const jobs::TaskResult& result, int max_attempts);

struct IngestReport {
  std::vector<results::TrialRecord> added;  // in the job file's order
  std::size_t already_recorded = 0;
  std::size_t not_trials = 0;  // cancelled
};

// Adds every result of a worker job file (results/JobFile.h) to the campaign store. Throws
// results::StoreError naming the file when it is missing or not a job file.
IngestReport ingest_job_file(results::Store& store, const std::filesystem::path& job_file);

}  // namespace flotilla::scheduler

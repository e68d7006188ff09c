// SlurmBackend.h — backend "slurm": the tasks submitted between two collect() calls become one
// Slurm job per resource set (TaskSpec::resources, e.g. explore and evaluate on different
// partitions), an allocation of nodes x ranks_per_node that runs flotilla-worker under
// `srun --mpi=pmix` on a manifest of the tasks; the worker's rank 0 writes every result to the
// job's HDF5 file, read back here. In hold mode (`flotilla sbatch`) the next job's folder is
// written and JobHeld thrown instead of submitting; a job submitted by hand from such a folder is
// found by its name and followed like the backend's own.
//
// Invariants:
//  - Job states are read with one query for all active jobs per poll (at most every 250 ms);
//    between two queries only the results files already open are read again (every 50 ms).
//  - A job whose every task has come back is dropped at once, before Slurm reports it ended: it
//    is left to end by itself, never cancelled, and its results stay in its results files.
//  - Every task comes back exactly once: with the worker's result, or as `lost` (reason names
//    the job and how it ended) when its job ended FAILED, TIMEOUT, NODE_FAIL, PREEMPTED,
//    CANCELLED or vanished before the task reported; the caller re-runs lost tasks with the next
//    attempt. Finished tasks of a failed job are kept.
//  - With max_submit_jobs, a job is submitted only while fewer of the user's jobs are pending or
//    running (one squeue-like query per pass).
//  - A submission rejected by a submit limit is retried with back-off, never failed; any other
//    rejection (unknown partition, Slurm unreachable) throws: it is a setup error.
#pragma once

#include <memory>

#include "flotilla/jobs/Backend.h"

namespace flotilla::jobs {

std::unique_ptr<Backend> make_slurm_backend(const BackendOptions& options);

const std::vector<BackendSetting>& slurm_backend_settings();

}  // namespace flotilla::jobs

// Slurm.h — talking to Slurm: job requests, readable job scripts, job states, and two clients
// (libslurm, and the sbatch/squeue/scancel commands as a fallback) behind one interface.
//
// Invariants:
//  - No libslurm type appears here (the API client is a pimpl in SlurmApiClient.cpp).
//  - Job state is read for many jobs with one query (slurm_load_jobs or one squeue --json),
//    never one call per job per poll.
//  - A rejected submission is a value (SubmitOutcome), not an exception; a submit-limit
//    rejection says so, so the caller can back off and retry.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "flotilla/jobs/SbatchOptions.h"

namespace flotilla::jobs {

struct JobRequest {
  std::string name;
  std::string partition;                 // empty: the cluster's default
  int nodes = 1;
  int ranks_per_node = 1;
  int gpus_per_node = 0;                 // --gpus-per-node; 0: none
  std::chrono::minutes time_limit{10};
  std::string account;                   // empty: the user's default
  std::string qos;
  std::string dependency;                // e.g. "afterok:123"
  std::string array;                     // e.g. "0-99"; empty: not an array
  bool requeue = true;                   // false: Slurm does not requeue it after a node failure
  std::filesystem::path workdir;         // absolute
  std::filesystem::path output;          // absolute stdout/stderr path (may use %j, %A, %a)
  std::vector<SbatchOption> extra;       // resources.sbatch: #SBATCH lines after flotilla's own
  std::vector<std::string> comments;     // what the job does, for the person who reads the script
  std::vector<std::pair<std::string, std::string>> exports;  // environment set in the script
  std::vector<std::string> commands;     // the script's body, one shell line each
};

// A job script a person can read and submit by hand: #SBATCH lines, comments, then commands.
// Throws std::invalid_argument when a value would not stay on its own #SBATCH line as one
// option (a newline, a blank, a control byte): settings are checked at load (Validate.cpp),
// and this is the last line of defence against a job script that runs what nobody wrote.
// Comments have their control bytes replaced; exported values are quoted.
std::string render_job_script(const JobRequest& request);

// Line `number` (from 1) of resources.setup (e.g. `module load cuda/12.4`) as a job script runs
// it: split into words like a command template and quoted word by word, so no shell syntax gets
// in; run with `set +u` (module scripts read unset variables); a failure ends the job with the
// line named. Throws jobs::CommandError for an unterminated quote.
std::string render_setup_line(std::string_view line, std::size_t number);

// A word for a POSIX shell: as it is when it needs no quoting, else in single quotes.
std::string shell_quote(std::string_view value);

// Whether `value` may follow "#SBATCH --option=": non-empty, no blank, no control byte.
bool is_sbatch_value(std::string_view value);

enum class JobState { pending, running, completed, failed, cancelled, timeout, node_fail, preempted, boot_fail,
                      deadline, out_of_memory, unknown };
std::string_view to_string(JobState state);
JobState job_state_from_name(std::string_view name);  // "NODE_FAIL" -> node_fail; unknown -> unknown
bool is_terminal(JobState state);

struct JobStatus {
  std::uint32_t id = 0;
  JobState state = JobState::unknown;
  int exit_code = 0;
  std::string reason;                    // Slurm's state reason, e.g. "Dependency", "DependencyNeverSatisfied"
  std::uint32_t array_job_id = 0;        // for an array element: the array's id; 0 otherwise
  std::optional<std::uint32_t> array_task_id;
  std::string name;                      // the job's name (flotilla: its folder in jobs_dir)
  std::uint32_t user_id = 0;
  // Jobs this record stands for in Slurm's submit limits: a pending array's record stands for
  // all of its remaining elements ("0-9,12" is 11), which MaxSubmitJobs counts one by one.
  std::uint32_t submit_count = 1;
};

// Elements named by an array task expression as Slurm prints it ("0-9", "1,3,5-7", "0-15:4",
// "0-99%10"); 1 for an empty or unreadable one (counting a record at least once).
std::uint32_t array_expression_size(std::string_view expression);

struct Submitted {
  std::uint32_t id;
};
struct SubmitRejected {
  std::string message;
  bool limit = false;                    // a submit limit (MaxSubmitJobs, QOS): back off and retry
};
using SubmitOutcome = std::variant<Submitted, SubmitRejected>;

// What a partition allows a job, as slurmctld says it (scontrol show partition): to tell a user
// which limit a job broke and which setting to change.
struct PartitionLimits {
  std::string name;
  bool is_default = false;
  std::string state;                          // UP, DOWN, DRAIN, INACTIVE
  std::optional<std::uint32_t> max_nodes;     // MaxNodes a job; nullopt: unlimited
  std::uint32_t total_nodes = 0;
  std::optional<std::chrono::minutes> max_time;  // MaxTime; nullopt: unlimited
};

class SlurmClient {
 public:
  virtual ~SlurmClient() = default;
  virtual std::string_view name() const = 0;
  virtual SubmitOutcome submit(const JobRequest& request) = 0;
  // States of the given jobs in one query; jobs Slurm no longer knows are absent.
  virtual std::vector<JobStatus> query(const std::vector<std::uint32_t>& ids) = 0;
  virtual void cancel(std::uint32_t id) = 0;
  // Every job of the calling user that Slurm still knows (finished ones within MinJobAge too),
  // in one query: to find jobs submitted by hand by name, and to count queued jobs.
  virtual std::vector<JobStatus> user_jobs() = 0;
  // The cluster's MaxArraySize (the largest array index + 1).
  virtual std::uint32_t max_array_size() = 0;
  // Allocates the request's nodes inside the call when they are free now (as `salloc
  // --immediate --no-shell`), for a job whose script a process on this host runs (see
  // run_in_allocation). nullopt when they are not free now, when Slurm refuses the request, or
  // when the client cannot (sbatch): the caller then submits a batch job.
  virtual std::optional<std::uint32_t> allocate_now(const JobRequest&) { return std::nullopt; }
  // Ends an allocation made by allocate_now with its script's wait status, as salloc does
  // (COMPLETED for 0, FAILED otherwise). A job already ended is not an error.
  virtual void release(std::uint32_t id, int wait_status) = 0;
  // Every partition's limits, in one query; only asked after Slurm refused or held a job for
  // one. Empty when the client cannot tell.
  virtual std::vector<PartitionLimits> partitions() { return {}; }
};

// Runs a job folder's job.sh inside allocation `id` (made by allocate_now) from a process that
// outlives the caller, in two steps (`flotilla run-allocation ID DIR` is the first, started by the
// Slurm backend with slurm_start = allocate):
//  - start_allocation_launcher starts `launcher` (an argv: flotilla run-allocation --launcher ID
//    DIR) through the process runner, in a session of its own and not dying with the caller, and
//    returns 0 once it has named itself as "HOST PID" in DIR/launcher; it throws when DIR has no
//    job.sh, a launcher of DIR still runs, or the launcher ends (or hangs 60 s) before naming itself;
//  - run_allocation_launcher is that launcher: it holds an flock on DIR/launcher.lock for its whole
//    life, names itself, runs the script (whose srun steps find the allocation through
//    SLURM_JOB_ID) and releases the allocation with the script's status (retrying for minutes if
//    slurmctld does not answer, then cancelling it). Returns the script's exit code; 1 when the
//    lock is taken.
int start_allocation_launcher(std::uint32_t id, const std::filesystem::path& dir,
                              const std::vector<std::string>& launcher);
int run_allocation_launcher(std::uint32_t id, const std::filesystem::path& dir);

// Whether the launcher of a folder's allocation still runs: true while it holds its lock, false
// once nobody does, nullopt when the folder has no launcher or the lock cannot be tested.
std::optional<bool> launcher_alive(const std::filesystem::path& dir);

// "api" (libslurm) or "sbatch" (the commands on PATH). Throws std::invalid_argument for another
// name, std::runtime_error when Slurm cannot be reached.
std::unique_ptr<SlurmClient> make_slurm_client(std::string_view name);

// Splits task indices [0, count) into array ranges no larger than max_array_size.
std::vector<std::pair<std::uint32_t, std::uint32_t>> split_array(std::uint32_t count, std::uint32_t max_array_size);

// Elements of a job array (sorted, unique) cut into pieces Slurm accepts: Slurm's array indices
// stay below MaxArraySize, so piece k holds the elements [offset, offset + max_array_size) and
// submits them as indices element - offset, in `spec` form ("0-2,5,7-9").
struct ArrayPiece {
  std::uint32_t offset = 0;
  std::vector<std::uint32_t> elements;
  std::string spec;
};
std::vector<ArrayPiece> plan_array_pieces(const std::vector<std::uint32_t>& elements, std::uint32_t max_array_size);

// The jobs a Slurm backend left in its work directory (one folder per job: manifest.json,
// slurm_job_id once submitted, results.h5 once the worker wrote a result), oldest first.
struct JobDirectory {
  std::filesystem::path dir;
  std::string name;
  std::uint32_t slurm_id = 0;   // 0: never submitted
  std::size_t tasks = 0;
  std::size_t results = 0;
  std::string phase;            // where its journal (DIR/events, JobPhase.h) ends: "running"; "" without one
};
std::vector<JobDirectory> list_job_directories(const std::filesystem::path& jobs_dir);

// What `flotilla status` shows of a job, from its folder and Slurm's `records` of it (an array:
// one per element; none: Slurm no longer knows it). state: Slurm's word, with its reason, for
// the first element still pending or running, else how the job ended (the first element that did
// not complete); "ENDED" when Slurm forgot it, "?" when Slurm could not be asked. phase: the
// journal's, unless the journal is behind Slurm, as it is while no run follows the job: a job
// that ended is "done" when every element completed and "ended" otherwise (what the next run
// will journal), never "queued" or "running".
struct JobView {
  std::string state;
  std::string phase;
};
JobView job_view(const JobDirectory& job, const std::vector<JobStatus>& records, bool reachable);

// Pure parsers of the sbatch fallback's command output (tested with recorded output).
std::optional<std::uint32_t> parse_sbatch_parsable(std::string_view out);       // "123" or "123;cluster"
// squeue --json (22.05). Throws std::invalid_argument naming what is wrong, e.g.
//   "squeue --json: jobs[2].job_id: expected an unsigned 32-bit integer, got -1".
std::vector<JobStatus> parse_squeue_json(std::string_view json);

}  // namespace flotilla::jobs

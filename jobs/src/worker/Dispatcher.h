// Dispatcher.h — rank 0 of a worker job: hands out tasks and records every result.
//
// Rank 0 only dispatches when there are other ranks (see docs/worker.md for why): it answers
// each worker's HELLO and RESULTS with the next BATCH (Scheduling.h) or, once nothing is left
// and the worker holds nothing, STOP. It is the job file's only writer, and commits results
// in groups (ResultSink), so a burst of tiny tasks costs one HDF5 append per group while a lone
// slow result is on disk (and visible to the scheduler) within kCommitDelay.
// Invariants: every position in the task list goes out in exactly one batch; the loop ends only
// when every worker has been told STOP, so every result sent has been received and committed.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "Executor.h"
#include "Scheduling.h"
#include "flotilla/results/JobFile.h"

namespace flotilla::jobs::worker {

struct DispatchStats {
  std::size_t tasks = 0;  // results recorded
  double seconds = 0;     // from the first batch to the last commit
  std::size_t batches = 0;
  std::size_t largest_batch = 0;
  std::size_t commits = 0;  // HDF5 appends
  double busy_seconds = 0;  // the workers' time inside their batches, summed
  double cpu_seconds = 0;   // rank 0's CPU time meanwhile (its threads, spinning included):
                            // tasks / cpu_seconds is what one dispatcher could sustain
};

// Appends results to the job file from a thread of its own, in groups: at most kCommitDelay
// after they arrive, or as soon as kCommitRows are pending. An append costs a few flushes
// whatever its size, so one per record would cap a job far below 200,000 tasks/s; and a file
// system that stalls (Lustre, NFS) stalls this thread only, never the dispatch loop.
// Only this thread touches HDF5 between construction and finish().
class ResultSink {
 public:
  static constexpr std::size_t kCommitRows = 16384;
  static constexpr std::chrono::milliseconds kCommitDelay{20};

  explicit ResultSink(results::JobFileWriter& out);
  ~ResultSink();  // finishes, dropping a write error (call finish() to see it)
  ResultSink(const ResultSink&) = delete;
  ResultSink& operator=(const ResultSink&) = delete;

  // Both rethrow an earlier write's error, so a broken file ends the job promptly.
  void add_rank(results::RankRecord rank);
  void add(results::JobRecord record);
  void add(std::vector<results::JobRecord>& records);  // moved from
  // Writes everything pending, stops the thread; rethrows a write error.
  void finish();
  std::size_t commits() const { return m_commits; }

 private:
  void write_loop();
  void check_error();

  results::JobFileWriter& m_out;
  std::mutex m_mutex;
  std::condition_variable m_wake;
  std::vector<results::RankRecord> m_ranks;
  std::vector<results::JobRecord> m_pending;
  bool m_finishing = false;
  std::exception_ptr m_error;
  std::size_t m_commits = 0;  // written by the thread, read after it is joined
  std::thread m_thread;       // last: starts once everything above exists
};

class Dispatcher {
 public:
  Dispatcher(std::size_t tasks, int ranks, results::JobFileWriter& out, BatchPolicy policy = {});
  DispatchStats run();

 private:
  struct WorkerState {
    std::size_t in_hand = 0;
    std::optional<double> mean_task_seconds;
  };
  void top_up(int rank);

  std::size_t m_tasks;
  std::size_t m_next = 0;
  std::size_t m_active;
  std::vector<WorkerState> m_workers;  // by rank; [0] is this dispatcher
  ResultSink m_sink;
  BatchPolicy m_policy;
  DispatchStats m_stats;
};

// A job of one rank: rank 0 runs the tasks itself, in order.
DispatchStats run_alone(const std::vector<ManifestTask>& tasks, const std::vector<std::uint64_t>& todo,
                        Executor& executor, results::JobFileWriter& out);

// Ranks 1..n-1: HELLO, then run batches until STOP.
void serve(const std::vector<ManifestTask>& tasks, const std::vector<std::uint64_t>& todo, Executor& executor,
           const Placement& placement);

}  // namespace flotilla::jobs::worker

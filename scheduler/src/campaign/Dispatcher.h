// Dispatcher.h — runs a campaign's tasks on its backend and records what comes back.
//
// run() submits tasks and collects their results until each has come back, or until a stop is
// obeyed (returned as a value, Stop.h). Every collect()'s results are recorded in one flush
// before anything is decided from them. A task lost to its launcher (its rank died before
// reporting) runs again as its next attempt while attempts remain; a confirmation's result
// becomes one trial per pair; an evaluation submitted with its exploration (a pipelined round)
// is kept only once that exploration is known to have succeeded. A task lost on every attempt
// before any task of the run came back is the launcher's failure, not the candidate's: nothing
// is recorded for it and the run stops (LauncherFailed), so that a resumed run runs it again.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "flotilla/jobs/Backend.h"
#include "flotilla/results/Store.h"
#include "flotilla/scheduler/Campaign.h"
#include "Stop.h"

namespace flotilla::scheduler {

class Ledger;
class SuiteStage;
class TaskFactory;

// Every task of the run so far was lost to its launcher (mpirun, a rank dying at start), and one
// has used all its attempts: the campaign stops with this message, nothing charged to a candidate.
class LauncherFailed : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Dispatcher {
 public:
  Dispatcher(const Settings& settings, const RunOptions& options, Ledger& ledger, TaskFactory& tasks,
             SuiteStage& suite, const StopSignals& stops)
      : m_s(settings), m_o(options), m_ledger(ledger), m_tasks(tasks), m_suite(suite), m_stops(stops) {}

  void set_backend(std::unique_ptr<jobs::Backend> backend) { m_backend = std::move(backend); }
  jobs::Backend& backend() { return *m_backend; }
  const jobs::Backend& backend() const { return *m_backend; }

  // Submits the tasks and records their results until each has come back; `show` is called
  // after each collect (final: once at the end). Returns the stop it obeyed, if one came, or
  // Stop::held when the backend wrote a job instead of submitting it (hold mode).
  [[nodiscard]] Halt run(std::vector<jobs::TaskSpec> specs, const std::function<void(bool final)>& show);

  // A pipelined round: evaluations run beside their explorations (see above); end() records
  // the evaluations that waited for their exploration.
  void begin_speculative() { m_speculative = true; }
  void end_speculative();

  // Obeys a stop that has come: work that outlives the scheduler (Slurm jobs) is left running
  // on a signal, unless asked otherwise (and on a request: `flotilla cancel` is cancelling it),
  // the rest is cancelled; what has come back is recorded.
  Stop obey_stop();

  std::size_t detached() const { return m_detached; }
  // What was running when the disk filled: the tasks whose results could not be written (they
  // ended last, and the file system filled while they ran), then those still running or queued.
  std::string disk_full_text() const;

 private:
  void submit(std::vector<jobs::TaskSpec> specs);
  void record(const std::vector<jobs::TaskResult>& finished);
  void record_pairs(const jobs::TaskResult& r);
  int head_to_head_first_index(std::int64_t challenger, std::int64_t opponent) const;
  void require_objectives(results::TrialRecord& t) const;
  bool keep_evaluation(const jobs::TaskResult& r, std::int64_t candidate, int shard);
  void drop_evaluation(std::int64_t candidate, int shard);
  void requeue(const jobs::TaskResult& r);

  const Settings& m_s;
  const RunOptions& m_o;
  Ledger& m_ledger;
  TaskFactory& m_tasks;
  SuiteStage& m_suite;
  const StopSignals& m_stops;
  std::unique_ptr<jobs::Backend> m_backend;
  std::size_t m_detached = 0;              // jobs left running when interrupted
  std::set<std::uint64_t> m_in_flight;     // task ids submitted whose results are not in the file yet
  std::vector<std::uint64_t> m_unwritten;  // task ids whose results a failed write kept out
  bool m_speculative = false;              // evaluations run alongside their explorations (pipelined)
  bool m_launcher_worked = false;          // a task of this run came back from its launcher (ok or failed)
  std::vector<jobs::TaskResult> m_held;    // speculative evaluations whose exploration is not in yet
};

// Task ids as a person reads them ("candidate 3 explore 1, ..."), ten at most.
std::string tasks_text(const std::vector<std::uint64_t>& ids);

}  // namespace flotilla::scheduler

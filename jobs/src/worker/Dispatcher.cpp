// Dispatcher.cpp — rank 0's loop, the lone-rank loop and the workers' loop (Dispatcher.h).
#include "Dispatcher.h"

#include <sys/resource.h>

#include "Mpi.h"
#include "Wire.h"
#include "flotilla/jobs/JobResults.h"

namespace flotilla::jobs::worker {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double process_cpu_seconds() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec);
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

}  // namespace

ResultSink::ResultSink(results::JobFileWriter& out) : m_out(out), m_thread([this] { write_loop(); }) {}

ResultSink::~ResultSink() {
  try {
    finish();
  } catch (...) {  // the caller chose not to finish(): there is nobody left to tell
  }
}

void ResultSink::check_error() {
  if (m_error) std::rethrow_exception(m_error);
}

void ResultSink::add_rank(results::RankRecord rank) {
  std::lock_guard lock(m_mutex);
  check_error();
  m_ranks.push_back(std::move(rank));
  m_wake.notify_one();  // rare, and worth showing at once
}

void ResultSink::add(results::JobRecord record) {
  std::lock_guard lock(m_mutex);
  check_error();
  m_pending.push_back(std::move(record));
  if (m_pending.size() >= kCommitRows) m_wake.notify_one();
}

void ResultSink::add(std::vector<results::JobRecord>& records) {
  std::lock_guard lock(m_mutex);
  check_error();
  std::move(records.begin(), records.end(), std::back_inserter(m_pending));
  records.clear();
  if (m_pending.size() >= kCommitRows) m_wake.notify_one();
}

void ResultSink::finish() {
  if (m_thread.joinable()) {
    {
      std::lock_guard lock(m_mutex);
      m_finishing = true;
    }
    m_wake.notify_one();
    m_thread.join();
  }
  check_error();
}

void ResultSink::write_loop() {
  std::unique_lock lock(m_mutex);
  for (;;) {
    m_wake.wait_for(lock, kCommitDelay,
                    [this] { return m_finishing || !m_ranks.empty() || m_pending.size() >= kCommitRows; });
    if (m_ranks.empty() && m_pending.empty()) {
      if (m_finishing) return;
      continue;
    }
    auto ranks = std::exchange(m_ranks, {});
    auto records = std::exchange(m_pending, {});
    lock.unlock();
    try {
      for (const auto& rank : ranks) m_out.add_rank(rank);  // before records that name the rank
      m_out.append(records);
      if (!records.empty()) ++m_commits;
    } catch (...) {
      lock.lock();
      m_error = std::current_exception();
      return;
    }
    lock.lock();
  }
}

Dispatcher::Dispatcher(std::size_t tasks, int ranks, results::JobFileWriter& out, BatchPolicy policy)
    : m_tasks(tasks),
      m_active(static_cast<std::size_t>(ranks - 1)),
      m_workers(static_cast<std::size_t>(ranks)),
      m_sink(out),
      m_policy(policy) {}

DispatchStats Dispatcher::run() {
  const auto start = std::chrono::steady_clock::now();
  const double cpu_start = process_cpu_seconds();
  while (m_active > 0) {
    mpi::Message message = mpi::receive(-1);
    WorkerState& worker = m_workers.at(static_cast<std::size_t>(message.source));
    if (message.tag == mpi::kHello) {
      const wire::Hello hello = wire::decode_hello(message.payload);
      m_sink.add_rank({message.source, hello.host, hello.device, hello.cores, hello.slurm_job});
    } else if (message.tag == mpi::kResults) {
      wire::Results results = wire::decode_results(message.payload);
      if (worker.in_hand == 0)
        throw mpi::MpiError("rank " + std::to_string(message.source) + " sent results for no batch");
      --worker.in_hand;
      if (!results.records.empty())
        worker.mean_task_seconds = results.busy_seconds / static_cast<double>(results.records.size());
      m_stats.tasks += results.records.size();
      m_stats.busy_seconds += results.busy_seconds;
      for (auto& record : results.records) record.rank = message.source;
      m_sink.add(results.records);
    } else {
      throw mpi::MpiError("rank " + std::to_string(message.source) + " sent unexpected tag " +
                          std::to_string(message.tag));
    }
    top_up(message.source);
  }
  m_sink.finish();
  m_stats.seconds = seconds_since(start);
  m_stats.cpu_seconds = process_cpu_seconds() - cpu_start;
  m_stats.commits = m_sink.commits();
  return m_stats;
}

void Dispatcher::top_up(int rank) {
  WorkerState& worker = m_workers[static_cast<std::size_t>(rank)];
  const std::size_t workers = m_workers.size() - 1;
  while (m_next < m_tasks) {
    const std::size_t remaining = m_tasks - m_next;
    if (worker.in_hand >= batches_in_hand(m_policy, worker.mean_task_seconds, remaining, workers)) break;
    const std::size_t count = batch_size(m_policy, worker.mean_task_seconds, remaining, workers);
    mpi::send(rank, mpi::kBatch, wire::encode(wire::Batch{m_next, m_next + count}));
    m_next += count;
    ++worker.in_hand;
    ++m_stats.batches;
    m_stats.largest_batch = std::max(m_stats.largest_batch, count);
  }
  if (worker.in_hand == 0 && m_next == m_tasks) {
    mpi::send(rank, mpi::kStop, {});
    --m_active;
  }
}

DispatchStats run_alone(const std::vector<ManifestTask>& tasks, const std::vector<std::uint64_t>& todo,
                        Executor& executor, results::JobFileWriter& out) {
  const auto start = std::chrono::steady_clock::now();
  ResultSink sink(out);
  for (const std::uint64_t position : todo) sink.add(to_job_record(executor.run(tasks.at(position))));
  sink.finish();
  return DispatchStats{todo.size(), seconds_since(start), 0, 0, sink.commits()};
}

void serve(const std::vector<ManifestTask>& tasks, const std::vector<std::uint64_t>& todo, Executor& executor,
           const Placement& placement) {
  mpi::send(0, mpi::kHello, wire::encode(wire::Hello{placement.host, placement.device, placement.cores, placement.slurm_job}));
  mpi::AsyncSend results_out;
  for (;;) {
    const mpi::Message message = mpi::receive(0);
    if (message.tag == mpi::kStop) return results_out.wait();
    if (message.tag != mpi::kBatch) throw mpi::MpiError("rank 0 sent unexpected tag " + std::to_string(message.tag));
    const wire::Batch batch = wire::decode_batch(message.payload);
    if (batch.end > todo.size()) throw mpi::MpiError("batch beyond the end of the task list");
    const auto start = std::chrono::steady_clock::now();
    wire::Results results;
    results.records.reserve(batch.end - batch.begin);
    for (std::uint64_t i = batch.begin; i < batch.end; ++i)
      results.records.push_back(to_job_record(executor.run(tasks.at(todo[i]))));
    results.busy_seconds = seconds_since(start);
    results_out.start(0, mpi::kResults, wire::encode(results));
  }
}

}  // namespace flotilla::jobs::worker

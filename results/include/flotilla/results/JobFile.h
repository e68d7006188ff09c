// JobFile.h — the results file of one MPI worker job: one HDF5 file per job, written by its
// rank 0 only, read back (also while it is written) by whoever ingests it into a campaign.
//
// Invariants:
//  - One writer (rank 0; WriterLock across processes), SWMR mode, and every append() is flushed
//    before it returns: a reader or a reopen after SIGKILL sees every appended record whole.
//  - A record's text and metrics are written before its row, and the row refers to them by
//    offset, so text or metrics left behind by a killed writer are never attributed to a record.
//  - Records carry the task's opaque id and attempt; (id, attempt) is what a caller deduplicates
//    on (a Store ingests a record at most once per trial key).
//  - No HDF5 type appears here. Layout: docs/worker.md.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "flotilla/results/Store.h"

namespace flotilla::results {

inline constexpr int kJobSchemaVersion = 1;

struct JobInfo {
  std::string name;
  std::uint64_t tasks = 0;  // tasks in the job's manifest
  std::string host;         // rank 0's host
  double created = 0;       // seconds since the epoch
  std::string flotilla_version;
};

// One rank of the job, recorded when it joins: where its results ran.
struct RankRecord {
  std::int32_t rank = 0;
  std::string host;    // at most 63 bytes
  std::string device;  // at most 63 bytes
  std::string cores;   // the CPUs it may run on ("0-3"); at most 63 bytes
  std::string slurm_job;  // the Slurm job it ran in ("812", "813_4"); at most 31 bytes; empty: none
};

struct JobRecord {
  std::uint64_t id = 0;  // the task's id: opaque here
  std::int32_t attempt = 0;
  TrialStatus status = TrialStatus::failed;
  double start = 0;
  double end = 0;
  std::int32_t exit_code = 0;
  double objective = 0;  // NaN when none
  std::string reason;    // any length (kept whole)
  std::string output_tail;
  std::vector<Metric> metrics;  // names at most 63 bytes
  std::int32_t rank = 0;
  std::string host;  // filled from the rank's RankRecord when read back
  std::string device;
  std::string cores;
  std::string slurm_job;
};

class JobFileWriter {
 public:
  // New file; StoreError "<path>: already exists" if there is one.
  static JobFileWriter create(const std::filesystem::path& path, const JobInfo& info);
  // Existing job file (a rerun of the same manifest), repaired if its writer was killed.
  static JobFileWriter open_for_append(const std::filesystem::path& path);

  JobFileWriter(JobFileWriter&&) noexcept;
  JobFileWriter& operator=(JobFileWriter&&) noexcept;
  ~JobFileWriter();

  const JobInfo& info() const;
  // (id, attempt) of every record in the file, for a rerun to skip.
  std::vector<std::pair<std::uint64_t, std::int32_t>> recorded() const;
  void add_rank(const RankRecord& rank);
  // Appends the records (host and device are not stored per record: see add_rank) and flushes.
  void append(std::span<const JobRecord> records);

 private:
  struct Impl;
  explicit JobFileWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> m_impl;
};

// Reads a job file, also while its writer appends to it (SWMR) or after the writer died.
class JobFileReader {
 public:
  // StoreError "<path>: no such file", "...: not a flotilla job file", or HDF5's reason.
  static JobFileReader open(const std::filesystem::path& path);

  JobFileReader(JobFileReader&&) noexcept;
  JobFileReader& operator=(JobFileReader&&) noexcept;
  ~JobFileReader();

  const JobInfo& info() const;
  std::vector<RankRecord> ranks() const;
  // Records appended since the previous call (all of them on the first call), in append order.
  std::vector<JobRecord> read_new();

 private:
  struct Impl;
  explicit JobFileReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> m_impl;
};

struct JobFileContents {
  JobInfo info;
  std::vector<RankRecord> ranks;
  std::vector<JobRecord> records;
};
JobFileContents read_job_file(const std::filesystem::path& path);

}  // namespace flotilla::results

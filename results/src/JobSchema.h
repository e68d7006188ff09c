// JobSchema.h — the on-disk layout of a worker job file (docs/worker.md): C row structs and
// the HDF5 compound types that describe them, the tables and header of an open file, and the
// field helpers the writer (JobFile.cpp) and the reader (JobFileReader.cpp) share.
//
// Invariants:
//  - Rows are small and fixed: a record's reason and output tail live in /text (one byte
//    dataset) and its metrics in /metrics, referred to by offset and count, because a job file
//    takes hundreds of thousands of records a second and most of them carry no text at all.
//  - Referenced text and metrics are written before the row that refers to them.
//  - Changing a field here means bumping kJobSchemaVersion.
#pragma once

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>

#include "Hdf5.h"
#include "Schema.h"
#include "flotilla/results/JobFile.h"

namespace flotilla::results::job_schema {

inline constexpr const char* kGroup = "job";
inline constexpr const char* kRanks = "ranks";
inline constexpr const char* kResults = "results";
inline constexpr const char* kMetrics = "metrics";
inline constexpr const char* kText = "text";
inline constexpr const char* kSchemaAttribute = "flotilla_job_schema";

struct ResultRow {
  std::uint64_t id;
  std::int32_t attempt;
  std::int8_t status;
  double start;
  double end;
  std::int32_t exit_code;
  double objective;
  std::int32_t rank;
  std::uint64_t text_begin;  // byte offset in /text: the reason, then the output tail
  std::uint32_t reason_size;
  std::uint32_t tail_size;
  std::uint64_t metrics_begin;  // row offset in /metrics
  std::uint32_t metrics_count;
};

struct KeyRow {
  std::uint64_t id;
  std::int32_t attempt;
};

struct MetricRow {
  char name[64];
  double value;
};

struct RankRow {
  std::int32_t rank;
  char host[64];
  char device[64];
  char cores[64];  // added without a version change: an older file reads it as ""
  char slurm_job[32];  // the same
};

struct Types {
  h5::Handle result;
  h5::Handle key;
  h5::Handle metric;
  h5::Handle rank;
};

Types make_types();

// The four datasets of an open job file.
struct Tables {
  Types types;
  h5::Handle ranks, results, metrics, text;

  void create(hid_t file);  // before SWMR mode starts: no objects can be created after
  void open(hid_t file);
};

// Root attribute flotilla_job_schema and group /job; read_header refuses a file that is not a
// job file ("<path>: not a flotilla job file ...") or of another schema version.
void write_header(hid_t file, const JobInfo& info);
JobInfo read_header(hid_t file, const std::filesystem::path& path);

using h5::with_path;  // HDF5 failures with the file's path first (Hdf5.h)

// Fixed-length string fields: cut at a UTF-8 boundary, NUL-terminated.
template <std::size_t N>
void copy_head(char (&field)[N], std::string_view text) {
  const std::string_view kept = schema::utf8_head(text, N - 1);
  std::memcpy(field, kept.data(), kept.size());
  field[kept.size()] = '\0';
}

template <std::size_t N>
std::string from_field(const char (&field)[N]) {
  return std::string(field, strnlen(field, N));
}

}  // namespace flotilla::results::job_schema

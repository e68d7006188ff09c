// Schema.h — the on-disk layout of a campaign file (docs/results-schema.md), as C row structs
// and the HDF5 compound types that describe them.
//
// Invariants:
//  - Every string field is fixed-length and NUL-terminated: variable-length data lives in the
//    global heap, which SWMR readers cannot follow safely. Over-long text is cut at a UTF-8
//    character boundary (output_tail keeps its end, everything else its start).
//  - The memory types describe these structs (native layout); the file types are the same
//    compounds packed, so the file does not depend on this compiler's padding.
//  - Changing a field here means bumping kSchemaVersion.
#pragma once

#include "Hdf5.h"

#include <flotilla/results/Store.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace flotilla::results::schema {

inline constexpr const char* kCandidates = "candidates";
inline constexpr const char* kTrials = "trials";
inline constexpr const char* kMetrics = "metrics";
inline constexpr const char* kEvents = "events";
inline constexpr hsize_t kChunkRows = 64;

struct CandidateRow {
  std::int64_t id;
  std::int32_t round;
  char config[1024];
  char origin[32];
};

struct TrialRow {
  std::int64_t candidate;
  std::int8_t kind;
  std::int32_t index;
  std::int32_t attempt;
  std::int8_t status;
  double start;
  double end;
  std::int32_t exit_code;
  double objective;
  char reason[256];
  char output_tail[1024];
  // Added after the first release; a file written before reads them as 0 and "" (HDF5 leaves
  // memory fields the file lacks untouched), and appending to one drops them.
  std::int32_t rank;
  char host[64];
  char device[64];
};

// The fields of TrialRow that make up a trial's key; read on open to rebuild the key set.
struct TrialKeyRow {
  std::int64_t candidate;
  std::int8_t kind;
  std::int32_t index;
  std::int32_t attempt;
};

struct MetricRow {
  std::int64_t trial;   // row index in /trials
  char name[64];
  double value;
};

struct MetricTrialRow {
  std::int64_t trial;
};

struct EventRow {
  double time;
  char kind[32];
  char detail[1024];
};

// The in-memory compound types, built once per open file.
struct MemoryTypes {
  h5::Handle candidate;
  h5::Handle trial;
  h5::Handle trial_key;
  h5::Handle metric;
  h5::Handle metric_trial;
  h5::Handle event;
};

MemoryTypes make_memory_types();
// The trial status enum (ok, failed, timeout, cancelled), shared with the job file's rows.
h5::Handle trial_status_type();
// The packed on-disk version of a memory compound type.
h5::Handle make_file_type(hid_t memory_type);

// Longest prefix / suffix of `text` of at most `max_bytes` that does not split a UTF-8 character.
std::string_view utf8_head(std::string_view text, std::size_t max_bytes);
std::string_view utf8_tail(std::string_view text, std::size_t max_bytes);

CandidateRow to_row(const CandidateRecord& record);
CandidateRecord from_row(const CandidateRow& row);
TrialRow to_row(const TrialRecord& record);
TrialRecord from_row(const TrialRow& row);   // metrics left empty
MetricRow to_row(const Metric& metric, std::int64_t trial);
EventRow to_row(const EventRecord& record);
EventRecord from_row(const EventRow& row);

}  // namespace flotilla::results::schema

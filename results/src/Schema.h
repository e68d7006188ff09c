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
inline constexpr const char* kEstimates = "estimates";          // schema 2
inline constexpr const char* kConfirmations = "confirmations";  // schema 2
inline constexpr const char* kCandidateText = "candidate_text"; // schema 2: uint8, long configurations
// Added within schema 2: created with new files, and when an older file is reopened for appending.
inline constexpr const char* kProposals = "proposals";
inline constexpr const char* kProposalText = "proposal_text";    // uint8: patches and rationales
inline constexpr hsize_t kTextChunkBytes = 4096;
inline constexpr hsize_t kChunkRows = 64;

struct CandidateRow {
  std::int64_t id;
  std::int32_t round;
  char config[1024];         // the configuration; cut at 1023 bytes when it is longer, and then
  char origin[32];
  std::int64_t text_start;   //   the whole text is bytes [text_start, text_start + text_bytes) of
  std::int64_t text_bytes;   //   /candidate_text (schema 2); text_bytes 0: `config` is whole
};

struct ProposalRow {
  std::int32_t round;
  std::int32_t proposer;
  std::int64_t parent;
  std::uint64_t hash;
  std::int8_t status;
  char name[64];
  char reason[1024];
  std::int64_t patch_start;      // bytes [patch_start, patch_start + patch_bytes) of /proposal_text
  std::int64_t patch_bytes;
  std::int64_t rationale_start;  // likewise
  std::int64_t rationale_bytes;
  double time;
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
  char cores[64];            // schema 2
  char slurm_job[32];        // schema 2, added later the same way: an older file reads it as ""
};

struct EstimateRow {
  std::int64_t candidate;
  std::int32_t repeats;
  double estimate;
  double low;
  double high;
  double coverage;
  double time;
};

struct ConfirmationRow {
  std::int64_t candidate;
  std::int64_t reference;
  std::int8_t verdict;       // enum: pending, faster, no_difference, slower, failed
  std::int32_t pairs;
  std::int32_t looks;
  double ratio;
  double low;
  double high;
  double confidence;
  double min_effect;
  double time;
  char reason[256];
};


// The fields of TrialRow that make up a trial's key; read on open to rebuild the key set (with
// the times, which tell a written row from one a failed append left behind).
struct TrialKeyRow {
  std::int64_t candidate;
  std::int8_t kind;
  std::int32_t index;
  std::int32_t attempt;
  double start;
  double end;
};

// The fields of TrialRow that a campaign's summary reads of every trial (Store::trials with
// TrialFields::outcomes): all but the texts, which are most of a row's 1.6 KB.
struct TrialOutcomeRow {
  std::int64_t candidate;
  std::int8_t kind;
  std::int32_t index;
  std::int32_t attempt;
  std::int8_t status;
  double start;
  double end;
  std::int32_t exit_code;
  double objective;
  std::int32_t rank;
};

// The texts of TrialRow a summary reads only of the trials that need them.
struct TrialTextRow {
  char reason[256];
  char output_tail[1024];
};

struct MetricNameRow {
  std::int64_t trial;
  char name[64];
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

// Rows a failed append left behind. HDF5 extends a table before it writes the new rows, so a
// write that fails half-way (a full disk, EIO) can leave rows of fill values (zeros) at the end
// of a table. No written row looks like that: a candidate's id is its row, a trial and an event
// have times, a metric has a name. Readers stop at the first such row; opening for appending
// cuts the table there (Store.cpp).
inline bool written(const CandidateRow& row, std::size_t index) { return row.id == static_cast<std::int64_t>(index); }
inline bool written(const TrialKeyRow& row) { return row.start != 0 || row.end != 0; }
inline bool written(const TrialRow& row) { return row.start != 0 || row.end != 0; }
inline bool written(const TrialOutcomeRow& row) { return row.start != 0 || row.end != 0; }
inline bool written(const MetricNameRow& row) { return row.name[0] != '\0'; }
inline bool written(const MetricRow& row) { return row.name[0] != '\0'; }
inline bool written(const EventRow& row) { return row.time != 0 || row.kind[0] != '\0'; }
inline bool written(const EstimateRow& row) { return row.time != 0; }
inline bool written(const ConfirmationRow& row) { return row.time != 0; }
inline bool written(const ProposalRow& row) { return row.time != 0; }

// The in-memory compound types, built once per open file.
struct MemoryTypes {
  h5::Handle candidate;
  h5::Handle trial;
  h5::Handle trial_key;
  h5::Handle metric;
  h5::Handle metric_trial;
  h5::Handle event;
  h5::Handle estimate;
  h5::Handle confirmation;
  h5::Handle metric_name;
  h5::Handle proposal;
  h5::Handle trial_outcome;
  h5::Handle trial_text;
};

MemoryTypes make_memory_types();
// The trial status enum (ok, failed, timeout, cancelled), shared with the job file's rows.
h5::Handle trial_status_type();
// The packed on-disk version of a memory compound type.
h5::Handle make_file_type(hid_t memory_type);

// Longest prefix / suffix of `text` of at most `max_bytes` that does not split a UTF-8 character.
std::string_view utf8_head(std::string_view text, std::size_t max_bytes);
std::string_view utf8_tail(std::string_view text, std::size_t max_bytes);

// A configuration longer than the row's field also goes, whole, to /candidate_text: the caller
// sets text_start and text_bytes (to_row leaves them 0).
CandidateRow to_row(const CandidateRecord& record);
CandidateRecord from_row(const CandidateRow& row);  // `config` as the row holds it (maybe cut)
TrialRow to_row(const TrialRecord& record);
TrialRecord from_row(const TrialRow& row);   // metrics left empty
TrialRecord from_row(const TrialOutcomeRow& row);  // texts and metrics left empty
void add_texts(TrialRecord& record, const TrialTextRow& row);  // reason and output_tail
MetricRow to_row(const Metric& metric, std::int64_t trial);
EventRow to_row(const EventRecord& record);
EventRecord from_row(const EventRow& row);
EstimateRow to_row(const EstimateRecord& record);
EstimateRecord from_row(const EstimateRow& row);
ConfirmationRow to_row(const ConfirmationRecord& record);
ConfirmationRecord from_row(const ConfirmationRow& row);
ProposalRow to_row(const ProposalRecord& record);  // the text offsets are the store's
ProposalRecord from_row(const ProposalRow& row);

}  // namespace flotilla::results::schema

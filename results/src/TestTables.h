// TestTables.h — the /tests group of a campaign file: per-test outcomes (docs/results-schema.md).
//
// Layout: /tests/names (uint8: every suite's names, each ended by '\n'), /tests/suites (one row
// per distinct discovery), /tests/outcomes and /tests/durations (uint8, one byte per test per
// candidate, appended), /tests/messages (failure messages of tests that did not pass) and
// /tests/runs (one row per candidate: where its bytes are); per-test numbers of per_file suites
// in /tests/numbers, located by /tests/number_runs (one row per candidate that has numbers).
//
// Invariants:
//  - A run row is written after the bytes it points at, and suite rows after their names: the
//    row commits the record, so a writer killed half-way leaves only unreferenced bytes, which
//    readers never look at (every row stores explicit offsets).
//  - Every dataset is created with the file (or, for a file written before /tests existed,
//    when it is reopened for appending, before SWMR starts): SWMR forbids new objects later.
//  - At most one run per candidate; suites are deduplicated by their exact names.
// Private to results/.
#pragma once

#include <flotilla/results/TestOutcomes.h>

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "Hdf5.h"

namespace flotilla::results::tests {

// Bad input to add_suite / add_run, found before anything is written.
class InvalidTests : public StoreError {
 public:
  using StoreError::StoreError;
};

struct SuiteRow {
  std::int64_t id;
  std::int64_t tests;
  std::int64_t names_start;  // byte offset in /tests/names
  std::int64_t names_bytes;
  std::uint64_t digest;  // FNV-1a of the names' bytes, to find a recorded twin quickly
};

struct RunRow {
  std::int64_t candidate;
  std::int64_t suite;
  std::int64_t tests;
  std::int64_t outcomes_start;   // offset in /tests/outcomes
  std::int64_t durations_start;  // offset in /tests/durations; -1: no durations
  std::int64_t messages_start;   // row in /tests/messages
  std::int64_t messages;
};

class Tables {
 public:
  // True when `file` has a /tests group (files from before per-test outcomes do not).
  static bool present(hid_t file);
  static Tables create(hid_t file);
  // swmr_read: refresh every dataset before reading, to see what a live writer appended.
  static Tables open(hid_t file, bool swmr_read);
  // A writer on a file from before per-test numbers adds their empty tables (before SWMR).
  static void add_missing(hid_t file);

  // Writer side; `load` fills the caches from the file (after open).
  void load_writer_state();
  std::int64_t add_suite(const TestSuite& suite);
  bool add_run(const CandidateTests& tests);  // false: the candidate already has one

  // Reader side.
  std::vector<RunRow> runs() const;
  std::optional<RunRow> run_of(std::int64_t candidate) const;
  TestSuite suite(std::int64_t id) const;
  CandidateTests read_run(const RunRow& row) const;
  std::vector<std::uint8_t> read_outcomes(const RunRow& row) const;

 private:
  void refresh(const h5::Handle& dataset) const;
  std::vector<SuiteRow> suite_rows() const;

  bool m_swmr_read = false;
  h5::Handle m_names, m_suites, m_outcomes, m_durations, m_messages, m_runs;
  h5::Handle m_suite_type, m_run_type, m_message_type;
  h5::Handle m_numbers, m_number_runs;  // invalid in a file from before per-test numbers (read only)
  h5::Handle m_number_type, m_number_run_type;
  std::multimap<std::uint64_t, SuiteRow> m_suites_by_digest;  // writer cache
  std::map<std::int64_t, RunRow> m_run_by_candidate;          // writer cache
};

}  // namespace flotilla::results::tests

// TestReport.h — what `flotilla results tests` shows about one candidate's per-test outcomes:
// the counts, the difference against a reference candidate (regressions, fixes), flaky tests,
// the slowest tests and the failures grouped by message. Pure, like Analysis.h, so the CLI and
// any other reader agree.
#pragma once

#include <flotilla/results/TestOutcomes.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace flotilla::results {

struct TestReportLimits {
  std::size_t names = 20;     // regressions, fixes and flaky tests listed by name
  std::size_t slowest = 10;
  std::size_t groups = 10;    // failure groups
  std::size_t examples = 3;   // test names per failure group
  bool per_test = false;      // every test's outcome and numbers (`--per-file`)
};

// One test's row of `--per-file`: its outcome and numbers, and the reference's for the test of
// the same name (absent from the reference: no outcome, no numbers).
struct TestRow {
  std::string name;
  std::string outcome;
  std::vector<std::pair<std::string, double>> numbers;
  std::optional<std::string> reference_outcome;
  std::vector<std::pair<std::string, double>> reference_numbers;
};

struct FailureGroup {
  std::string message;               // "" for failures without a message
  std::int64_t count = 0;
  std::vector<std::string> examples;  // the first test names, in suite order
};

struct TimedTest {
  std::string name;
  double seconds = 0;   // quantised (7% steps)
};

struct TestReport {
  std::int64_t candidate = 0;
  TestSummary summary;
  std::optional<std::int64_t> reference;   // the candidate compared against, if any
  std::optional<TestSummary> reference_summary;
  std::optional<TestDiff> diff;
  std::vector<std::string> regressions, fixes, flaky;   // names, at most limits.names each
  std::vector<TimedTest> slowest;
  std::vector<FailureGroup> failures;                    // largest group first
  // Per-test numbers (per_file suites), summed over the tests that have them, in the order the
  // names first appear (e.g. errors, tests, skipped); empty when the suite reports none.
  std::vector<std::pair<std::string, double>> number_totals;
  std::vector<std::pair<std::string, double>> reference_number_totals;  // the same for the reference
  std::vector<TestRow> per_test;   // limits.per_test: every test, in suite order
};

// `reference` / `reference_suite` null: no comparison.
TestReport make_test_report(const TestSuite& suite, const CandidateTests& tests, const TestSuite* reference_suite,
                            const CandidateTests* reference, const TestReportLimits& limits = {});

std::string test_report_text(const TestReport& report);
std::string test_report_json(const TestReport& report);   // one JSON object, one line

}  // namespace flotilla::results

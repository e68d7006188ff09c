// TestOutcomes.h — per-test outcomes of one candidate's evaluate stage, and what they mean:
// the summary, the difference against another candidate, and the gate (docs/tests.md).
//
// Representation (chosen so millions of tests per candidate cost about a byte each):
//  - A TestSuite is the list of test names found by one discovery, stored once and shared by
//    every candidate whose discovery found the same names in the same order.
//  - A candidate's outcomes are one byte per test, indexed like its suite's names: the low
//    nibble is the first run's outcome, the high nibble the re-run's (0: not re-run). Both runs
//    are kept, so a flaky test (fail, then pass) stays visible.
//  - Durations are one byte per test on a logarithmic scale (7% steps, 1 ms to about 8 h);
//    failure messages are kept only for tests whose first run did not pass.
// Everything here is pure: no I/O, so the live campaign and `flotilla results tests` reach the
// same verdicts from the same bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace flotilla::results {

enum class TestOutcome : std::uint8_t { not_run = 0, pass = 1, fail = 2, skip = 3, error = 4, timeout = 5 };

std::string_view to_string(TestOutcome outcome);
// "pass", "fail", ... back to the enum; nullopt for anything else.
std::optional<TestOutcome> test_outcome_from_string(std::string_view text);

// One byte per test: first run in the low nibble, re-run in the high nibble.
constexpr std::uint8_t encode_outcome(TestOutcome first, TestOutcome rerun = TestOutcome::not_run) {
  return static_cast<std::uint8_t>(static_cast<unsigned>(first) | (static_cast<unsigned>(rerun) << 4));
}
constexpr TestOutcome first_outcome(std::uint8_t code) { return static_cast<TestOutcome>(code & 0x0f); }
constexpr TestOutcome rerun_outcome(std::uint8_t code) { return static_cast<TestOutcome>(code >> 4); }
// The outcome that counts: the re-run's when there was one. A test that failed and then passed
// counts as a pass and is reported as flaky.
constexpr TestOutcome effective_outcome(std::uint8_t code) {
  return rerun_outcome(code) == TestOutcome::not_run ? first_outcome(code) : rerun_outcome(code);
}
constexpr bool is_failure(TestOutcome outcome) {
  return outcome == TestOutcome::fail || outcome == TestOutcome::error || outcome == TestOutcome::timeout;
}
constexpr bool is_flaky(std::uint8_t code) {
  return is_failure(first_outcome(code)) && rerun_outcome(code) == TestOutcome::pass;
}

// Durations as one byte: 0 = not measured, q >= 1 stands for 1 ms * 1.07^(q-1).
std::uint8_t quantise_duration(double seconds);
double duration_seconds(std::uint8_t quantised);   // NaN for 0 (not measured)

struct TestMessage {
  std::int64_t test = 0;   // index into the suite's names
  std::string text;        // first line(s) of the failure, at most 255 bytes when stored
};

// A number a test reported about itself (per_file suites: a summary's named group, e.g. the
// checks a file ran); NaN when the group took no part.
struct TestNumber {
  std::int64_t test = 0;   // index into the suite's names
  std::string name;        // at most kNumberNameBytes - 1 bytes
  double value = 0;
};
inline constexpr std::size_t kNumberNameBytes = 40;

struct TestSuite {
  std::vector<std::string> names;   // unique, in discovery order
};

// One candidate's outcomes over one suite.
struct CandidateTests {
  std::int64_t candidate = 0;
  std::int64_t suite = 0;               // id of the recorded TestSuite
  std::vector<std::uint8_t> outcomes;   // one code per test of the suite
  std::vector<std::uint8_t> durations;  // empty, or one quantised duration per test
  std::vector<TestMessage> messages;    // sorted by test, only for tests that did not pass
  std::vector<TestNumber> numbers;      // sorted by test; empty for suites that report none
};

struct TestSummary {
  std::int64_t total = 0;
  std::int64_t pass = 0, fail = 0, skip = 0, error = 0, timeout = 0, not_run = 0;
  std::int64_t flaky = 0;    // failed first, passed on the re-run (counted in pass)
  std::int64_t rerun = 0;    // tests that were run twice
  // pass / (total - skip - not_run); 0 when nothing ran.
  double pass_rate() const;
};

TestSummary summarize(std::span<const std::uint8_t> outcomes);

// Test by test, never by counts. Regressions: passed in the reference, anything but a pass in
// the candidate (fail, error, timeout, not run, or skipped: a variant that stops running a test
// has not kept it passing). Dropped: passed in the reference and absent from the candidate's
// suite altogether; a regression too. Fixes: fail/error/timeout in the reference, pass in the
// candidate. Tests are matched by index when both sides share a suite, by name otherwise. So a
// variant that drops one passing test and fixes another has one regression, whatever the counts.
struct TestDiff {
  std::vector<std::int64_t> regressions;   // indices into the candidate's suite
  std::vector<std::int64_t> dropped;       // indices into the reference's suite
  std::vector<std::int64_t> fixes;
  std::int64_t only_in_reference = 0;
  std::int64_t only_in_candidate = 0;
  std::size_t regression_count() const { return regressions.size() + dropped.size(); }
};

// Same suite: a bytewise pass over the two arrays.
TestDiff diff_outcomes(std::span<const std::uint8_t> reference, std::span<const std::uint8_t> candidate);
// Different suites: tests are matched by name.
TestDiff diff_outcomes(const TestSuite& reference_suite, std::span<const std::uint8_t> reference,
                       const TestSuite& candidate_suite, std::span<const std::uint8_t> candidate);

// evaluate.no_drop: the tests whose number `name` fell below the reference's, matched by name.
// A number the reference recorded that the candidate lacks (or is NaN) counts as fallen: the
// candidate cannot show it ran as many checks. Tests the reference lacks are not compared.
struct NumberDrop {
  std::int64_t test = 0;  // index into the candidate's suite
  std::string name;
  double reference = 0, candidate = 0;
};
std::vector<NumberDrop> number_drops(const TestSuite& reference_suite, const CandidateTests& reference,
                                     const TestSuite& candidate_suite, const CandidateTests& candidate,
                                     const std::vector<std::string>& names);

// The tests that fail all_pass: fail, error, timeout or not run (indices, in order).
std::vector<std::int64_t> failing_tests(std::span<const std::uint8_t> outcomes);

// evaluate.gate's test rule: every test passes (skips allowed; a test given but not reported is
// not run, and fails), or compatibility climbing: no regression against the baseline, test by
// test (TestDiff).
enum class TestGate { all_pass, no_regression };

struct GateVerdict {
  bool passed = false;
  std::string reason;   // why it failed; empty when passed
};

// The first few tests a failed gate names, already as text ("suite.test (fail)"), so the reason
// says which tests, not only how many: the failing ones (all_pass), or the regressions then the
// dropped ones (no_regression).
struct GateNames {
  std::vector<std::string> tests;
  // Files suites: reported test names that name no file given (the first few, of `unmatched_total`).
  // A report that names files otherwise than they were given (basenames) leaves them not run;
  // a failed gate then says so instead of naming the files.
  std::vector<std::string> unmatched;
  std::size_t unmatched_total = 0;
};

GateVerdict decide_gate(TestGate gate, const TestSummary& candidate, const TestSummary* baseline,
                        const TestDiff* against_baseline, const GateNames& names = {});

// "a, b, c and 12 more": `names` (the first few of `total`), for a reason.
std::string name_list(const std::vector<std::string>& names, std::size_t total);
inline constexpr std::size_t kNamedTests = 5;  // how many tests a reason names

}  // namespace flotilla::results

// Reports.h — test listings and test reports of the suite kinds flotilla runs (docs/tests.md),
// parsed from their text. Pure: callers read the files; these functions never touch the disk.
//
// Every parser takes `source` (the file's path, used only in messages) and throws ReportError
// naming the file, the line and the field at fault, e.g.
//   "shard-3.xml:12: <testcase> has no 'name' attribute".
// Names are the ones flotilla matches across shards and candidates:
//   gtest   "Suite.Test" (parameterised: "Prefix/Suite.Test/0")
//   junit   "classname.name" ("name" alone when there is no classname, or it equals the name, as
//           ctest --output-junit writes it)
//   tap     the description after the number and an optional '-' ("test N" when there is none)
//   ctest   the test's name
#pragma once

#include <flotilla/results/TestOutcomes.h>

#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace flotilla::suites {

class ReportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A report, listing or selection that cannot be used, as a value: its message names the file
// (and line and field) as ReportError's does. What callers get from `parsed`, and what the
// evaluate stage passes on: a shard's reason, a failed verdict.
struct ReportProblem {
  std::string message;
};
template <class T>
using Parsed = std::variant<T, ReportProblem>;

// The parsers below throw ReportError from deep inside (hand-written parsers of untrusted text,
// where a throw keeps each rule one line); this is their one boundary: what `parse` returns, or
// the problem as a value.
template <class F>
auto parsed(F&& parse) -> Parsed<std::invoke_result_t<F>> {
  try {
    return std::forward<F>(parse)();
  } catch (const ReportError& e) {
    return ReportProblem{e.what()};
  }
}

template <class T>
const ReportProblem* problem(const Parsed<T>& value) {
  return std::get_if<ReportProblem>(&value);
}

struct TestResult {
  std::string name;
  results::TestOutcome outcome = results::TestOutcome::pass;
  double seconds = -1;  // < 0: not reported
  std::string message;  // the failure's first lines; empty for passes
  // per_file: the summary's named groups as numbers, in the pattern's order (NaN: the group
  // took no part in the match). Empty for the other report formats.
  std::vector<std::pair<std::string, double>> numbers;
};

// `BINARY --gtest_list_tests` output.
std::vector<std::string> parse_gtest_list(std::string_view text, std::string_view source);
// `ctest --show-only=json-v1` output: the test names in ctest's order (test number = index + 1).
std::vector<std::string> parse_ctest_list(std::string_view text, std::string_view source);

// GoogleTest's --gtest_output=json:FILE.
std::vector<TestResult> parse_gtest_json(std::string_view text, std::string_view source);
// JUnit XML, which is also what --gtest_output=xml:FILE and `ctest --output-junit` write.
std::vector<TestResult> parse_junit_xml(std::string_view text, std::string_view source);
// TAP 12/13 (plan, ok / not ok, # SKIP, # TODO, YAML blocks, Bail out!). Tests the plan
// announces but that never reported are returned as errors, so a crash mid-run is not a pass.
std::vector<TestResult> parse_tap(std::string_view text, std::string_view source);

// The first `max_lines` lines of a failure message, whitespace-trimmed: what is stored per test.
std::string short_message(std::string_view text, std::size_t max_lines = 3);

}  // namespace flotilla::suites

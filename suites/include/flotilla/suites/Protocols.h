// Protocols.h — the suite kinds (evaluate.suite) as one small description each, registered by
// name in one explicit list (docs/tests.md). A protocol says which placeholders a shard's
// command gets and must use, whether the shards get lists of files, and which report the shards
// write and how it is read; the config check (Validate.cpp) and the evaluate stage
// (SuiteStage.cpp) ask it instead of branching on the kind: a kind's own behaviour (how gtest
// and ctest select the tests of a shard or a re-run, per_file's checker) is data in its row.
// Pure.
#pragma once

#include <flotilla/suites/Reports.h>
#include <flotilla/suites/Runners.h>
#include <flotilla/suites/Sharding.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace flotilla::suites {

// A report file's format: its file name extension and its parser (Reports.h, PerFile.h).
struct ReportFormat {
  std::string_view extension;
  std::vector<TestResult> (*parse)(std::string_view text, std::string_view source) = nullptr;
  std::string_view empty;  // a report of no test, for a shard given none (more shards than tests)
};

// How a kind lists its tests before its shards run: the arguments added to the evaluate command,
// and the listing's parser (Reports.h, Runners.h).
struct Discovery {
  std::vector<std::string_view> arguments;  // {"--gtest_list_tests"}
  std::vector<std::string> (*parse)(std::string_view text, std::string_view source) = nullptr;
  bool paths = false;  // evaluate.paths follow the arguments (lit, pytest: where the runner looks for tests)
  // The argument that selects each listed test, in the listing's order (lit: its path);
  // nullptr: the name itself (pytest's node id).
  std::vector<std::string> (*selectors)(std::string_view text, std::string_view source) = nullptr;
  // The name a report gives a listed test, where it is not the name itself (pytest's JUnit:
  // pytest_junit_name); reported names are mapped back to the listed ones.
  std::string (*report_name)(std::string_view name) = nullptr;
};

// How a shard, and the one re-run of a candidate's failures, is given its tests (the kinds with a
// discovery: gtest, ctest, lit, pytest). The evaluate stage writes a selection file (`shard-N.EXT`,
// `rerun.EXT` beside the reports) and appends the protocol's words to the command.
struct Selection {
  // Who divides the discovered tests among the shards:
  //  runner: the runner itself, told the count and its index through `total_env` and `index_env`
  //    (gtest's GTEST_TOTAL_SHARDS, GTEST_SHARD_INDEX); flotilla computes the same division
  //    (`runner_assignment`) to know which tests each shard was given;
  //  flotilla: flotilla divides them (longest first by recorded durations, Sharding.h) and writes
  //    each shard's selection file.
  enum class Sharding { none, runner, flotilla };
  Sharding sharding = Sharding::none;
  std::string_view total_env, index_env;
  std::vector<std::int32_t> (*runner_assignment)(const std::vector<std::string>& names, int shards) = nullptr;
  // A selection file's text choosing `chosen` (indices into the discovery) given every test's
  // selector: ctest's -I file, a gtest flag file with its filter, one selector a line. The shard's
  // text is nullptr for a runner that divides the tests itself.
  using Text = std::string (*)(const std::vector<std::string>& selectors, const std::vector<std::int64_t>& chosen);
  Text shard_text = nullptr, rerun_text = nullptr;
  std::string_view shard_extension, rerun_extension;  // "ctest": shard-N.ctest, rerun.ctest
  // The words appended to a shard's command and to the re-run's: "{report}" in a word is the
  // report's path, "{selection}" the selection file's, and the word "{selectors}" becomes each
  // line of the selection file as an argument of its own (pytest's node ids).
  std::vector<std::string_view> shard_arguments, rerun_arguments;
};

// The words `arguments` stand for (Selection::shard_arguments): `selection_text` is the selection
// file's content, read by the caller where "{selectors}" needs it. Pure.
std::vector<std::string> selection_arguments(const std::vector<std::string_view>& arguments, std::string_view report,
                                             std::string_view selection_file, std::string_view selection_text);

// A placeholder the command must use, and the error's words when it does not.
struct RequiredPlaceholder {
  std::string_view name;
  std::string_view why;  // "must write its report to {report} (evaluate.suite)"
};

struct SuiteProtocol {
  SuiteKind kind = SuiteKind::exit;
  std::string_view name;
  std::vector<std::string_view> placeholders;  // beyond {candidate}, {shard} and {shards}
  std::vector<RequiredPlaceholder> required;   // checked in this order
  bool file_list = false;                      // the shards get lists of evaluate.files (files, per_file)
  bool self_sharded = false;                   // the command selects its tests by {shard} (junit, tap: evaluate.list)
  bool report_chosen = false;                  // the report's format is evaluate.report's (files: tap or junit)
  ReportFormat report;                         // otherwise, the format its shards write (exit: none)
  Discovery discovery;                         // gtest, ctest, lit, pytest (parse == nullptr: none; junit and tap use evaluate.list)
  Selection selection;                         // gtest, ctest, lit, pytest
  bool reruns = false;                         // its failures can be selected and run once more (gtest, ctest, lit, pytest)
  // Each file runs through flotilla-per-file, which writes the report, under evaluate.summary,
  // pass_when, no_drop and parallel (per_file).
  bool per_file_checker = false;
  bool files_report = false;                   // a format a files suite's command may write (evaluate.report: tap, junit)
  // Per-test outcomes are recorded (every kind but exit, whose shards pass or fail as a whole).
  bool has_tests() const { return report.parse != nullptr || report_chosen; }
};

// The registry, in the order the kinds are listed to users: exit, gtest, ctest, lit, pytest,
// files, per_file, junit, tap.
const std::vector<SuiteProtocol>& suite_protocols();
const SuiteProtocol& suite_protocol(SuiteKind kind);
const SuiteProtocol* find_suite_protocol(std::string_view name);
// "exit, gtest, ctest, lit, pytest, files, per_file, junit, tap", for messages.
std::string suite_protocol_names();
// The kinds a files suite may write (evaluate.report): "tap, junit".
std::string files_report_names();

}  // namespace flotilla::suites

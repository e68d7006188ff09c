// Protocols.h — the suite kinds (evaluate.suite) as one small description each, registered by
// name in one explicit list (docs/tests.md). A protocol says which placeholders a shard's
// command gets and must use, whether the shards get lists of files, and which report the shards
// write and how it is read; the config check (Validate.cpp) and the evaluate stage
// (SuiteStage.cpp) ask it instead of branching on the kind. What is one kind's own behaviour
// (how gtest and ctest select the tests of a shard or a re-run, the listing of junit and tap)
// stays in SuiteStage, behind the flags here. Pure.
#pragma once

#include <flotilla/suites/Reports.h>
#include <flotilla/suites/Runners.h>
#include <flotilla/suites/Sharding.h>

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

// How flotilla gives a shard the tests it chose for it from the discovery (lit, pytest): their
// selectors, and the option that names the report.
struct Selection {
  bool by_arguments = false;       // this kind's shards are chosen by flotilla and given as arguments
  std::string_view from_file;      // "@": the selectors go in a file, one a line, passed as @FILE
                                   // (lit's argparse reads it); "": each selector is an argument
  std::string_view report_option;  // "--output=": the report's path is appended to it
};

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
  Selection selection;                         // lit, pytest
  bool reruns = false;                         // its failures can be selected and run once more (gtest, ctest, lit, pytest)
};

// The registry, in the order the kinds are listed to users: exit, gtest, ctest, lit, pytest,
// files, per_file, junit, tap.
const std::vector<SuiteProtocol>& suite_protocols();
const SuiteProtocol& suite_protocol(SuiteKind kind);
const SuiteProtocol* find_suite_protocol(std::string_view name);
// "exit, gtest, ctest, lit, pytest, files, per_file, junit, tap", for messages.
std::string suite_protocol_names();

}  // namespace flotilla::suites

// Assemble.h — one candidate's per-test outcomes put together from its shards' reports and the
// re-run of its failures (docs/tests.md). Pure.
//
// Rules:
//  - With a discovery (gtest, ctest, or the listing of evaluate.list for junit and tap), the
//    suite is the discovered list, in its order. A test a shard was given but did not report is
//    a timeout when the shard timed out, not_run otherwise (its message says which shard and why
//    the shard ended); a listed test no shard reported is not_run too. not_run fails every gate.
//    A reported name that discovery did not list, or one reported twice, is an error in the
//    sharding and throws ReportError: outcomes are never silently dropped or double-counted.
//    A test index outside the discovery, or one given to two shards, throws too.
//  - Without a discovery (files, junit and tap with `list = none`), the suite is every reported
//    name, shard by shard in report order; a name reported twice throws. A shard that timed out,
//    or failed without reporting any failing test, adds a test "<shard N>" (timeout or error,
//    its reason as the message), so a suite whose shard died before reporting never passes.
//  - Files (ShardRun::files): every file a shard was given must be named by a test of its
//    report: the test's name is one of the file's names (its path, as given or relative), or
//    starts with one followed by ':', ' ', '#', '(' or '['. A file no test names becomes a test
//    of its own, named by its first name, not_run (timeout when the shard timed out): a checker
//    that silently skips a file never passes. Its message names the shard's reported names that
//    matched no file given to it, if any (names_matching_no_file).
//  - A re-run sets each re-run test's second outcome; the first is kept, so flaky tests show.
#pragma once

#include <flotilla/results/TestOutcomes.h>
#include <flotilla/suites/Reports.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace flotilla::suites {

struct ShardRun {
  int shard = 0;
  std::vector<std::int64_t> given;  // indices into the discovery the shard was to run
  std::vector<TestResult> results;  // what its report said
  bool timed_out = false;
  std::string ended;  // why the shard process failed (its task's reason); "" if it exited 0
  // Files suites: the files the shard was given, each with the names a test may call it by (the
  // first is how it is shown: the path relative to the working directory).
  std::vector<std::vector<std::string>> files;
};

struct Assembled {
  results::TestSuite suite;
  std::vector<std::uint8_t> outcomes;
  std::vector<std::uint8_t> durations;         // quantised; 0 where not reported
  std::vector<results::TestMessage> messages;  // sorted by test
  std::vector<results::TestNumber> numbers;    // sorted by test (per_file: the summary's groups)
};

// `discovered`: the discovery's names, or nullopt when the suite kind has no discovery.
Assembled assemble(const std::optional<std::vector<std::string>>& discovered, const std::vector<ShardRun>& shards);

// Files suites: the names of `tests` that name none of `files` (each file's names, as ShardRun's),
// by the rule above, in order. A report that names its files otherwise than they were given
// (basenames, another root) leaves them not run; these names say why.
std::vector<std::string> names_matching_no_file(const std::vector<std::string>& tests,
                                                const std::vector<std::vector<std::string>>& files);

// The tests to re-run: those whose outcome is fail, error, timeout or not run, in index order.
std::vector<std::int64_t> failures_to_rerun(const Assembled& assembled);

// Records the re-run: `rerun` holds the results of re-running `given` (indices into the suite).
// A re-run test missing from the report counts as an error (or timeout, when `timed_out`).
void apply_rerun(Assembled& assembled, const std::vector<std::int64_t>& given, const std::vector<TestResult>& rerun,
                 bool timed_out);

}  // namespace flotilla::suites

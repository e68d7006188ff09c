// Assemble.h — one candidate's per-test outcomes put together from its shards' reports and the
// re-run of its failures (docs/tests.md). Pure.
//
// Rules:
//  - With a discovery (gtest, ctest, files), the suite is the discovered list, in its order. A
//    test a shard was given but did not report is a timeout when the shard timed out, an error
//    otherwise (its message says why the shard ended); a test no shard was given is not_run.
//    A reported name that discovery did not list, or one reported twice, is an error in the
//    sharding and throws ReportError: outcomes are never silently dropped or double-counted.
//    A test index outside the discovery, or one given to two shards, throws too.
//  - Without a discovery (junit, tap: the command shards itself), the suite is every reported
//    name, shard by shard in report order; a name reported twice throws. A shard that timed out,
//    or failed without reporting any failing test, adds a test "<shard N>" (timeout or error,
//    its reason as the message), so a suite whose shard died before reporting never passes.
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
};

struct Assembled {
  results::TestSuite suite;
  std::vector<std::uint8_t> outcomes;
  std::vector<std::uint8_t> durations;         // quantised; 0 where not reported
  std::vector<results::TestMessage> messages;  // sorted by test
};

// `discovered`: the discovery's names, or nullopt when the suite kind has no discovery.
Assembled assemble(const std::optional<std::vector<std::string>>& discovered, const std::vector<ShardRun>& shards);

// The tests to re-run: those whose outcome is fail, error or timeout, in index order.
std::vector<std::int64_t> failures_to_rerun(const Assembled& assembled);

// Records the re-run: `rerun` holds the results of re-running `given` (indices into the suite).
// A re-run test missing from the report counts as an error (or timeout, when `timed_out`).
void apply_rerun(Assembled& assembled, const std::vector<std::int64_t>& given, const std::vector<TestResult>& rerun,
                 bool timed_out);

}  // namespace flotilla::suites

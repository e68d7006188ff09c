// Sharding.h — which shard runs which test, and the suite kinds (docs/tests.md). Pure.
//
// Invariants of assign_shards:
//  - deterministic: the same durations and shard count always give the same assignment (no
//    randomness, ties broken by test index);
//  - complete: every test is in exactly one shard;
//  - balanced: with durations, longest first onto the least-loaded shard (LPT, within 4/3 of
//    the best possible makespan); without any, round-robin by index (gtest's own rule), so
//    shard sizes differ by at most one.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace flotilla::suites {

// exit: evaluate.command's exit code per shard (no per-test outcomes); gtest: a GoogleTest
// binary; ctest: a CTest build tree; files: one test per file of a glob, run in batches;
// junit / tap: any command that writes a JUnit XML or TAP report per shard; per_file: one
// checker process per file of a glob, run by flotilla-per-file (PerFile.h).
// lit / pytest: LLVM lit and pytest, listed by their own discovery and sharded by flotilla
// (Runners.h).
enum class SuiteKind { exit, gtest, ctest, files, junit, tap, per_file, lit, pytest };

std::string_view to_string(SuiteKind kind);
std::optional<SuiteKind> suite_kind_from_string(std::string_view text);

// Shard (0 .. shards-1) of each test. `seconds` holds one recorded duration per test, < 0 or
// NaN where unknown; unknown durations take the median of the known ones. An empty span or no
// known duration at all gives round-robin by index.
std::vector<std::int32_t> assign_shards(std::span<const double> seconds, std::size_t tests, int shards);

// The longest shard's total under `assignment` (unknown durations count as the median of the
// known ones, as in assign_shards); 0 when no duration is known.
double makespan(std::span<const std::int32_t> assignment, std::span<const double> seconds);

// evaluate.shards = auto: enough shards to keep `slots` tasks busy, but none shorter than
// `min_seconds` of recorded test time: min(slots, tests, floor(total / min_seconds)), at least 1.
// Without a recorded total (total_seconds <= 0 or NaN), one shard per slot (at most one per test).
int auto_shard_count(double total_seconds, std::size_t tests, unsigned slots, double min_seconds);

// GoogleTest's own assignment under GTEST_TOTAL_SHARDS / GTEST_SHARD_INDEX, for the names
// `--gtest_list_tests` printed ("Suite.Test"): round-robin over the runnable tests, where a
// disabled test (a suite or test name matching DISABLED_* or */DISABLED_*) does not advance the
// count and goes with the next runnable test's shard (gtest.cc, ShardTests).
std::vector<std::int32_t> assign_gtest_shards(const std::vector<std::string>& names, int shards);

// The tests of one shard, in index order.
std::vector<std::int64_t> tests_of_shard(std::span<const std::int32_t> assignment, int shard);

}  // namespace flotilla::suites

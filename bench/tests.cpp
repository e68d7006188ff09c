// tests — per-test outcomes at scale: 6,000,000 synthetic outcomes per candidate recorded in a
// campaign file (Store::add_test_results) and diffed between two candidates, next to SQLite
// storing and diffing the same outcomes in the same run (docs/tests.md).
//
// Baseline: SQLite 3 with one row (candidate, test, outcome, duration) per outcome in a WITHOUT
// ROWID table keyed by (candidate, test), inserted through one prepared statement inside one
// transaction with synchronous=OFF and journal_mode=OFF (its fastest safe-to-measure settings);
// the diff is one join. flotilla stores one byte per outcome plus a quantised duration byte,
// deflated; the diff reads both arrays back from the file and compares them bytewise.
// Usage: ./build/bench/tests_bench [TESTS] [DIR]   (default 6000000, the system temp dir)
// Ends with one JSON line. Runs: bench/suites/RESULTS.md ("6,000,000 outcomes per candidate").
// The correctness half, or it exits 1 naming what differs: the outcomes read back from the file
// are the ones recorded, and flotilla's diff and SQLite's join find the same regressions and the
// same fixes, test by test. The ctest bench_tests_agree runs it at 100,000 tests.
#include <flotilla/results/Store.h>
#include <flotilla/results/TestOutcomes.h>
// Private to results/: check_chunks, measured here against HDF5's own read.
#include "Hdf5.h"
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <hdf5.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>

using namespace flotilla::results;
namespace fs = std::filesystem;

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A realistic mix: 98% pass, 1% skip, the rest fail/error/timeout; the second candidate flips
// 0.1% of tests either way. Durations are log-normal around 20 ms.
CandidateTests synthetic(std::int64_t candidate, std::size_t tests, std::uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0, 1);
  std::lognormal_distribution<double> duration(std::log(0.02), 1.0);
  CandidateTests out;
  out.candidate = candidate;
  out.outcomes.resize(tests);
  out.durations.resize(tests);
  for (std::size_t i = 0; i < tests; ++i) {
    const double u = unit(rng);
    TestOutcome outcome = TestOutcome::pass;
    if (u > 0.99)
      outcome = TestOutcome::skip;
    else if (u > 0.985)
      outcome = u > 0.989 ? TestOutcome::timeout : u > 0.987 ? TestOutcome::error : TestOutcome::fail;
    out.outcomes[i] = encode_outcome(outcome);
    out.durations[i] = quantise_duration(duration(rng));
    if (is_failure(outcome)) out.messages.push_back({static_cast<std::int64_t>(i), "assertion failed: x == y"});
  }
  return out;
}

CandidateTests flipped(const CandidateTests& base, std::int64_t candidate, std::uint32_t seed) {
  CandidateTests out = base;
  out.candidate = candidate;
  out.messages.clear();
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::size_t> pick(0, base.outcomes.size() - 1);
  for (std::size_t n = 0; n < base.outcomes.size() / 1000; ++n) {
    std::uint8_t& code = out.outcomes[pick(rng)];
    code = effective_outcome(code) == TestOutcome::pass ? encode_outcome(TestOutcome::fail)
                                                        : encode_outcome(TestOutcome::pass);
  }
  for (std::size_t i = 0; i < out.outcomes.size(); ++i) {
    if (is_failure(effective_outcome(out.outcomes[i])))
      out.messages.push_back({static_cast<std::int64_t>(i), "assertion failed"});
  }
  return out;
}

void sql(sqlite3* db, const char* statement) {
  char* error = nullptr;
  if (sqlite3_exec(db, statement, nullptr, nullptr, &error) != SQLITE_OK) {
    const std::string message = error ? error : "unknown";
    sqlite3_free(error);
    throw std::runtime_error(fmt::format("sqlite: {}: {}", statement, message));
  }
}

struct SqliteFigures {
  double record_s = 0;  // per candidate, mean of the two
  double diff_s = 0;
  double bytes_per_outcome = 0;
  std::vector<std::int64_t> regressions, fixes;  // test indices, ascending
};

// Test indices a query of candidates ?1 and ?2 returns, in order.
std::vector<std::int64_t> tests_of(sqlite3* db, const std::string& query, std::int64_t a, std::int64_t b) {
  sqlite3_stmt* statement = nullptr;
  if (sqlite3_prepare_v2(db, query.c_str(), -1, &statement, nullptr) != SQLITE_OK)
    throw std::runtime_error(fmt::format("sqlite: {}: {}", query, sqlite3_errmsg(db)));
  sqlite3_bind_int64(statement, 1, a);
  sqlite3_bind_int64(statement, 2, b);
  std::vector<std::int64_t> tests;
  while (sqlite3_step(statement) == SQLITE_ROW) tests.push_back(sqlite3_column_int64(statement, 0));
  sqlite3_finalize(statement);
  return tests;
}

SqliteFigures run_sqlite(const fs::path& path, const CandidateTests& a, const CandidateTests& b) {
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) throw std::runtime_error("sqlite: cannot open " + path.string());
  sql(db, "PRAGMA synchronous=OFF; PRAGMA journal_mode=OFF;");
  sql(db,
      "CREATE TABLE outcomes(candidate INTEGER, test INTEGER, outcome INTEGER, duration INTEGER, "
      "PRIMARY KEY(candidate, test)) WITHOUT ROWID");
  SqliteFigures figures;
  std::uintmax_t size_before = fs::file_size(path);
  for (const CandidateTests* tests : {&a, &b}) {
    const auto start = std::chrono::steady_clock::now();
    sql(db, "BEGIN");
    sqlite3_stmt* insert = nullptr;
    sqlite3_prepare_v2(db, "INSERT INTO outcomes VALUES (?, ?, ?, ?)", -1, &insert, nullptr);
    for (std::size_t i = 0; i < tests->outcomes.size(); ++i) {
      sqlite3_bind_int64(insert, 1, tests->candidate);
      sqlite3_bind_int64(insert, 2, static_cast<sqlite3_int64>(i));
      sqlite3_bind_int(insert, 3, tests->outcomes[i]);
      sqlite3_bind_int(insert, 4, tests->durations[i]);
      if (sqlite3_step(insert) != SQLITE_DONE) throw std::runtime_error(sqlite3_errmsg(db));
      sqlite3_reset(insert);
    }
    sqlite3_finalize(insert);
    sql(db, "COMMIT");
    figures.record_s += seconds_since(start) / 2;
  }
  figures.bytes_per_outcome = static_cast<double>(fs::file_size(path) - size_before) /
                              static_cast<double>(a.outcomes.size() + b.outcomes.size());
  const auto start = std::chrono::steady_clock::now();
  // Regression: a pass in a, anything but a pass in b (TestOutcomes.h); no re-runs in this data.
  const int pass = encode_outcome(TestOutcome::pass);
  figures.regressions = tests_of(db, fmt::format("SELECT b.test FROM outcomes a JOIN outcomes b ON a.test = b.test "
                                                 "WHERE a.candidate = ?1 AND b.candidate = ?2 AND a.outcome = {0} "
                                                 "AND b.outcome <> {0}", pass),
                                 a.candidate, b.candidate);
  figures.diff_s = seconds_since(start);
  std::sort(figures.regressions.begin(), figures.regressions.end());
  // Fixes (not timed: the figure is the regression diff's): fail, error or timeout in a, a pass in b.
  figures.fixes = tests_of(db, fmt::format("SELECT b.test FROM outcomes a JOIN outcomes b ON a.test = b.test "
                                           "WHERE a.candidate = ?1 AND b.candidate = ?2 AND a.outcome IN ({}, {}, {}) "
                                           "AND b.outcome = {} ORDER BY b.test",
                                           encode_outcome(TestOutcome::fail), encode_outcome(TestOutcome::error),
                                           encode_outcome(TestOutcome::timeout), pass),
                           a.candidate, b.candidate);
  sqlite3_close(db);
  return figures;
}

// The cost of the chunk check every read makes (Hdf5.cpp, check_chunks) against HDF5's own read
// of the same rows, on each outcome and duration table of the file: seconds for all of them.
struct ReadCost {
  double read_s = 0, check_s = 0;
};

ReadCost read_cost(const fs::path& h5) {
  namespace h5w = flotilla::results::h5;
  ReadCost cost;
  const hid_t file = H5Fopen(h5.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) throw std::runtime_error("cannot open " + h5.string());
  for (const char* name : {"tests/outcomes", "tests/durations"}) {
    const hid_t dataset = H5Dopen2(file, name, H5P_DEFAULT);
    const hid_t space = H5Dget_space(dataset);
    hsize_t rows = 0;
    H5Sget_simple_extent_dims(space, &rows, nullptr);
    std::vector<std::uint8_t> bytes(rows);
    auto start = std::chrono::steady_clock::now();
    if (H5Dread(dataset, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data()) < 0)
      throw std::runtime_error(std::string("cannot read ") + name);
    cost.read_s += seconds_since(start);
    start = std::chrono::steady_clock::now();
    h5w::check_chunks(dataset, 0, rows);
    cost.check_s += seconds_since(start);
    H5Sclose(space);
    H5Dclose(dataset);
  }
  H5Fclose(file);
  return cost;
}

struct Spread {
  double median = 0, low = 0, high = 0;
};

Spread spread(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return {values[values.size() / 2], values.front(), values.back()};
}

}  // namespace

int main(int argc, char** argv) try {
  const std::size_t tests = argc > 1 ? std::stoull(argv[1]) : 6'000'000;
  const fs::path dir = fs::path(argc > 2 ? argv[2] : fs::temp_directory_path().string()) /
                       fmt::format("flotilla-tests-bench-{}", ::getpid());
  fs::create_directories(dir);

  TestSuite suite;
  suite.names.reserve(tests);
  for (std::size_t i = 0; i < tests; ++i) suite.names.push_back(fmt::format("Suite{}.Case{}", i / 1000, i));
  const CandidateTests a = synthetic(1, tests, 11);
  const CandidateTests b = flipped(a, 2, 12);

  CampaignInfo info;
  info.name = "tests-bench";
  info.objective = "gflops";
  info.direction = "maximize";
  const fs::path h5 = dir / "campaign.h5";
  double suite_s = 0, record_s = 0;
  std::uintmax_t suite_bytes = 0, outcome_bytes = 0;
  {
    Store store = Store::create(h5, info);
    const std::uintmax_t empty = fs::file_size(h5);
    auto start = std::chrono::steady_clock::now();
    const std::int64_t id = store.add_test_suite(suite);
    suite_s = seconds_since(start);
    suite_bytes = fs::file_size(h5) - empty;
    for (CandidateTests tests_of : {a, b}) {
      tests_of.suite = id;
      start = std::chrono::steady_clock::now();
      store.add_test_results(tests_of);
      record_s += seconds_since(start) / 2;
    }
    outcome_bytes = fs::file_size(h5) - empty - suite_bytes;
  }
  // The diff as a gate needs it: open the file, read both outcome arrays, compare.
  auto start = std::chrono::steady_clock::now();
  const Store reader = Store::open_read(h5);
  const auto ra = reader.test_outcomes(1);
  const auto rb = reader.test_outcomes(2);
  const TestDiff diff = diff_outcomes(*ra, *rb);
  const double diff_s = seconds_since(start);

  // The cost of checking every chunk on read, against HDF5's own read of the same rows, 7 times.
  std::vector<double> plain_runs, check_runs;
  for (int i = 0; i < 7; ++i) {
    const ReadCost cost = read_cost(h5);
    plain_runs.push_back(cost.read_s);
    check_runs.push_back(cost.check_s);
  }
  const Spread plain = spread(plain_runs), checked = spread(check_runs);

  if (!ra || !rb || *ra != a.outcomes || *rb != b.outcomes)
    throw std::runtime_error("the outcomes read back from the file are not the ones recorded");
  const SqliteFigures lite = run_sqlite(dir / "campaign.sqlite", a, b);
  for (const auto& [what, ours, theirs] : {std::tuple{"regressions", &diff.regressions, &lite.regressions},
                                           std::tuple{"fixes", &diff.fixes, &lite.fixes}}) {
    if (*ours != *theirs)
      throw std::runtime_error(fmt::format("{} differ: flotilla {} ({}), sqlite {} ({})", what, ours->size(),
                                           fmt::join(ours->begin(), ours->begin() + std::min<long>(5, ours->size()), " "),
                                           theirs->size(),
                                           fmt::join(theirs->begin(), theirs->begin() + std::min<long>(5, theirs->size()), " ")));
  }
  fs::remove_all(dir);

  const double bytes_per_outcome = static_cast<double>(outcome_bytes) / static_cast<double>(2 * tests);
  fmt::print("{} outcomes per candidate, 2 candidates\n", tests);
  fmt::print(
      "  flotilla  record {:.3f} s/candidate  {:.3f} bytes/outcome  diff {:.3f} s  (suite names once: {:.2f} s, {:.1f} "
      "MB)\n",
      record_s, bytes_per_outcome, diff_s, suite_s, suite_bytes / 1e6);
  fmt::print("  sqlite    record {:.3f} s/candidate  {:.3f} bytes/outcome  diff {:.3f} s\n", lite.record_s,
             lite.bytes_per_outcome, lite.diff_s);
  fmt::print("  regressions {} (both agree), fixes {}\n", diff.regressions.size(), diff.fixes.size());
  fmt::print("  reading all outcomes and durations, median of 7 [min, max]: H5Dread {:.3f} s [{:.3f}, {:.3f}], chunk check {:.3f} s [{:.3f}, {:.3f}]\n",
             plain.median, plain.low, plain.high, checked.median, checked.low, checked.high);
  const nlohmann::json result = {{"bench", "tests"},
                                 {"outcomes_per_candidate", tests},
                                 {"record_s", record_s},
                                 {"bytes_per_outcome", bytes_per_outcome},
                                 {"diff_s", diff_s},
                                 {"suite_record_s", suite_s},
                                 {"suite_bytes", suite_bytes},
                                 {"sqlite_record_s", lite.record_s},
                                 {"sqlite_bytes_per_outcome", lite.bytes_per_outcome},
                                 {"sqlite_diff_s", lite.diff_s},
                                 {"record_speedup_vs_sqlite", lite.record_s / record_s},
                                 {"diff_speedup_vs_sqlite", lite.diff_s / diff_s},
                                 {"regressions", diff.regressions.size()},
                                 {"hdf5_read_s", plain.median},
                                 {"hdf5_read_s_range", {plain.low, plain.high}},
                                 {"chunk_check_s", checked.median},
                                 {"chunk_check_s_range", {checked.low, checked.high}},
                                 {"fixes", diff.fixes.size()},
                                 {"targets_met", record_s <= 1.0 && bytes_per_outcome <= 2.0 && diff_s <= 0.5 &&
                                                     lite.record_s / record_s >= 10 && lite.diff_s / diff_s >= 10}};
  fmt::print("{}\n", result.dump());
  return 0;
} catch (const std::exception& error) {
  fmt::print(stderr, "tests_bench: {}\n", error.what());
  return 1;
}

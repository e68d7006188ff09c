// Suite listings and reports (gtest list and JSON, ctest JSON, JUnit XML, TAP) parsed from
// recorded text, their exact error messages, the sharding invariants, and the assembly of shard
// reports and re-runs into outcome bytes.
#include <flotilla/suites/Assemble.h>
#include <flotilla/suites/FilePatterns.h>
#include <flotilla/suites/Reports.h>
#include <flotilla/suites/Sharding.h>
#include <gtest/gtest.h>

#include "error_of.h"

#include <cmath>
#include <functional>
#include <numeric>
#include <random>
#include <set>

using namespace flotilla::suites;
using flotilla::results::TestOutcome;

TEST(Reports, GtestListing) {
  // As printed by `sample1_unittest --gtest_list_tests` and a parameterised/typed binary.
  const auto names = parse_gtest_list(
      "Running main() from ./googletest/src/gtest_main.cc\nFactorialTest.\n  Negative\n  Zero\nIsPrimeTest.\n  "
      "Positive\n"
      "OnTheFlyAndPreCalculated/PrimeTableTest.\n  ReturnsFalseForNonPrimes/0  # GetParam() = 0x5566\n"
      "TypedTest/0.  # TypeParam = int\n  Works\n",
      "list.txt");
  EXPECT_EQ(names, (std::vector<std::string>{"FactorialTest.Negative", "FactorialTest.Zero", "IsPrimeTest.Positive",
                                             "OnTheFlyAndPreCalculated/PrimeTableTest.ReturnsFalseForNonPrimes/0",
                                             "TypedTest/0.Works"}));
  EXPECT_EQ(error_of<ReportError>([] { parse_gtest_list("  Orphan\n", "list.txt"); }),
            "list.txt:1: test 'Orphan' comes before any test suite");
  EXPECT_EQ(error_of<ReportError>([] { parse_gtest_list("Suite.\n  A\nSegmentation fault\n", "list.txt"); }),
            "list.txt:3: test suite: 'Segmentation fault' does not end with '.'");
}

TEST(Reports, GtestJson) {
  const auto results = parse_gtest_json(R"({"tests": 3, "testsuites": [{"name": "FactorialTest", "testsuite": [
      {"name": "Negative", "status": "RUN", "result": "COMPLETED", "time": "0.001s", "classname": "FactorialTest"},
      {"name": "Zero", "status": "RUN", "result": "COMPLETED", "time": "0s", "classname": "FactorialTest",
       "failures": [{"failure": "sample1_unittest.cc:100\nExpected equality of these values:\n  1\n  Factorial(0)\n    Which is: 2\n", "type": ""}]},
      {"name": "DISABLED_Slow", "status": "NOTRUN", "result": "SUPPRESSED", "time": "0s"}]}]})",
                                        "shard-0.json");
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0].name, "FactorialTest.Negative");
  EXPECT_EQ(results[0].outcome, TestOutcome::pass);
  EXPECT_DOUBLE_EQ(results[0].seconds, 0.001);
  EXPECT_EQ(results[1].outcome, TestOutcome::fail);
  EXPECT_EQ(results[1].message, "sample1_unittest.cc:100 | Expected equality of these values: | 1");
  EXPECT_EQ(results[2].outcome, TestOutcome::skip);
  EXPECT_EQ(error_of<ReportError>([] { parse_gtest_json("{\n\"testsuites\": [\n{]", "r.json"); }).substr(0, 22),
            "r.json:3: not JSON: [j");
  EXPECT_EQ(error_of<ReportError>([] {
              parse_gtest_json(R"({"testsuites": [{"name": "S", "testsuite": [{"status": "RUN"}]}]})", "r.json");
            }),
            "r.json: testsuites[0].testsuite[0]: no 'name' field");
  EXPECT_EQ(error_of<ReportError>([] {
              parse_gtest_json(R"({"testsuites": [{"name": "S", "testsuite": [{"name": "a", "time": "soon"}]}]})",
                               "r.json");
            }),
            "r.json: testsuites[0].testsuite[0].time: not a duration");
}

TEST(Reports, JunitXml) {
  const auto results = parse_junit_xml(R"(<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="4" failures="1" name="AllTests">
  <testsuite name="IsPrimeTest" tests="4">
    <testcase name="Negative" status="run" result="completed" time="0.002" classname="IsPrimeTest" />
    <testcase name="Trivial" status="run" result="completed" time="0" classname="IsPrimeTest">
      <failure message="sample1_unittest.cc:124&#x0A;Value of: IsPrime(0)&#x0A;  Actual: true" type=""><![CDATA[details]]></failure>
    </testcase>
    <testcase name="Skipped" status="run" result="skipped" time="0" classname="IsPrimeTest"><skipped message="later"/></testcase>
    <testcase name="crash"><error message="">Segmentation fault
in frame 3</error></testcase>
  </testsuite>
</testsuites>)",
                                       "shard-1.xml");
  ASSERT_EQ(results.size(), 4u);
  EXPECT_EQ(results[0].name, "IsPrimeTest.Negative");
  EXPECT_EQ(results[0].outcome, TestOutcome::pass);
  EXPECT_DOUBLE_EQ(results[0].seconds, 0.002);
  EXPECT_EQ(results[1].outcome, TestOutcome::fail);
  EXPECT_EQ(results[1].message, "sample1_unittest.cc:124 | Value of: IsPrime(0) | Actual: true");
  EXPECT_EQ(results[2].outcome, TestOutcome::skip);
  EXPECT_EQ(results[3].name, "crash");
  EXPECT_EQ(results[3].outcome, TestOutcome::error);
  EXPECT_EQ(results[3].message, "Segmentation fault | in frame 3");
  EXPECT_EQ(error_of<ReportError>([] {
              parse_junit_xml("<testsuites>\n  <testsuite>\n    <testcase classname=\"A\"/>\n", "r.xml");
            }).substr(0, 16),
            "r.xml:4: not XML");
  EXPECT_EQ(error_of<ReportError>([] {
              parse_junit_xml("<testsuites>\n<testsuite>\n<testcase classname=\"A\"/>\n</testsuite></testsuites>",
                              "r.xml");
            }),
            "r.xml:3: <testcase> has no 'name' attribute");
  EXPECT_EQ(error_of<ReportError>([] { parse_junit_xml("<testsuites>\n<testcase name=\"a\" time=\"-1\"/></testsuites>", "r.xml"); }),
            "r.xml:2: <testcase> 'time' is not a duration: '-1'");
  EXPECT_EQ(error_of<ReportError>([] { parse_junit_xml("<html/>", "r.xml"); }),
            "r.xml:1: root element: expected <testsuites> or <testsuite>");
}

// ctest --output-junit writes classname = name: the name alone, as ctest's listing has it.
TEST(Reports, CtestJunitNamesAreTheTestNames) {
  const auto results = parse_junit_xml(
      "<testsuite name=\"(empty)\">\n"
      "<testcase name=\"known_failure\" classname=\"known_failure\" time=\"0.003\" status=\"fail\">"
      "<failure message=\"\"/></testcase>\n"
      "<testcase name=\"skipper\" classname=\"skipper\" time=\"0.006\" status=\"notrun\">"
      "<skipped message=\"SKIP_RETURN_CODE=77\"/></testcase>\n</testsuite>",
      "ctest.xml");
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].name, "known_failure");
  EXPECT_EQ(results[0].outcome, TestOutcome::fail);
  EXPECT_EQ(results[1].name, "skipper");
  EXPECT_EQ(results[1].outcome, TestOutcome::skip);
}

TEST(Reports, Tap) {
  const auto results = parse_tap(
      "TAP version 13\n1..6\nok 1 - add works\nnot ok 2 - sub works\n  ---\n  message: 'expected 2, got 3'\n"
      "  severity: fail\n  ...\nok 3 # SKIP no network\nnot ok 4 - known bug # TODO fix later\n"
      "# a comment\nokay, not a test line\nok - unnumbered\nBail out! database gone\n",
      "shard.tap");
  ASSERT_EQ(results.size(), 6u);
  EXPECT_EQ(results[0].name, "add works");
  EXPECT_EQ(results[0].outcome, TestOutcome::pass);
  EXPECT_EQ(results[1].outcome, TestOutcome::fail);
  EXPECT_EQ(results[1].message, "expected 2, got 3");
  EXPECT_EQ(results[2].name, "test 3");
  EXPECT_EQ(results[2].outcome, TestOutcome::skip);
  EXPECT_EQ(results[3].outcome, TestOutcome::skip);  // TODO: expected to fail
  EXPECT_EQ(results[4].name, "unnumbered");
  EXPECT_EQ(results[5].outcome, TestOutcome::error);  // planned, never reported
  EXPECT_EQ(results[5].message, "Bail out! database gone");
  EXPECT_EQ(error_of<ReportError>([] { parse_tap("ok 1 a\nok 3 b\n", "t.tap"); }),
            "t.tap:2: test number 3 out of sequence (expected 2)");
  EXPECT_EQ(error_of<ReportError>([] { parse_tap("ok 1 a\nok 2 a\n", "t.tap"); }),
            "t.tap:2: test name 'a' repeats (line 1); flotilla matches tests by name");
  EXPECT_EQ(error_of<ReportError>([] { parse_tap("1..1\nok 1\nok 2\n", "t.tap"); }), "t.tap: plan: 1..1 but 2 tests reported");
  EXPECT_EQ(error_of<ReportError>([] { parse_tap("1..x\n", "t.tap"); }), "t.tap:1: plan: '1..x' is not '1..N'");
}

TEST(Reports, CtestListing) {
  const auto names = parse_ctest_list(
      R"({"kind": "ctestInfo", "version": {"major": 1, "minor": 0}, "tests": [{"name": "unit_a", "command": ["a"]}, {"name": "unit_b"}]})",
      "ctest.json");
  EXPECT_EQ(names, (std::vector<std::string>{"unit_a", "unit_b"}));
  EXPECT_EQ(error_of<ReportError>([] { parse_ctest_list(R"({"tests": [{"command": []}]})", "ctest.json"); }),
            "ctest.json: tests[0]: no 'name' field");
}

// fuzz_reports (tests/fuzz/fuzz_reports/regressions/*_number_overflow.json): a number beyond a
// double is nlohmann's out_of_range, not a parse_error, and escaped both JSON parsers.
TEST(Reports, NumberBeyondADoubleIsNotJson) {
  EXPECT_EQ(error_of<ReportError>([] { parse_gtest_json(R"({"testsuites": [], "time": 1e999})", "r.json"); }),
            "r.json: not JSON: [json.exception.out_of_range.406] number overflow parsing '1e999'");
  EXPECT_EQ(error_of<ReportError>([] { parse_ctest_list(R"({"tests": [{"name": "a", "x": -1e400}]})", "ctest.json"); }),
            "ctest.json: not JSON: [json.exception.out_of_range.406] number overflow parsing '-1e400'");
}

TEST(FilePatterns, SplitMatchRootAndLists) {
  EXPECT_EQ(split_file_patterns("  a/*.test\tb/**/*.t  @l.txt "),
            (std::vector<std::string>{"a/*.test", "b/**/*.t", "@l.txt"}));
  EXPECT_TRUE(matches_path_pattern("corpus/**/*.test", "corpus/x.test"));       // ** as zero directories
  EXPECT_TRUE(matches_path_pattern("corpus/**/*.test", "corpus/a/b/c/x.test"));
  EXPECT_TRUE(matches_path_pattern("./corpus/**/*.test", "corpus/a/x.test"));
  EXPECT_FALSE(matches_path_pattern("corpus/**/*.test", "corpus/a/x.txt"));
  EXPECT_FALSE(matches_path_pattern("corpus/**/*.test", "other/a/x.test"));
  EXPECT_FALSE(matches_path_pattern("corpus/*.test", "corpus/a/x.test"));       // * stays in its segment
  EXPECT_FALSE(matches_path_pattern("corpus/**/*.test", "corpus/.hidden/x.test") &&
               matches_path_pattern("corpus/*/x.test", "corpus/.hidden/x.test"));  // dot files only by name
  EXPECT_TRUE(matches_path_pattern("**/x.test", "a/b/x.test"));
  EXPECT_TRUE(matches_path_pattern("a/**/b/**/c", "a/1/b/2/3/c"));
  EXPECT_FALSE(matches_path_pattern("a/**/b/**/c", "a/1/2/3/c"));
  EXPECT_EQ(literal_root("corpus/sub/**/*.test"), "corpus/sub");
  EXPECT_EQ(literal_root("**/*.test"), ".");
  EXPECT_EQ(literal_root("/data/c*/**/x"), "/data");
  EXPECT_EQ(parse_file_list("a.test\n\n# comment\n  b c.test \r\n"), (std::vector<std::string>{"a.test", "b c.test"}));
}

TEST(Sharding, KindsByName) {
  EXPECT_EQ(suite_kind_from_string("gtest"), SuiteKind::gtest);
  EXPECT_EQ(suite_kind_from_string("GTest"), std::nullopt);
  EXPECT_EQ(to_string(SuiteKind::tap), "tap");
}

TEST(Sharding, ByCountIsRoundRobinLikeGtest) {
  const auto shards = assign_shards({}, 7, 3);
  EXPECT_EQ(shards, (std::vector<std::int32_t>{0, 1, 2, 0, 1, 2, 0}));
  EXPECT_EQ(tests_of_shard(shards, 1), (std::vector<std::int64_t>{1, 4}));
  EXPECT_THROW(assign_shards({}, 3, 0), std::invalid_argument);
}

TEST(Sharding, GtestRuleSkipsDisabledTestsInTheCount) {
  const std::vector<std::string> names = {"A.a", "A.DISABLED_b", "A.c", "DISABLED_S.d", "P/DISABLED_T.e/0",
                                          "A.f", "A.g"};
  EXPECT_EQ(assign_gtest_shards(names, 2), (std::vector<std::int32_t>{0, 1, 1, 0, 0, 0, 1}));
}

TEST(Sharding, EveryTestOnceDeterministicAndBalancedByDuration) {
  std::mt19937 rng(5);
  std::lognormal_distribution<double> duration(0.0, 1.5);
  std::vector<double> seconds(5000);
  for (auto& s : seconds) s = duration(rng);
  std::vector<double> sorted = seconds;
  std::nth_element(sorted.begin(), sorted.begin() + 2500, sorted.end());
  const double median = sorted[2500];  // what the two unknown durations below stand for
  seconds[17] = -1;
  seconds[99] = std::nan("");
  for (int shards : {1, 2, 7, 64}) {
    const auto a = assign_shards(seconds, seconds.size(), shards);
    EXPECT_EQ(a, assign_shards(seconds, seconds.size(), shards));  // same input, same shards
    std::vector<double> load(static_cast<std::size_t>(shards));
    std::set<std::int64_t> seen;
    for (int s = 0; s < shards; ++s) {
      for (auto i : tests_of_shard(a, s)) {
        EXPECT_TRUE(seen.insert(i).second) << "test " << i << " in two shards";
        load[static_cast<std::size_t>(s)] += std::isfinite(seconds[i]) && seconds[i] >= 0 ? seconds[i] : median;
      }
    }
    EXPECT_EQ(seen.size(), seconds.size());
    // LPT: no shard exceeds the mean load by more than the longest test.
    const double total = std::accumulate(load.begin(), load.end(), 0.0);
    const double longest = *std::max_element(seconds.begin(), seconds.end());
    for (double l : load) EXPECT_LE(l, total / shards + longest) << shards;
  }
}

TEST(Sharding, DurationsBeatCountOnSkewedSuites) {
  // One slow test per 10: by count, the slow ones pile up on shard 0.
  std::vector<double> seconds(100, 0.01);
  for (std::size_t i = 0; i < seconds.size(); i += 10) seconds[i] = 5.0;
  const auto makespan = [&](const std::vector<std::int32_t>& a) {
    std::vector<double> load(10);
    for (std::size_t i = 0; i < a.size(); ++i) load[static_cast<std::size_t>(a[i])] += seconds[i];
    return *std::max_element(load.begin(), load.end());
  };
  EXPECT_NEAR(makespan(assign_shards({}, seconds.size(), 10)), 50.0, 1e-9);  // all ten slow tests on shard 0
  EXPECT_NEAR(makespan(assign_shards(seconds, seconds.size(), 10)), 5.09, 1e-9);
}

namespace {

TestResult result(const char* name, TestOutcome outcome, const char* message = "") {
  return {name, outcome, 0.5, message};
}

std::string assemble_error(const std::optional<std::vector<std::string>>& discovered,
                           const std::vector<ShardRun>& shards) {
  try {
    assemble(discovered, shards);
  } catch (const ReportError& error) {
    return error.what();
  }
  return "no error";
}

}  // namespace

TEST(Assemble, MissingTestsAreTimeoutsOrNotRun) {
  const std::vector<std::string> names = {"a", "b", "c", "d", "e"};
  std::vector<ShardRun> shards = {
      {0, {0, 2}, {result("a", TestOutcome::pass), result("c", TestOutcome::fail, "boom")}, false, "exit code 1"},
      {1, {1}, {}, true, "timed out after 2s"},
      {2, {3}, {}, false, "killed by signal 11 (SIGSEGV)"}};
  const Assembled a = assemble(names, shards);
  EXPECT_EQ(a.suite.names, names);
  using flotilla::results::encode_outcome;
  EXPECT_EQ(a.outcomes,
            (std::vector<std::uint8_t>{encode_outcome(TestOutcome::pass), encode_outcome(TestOutcome::timeout),
                                       encode_outcome(TestOutcome::fail), encode_outcome(TestOutcome::not_run),
                                       encode_outcome(TestOutcome::not_run)}));
  ASSERT_EQ(a.messages.size(), 4u);
  EXPECT_EQ(a.messages[0].text, "given to shard 1 but not reported: timed out after 2s");
  EXPECT_EQ(a.messages[1].text, "boom");
  EXPECT_EQ(a.messages[2].text, "given to shard 2 but not reported: killed by signal 11 (SIGSEGV)");
  EXPECT_EQ(a.messages[3].text, "listed, but reported by no shard");
  EXPECT_EQ(a.durations[0], flotilla::results::quantise_duration(0.5));
  EXPECT_EQ(a.durations[1], 0);
  EXPECT_EQ(failures_to_rerun(a), (std::vector<std::int64_t>{1, 2, 3, 4}));
}

TEST(Assemble, ReRunKeepsTheFirstOutcome) {
  Assembled a =
      assemble(std::vector<std::string>{"a", "b", "c"},
               {{0,
                 {0, 1, 2},
                 {result("a", TestOutcome::fail), result("b", TestOutcome::fail), result("c", TestOutcome::pass)},
                 false,
                 ""}});
  apply_rerun(a, {0, 1}, {result("a", TestOutcome::pass)}, false);
  EXPECT_TRUE(flotilla::results::is_flaky(a.outcomes[0]));
  EXPECT_EQ(flotilla::results::first_outcome(a.outcomes[1]), TestOutcome::fail);
  EXPECT_EQ(flotilla::results::rerun_outcome(a.outcomes[1]), TestOutcome::error);  // not in the re-run's report
  EXPECT_EQ(flotilla::results::rerun_outcome(a.outcomes[2]), TestOutcome::not_run);
}

TEST(Assemble, NeverDropsOrDoubleCounts) {
  const std::vector<std::string> names = {"a", "b"};
  EXPECT_EQ(assemble_error(names, {{3, {0}, {result("z", TestOutcome::pass)}, false, ""}}),
            "shard 3 reported test 'z', which discovery did not list");
  EXPECT_EQ(assemble_error(names, {{0, {0}, {result("a", TestOutcome::pass)}, false, ""},
                                   {1, {1}, {result("a", TestOutcome::pass)}, false, ""}}),
            "shard 1 reported test 'a' a second time");
  // Without a discovery the suite is what the shards reported, in order.
  const Assembled a = assemble(std::nullopt, {{0, {}, {result("x", TestOutcome::pass)}, false, ""},
                                              {1, {}, {result("y", TestOutcome::skip)}, false, ""}});
  EXPECT_EQ(a.suite.names, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(assemble_error(std::nullopt,
                           {{0, {}, {result("x", TestOutcome::pass), result("x", TestOutcome::fail)}, false, ""}}),
            "shard 0 reported test 'x' a second time");
  // Shard indices are checked, and no test goes to two shards.
  EXPECT_EQ(assemble_error(names, {{0, {2}, {}, false, ""}}),
            "shard 0 was given test index 2, outside the discovery's 2 tests");
  EXPECT_EQ(assemble_error(names, {{0, {0}, {}, false, ""}, {1, {0, 1}, {}, false, ""}}),
            "test 'a' was given to shard 0 and to shard 1");
}

// Files suites: a report that names the files by basename, where they were given with their
// folder, names none of them; each file stands not run, and its message says which reported names
// matched nothing. A name that starts with a file's name and ':' does name it.
TEST(Assemble, AFileNoTestNamesSaysWhichReportedNamesMatchedNoFile) {
  ShardRun shard{0,
                 {},
                 {result("a.test:one", TestOutcome::pass), result("b.test", TestOutcome::pass),
                  result("c/c.test:x", TestOutcome::fail, "bad")},
                 false,
                 "exit code 1"};
  shard.files = {{"c/a.test", "/w/c/a.test"}, {"c/b.test", "/w/c/b.test"}, {"c/c.test", "/w/c/c.test"}};
  const Assembled a = assemble(std::nullopt, {shard});
  EXPECT_EQ(a.suite.names, (std::vector<std::string>{"a.test:one", "b.test", "c/c.test:x", "c/a.test", "c/b.test"}));
  using flotilla::results::encode_outcome;
  EXPECT_EQ(a.outcomes[3], encode_outcome(TestOutcome::not_run));
  ASSERT_EQ(a.messages.size(), 3u);
  EXPECT_EQ(a.messages[1].text,
            "given to shard 0, but no test of its report names it: exit code 1; 2 names it reported matched no file "
            "given to it: a.test:one, b.test");
  EXPECT_EQ(names_matching_no_file({"a.test:one", "/w/c/b.test (2)", "c/c.test", "zzz"}, shard.files),
            (std::vector<std::string>{"a.test:one", "zzz"}));
  // A report that names every file has no such note.
  shard.results = {result("c/a.test", TestOutcome::pass), result("/w/c/b.test", TestOutcome::pass)};
  shard.ended = "";
  const Assembled named = assemble(std::nullopt, {shard});
  ASSERT_EQ(named.messages.size(), 1u);
  EXPECT_EQ(named.messages[0].text, "given to shard 0, but no test of its report names it");
}

// A TAP or JUnit command that dies before reporting its failures (TAP's plan may come last) must
// not leave a suite of passes: the dead shard stands as a failing test of its own.
TEST(Assemble, AShardThatDiedWithoutADiscoveryIsAnError) {
  const Assembled a = assemble(std::nullopt, {{0, {}, {result("x", TestOutcome::pass)}, false, "killed by signal 11 (SIGSEGV)"},
                                              {1, {}, {result("y", TestOutcome::pass)}, true, ""},
                                              {2, {}, {result("z", TestOutcome::pass)}, false, ""},
                                              {3, {}, {result("w", TestOutcome::fail, "bad")}, false, "exit code 1"}});
  // Shard 3 exited 1 and said why (a failing test): that is a complete report.
  EXPECT_EQ(a.suite.names, (std::vector<std::string>{"x", "y", "z", "w", "<shard 0>", "<shard 1>"}));
  using flotilla::results::encode_outcome;
  EXPECT_EQ(a.outcomes[4], encode_outcome(TestOutcome::error));
  EXPECT_EQ(a.outcomes[5], encode_outcome(TestOutcome::timeout));
  ASSERT_EQ(a.messages.size(), 3u);
  EXPECT_EQ(a.messages[1].text, "killed by signal 11 (SIGSEGV)");
  const auto summary = flotilla::results::summarize(a.outcomes);
  EXPECT_FALSE(flotilla::results::decide_gate(flotilla::results::TestGate::all_pass, summary, nullptr, nullptr).passed);
  EXPECT_EQ(assemble_error(std::nullopt, {{0, {1}, {}, false, ""}}),
            "shard 0 was given tests, but this suite kind has no discovery");
}

// Hostile reports: a plan far beyond what was reported is refused without standing in for
// (and allocating) every missing test.
TEST(Reports, AnAbsurdTapPlanIsAnErrorNotAnAllocation) {
  EXPECT_EQ(error_of<ReportError>([] { parse_tap("1..999999999999\nok 1 a\n", "t.tap"); }),
            "t.tap: plan: 1..999999999999 announces 999999999998 more tests than the 1 reported; a report missing "
            "more than 1000000 planned tests is not read");
  EXPECT_EQ(parse_tap("1..1000001\nok 1 a\n", "t.tap").size(), 1000001u);  // at the limit: read
  EXPECT_EQ(error_of<ReportError>([] { parse_tap("1..99999999999999999999\n", "t.tap"); }),
            "t.tap:1: plan: '1..99999999999999999999' is not '1..N'");
}

// The parsers' one boundary: what a parser returns, or its ReportError as a value naming the
// file and line; any other exception is not a report's problem and passes through.
TEST(Parsed, AParsersErrorBecomesAValueNamingTheFile) {
  const auto good = parsed([] { return parse_tap("1..1\nok 1 - a\n", "s.tap"); });
  ASSERT_EQ(problem(good), nullptr);
  EXPECT_EQ(std::get<0>(good).size(), 1u);
  const auto bad = parsed([] { return parse_junit_xml("<testsuite><testcase/></testsuite>", "shard-3.xml"); });
  ASSERT_NE(problem(bad), nullptr);
  EXPECT_NE(problem(bad)->message.find("shard-3.xml"), std::string::npos) << problem(bad)->message;
  EXPECT_THROW(parsed([]() -> int { throw std::logic_error("a bug"); }), std::logic_error);
}

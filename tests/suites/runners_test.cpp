// lit's and pytest's listings and reports (suites/Runners.h) on output captured from the real
// runners (LLVM lit 15.0.6 from Debian's llvm-15-tools, pytest 7.2.1 from python3-pytest): the
// names discovery gives are the names the reports give, and every result code maps as
// docs/tests.md says. Also the sharding helpers of evaluate.shards = auto.
#include <flotilla/suites/Runners.h>
#include <flotilla/suites/Sharding.h>
#include <gtest/gtest.h>

#include "error_of.h"

#include <functional>
#include <cmath>

using namespace flotilla::suites;
using flotilla::results::TestOutcome;

namespace {

// lit --show-suites --show-tests suite, for a suite named "cap.suite" with a folder "dir.v2".
const char* kLitListing = R"(-- Test Suites --
  cap.suite - 6 tests
    Source Root: /tmp/litcap/suite
    Exec Root  : /tmp/litcap/suite
    Available Features: 
    Available Substitutions: 
-- Available Tests --
  cap.suite :: dir.v2/nested.txt
  cap.suite :: dir.v2/unsupported.txt
  cap.suite :: fail.txt
  cap.suite :: pass.txt
  cap.suite :: unresolved.txt
  cap.suite :: xpass.txt
)";

// lit -o r.json suite (the same suite): its JSON report, outputs as lit wrote them.
const char* kLitJson = R"({
  "__version__": [15, 0, 6],
  "elapsed": 0.27654361724853516,
  "tests": [
    {"code": "PASS", "elapsed": 0.05567646026611328, "name": "cap.suite :: dir.v2/nested.txt",
     "output": "Script:\n--\n: 'RUN: at line 1';   true\n--\nExit Code: 0\n\n"},
    {"code": "UNSUPPORTED", "elapsed": 0.002039194107055664, "name": "cap.suite :: dir.v2/unsupported.txt",
     "output": "Test requires the following unavailable features: nothing-such"},
    {"code": "FAIL", "elapsed": 0.03234720230102539, "name": "cap.suite :: fail.txt",
     "output": "Script:\n--\n: 'RUN: at line 1';   false\n--\nExit Code: 1\n\n"},
    {"code": "PASS", "elapsed": 0.036061763763427734, "name": "cap.suite :: pass.txt",
     "output": "Script:\n--\n: 'RUN: at line 1';   true\n--\nExit Code: 0\n\n"},
    {"code": "UNRESOLVED", "elapsed": 0.0011248588562011719, "name": "cap.suite :: unresolved.txt",
     "output": "Test has no 'RUN:' line"},
    {"code": "XPASS", "elapsed": 0.030073881149291992, "name": "cap.suite :: xpass.txt",
     "output": "Script:\n--\n: 'RUN: at line 2';   true\n--\nExit Code: 0\n\n"}
  ]
})";

// configs/lit with --param variant=b: basic/sum.txt's FileCheck failure (lit -o), shortened to
// the fields flotilla reads, with its output as lit wrote it.
const char* kLitFileCheckFailure = R"({"tests": [
  {"code": "XFAIL", "elapsed": 0.0678, "name": "flotilla-lit :: xfail.txt",
   "output": "Script:\n--\n: 'RUN: at line 3';   sh emit.sh b bye | FileCheck-15 xfail.txt\n--\nExit Code: 2\n\nCommand Output (stderr):\n--\nemit.sh: unknown 'bye'\nFileCheck error: '<stdin>' is empty.\n"},
  {"code": "FAIL", "elapsed": 0.0621, "name": "flotilla-lit :: basic/sum.txt",
   "output": "Script:\n--\n: 'RUN: at line 1';   sh emit.sh b sum | FileCheck-15 basic/sum.txt\n--\nExit Code: 1\n\nCommand Output (stderr):\n--\n/work/wt-suites-lit/configs/lit/basic/sum.txt:2:8: error: CHECK: expected string not found in input\nCHECK: sum 2 + 2 = 4\n       ^\n<stdin>:1:1: note: scanning from here\nsum 2 + 2 = 5\n"}
]})";

}  // namespace

TEST(LitListing, NamesAndPathsFromShowSuitesAndShowTests) {
  const std::vector<std::string> names{"cap.suite :: dir.v2/nested.txt", "cap.suite :: dir.v2/unsupported.txt",
                                       "cap.suite :: fail.txt",          "cap.suite :: pass.txt",
                                       "cap.suite :: unresolved.txt",    "cap.suite :: xpass.txt"};
  EXPECT_EQ(parse_lit_list(kLitListing, "discovery.txt"), names);
  const auto paths = lit_test_paths(kLitListing, "discovery.txt");
  ASSERT_EQ(paths.size(), 6u);
  EXPECT_EQ(paths[0], "/tmp/litcap/suite/dir.v2/nested.txt");
  EXPECT_EQ(paths[5], "/tmp/litcap/suite/xpass.txt");
  EXPECT_TRUE(parse_lit_list("-- Available Tests --\n", "d.txt").empty());
}

TEST(LitListing, ErrorsNameTheLine) {
  EXPECT_EQ(error_of<ReportError>([] { parse_lit_list("-- Available Tests --\n  x :: a.txt\n", "d.txt"); }),
            "d.txt:2: test suite 'x' has no 'Exec Root' above (run lit with --show-suites --show-tests)");
  EXPECT_EQ(error_of<ReportError>([] {
              parse_lit_list("-- Test Suites --\n  x - 1 tests\n    Exec Root  : /a\n-- Available Tests --\nx.txt\n", "d.txt");
            }),
            "d.txt:5: expected a test as '  SUITE :: PATH', got 'x.txt'");
  EXPECT_EQ(error_of<ReportError>([] { parse_lit_list("lit: error: no such option\n", "d.txt"); }),
            "d.txt: no '-- Available Tests --' line: not lit --show-tests output");
  EXPECT_EQ(error_of<ReportError>([] {
              parse_lit_list("-- Test Suites --\n  x - 1 tests\n    Exec Root  : /a\n  x - 1 tests\n    Exec Root  : /b\n",
                             "d.txt");
            }),
            "d.txt:5: two test suites are named 'x' (/a and /b): their tests' names would be the same");
}

// lit's result codes: PASS, FLAKYPASS, XFAIL pass; FAIL and XPASS fail; UNRESOLVED is an
// error, TIMEOUT a timeout, UNSUPPORTED a skip. The names are the listing's.
TEST(LitReport, EveryCodeMapsAndNamesMatchTheListing) {
  const auto results = parse_lit_json(kLitJson, "r.json");
  ASSERT_EQ(results.size(), 6u);
  const auto names = parse_lit_list(kLitListing, "discovery.txt");
  for (std::size_t i = 0; i < results.size(); ++i) EXPECT_EQ(results[i].name, names[i]);
  EXPECT_EQ(results[0].outcome, TestOutcome::pass);
  EXPECT_NEAR(results[0].seconds, 0.0557, 1e-4);
  EXPECT_EQ(results[1].outcome, TestOutcome::skip);
  EXPECT_EQ(results[2].outcome, TestOutcome::fail);
  EXPECT_EQ(results[4].outcome, TestOutcome::error);
  EXPECT_EQ(results[4].message, "Test has no 'RUN:' line");
  EXPECT_EQ(results[5].outcome, TestOutcome::fail);  // XPASS: the XFAIL line is out of date
  const auto more = parse_lit_json(R"({"tests": [{"name": "s :: a", "code": "TIMEOUT", "output": "Reached timeout"},
                                                 {"name": "s :: b", "code": "FLAKYPASS", "output": ""}]})",
                                   "r.json");
  EXPECT_EQ(more[0].outcome, TestOutcome::timeout);
  EXPECT_EQ(more[1].outcome, TestOutcome::pass);
}

TEST(LitReport, TheMessageIsTheCommandsErrorOutput) {
  const auto results = parse_lit_json(kLitFileCheckFailure, "r.json");
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].outcome, TestOutcome::pass);  // XFAIL
  EXPECT_EQ(results[0].message, "");
  EXPECT_EQ(results[1].outcome, TestOutcome::fail);
  EXPECT_EQ(results[1].message,
            "/work/wt-suites-lit/configs/lit/basic/sum.txt:2:8: error: CHECK: expected string not found in input | "
            "CHECK: sum 2 + 2 = 4 | ^");  // short_message: the first three lines, joined
}

TEST(LitReport, ErrorsNameTheField) {
  EXPECT_EQ(error_of<ReportError>([] { parse_lit_json("<testsuites/>", "r.json"); }).substr(0, 16), "r.json: not JSON");
  EXPECT_EQ(error_of<ReportError>([] { parse_lit_json(R"({"elapsed": 1})", "r.json"); }),
            "r.json: no 'tests' array: not a lit JSON report (lit -o FILE)");
  EXPECT_EQ(error_of<ReportError>([] { parse_lit_json(R"({"tests": [{"code": "PASS"}]})", "r.json"); }),
            "r.json: tests[0]: no 'name' field");
  EXPECT_EQ(error_of<ReportError>([] { parse_lit_json(R"({"tests": [{"name": "s :: a", "code": "MAYBE"}]})", "r.json"); }),
            "r.json: tests[0].code: unknown result code 'MAYBE'");
}

// pytest-3 -p no:cacheprovider --collect-only -q configs/pytest, as pytest 7.2.1 printed it.
const char* kPytestListing = R"(configs/pytest/test_emit.py::test_greeting
configs/pytest/test_emit.py::test_add[2-2]
configs/pytest/test_emit.py::test_add[1-0]
configs/pytest/test_emit.py::test_gpu
configs/pytest/test_emit.py::test_farewell
configs/pytest/test_emit.py::TestOrder::test_list
configs/pytest/sub/test_nested.py::test_nested

7 tests collected in 0.09s
)";

// FLOTILLA_VARIANT=b pytest-3 -p no:cacheprovider -q --junitxml=R configs/pytest (failure
// bodies shortened to their first line).
const char* kPytestJunit =
    R"(<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="2" skipped="2" tests="7" time="0.343" timestamp="2026-12-02T23:04:22.597528" hostname="vm"><testcase classname="configs.pytest.test_emit" name="test_greeting" time="0.021" /><testcase classname="configs.pytest.test_emit" name="test_add[2-2]" time="0.001"><failure message="assert 5 == (2 + 2)&#10; +  where 5 = &lt;function add at 0x7fec01c5fec0&gt;(2, 2)&#10; +    where &lt;function add at 0x7fec01c5fec0&gt; = emit.add">a = 2, b = 2</failure></testcase><testcase classname="configs.pytest.test_emit" name="test_add[1-0]" time="0.001"><failure message="assert 2 == (1 + 0)&#10; +  where 2 = &lt;function add at 0x7fec01c5fec0&gt;(1, 0)&#10; +    where &lt;function add at 0x7fec01c5fec0&gt; = emit.add">a = 1, b = 0</failure></testcase><testcase classname="configs.pytest.test_emit" name="test_gpu" time="0.000"><skipped type="pytest.skip" message="no GPU variant yet">/work/wt-suites-lit/configs/pytest/test_emit.py:18: no GPU variant yet</skipped></testcase><testcase classname="configs.pytest.test_emit" name="test_farewell" time="0.001"><skipped type="pytest.xfail" message="emit.py has no farewell yet" /></testcase><testcase classname="configs.pytest.test_emit.TestOrder" name="test_list" time="0.000" /><testcase classname="configs.pytest.sub.test_nested" name="test_nested" time="0.000" /></testsuite></testsuites>)";

TEST(PytestListing, NodeIdsUpToTheSummary) {
  const auto ids = parse_pytest_list(kPytestListing, "discovery.txt");
  ASSERT_EQ(ids.size(), 7u);
  EXPECT_EQ(ids[1], "configs/pytest/test_emit.py::test_add[2-2]");
  EXPECT_EQ(ids[5], "configs/pytest/test_emit.py::TestOrder::test_list");
  EXPECT_EQ(error_of<ReportError>([] { parse_pytest_list("configs/pytest/test_emit.py: 6\n\n", "d.txt"); }),
            "d.txt:1: 'configs/pytest/test_emit.py: 6' is not a pytest node id (FILE::TEST); a -q in "
            "evaluate.command makes --collect-only list files instead of tests");
  EXPECT_TRUE(parse_pytest_list("\nno tests ran in 0.01s\n", "d.txt").empty());
}

// The JUnit names pytest derives map back to the node ids discovery gave, for every test: the
// folder, the class, the parameters; xfail is a pass, a skip a skip.
TEST(PytestReport, JunitNamesMapBackToNodeIds) {
  EXPECT_EQ(pytest_junit_name("configs/pytest/test_emit.py::TestOrder::test_list"),
            "configs.pytest.test_emit.TestOrder.test_list");
  EXPECT_EQ(pytest_junit_name("t/test_a.py::test_p[a/b::c]"), "t.test_a.test_p[a/b::c]");
  const auto ids = parse_pytest_list(kPytestListing, "discovery.txt");
  auto results = parse_junit_xml(kPytestJunit, "r.xml");
  ASSERT_EQ(results.size(), 7u);
  rename_reported(results, ids, &pytest_junit_name, "r.xml");
  for (std::size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(results[i].name, ids[i]);
  EXPECT_EQ(results[0].outcome, TestOutcome::pass);
  EXPECT_EQ(results[1].outcome, TestOutcome::fail);
  EXPECT_EQ(results[1].message.substr(0, 19), "assert 5 == (2 + 2)");
  EXPECT_EQ(results[3].outcome, TestOutcome::skip);
  EXPECT_EQ(results[4].outcome, TestOutcome::pass);  // xfail
  EXPECT_EQ(results[6].outcome, TestOutcome::pass);
}

TEST(PytestReport, ANameTwoNodeIdsDeriveIsRefused) {
  std::vector<TestResult> results{{"a.b.test_x", TestOutcome::pass}, {"unknown.test", TestOutcome::pass}};
  EXPECT_EQ(error_of<ReportError>([&] {
              rename_reported(results, {"a/b.py::test_x", "a.b.py::test_x"}, &pytest_junit_name, "r.xml");
            }),
            "r.xml: test 'a.b.test_x' stands for more than one discovered test (a/b.py::test_x, a.b.py::test_x): "
            "the report cannot tell them apart");
  results = {{"unknown.test", TestOutcome::pass}};
  rename_reported(results, {"a/b.py::test_x"}, &pytest_junit_name, "r.xml");
  EXPECT_EQ(results[0].name, "unknown.test");  // kept: assembly rejects a name discovery did not list
}

// LPT against known optima (Graham's bound: within 4/3 - 1/(3m) of the best makespan).
TEST(Sharding, LptMakespanAgainstKnownOptima) {
  // 3 shards, durations 3,3,2,2,2: each 3 needs a shard of its own, so the best is {3,2},{3,2},{2} = 5.
  const std::vector<double> a{3, 3, 2, 2, 2};
  EXPECT_DOUBLE_EQ(makespan(assign_shards(a, a.size(), 3), a), 5.0);
  // Graham's worst case for 2 shards: the optimum is 6 ({3,3},{2,2,2}); LPT gives 7 = 6 x (4/3 - 1/6).
  EXPECT_DOUBLE_EQ(makespan(assign_shards(a, a.size(), 2), a), 7.0);
  // 8..1 on 4 shards: total 36, a perfect split {8,1},{7,2},{6,3},{5,4} of 9 each, which LPT finds.
  const std::vector<double> b{8, 7, 6, 5, 4, 3, 2, 1};
  EXPECT_DOUBLE_EQ(makespan(assign_shards(b, b.size(), 4), b), 9.0);
  // Round-robin on the same suite is worse.
  EXPECT_DOUBLE_EQ(makespan(assign_shards({}, b.size(), 4), b), 12.0);  // {8,4},{7,3},{6,2},{5,1}
  // Unknown durations count as the median of the known ones.
  const std::vector<double> c{4, -1, 2, std::nan("")};
  EXPECT_DOUBLE_EQ(makespan(std::vector<std::int32_t>{0, 0, 1, 1}, c), 8.0);  // 4 + median(2,4)=4
  EXPECT_DOUBLE_EQ(makespan(std::vector<std::int32_t>{0, 1}, std::vector<double>{-1, -1}), 0.0);
}

// evaluate.shards = auto: one shard per slot, unless the recorded time is too short to give each
// shard min_seconds; never more shards than tests, never fewer than one.
TEST(Sharding, AutoShardCount) {
  EXPECT_EQ(auto_shard_count(std::nan(""), 100, 8, 10), 8);   // no record: one per slot
  EXPECT_EQ(auto_shard_count(0, 100, 8, 10), 8);
  EXPECT_EQ(auto_shard_count(1000, 100, 8, 10), 8);           // plenty of work
  EXPECT_EQ(auto_shard_count(35, 100, 8, 10), 3);             // 35 s: three shards of >= 10 s
  EXPECT_EQ(auto_shard_count(5, 100, 8, 10), 1);              // less than one shard's worth
  EXPECT_EQ(auto_shard_count(1000, 3, 8, 10), 3);             // no more shards than tests
  EXPECT_EQ(auto_shard_count(1000, 0, 8, 10), 1);
  EXPECT_EQ(auto_shard_count(1000, 100, 0, 10), 1);           // no slot known: one
}

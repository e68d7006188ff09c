// The per-file checker protocol (suites/PerFile.h) on recorded output: summary patterns with
// named groups, pass_when, the verdict on one file (exit codes that wrap, a missing summary, a
// timeout, a signal), the report's round trip and its exact error messages; and the registry of
// suite protocols.
#include <flotilla/suites/PerFile.h>
#include <flotilla/suites/Protocols.h>
#include <gtest/gtest.h>

#include "error_of.h"

#include <cmath>
#include <functional>

using namespace flotilla::suites;
using flotilla::results::TestOutcome;

namespace {

const char* kSqllogic = R"((?<errors>\d+) errors out of (?<tests>\d+) tests in \S+ - (?<skipped>\d+) skipped)";

}  // namespace

TEST(PerFileSummary, NamedGroupsInTheirOrderAndTheLastMatchCounts) {
  const SummaryPattern summary(kSqllogic);
  EXPECT_EQ(summary.names(), (std::vector<std::string>{"errors", "tests", "skipped"}));
  // A checker that prints a progress summary, then its final one: the last decides.
  const auto match = summary.last_match(
      "0 errors out of 10 tests in a.test - 0 skipped.\nlog line\n3 errors out of 10012 tests in a.test - 1716 "
      "skipped.\n");
  ASSERT_TRUE(match);
  EXPECT_EQ(match->text, "3 errors out of 10012 tests in a.test - 1716 skipped");
  EXPECT_EQ(match->numbers, (Numbers{{"errors", 3}, {"tests", 10012}, {"skipped", 1716}}));
  EXPECT_EQ(match->error, "");
  EXPECT_FALSE(summary.last_match("no summary here\n"));
}

TEST(PerFileSummary, GroupsThatTookNoPartAreNaNAndTextIsAnError) {
  const SummaryPattern optional(R"((?<errors>\d+) errors(?: and (?<warnings>\d+) warnings)?)");
  const auto match = optional.last_match("2 errors\n");
  ASSERT_TRUE(match);
  EXPECT_EQ(match->numbers[0].second, 2);
  EXPECT_TRUE(std::isnan(match->numbers[1].second));
  const SummaryPattern wordy(R"(result: (?<errors>\w+))");
  EXPECT_EQ(wordy.last_match("result: many\n")->error, "summary group 'errors' matched 'many', which is not a number");
}

TEST(PerFileSummary, BadPatternsNameTheSettingAndThePlace) {
  EXPECT_EQ(error_of<PatternError>([] { SummaryPattern("(?<errors>\\d+ errors"); }),
            "evaluate.summary: '(?<errors>\\d+ errors': missing closing parenthesis at offset 20");
  EXPECT_EQ(error_of<PatternError>([] { SummaryPattern("(\\d+) errors"); }),
            "evaluate.summary: '(\\d+) errors' has no named group such as (?<errors>\\d+): the groups are the "
            "numbers it records");
}

TEST(PerFilePassWhen, OverTheGroupsAndTheExitCode) {
  const SummaryPattern summary(kSqllogic);
  const PassCondition errors_zero("errors == 0", summary.names());
  EXPECT_TRUE(errors_zero.holds({{"errors", 0}, {"tests", 12}, {"skipped", 2}}, 0));
  EXPECT_FALSE(errors_zero.holds({{"errors", 256}, {"tests", 300}, {"skipped", 0}}, 0));
  const PassCondition both("errors == 0 && exit_code == 0 && tests > skipped", summary.names());
  EXPECT_FALSE(both.holds({{"errors", 0}, {"tests", 12}, {"skipped", 2}}, 1));
  EXPECT_TRUE(both.holds({{"errors", 0}, {"tests", 12}, {"skipped", 2}}, 0));
  // A comparison with a missing group (NaN) is false, so a file cannot pass on a number it lacks.
  EXPECT_FALSE(PassCondition("errors < 1", {"errors"}).holds({{"errors", std::nan("")}}, 0));
  EXPECT_EQ(error_of<PatternError>([&] { PassCondition("errrors == 0", summary.names()); }),
            "evaluate.pass_when: 'errrors == 0': unknown name 'errrors' (known: errors, tests, skipped, exit_code)");
  EXPECT_EQ(error_of<PatternError>([&] {
              PassCondition("errors ==", summary.names());
            }).rfind("evaluate.pass_when: 'errors ==': ", 0),
            0u);
}

// Hostile input: `pass_when = errors = 3` assigned 3 to errors and verified a candidate whose
// checker printed 7 errors; `pass_when = 1/0` passed every file.
TEST(PerFilePassWhen, RefusesAssignmentAndNonFiniteResults) {
  const SummaryPattern summary(kSqllogic);
  EXPECT_EQ(error_of<PatternError>([&] { PassCondition("errors = 3", summary.names()); }),
            "evaluate.pass_when: 'errors = 3': '=' at column 8 assigns a value; compare with ==");
  EXPECT_EQ(error_of<PatternError>([&] { PassCondition("tests > 0 && (errors=0)", summary.names()); }),
            "evaluate.pass_when: 'tests > 0 && (errors=0)': '=' at column 21 assigns a value; compare with ==");
  for (const char* fine : {"errors == 0", "errors <= 1", "tests >= 2", "errors != 1 && exit_code==0"})
    EXPECT_NO_THROW(PassCondition(fine, summary.names())) << fine;
  EXPECT_FALSE(PassCondition("1/0", summary.names()).holds({{"errors", 7}, {"tests", 9}, {"skipped", 0}}, 0));
  EXPECT_FALSE(PassCondition("tests/errors", summary.names()).holds({{"errors", 0}, {"tests", 9}, {"skipped", 0}}, 0));
  EXPECT_TRUE(PassCondition("tests/errors", summary.names()).holds({{"errors", 3}, {"tests", 9}, {"skipped", 0}}, 0));
}

TEST(PerFileJudge, TheSummaryDecidesEvenWhenTheExitCodeWrapped) {
  const SummaryPattern summary(kSqllogic);
  const PassCondition pass_when("errors == 0", summary.names());
  // 256 errors: the exit code wraps to 0, and the summary still says fail.
  FileRun wrapped{.exit_code = 0, .seconds = 0.5, .output = "256 errors out of 300 tests in x.test - 0 skipped.\n"};
  auto t = judge_file("x.test", wrapped, &summary, &pass_when);
  EXPECT_EQ(t.outcome, TestOutcome::fail);
  EXPECT_EQ(t.message, "'errors == 0' is false for: 256 errors out of 300 tests in x.test - 0 skipped");
  // The line before the summary (the last failing check, usually) follows it.
  wrapped.output = "x.test: check 7: 1 != 2\n" + wrapped.output;
  EXPECT_EQ(judge_file("x.test", wrapped, &summary, &pass_when).message,
            "'errors == 0' is false for: 256 errors out of 300 tests in x.test - 0 skipped\nx.test: check 7: 1 != 2");
  EXPECT_EQ(t.numbers, (Numbers{{"errors", 256}, {"tests", 300}, {"skipped", 0}}));
  EXPECT_EQ(t.seconds, 0.5);
  // Exit code 3, but the summary says 0 errors: pass_when decides.
  FileRun clean{.exit_code = 3, .output = "0 errors out of 12 tests in y.test - 2 skipped.\n"};
  t = judge_file("y.test", clean, &summary, &pass_when);
  EXPECT_EQ(t.outcome, TestOutcome::pass);
  EXPECT_EQ(t.message, "");
  EXPECT_EQ(t.numbers, (Numbers{{"errors", 0}, {"tests", 12}, {"skipped", 2}}));
  // Without pass_when, the summary's numbers are recorded and the exit code decides.
  t = judge_file("y.test", clean, &summary, nullptr);
  EXPECT_EQ(t.outcome, TestOutcome::fail);
  EXPECT_EQ(t.message, "exit code 3: 0 errors out of 12 tests in y.test - 2 skipped");
}

TEST(PerFileJudge, AMissingSummaryATimeoutAndASignalAreNamed) {
  const SummaryPattern summary(kSqllogic);
  const PassCondition pass_when("errors == 0", summary.names());
  auto t = judge_file("dir/z.test", {.exit_code = 0, .output = "Segmentation fault? no: just nothing\n"}, &summary,
                      &pass_when);
  EXPECT_EQ(t.outcome, TestOutcome::error);
  EXPECT_EQ(t.message.substr(0, t.message.find('\n')),
            std::string("dir/z.test: no summary line matches '") + kSqllogic + "' (exit code 0)");
  t = judge_file("z.test", {.exit_code = 137, .timed_out = true, .ended = "timed out after 2s"}, &summary, &pass_when);
  EXPECT_EQ(t.outcome, TestOutcome::timeout);
  EXPECT_EQ(t.message, "timed out after 2s");
  t = judge_file("z.test",
                 {.exit_code = 137,
                  .signal = 9,
                  .output = "0 errors out of 1 tests in z.test - 0 skipped.\n",
                  .ended = "killed by signal 9 (SIGKILL)"},
                 &summary, &pass_when);
  EXPECT_EQ(t.outcome, TestOutcome::error) << "a summary printed before the crash does not make it a pass";
  EXPECT_EQ(t.message.substr(0, t.message.find('\n')), "killed by signal 9 (SIGKILL)");
  // Exit code alone: 0 passes, anything else fails with it.
  EXPECT_EQ(judge_file("a", {.exit_code = 0}, nullptr, nullptr).outcome, TestOutcome::pass);
  t = judge_file("a", {.exit_code = 1, .output = "one\ntwo\nthree\n"}, nullptr, nullptr);
  EXPECT_EQ(t.outcome, TestOutcome::fail);
  EXPECT_EQ(t.message, "exit code 1\ntwo\nthree");
}

TEST(PerFileReport, RoundTripKeepsOutcomesMessagesAndNumbersInOrder) {
  std::vector<TestResult> tests = {
      {.name = "corpus/a.test",
       .outcome = TestOutcome::pass,
       .seconds = 0.25,
       .numbers = {{"tests", 12}, {"errors", 0}}},
      {.name = "corpus/b \"quoted\".test",
       .outcome = TestOutcome::fail,
       .seconds = 1.5,
       .message = "'errors == 0' is false\n\xff bad byte",
       .numbers = {{"tests", 3}, {"errors", std::nan("")}}},
      {.name = "corpus/c.test", .outcome = TestOutcome::timeout, .message = "timed out after 1s"}};
  const auto back = parse_per_file_report(write_per_file_report(tests), "r.json");
  ASSERT_EQ(back.size(), 3u);
  EXPECT_EQ(back[0].name, "corpus/a.test");
  EXPECT_EQ(back[0].outcome, TestOutcome::pass);
  EXPECT_EQ(back[0].seconds, 0.25);
  EXPECT_EQ(back[0].numbers, (Numbers{{"tests", 12}, {"errors", 0}}));
  EXPECT_EQ(back[1].name, "corpus/b \"quoted\".test");
  EXPECT_EQ(back[1].message, "'errors == 0' is false\n\xef\xbf\xbd bad byte");  // invalid UTF-8 replaced
  EXPECT_EQ(back[1].numbers[0], (std::pair<std::string, double>{"tests", 3}));
  EXPECT_TRUE(std::isnan(back[1].numbers[1].second));
  EXPECT_EQ(back[2].outcome, TestOutcome::timeout);
  EXPECT_EQ(back[2].seconds, -1);
}

TEST(PerFileReport, BadReportsNameTheFileAndTheField) {
  EXPECT_EQ(error_of<ReportError>([] { parse_per_file_report("{\"per_file\": [{\"name\": \"a\"}]}", "r.json"); }),
            "r.json: per_file[0]: no 'outcome' field");
  EXPECT_EQ(error_of<ReportError>(
                [] { parse_per_file_report("{\"per_file\": [{\"name\": \"a\", \"outcome\": \"fine\"}]}", "r.json"); }),
            "r.json: per_file[0]: outcome 'fine' is not a test outcome");
  EXPECT_EQ(error_of<ReportError>([] {
              parse_per_file_report(R"({"per_file": [{"name": "a", "outcome": "pass", "numbers": {"n": "x"}}]})",
                                    "r.json");
            }),
            "r.json: per_file[0]: numbers.n is not a number");
  EXPECT_EQ(error_of<ReportError>([] { parse_per_file_report("{}", "r.json"); }), "r.json: no 'per_file' list");
  EXPECT_EQ(error_of<ReportError>([] { parse_per_file_report("{\"per", "r.json"); }).rfind("r.json: not JSON: ", 0),
            0u);
}

TEST(PerFileCommand, FileIsReplacedInEveryWordAndNothingElseChanges) {
  EXPECT_EQ(checker_argv({"check", "--db={file}.db", "{file}", "{shard}"}, "/c/a b.test"),
            (std::vector<std::string>{"check", "--db=/c/a b.test.db", "/c/a b.test", "{shard}"}));
}

// The registry (Protocols.h): every kind has one row, found by its name; what the config check
// and the evaluate stage ask of it.
TEST(SuiteProtocols, EveryKindIsRegisteredOnceByName) {
  EXPECT_EQ(suite_protocol_names(), "exit, gtest, ctest, lit, pytest, files, per_file, junit, tap");
  for (const auto& p : suite_protocols()) {
    EXPECT_EQ(find_suite_protocol(p.name), &suite_protocol(p.kind)) << p.name;
    EXPECT_EQ(to_string(p.kind), p.name);
    EXPECT_EQ(p.kind == SuiteKind::exit || p.report_chosen, p.report.parse == nullptr) << p.name;
  }
  EXPECT_EQ(find_suite_protocol("catch2"), nullptr);
  const auto& per_file = suite_protocol(SuiteKind::per_file);
  EXPECT_TRUE(per_file.file_list);
  EXPECT_EQ(per_file.report.extension, "json");
  ASSERT_EQ(per_file.required.size(), 1u);
  EXPECT_EQ(per_file.required[0].name, "file");
  EXPECT_EQ(per_file.report.parse("{\"per_file\": []}", "r.json").size(), 0u);
  EXPECT_TRUE(suite_protocol(SuiteKind::files).report_chosen);
  EXPECT_TRUE(suite_protocol(SuiteKind::tap).self_sharded);
}

TEST(PerFileReport, AnEmptyNameIsRefused) {
  EXPECT_EQ(error_of<ReportError>(
                [] { parse_per_file_report(R"({"per_file": [{"name": "", "outcome": "pass"}]})", "r.json"); }),
            "r.json: per_file[0]: no 'name' field");
}

TEST(SuiteProtocols, DiscoveryAndRerunsAreTheProtocolsToSay) {
  const auto& gtest = suite_protocol(SuiteKind::gtest);
  EXPECT_EQ(gtest.discovery.arguments, std::vector<std::string_view>{"--gtest_list_tests"});
  EXPECT_EQ(gtest.discovery.parse("A.\n  b\n", "list.txt"), std::vector<std::string>{"A.b"});
  EXPECT_EQ(suite_protocol(SuiteKind::ctest).discovery.arguments, std::vector<std::string_view>{"--show-only=json-v1"});
  using Sharding = Selection::Sharding;
  for (const auto& p : suite_protocols()) {
    EXPECT_EQ(p.reruns, p.selection.sharding != Sharding::none) << p.name;
    EXPECT_EQ(p.has_tests(), p.kind != SuiteKind::exit) << p.name;
    EXPECT_EQ(p.per_file_checker, p.kind == SuiteKind::per_file) << p.name;
    EXPECT_EQ(p.files_report, p.kind == SuiteKind::junit || p.kind == SuiteKind::tap) << p.name;
  }
  EXPECT_EQ(files_report_names(), "junit, tap");
  // gtest divides its own tests (flotilla computes the same division); its re-run gets a filter.
  EXPECT_EQ(gtest.selection.sharding, Sharding::runner);
  EXPECT_EQ(gtest.selection.index_env, "GTEST_SHARD_INDEX");
  EXPECT_EQ(gtest.selection.runner_assignment, &assign_gtest_shards);
  const std::vector<std::string> names{"A.a", "A.b", "B.c"};
  EXPECT_EQ(gtest.selection.rerun_text(names, {0, 2}), "--gtest_filter=A.a:B.c\n");
  EXPECT_EQ(selection_arguments(gtest.selection.rerun_arguments, "r.json", "rerun.flags", ""),
            (std::vector<std::string>{"--gtest_flagfile=rerun.flags", "--gtest_output=json:r.json"}));
  // ctest: the tests' numbers, from 1, after -I's empty range.
  const auto& ctest = suite_protocol(SuiteKind::ctest).selection;
  EXPECT_EQ(ctest.sharding, Sharding::flotilla);
  EXPECT_EQ(ctest.shard_text(names, {0, 2}), "0,0,0,1,3\n");
  EXPECT_EQ(selection_arguments(ctest.shard_arguments, "r.xml", "shard-1.ctest", ""),
            (std::vector<std::string>{"-I", "shard-1.ctest", "--output-junit", "r.xml"}));
  // lit and pytest: flotilla lists, divides and selects; the report names its option.
  for (const auto kind : {SuiteKind::lit, SuiteKind::pytest}) {
    const auto& p = suite_protocol(kind);
    EXPECT_TRUE(p.selection.sharding == Sharding::flotilla && p.discovery.paths && p.discovery.parse) << p.name;
    EXPECT_EQ(p.selection.shard_text(names, {1, 2}), "A.b\nB.c\n") << p.name;
  }
  EXPECT_EQ(selection_arguments(suite_protocol(SuiteKind::lit).selection.shard_arguments, "r.json", "shard-0.args",
                                "A.b\n"),
            (std::vector<std::string>{"--output=r.json", "@shard-0.args"}));
  EXPECT_EQ(selection_arguments(suite_protocol(SuiteKind::pytest).selection.rerun_arguments, "r.xml", "rerun.args",
                                "t/a.py::f\n\nt/b.py::g\n"),
            (std::vector<std::string>{"--junitxml=r.xml", "t/a.py::f", "t/b.py::g"}));
  EXPECT_EQ(suite_protocol(SuiteKind::pytest).discovery.report_name("t/test_a.py::C::f[1]"), "t.test_a.C.f[1]");
  EXPECT_EQ(suite_protocol(SuiteKind::per_file).discovery.parse, nullptr);
}

// Hostile checker output (issue 32). A checker printing 40,000 progress lines made the summary
// match take 42 s: the summary is now looked for in the output's last 64 lines only. A pattern
// that finds the last summary with a lookahead over the rest of the output is quadratic in it
// (4.4 s for 10,000 lines with the old code), and linear in the window now.
TEST(PerFileSummary, OnlyTheLastSixtyFourLinesAreSearched) {
  std::string progress;
  for (int i = 0; i < 40'000; ++i)
    progress += "7 errors out of " + std::to_string(i) + " tests in a.test - 0 skipped (so far)\n";
  progress += "0 errors out of 40000 tests in a.test - 3 skipped.\n";
  for (const char* pattern : {kSqllogic, R"((?<errors>\d+) errors out of (?<tests>\d+)(?![\s\S]*errors out of))"}) {
    const auto match = SummaryPattern(pattern).last_match(progress);
    ASSERT_TRUE(match) << pattern;
    EXPECT_EQ(match->numbers[0], (std::pair<std::string, double>{"errors", 0})) << pattern;
    EXPECT_EQ(match->numbers[1], (std::pair<std::string, double>{"tests", 40000})) << pattern;
  }
  const SummaryPattern summary(kSqllogic);
  // A summary with 63 lines after it is seen; one with 64 is not, however early it came.
  std::string after;
  for (int i = 0; i < 63; ++i) after += "trailing line " + std::to_string(i) + "\n";
  const std::string summary_line = "2 errors out of 5 tests in b.test - 0 skipped.\n";
  ASSERT_TRUE(summary.last_match(summary_line + after));
  EXPECT_EQ(summary.last_match(summary_line + after)->numbers[0].second, 2);
  EXPECT_FALSE(summary.last_match(summary_line + after + "one line too many\n"));
  // ^ at the window's start is a line start only where one begins: the window starts after a
  // newline here, and mid-line where 64 KiB of one line cut it.
  const SummaryPattern anchored(R"(^(?<errors>\d+) errors$)");
  EXPECT_EQ(anchored.last_match("x\n5 errors\n")->numbers[0].second, 5);
  EXPECT_FALSE(anchored.last_match(std::string(70'000, '1') + " errors\n"));
}

// A pattern that backtracks without end on one line stops at PCRE2's match limit, and the
// verdict says which pattern gave up instead of "no summary line".
TEST(PerFileSummary, CatastrophicBacktrackingHitsTheLimitAndSaysSo) {
  const char* pattern = R"(^(?<n>(?:\d+)+)$)";
  const SummaryPattern summary(pattern);
  const auto match = summary.last_match("ok\n" + std::string(40, '1') + "y\n");
  ASSERT_TRUE(match);
  EXPECT_EQ(match->error, std::string("summary pattern '") + pattern +
                              "' gave up: match limit exceeded (at most 1000000 steps, depth 10000)");
  const auto t = judge_file("c.test", {.exit_code = 0, .output = std::string(40, '1') + "y\n"}, &summary, nullptr);
  EXPECT_EQ(t.outcome, TestOutcome::error);
  EXPECT_EQ(t.message.substr(0, t.message.find('\n')),
            std::string("c.test: summary pattern '") + pattern +
                "' gave up: match limit exceeded (at most 1000000 steps, depth 10000)");
}

// A checker that printed one 1 MiB line gave a 1 MiB message per file (a 201 MB shard report):
// the message keeps its reason and the output's end, within 4 KiB.
TEST(PerFileJudge, MessagesAreBounded) {
  const std::string line = "start" + std::string(1 << 20, 'x') + "end";
  const auto t = judge_file("d.test", {.exit_code = 1, .output = line + "\n"}, nullptr, nullptr);
  EXPECT_EQ(t.outcome, TestOutcome::fail);
  EXPECT_LE(t.message.size(), 4096u);
  EXPECT_EQ(t.message.rfind("exit code 1\nstartxxx", 0), 0u);
  EXPECT_NE(t.message.find("[flotilla: 1044564 bytes cut]"), std::string::npos);
  EXPECT_EQ(t.message.substr(t.message.size() - 6), "xxxend");
}

// fuzz_reports found it: a number beyond a double is nlohmann's out_of_range, not a
// parse_error, and escaped parse_per_file_report. It is a ReportError naming the file.
TEST(PerFileReport, ANumberBeyondADoubleIsAReportError) {
  EXPECT_EQ(error_of<ReportError>([] {
              parse_per_file_report(R"({"per_file": [{"name": "a", "outcome": "pass", "seconds": 2E9126725}]})",
                                    "r.json");
            }),
            "r.json: not JSON: [json.exception.out_of_range.406] number overflow parsing '2E9126725'");
}

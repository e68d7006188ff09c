// Per-test outcomes: encoding, summary, diff, gate (pure), and their /tests group in the
// campaign file (round trip, suite reuse, bad input, files from before /tests existed).
#include <flotilla/results/TestOutcomes.h>
#include <flotilla/results/TestReport.h>
#include <gtest/gtest.h>
#include <hdf5.h>

#include <cmath>

#include "test_records.h"

using namespace flotilla::results;
using namespace flotilla::results::testing;

namespace {

constexpr auto P = TestOutcome::pass;
constexpr auto F = TestOutcome::fail;
constexpr auto S = TestOutcome::skip;
constexpr auto E = TestOutcome::error;
constexpr auto T = TestOutcome::timeout;
constexpr auto N = TestOutcome::not_run;

std::uint8_t code(TestOutcome first, TestOutcome rerun = TestOutcome::not_run) { return encode_outcome(first, rerun); }

TestSuite suite_of(std::initializer_list<const char*> names) {
  TestSuite suite;
  for (const char* name : names) suite.names.emplace_back(name);
  return suite;
}

}  // namespace

TEST(TestOutcomes, EncodingKeepsBothRunsAndTheRerunCounts) {
  const std::uint8_t flaky = code(F, P);
  EXPECT_EQ(first_outcome(flaky), F);
  EXPECT_EQ(rerun_outcome(flaky), P);
  EXPECT_EQ(effective_outcome(flaky), P);
  EXPECT_TRUE(is_flaky(flaky));
  EXPECT_EQ(effective_outcome(code(F, F)), F);
  EXPECT_FALSE(is_flaky(code(F, F)));
  EXPECT_EQ(effective_outcome(code(S)), S);
  EXPECT_EQ(test_outcome_from_string("timeout"), T);
  EXPECT_EQ(test_outcome_from_string("passed"), std::nullopt);
  EXPECT_EQ(to_string(E), "error");
}

TEST(TestOutcomes, DurationsAreQuantisedWithinSevenPercent) {
  EXPECT_EQ(quantise_duration(std::nan("")), 0);
  EXPECT_EQ(quantise_duration(-1), 0);
  EXPECT_TRUE(std::isnan(duration_seconds(0)));
  EXPECT_EQ(quantise_duration(0.0), 1);
  for (double seconds : {0.002, 0.05, 1.0, 37.0, 3600.0}) {
    const double back = duration_seconds(quantise_duration(seconds));
    EXPECT_NEAR(back / seconds, 1.0, 0.035) << seconds;
  }
  EXPECT_EQ(quantise_duration(1e9), 255);  // clamped, not wrapped
}

TEST(TestOutcomes, SummaryCountsEffectiveOutcomes) {
  const std::vector<std::uint8_t> outcomes = {code(P), code(P), code(F, P), code(F, F),
                                              code(S), code(E), code(T),    code(TestOutcome::not_run)};
  const TestSummary summary = summarize(outcomes);
  EXPECT_EQ(summary.total, 8);
  EXPECT_EQ(summary.pass, 3);
  EXPECT_EQ(summary.fail, 1);
  EXPECT_EQ(summary.skip, 1);
  EXPECT_EQ(summary.error, 1);
  EXPECT_EQ(summary.timeout, 1);
  EXPECT_EQ(summary.not_run, 1);
  EXPECT_EQ(summary.flaky, 1);
  EXPECT_EQ(summary.rerun, 2);
  EXPECT_DOUBLE_EQ(summary.pass_rate(), 3.0 / 6.0);
  EXPECT_EQ(summarize({}).pass_rate(), 0.0);
}

TEST(TestOutcomes, DiffFindsRegressionsAndFixesByIndex) {
  const std::vector<std::uint8_t> base = {code(P), code(F), code(P), code(S), code(P), code(E)};
  const std::vector<std::uint8_t> cand = {code(P), code(P), code(T), code(F), code(F, P), code(E)};
  const TestDiff diff = diff_outcomes(base, cand);
  EXPECT_EQ(diff.regressions, std::vector<std::int64_t>({2}));  // skip -> fail is no regression
  EXPECT_EQ(diff.fixes, std::vector<std::int64_t>({1}));        // flaky (F then P) is a pass
  EXPECT_EQ(diff.only_in_reference, 0);
}

TEST(TestOutcomes, DiffMatchesByNameAcrossSuites) {
  const TestSuite base_suite = suite_of({"a", "b", "c", "gone"});
  const TestSuite cand_suite = suite_of({"c", "new", "b", "a"});
  const std::vector<std::uint8_t> base = {code(P), code(F), code(P), code(P)};
  const std::vector<std::uint8_t> cand = {code(F), code(F), code(P), code(P)};
  const TestDiff diff = diff_outcomes(base_suite, base, cand_suite, cand);
  EXPECT_EQ(diff.regressions, std::vector<std::int64_t>({0}));  // "c", index in the candidate's suite
  EXPECT_EQ(diff.fixes, std::vector<std::int64_t>({2}));        // "b"
  EXPECT_EQ(diff.only_in_reference, 1);
  EXPECT_EQ(diff.only_in_candidate, 1);
}

TEST(TestOutcomes, GateAllPassAllowsSkipsOnly) {
  EXPECT_TRUE(
      decide_gate(TestGate::all_pass, summarize(std::vector<std::uint8_t>{code(P), code(S)}), nullptr, nullptr).passed);
  const GateVerdict failed = decide_gate(
      TestGate::all_pass, summarize(std::vector<std::uint8_t>{code(P), code(F), code(T)}), nullptr, nullptr);
  EXPECT_FALSE(failed.passed);
  EXPECT_EQ(failed.reason, "2 of 3 tests failed (1 fail, 0 error, 1 timeout, 0 not run)");
  EXPECT_EQ(decide_gate(TestGate::all_pass, summarize({}), nullptr, nullptr).reason, "no tests were found");
}

TEST(TestOutcomes, GateClimbingComparesTestByTest) {
  const std::vector<std::uint8_t> base = {code(P), code(F), code(F), code(P)};
  const TestSummary base_summary = summarize(base);
  const auto verdict = [&](std::vector<std::uint8_t> cand) {
    const TestDiff diff = diff_outcomes(base, cand);
    return decide_gate(TestGate::no_regression, summarize(cand), &base_summary, &diff);
  };
  EXPECT_TRUE(verdict({code(P), code(P), code(F), code(P)}).passed);  // one fix: climbs
  EXPECT_TRUE(verdict(base).passed);                                  // equal is allowed
  // Drops one passing test and fixes another: the pass count is the baseline's, but it regressed.
  EXPECT_EQ(verdict({code(P), code(P), code(F), code(F)}).reason, "1 regression against the baseline");
  EXPECT_EQ(verdict({code(P), code(P), code(P), code(F)}).reason, "1 regression against the baseline");
  // A passing test that is skipped, or not run, has not stayed passing.
  EXPECT_EQ(verdict({code(P), code(F), code(F), code(S)}).reason, "1 regression against the baseline");
  EXPECT_EQ(verdict({code(N), code(P), code(P), code(P)}).reason, "1 regression against the baseline");
  const TestDiff itself = diff_outcomes(base, base);
  EXPECT_TRUE(decide_gate(TestGate::no_regression, base_summary, &base_summary, &itself).passed);  // the baseline
  // Missing baseline data never opens the gate.
  EXPECT_EQ(decide_gate(TestGate::no_regression, base_summary, nullptr, nullptr).reason,
            "the baseline's test outcomes are missing: nothing to compare with");
  // A suite that ran nothing proves nothing, even compared with a baseline that ran nothing.
  const TestSummary none = summarize({});
  const TestDiff no_diff;
  EXPECT_EQ(decide_gate(TestGate::no_regression, none, &none, &no_diff).reason, "no tests were found");
}

// Matched by name: a test the baseline passed that the candidate's suite lacks is dropped, a
// regression; the reason names the tests.
TEST(TestOutcomes, DroppedTestsAreRegressionsAndReasonsNameThem) {
  const TestSuite reference_suite = suite_of({"a", "b", "c"});
  const TestSuite candidate_suite = suite_of({"a", "c", "d"});
  const std::vector<std::uint8_t> reference = {code(P), code(P), code(F)};
  const std::vector<std::uint8_t> candidate = {code(P), code(P), code(P)};  // b gone, c fixed
  const TestDiff diff = diff_outcomes(reference_suite, reference, candidate_suite, candidate);
  EXPECT_TRUE(diff.regressions.empty());
  EXPECT_EQ(diff.dropped, (std::vector<std::int64_t>{1}));
  EXPECT_EQ(diff.fixes, (std::vector<std::int64_t>{1}));
  const TestSummary base = summarize(reference);
  const GateVerdict v = decide_gate(TestGate::no_regression, summarize(candidate), &base, &diff,
                                    GateNames{{"b (not run: absent)"}});
  EXPECT_FALSE(v.passed);
  EXPECT_EQ(v.reason, "1 regression against the baseline: b (not run: absent)");
  const GateVerdict all = decide_gate(TestGate::all_pass, summarize(std::vector<std::uint8_t>(9, code(F))), nullptr,
                                      nullptr, GateNames{{"t1 (fail)", "t2 (fail)"}});
  EXPECT_EQ(all.reason, "9 of 9 tests failed (9 fail, 0 error, 0 timeout, 0 not run): t1 (fail), t2 (fail) and 7 more");
  EXPECT_EQ(failing_tests(std::vector<std::uint8_t>{code(P), code(N), code(S), code(T)}),
            (std::vector<std::int64_t>{1, 3}));
}

TEST(TestStore, OutcomesRoundTripAndSuitesAreStoredOnce) {
  ScratchDir dir;
  const auto path = dir / "c.h5";
  {
    Store store = Store::create(path, sample_campaign());
    const TestSuite suite = suite_of({"Math.Add", "Math.Sub", "Io.Read"});
    EXPECT_EQ(store.add_test_suite(suite), 0);
    EXPECT_EQ(store.add_test_suite(suite), 0);  // the same discovery again: reused
    EXPECT_EQ(store.add_test_suite(suite_of({"Math.Add"})), 1);
    CandidateTests tests;
    tests.candidate = 3;
    tests.suite = 0;
    tests.outcomes = {code(P), code(F, F), code(S)};
    tests.durations = {quantise_duration(0.01), quantise_duration(2.0), 0};
    tests.messages = {{1, "expected 4, got 5"}};
    EXPECT_TRUE(store.add_test_results(tests));
    EXPECT_FALSE(store.add_test_results(tests));  // idempotent: recorded once
    CandidateTests other{5, 1, {code(P)}, {}, {}};
    EXPECT_TRUE(store.add_test_results(other));
  }
  const Store store = Store::open_read(path);
  EXPECT_EQ(store.tested_candidates(), std::vector<std::int64_t>({3, 5}));
  EXPECT_EQ(store.test_suite(0).names, suite_of({"Math.Add", "Math.Sub", "Io.Read"}).names);
  const auto tests = store.test_results(3);
  ASSERT_TRUE(tests.has_value());
  EXPECT_EQ(tests->suite, 0);
  EXPECT_EQ(tests->outcomes, std::vector<std::uint8_t>({code(P), code(F, F), code(S)}));
  EXPECT_EQ(tests->durations[1], quantise_duration(2.0));
  ASSERT_EQ(tests->messages.size(), 1u);
  EXPECT_EQ(tests->messages[0].test, 1);
  EXPECT_EQ(tests->messages[0].text, "expected 4, got 5");
  EXPECT_TRUE(store.test_results(5)->durations.empty());
  EXPECT_EQ(store.test_outcomes(3), tests->outcomes);
  EXPECT_FALSE(store.test_outcomes(4).has_value());
  EXPECT_FALSE(store.test_results(4).has_value());
}

TEST(TestStore, BadInputIsRefusedWithTheFileAndLeavesTheStoreUsable) {
  ScratchDir dir;
  const auto path = dir / "c.h5";
  Store store = Store::create(path, sample_campaign());
  const auto message_of = [](auto&& action) {
    try {
      action();
    } catch (const StoreError& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message_of([&] {
              store.add_test_suite(suite_of({"a", "b", "a"}));
            }),
            path.string() + ": test 2 of the suite: duplicate test name 'a'");
  EXPECT_EQ(message_of([&] { store.add_test_suite(suite_of({"a\nb"})); }),
            path.string() + ": test 0 of the suite: a test name must be one non-empty line");
  EXPECT_EQ(message_of([&] {
              store.add_test_results({1, 0, {code(P)}, {}, {}});
            }),
            path.string() + ": candidate 1: test suite 0 is not recorded");
  const std::int64_t suite = store.add_test_suite(suite_of({"a", "b"}));
  EXPECT_EQ(message_of([&] {
              store.add_test_results({1, suite, {code(P)}, {}, {}});
            }),
            path.string() + ": candidate 1: 1 outcomes for a suite of 2 tests");
  EXPECT_EQ(message_of([&] {
              store.add_test_results({1, suite, {code(P), code(F)}, {}, {{2, "x"}}});
            }),
            path.string() + ": candidate 1: message for test 2 outside the suite of 2 tests");
  EXPECT_TRUE(store.add_test_results({1, suite, {code(P), code(F)}, {}, {{1, "x"}}}));
}

TEST(TestStore, FilesWrittenBeforeTestsExistedReadAndGainTheGroupOnAppend) {
  ScratchDir dir;
  const auto path = dir / "old.h5";
  {
    Store store = Store::create(path, sample_campaign());
    append_samples(store, 0, 4);
  }
  // What older flotilla wrote: the same file without /tests.
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  ASSERT_GE(H5Ldelete(file, "tests", H5P_DEFAULT), 0);
  ASSERT_GE(H5Fclose(file), 0);
  {
    const Store old = Store::open_read(path);
    EXPECT_TRUE(old.tested_candidates().empty());
    EXPECT_FALSE(old.test_results(0).has_value());
    EXPECT_EQ(old.trials().size(), 4u);
    try {
      (void)old.test_suite(0);
      ADD_FAILURE() << "no error";
    } catch (const StoreError& error) {
      EXPECT_EQ(std::string(error.what()),
                path.string() + ": no per-test outcomes in this file (written before flotilla recorded them)");
    }
  }
  {
    Store store = Store::open_for_append(path);
    const std::int64_t suite = store.add_test_suite(suite_of({"t"}));
    EXPECT_TRUE(store.add_test_results({0, suite, {code(P)}, {}, {}}));
  }
  EXPECT_EQ(Store::open_read(path).test_results(0)->outcomes, std::vector<std::uint8_t>({code(P)}));
}

TEST(TestStore, ManyOutcomesCostWellUnderTwoBytesEach) {
  ScratchDir dir;
  const auto path = dir / "big.h5";
  constexpr std::size_t kTests = 200'000;
  TestSuite suite;
  suite.names.reserve(kTests);
  for (std::size_t i = 0; i < kTests; ++i)
    suite.names.push_back("suite" + std::to_string(i / 1000) + ".case" + std::to_string(i));
  CandidateTests tests;
  tests.outcomes.assign(kTests, code(P));
  for (std::size_t i = 0; i < kTests; i += 997) tests.outcomes[i] = code(F, i % 2 ? P : F);
  std::uintmax_t before = 0;
  {
    Store store = Store::create(path, sample_campaign());
    tests.suite = store.add_test_suite(suite);
    before = std::filesystem::file_size(path);
    ASSERT_TRUE(store.add_test_results(tests));
  }
  const double bytes_per_outcome =
      static_cast<double>(std::filesystem::file_size(path) - before) / static_cast<double>(kTests);
  EXPECT_LT(bytes_per_outcome, 0.2);
  const Store store = Store::open_read(path);
  EXPECT_EQ(store.test_results(0)->outcomes, tests.outcomes);
  EXPECT_EQ(store.test_suite(0).names, suite.names);
}

TEST(TestReport, TextAndJsonShowCountsDiffFlakySlowestAndFailureGroups) {
  const TestSuite suite = suite_of({"A.one", "A.two", "B.three", "B.four", "C.five"});
  CandidateTests base{0, 0, {code(P), code(F), code(P), code(P), code(S)}, {}, {{1, "boom"}}};
  CandidateTests cand{1,
                      0,
                      {code(P), code(P), code(F), code(T), code(F, P)},
                      {quantise_duration(0.01), quantise_duration(2.0), quantise_duration(0.5), 0, 0},
                      {{2, "expected 1"}, {3, "expected 1"}, {4, "first run"}}};
  const TestReport report = make_test_report(suite, cand, &suite, &base);
  EXPECT_EQ(report.regressions, std::vector<std::string>({"B.three", "B.four"}));
  EXPECT_EQ(report.fixes, std::vector<std::string>({"A.two"}));
  EXPECT_EQ(report.flaky, std::vector<std::string>({"C.five"}));
  ASSERT_EQ(report.failures.size(), 1u);  // the flaky test passed in the end: not a failure
  EXPECT_EQ(report.failures[0].count, 2);
  EXPECT_EQ(test_report_text(report),
            "candidate  1\n"
            "tests      5 tests: 3 pass, 1 fail, 0 error, 1 timeout, 0 skip · pass rate 60.00%\n"
            "flaky      1 (failed, then passed on the re-run)\n"
            "reference  candidate 0: 5 tests: 3 pass, 1 fail, 0 error, 0 timeout, 1 skip · pass rate 75.00%\n"
            "versus     2 regressions, 1 fixes, pass count +0\n"
            "\nregressions (2)\n  B.three\n  B.four\n"
            "\nfixes (1)\n  A.two\n"
            "\nflaky (1)\n  C.five\n"
            "\nfailures by message\n         2  expected 1\n            e.g. B.three, B.four\n"
            "\nslowest\n       1.954 s  A.two\n       0.505 s  B.three\n       0.010 s  A.one\n");
  const auto json = test_report_json(report);
  EXPECT_NE(json.find(R"("regressions":{"count":2,"dropped":0,"names":["B.three","B.four"]})"), std::string::npos) << json;
  EXPECT_NE(json.find(R"("flaky":["C.five"])"), std::string::npos) << json;
}

// evaluate.no_drop: a number below the reference's, or missing where the reference has one,
// falls; matched by name, so a reordered suite compares the right files.
TEST(TestOutcomes, NumberDropsCompareByNameAndCountAMissingNumber) {
  const TestSuite reference_suite = suite_of({"a.test", "b.test", "c.test", "gone.test"});
  CandidateTests reference{0, 0, {code(P), code(P), code(F), code(P)}, {}, {}};
  reference.numbers = {{0, "tests", 12}, {0, "errors", 0}, {1, "tests", 14}, {2, "tests", 9}, {3, "tests", 1}};
  const TestSuite candidate_suite = suite_of({"c.test", "b.test", "a.test", "new.test"});
  CandidateTests candidate{1, 1, {code(F), code(P), code(E), code(P)}, {}, {}};
  candidate.numbers = {{0, "tests", 9}, {1, "tests", 10}, {2, "errors", 3}, {3, "tests", 1}};
  const auto drops = number_drops(reference_suite, reference, candidate_suite, candidate, {"tests"});
  ASSERT_EQ(drops.size(), 2u);
  EXPECT_EQ(drops[0].test, 1);  // b.test: 10 checks < 14
  EXPECT_EQ(drops[0].name, "tests");
  EXPECT_EQ(drops[0].reference, 14);
  EXPECT_EQ(drops[0].candidate, 10);
  EXPECT_EQ(drops[1].test, 2);  // a.test: its count is missing (it crashed before its summary)
  EXPECT_TRUE(std::isnan(drops[1].candidate));
  // c.test ran as many checks (9 = 9); new.test and gone.test are not compared here (the outcome
  // diff calls gone.test dropped); "errors" was not asked for.
  EXPECT_TRUE(number_drops(reference_suite, reference, candidate_suite, candidate, {}).empty());
}

TEST(TestStore, NumbersRoundTripAndAFileFromBeforeThemReadsAndGainsThemOnAppend) {
  ScratchDir dir;
  const auto path = dir / "n.h5";
  {
    Store store = Store::create(path, sample_campaign());
    const std::int64_t suite = store.add_test_suite(suite_of({"a.test", "b.test"}));
    CandidateTests tests{0, suite, {code(P), code(F)}, {}, {{1, "'errors == 0' is false"}}};
    tests.numbers = {{0, "errors", 0}, {0, "tests", 12}, {1, "errors", 256}, {1, "tests", std::nan("")}};
    EXPECT_TRUE(store.add_test_results(tests));
    EXPECT_TRUE(store.add_test_results({1, suite, {code(P), code(P)}, {}, {}}));  // a suite without numbers
  }
  {
    const auto back = Store::open_read(path).test_results(0);
    ASSERT_TRUE(back.has_value());
    ASSERT_EQ(back->numbers.size(), 4u);
    EXPECT_EQ(back->numbers[1].test, 0);
    EXPECT_EQ(back->numbers[1].name, "tests");
    EXPECT_EQ(back->numbers[1].value, 12);
    EXPECT_EQ(back->numbers[2].value, 256);
    EXPECT_TRUE(std::isnan(back->numbers[3].value));
    EXPECT_TRUE(Store::open_read(path).test_results(1)->numbers.empty());
  }
  // What flotilla wrote before per-test numbers: /tests without its two number tables.
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  ASSERT_GE(H5Ldelete(file, "tests/numbers", H5P_DEFAULT), 0);
  ASSERT_GE(H5Ldelete(file, "tests/number_runs", H5P_DEFAULT), 0);
  ASSERT_GE(H5Fclose(file), 0);
  {
    const auto old = Store::open_read(path).test_results(0);
    ASSERT_TRUE(old.has_value());
    EXPECT_EQ(old->outcomes, std::vector<std::uint8_t>({code(P), code(F)}));
    EXPECT_TRUE(old->numbers.empty());
  }
  {
    Store store = Store::open_for_append(path);
    CandidateTests tests{2, 0, {code(P), code(P)}, {}, {}};
    tests.numbers = {{1, "tests", 14}};
    EXPECT_TRUE(store.add_test_results(tests));
    try {
      CandidateTests bad{3, 0, {code(P), code(P)}, {}, {}};
      bad.numbers = {{2, "tests", 1}};
      store.add_test_results(bad);
      ADD_FAILURE() << "no error";
    } catch (const StoreError& error) {
      EXPECT_EQ(std::string(error.what()), path.string() + ": candidate 3: number 'tests' for test 2 outside the suite of 2 tests");
    }
  }
  const auto back = Store::open_read(path).test_results(2);
  ASSERT_EQ(back->numbers.size(), 1u);
  EXPECT_EQ(back->numbers[0].value, 14);
}

// Per-test numbers in `flotilla results tests`: summed per name in first-seen order, NaN skipped,
// and shown only when the suite has them (the text of other suites is unchanged).
TEST(TestReport, NumbersAreSummedPerNameWhenTheSuiteHasThem) {
  const TestSuite suite = suite_of({"a.test", "b.test"});
  CandidateTests tests{0, 0, {code(P), code(F)}, {}, {}};
  tests.numbers = {{0, "errors", 0}, {0, "tests", 12}, {1, "errors", 3}, {1, "tests", 9}, {1, "skipped", std::nan("")}};
  const auto report = make_test_report(suite, tests, nullptr, nullptr);
  EXPECT_EQ(report.number_totals, (std::vector<std::pair<std::string, double>>{{"errors", 3}, {"tests", 21}}));
  const std::string text = test_report_text(report);
  EXPECT_NE(text.find("\nnumbers    errors 3 · tests 21 (summed over the tests)\n"), std::string::npos) << text;
  EXPECT_NE(test_report_json(report).find("\"numbers\":{\"errors\":3.0,\"tests\":21.0}"), std::string::npos)
      << test_report_json(report);
  tests.numbers.clear();
  EXPECT_EQ(test_report_text(make_test_report(suite, tests, nullptr, nullptr)).find("numbers"), std::string::npos);
}

// `flotilla results tests --per-file`: every test's outcome and numbers, the reference's test of
// the same name beside it (matched by name, so a reordered suite shows the right file), "-" for
// what one side lacks; only when asked for.
TEST(TestReport, PerFileShowsEveryTestsOutcomeAndNumbersBesideTheReferences) {
  const TestSuite reference_suite = suite_of({"b.test", "a.test"});
  CandidateTests reference{0, 0, {code(P), code(F)}, {}, {}};
  reference.numbers = {{0, "tests", 14}, {1, "tests", 12}, {1, "errors", 1}};
  const TestSuite suite = suite_of({"a.test", "b.test", "new.test"});
  CandidateTests tests{1, 1, {code(P), code(F), code(N)}, {}, {}};
  tests.numbers = {{0, "tests", 12}, {0, "errors", 0}, {1, "tests", 10}, {1, "errors", 2}};
  TestReportLimits limits;
  EXPECT_TRUE(make_test_report(suite, tests, &reference_suite, &reference, limits).per_test.empty());
  limits.per_test = true;
  const auto report = make_test_report(suite, tests, &reference_suite, &reference, limits);
  ASSERT_EQ(report.per_test.size(), 3u);
  EXPECT_EQ(report.per_test[0].reference_outcome, "fail");
  EXPECT_EQ(report.per_test[0].reference_numbers,
            (std::vector<std::pair<std::string, double>>{{"tests", 12}, {"errors", 1}}));
  EXPECT_FALSE(report.per_test[2].reference_outcome.has_value());
  const std::string text = test_report_text(report);
  EXPECT_NE(text.find("\nper file (3 tests; candidate 0 in brackets)\n"
                      "  test          outcome    tests  errors\n"
                      "  a.test    pass (fail)  12 (12)   0 (1)\n"
                      "  b.test    fail (pass)  10 (14)   2 (-)\n"
                      "  new.test  not_run (-)    - (-)   - (-)\n"),
            std::string::npos)
      << text;
  const std::string json = test_report_json(report);
  EXPECT_NE(json.find(R"({"name":"b.test","numbers":{"errors":2.0,"tests":10.0},"outcome":"fail",)"
                      R"("reference":{"numbers":{"tests":14.0},"outcome":"pass"}})"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find(R"({"name":"new.test","numbers":{},"outcome":"not_run"})"), std::string::npos) << json;
  // Without a reference: the candidate's values alone.
  const std::string alone = test_report_text(make_test_report(suite, tests, nullptr, nullptr, limits));
  EXPECT_NE(
      alone.find("\nper file (3 tests)\n  test      outcome  tests  errors\n  a.test       pass     12       0\n"),
      std::string::npos)
      << alone;
}

// A report that names its files otherwise than they were given (basenames) leaves them not run;
// a failed gate says how many reported names matched no file, instead of listing the files.
TEST(TestOutcomes, GateSaysHowManyReportedNamesMatchedNoFile) {
  const TestSummary summary = summarize(std::vector<std::uint8_t>{code(P), code(P), code(N), code(N)});
  GateNames names;
  names.tests = {"corpus/a.test", "corpus/b.test"};
  EXPECT_EQ(decide_gate(TestGate::all_pass, summary, nullptr, nullptr, names).reason,
            "2 of 4 tests failed (0 fail, 0 error, 0 timeout, 2 not run): corpus/a.test, corpus/b.test");
  names.unmatched = {"a.test", "b.test"};
  names.unmatched_total = 2;
  EXPECT_EQ(decide_gate(TestGate::all_pass, summary, nullptr, nullptr, names).reason,
            "2 of 4 tests failed (0 fail, 0 error, 0 timeout, 2 not run); 2 reported names matched no file given: "
            "a.test, b.test (a report must name each file as it was given, or by its absolute path)");
}

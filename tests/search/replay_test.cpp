// Replay: reading recorded spaces (CSV, Kernel Tuner cache, gzip), exact error messages, and
// the replay loop's determinism and statistics.
#include <cmath>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "flotilla/search/Replay.h"

using namespace flotilla::search;

namespace {

constexpr const char* kCsv =
    "block,tile,layout,time\n"
    "16,1,row,3.0\n"
    "16,2,row,2.0\n"
    "32,1,col,inf\n"
    "32,2,col,1.5\n"
    "64,1,row,nan\n"
    "64,2,col,4.0\n";

std::string csv_error(const std::string& text, const ReadOptions& options = {}) {
  try {
    parse_csv_space(text, "s.csv", options);
  } catch (const ReplayError& e) {
    return e.what();
  }
  return "no error";
}

std::string cache_error(const std::string& text) {
  try {
    parse_kernel_tuner_cache(text, "c.json");
  } catch (const ReplayError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST(RecordedCsv, ColumnsBecomeTypedParametersAndRowsTheSpace) {
  auto r = parse_csv_space(kCsv, "s.csv");
  const auto& params = r.space().parameters();
  ASSERT_EQ(params.size(), 3u);
  EXPECT_EQ(params[0].kind, ParamKind::integer);
  EXPECT_EQ(params[0].values, (std::vector<double>{16, 32, 64}));
  EXPECT_EQ(params[2].kind, ParamKind::enumeration);
  EXPECT_EQ(r.size(), 6u);
  EXPECT_EQ(r.failures(), 2u);
  EXPECT_EQ(r.optimum(), 1.5);
  EXPECT_EQ(r.space().to_text(r.optimum_config()), "block=32 tile=2 layout=col");
  // Known constraint: only recorded rows are feasible.
  EXPECT_TRUE(r.space().feasible(r.space().parse_configuration("block=16 tile=1 layout=row")));
  EXPECT_THROW(r.space().parse_configuration("block=16 tile=1 layout=col"), SpaceError);
  EXPECT_EQ(r.objective(r.space().parse_configuration("block=32 tile=1 layout=col")), std::nullopt);
  auto maximised = parse_csv_space(kCsv, "s.csv", {.objective = "time", .maximize = true});
  EXPECT_EQ(maximised.optimum(), 4.0);
}

TEST(RecordedCsv, FractionalValuesAreOrdinalInNumericOrder) {
  auto r = parse_csv_space("ratio,speed\n1.5,2\n0.25,3\n10,1\n", "f.csv");
  EXPECT_EQ(r.objective_name(), "speed");  // no "time" column: the last one
  ASSERT_EQ(r.space().parameters().size(), 1u);
  EXPECT_EQ(r.space().parameters()[0].kind, ParamKind::ordinal);
  EXPECT_EQ(r.space().parameters()[0].labels, (std::vector<std::string>{"0.25", "1.5", "10"}));
}

TEST(RecordedCsv, ErrorsNameFileLineAndField) {
  EXPECT_EQ(csv_error("a,time\n1,2\n3\n"), "s.csv:3: expected 2 fields, found 1");
  EXPECT_EQ(csv_error("a,time\n1,2\n2,fast\n"), "s.csv:3: field 'time': 'fast' is not a number (inf or nan marks a failed configuration)");
  EXPECT_EQ(csv_error("a,b\n1,2\n", {.objective = "time"}), "s.csv:1: no column 'time' (columns: a, b)");
  EXPECT_EQ(csv_error("a,time\n1,2\n\n1,3\n"), "s.csv:4: configuration 'a=1' recorded twice (first at s.csv:2)");
  EXPECT_EQ(csv_error(""), "s.csv: empty file (expected a header line)");
  EXPECT_EQ(csv_error("a,time\n1,inf\n"), "s.csv: every configuration failed");
  EXPECT_EQ(csv_error("a,time\n"), "s.csv: no configurations recorded");
  EXPECT_EQ(csv_error("tile size,time\n1,2\n"), "s.csv: column 'tile size' is not a parameter name (letters, digits and _)");
  EXPECT_EQ(csv_error("a,time\n,2\n"), "s.csv:2: field 'a' is empty");
  // Found by fuzz_recorded_space (tests/fuzz/fuzz_recorded_space/regressions/duplicate_column.csv):
  // a repeated column escaped as a SpaceError, which `flotilla replay` does not expect.
  EXPECT_EQ(csv_error("a,b,a,time\n1,2,3,4\n"), "s.csv: column 'a' appears twice");
}

TEST(RecordedCache, KernelTunerCacheWithFailuresAndFixedParameters) {
  auto r = parse_kernel_tuner_cache(R"({"tune_params_keys": ["bx", "t", "fixed"],
      "tune_params": {"bx": [32, 64], "t": [1, 2], "fixed": [15]}, "objective": "time",
      "cache": {"32,1,15": {"bx": 32, "t": 1, "fixed": 15, "time": 2.5},
                "32,2,15": {"bx": 32, "t": 2, "fixed": 15, "time": "CompilationFailedConfig"},
                "64,1,15": {"bx": 64, "t": 1, "fixed": 15, "time": 1.25},
                "64,2,15": {"bx": 64, "t": 2, "fixed": 15, "time": "InvalidConfig"}}})",
                                    "c.json");
  EXPECT_EQ(r.space().parameters().size(), 2u);  // 'fixed' has one value: not a dimension
  EXPECT_EQ(r.size(), 3u);                       // InvalidConfig: forbidden, not part of the space
  EXPECT_EQ(r.failures(), 1u);
  EXPECT_EQ(r.optimum(), 1.25);
  EXPECT_EQ(r.failure(r.space().parse_configuration("bx=32 t=2")), Failure::build);
  EXPECT_EQ(r.failure(r.space().parse_configuration("bx=32 t=1")), Failure::unknown);  // did not fail
}

TEST(RecordedCache, ErrorsNameFileAndEntry) {
  EXPECT_EQ(cache_error("{\"cache\": {}}"), "c.json: not a Kernel Tuner cache file (expected objects 'tune_params' and 'cache')");
  EXPECT_EQ(cache_error(R"({"tune_params": {"a": [1, 2]}, "cache": {"1": {"a": 1}}})"), "c.json: cache entry '1': field 'time' is missing");
  EXPECT_EQ(cache_error(R"({"tune_params": {"a": [1, 2]}, "cache": {"1": {"time": 1}}})"), "c.json: cache entry '1': field 'a' is missing");
  EXPECT_EQ(cache_error(R"({"tune_params": {"a": [1, 2]}, "cache": {"1": {"a": 1, "time": [1]}}})"),
            "c.json: cache entry '1': field 'time': [1] is neither a number nor a failure");
  EXPECT_EQ(cache_error("{\"tune_params\": ").rfind("c.json: not valid JSON: ", 0), 0u);
}

TEST(RecordedFiles, ReadsCsvAndGzipCompressedCacheFiles) {
  auto csv = load_recorded_space(FLOTILLA_SEARCH_TEST_DATA "/coulomb3d_RTX2080Ti.csv");
  EXPECT_EQ(csv.size(), 210u);
  EXPECT_NEAR(csv.optimum(), 0.769696, 1e-6);
  auto cache = load_recorded_space(FLOTILLA_SEARCH_TEST_DATA "/tiny.kt.json.gz");
  EXPECT_EQ(cache.size(), 11u);
  EXPECT_EQ(cache.failures(), 1u);
  EXPECT_EQ(cache.optimum(), 2.25);
  EXPECT_EQ(cache.space().to_text(cache.optimum_config()), "block_size_x=64 tile=2");
  try {
    load_recorded_space("/nonexistent/space.csv");
    FAIL();
  } catch (const ReplayError& e) {
    EXPECT_STREQ(e.what(), "/nonexistent/space.csv: cannot open");
  }
}

TEST(Replay, DeterministicForASeedAndFailuresCostEvaluations) {
  auto r = parse_csv_space(kCsv, "s.csv");
  ReplayOptions options{.strategy = "bayes", .budget = 4, .repeats = 3, .seed = 9};
  auto a = replay(r, options), b = replay(r, options);
  ASSERT_EQ(a.runs.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(a.runs[i].best, b.runs[i].best);
    EXPECT_EQ(a.runs[i].best.size(), 4u);  // failed configurations count too
  }
  // Equal but for the CPU time per ask, which is a measurement.
  auto ja = nlohmann::json::parse(replay_json(r, a)), jb = nlohmann::json::parse(replay_json(r, b));
  ASSERT_TRUE(ja.contains("cpu_ms_per_ask"));
  ja.erase("cpu_ms_per_ask");
  jb.erase("cpu_ms_per_ask");
  EXPECT_EQ(ja, jb);
  EXPECT_EQ(ja["per_repeat"].size(), 3u);
  EXPECT_EQ(ja["per_repeat"][0]["evaluations"], 4);
  options.budget = 100;  // more than the 6 recorded: every one is evaluated, then the run ends
  auto all = replay(r, options);
  for (const auto& run : all.runs) {
    EXPECT_TRUE(run.exhausted);
    EXPECT_EQ(run.best.size(), 6u);
    EXPECT_EQ(all.ratio(run, 6), 1.0);
  }
  EXPECT_NE(replay_text(r, all).find("smaller than the budget"), std::string::npos);
}

TEST(Replay, RatiosAndEvaluationsToATolerance) {
  ReplayResult result{.optimum = 2.0};
  ReplayRun run{.best = {INFINITY, 3.0, 2.08, 2.01, 2.0}};
  EXPECT_TRUE(std::isinf(result.ratio(run, 1)));
  EXPECT_DOUBLE_EQ(result.ratio(run, 2), 1.5);
  EXPECT_DOUBLE_EQ(result.ratio(run, 99), 1.0);
  EXPECT_EQ(result.evaluations_to(run, 0.05), 3u);
  EXPECT_EQ(result.evaluations_to(run, 0.01), 4u);
  result.runs = {run, run, ReplayRun{.best = {4.0}}};
  std::size_t reached = 0;
  EXPECT_EQ(median_evaluations_to(result, 0.05, &reached), 3.0);
  EXPECT_EQ(reached, 2u);
  auto stats = ratio_stats(result, 5);
  EXPECT_DOUBLE_EQ(stats.median, 1.0);
  EXPECT_DOUBLE_EQ(stats.p75, 1.5);
  EXPECT_EQ(stats.without_valid, 0u);
}

// A repeat that finds nothing valid has no ratio: the statistics are over the repeats that did,
// the JSON counts both kinds and never prints null.
TEST(Replay, RepeatsWithoutAValidConfigurationAreCountedNotNull) {
  ReplayResult result{.optimum = 2.0};
  result.runs = {ReplayRun{.best = {2.0}}, ReplayRun{.best = {2.2}}, ReplayRun{.best = {INFINITY}}};
  const auto stats = ratio_stats(result, 1);
  EXPECT_EQ(stats.with_valid, 2u);
  EXPECT_EQ(stats.without_valid, 1u);
  EXPECT_DOUBLE_EQ(stats.mean, 1.05);
  EXPECT_DOUBLE_EQ(stats.median, 1.05);
  EXPECT_DOUBLE_EQ(stats.p90, 1.09);
  auto r = parse_csv_space(kCsv, "s.csv");
  result.optimum = r.optimum();
  const std::string json = replay_json(r, result);
  EXPECT_EQ(json.find("null"), std::string::npos) << json;
  const auto j = nlohmann::json::parse(json);
  EXPECT_EQ(j["best_over_opt"]["repeats_with_valid"], 2);
  EXPECT_EQ(j["best_over_opt"]["repeats_without_valid"], 1);
  EXPECT_TRUE(j["best_over_opt"].contains("mean"));
  EXPECT_TRUE(j["best_over_opt"].contains("p75"));
  EXPECT_FALSE(j["per_repeat"][2].contains("best"));
  EXPECT_FALSE(j["per_repeat"][2].contains("evals_to_best"));
  EXPECT_EQ(j["per_repeat"][2]["failures"], 0);
  EXPECT_NE(replay_text(r, result).find("1 of 3 repeats found no valid configuration within the budget (best/opt is over the others)"),
            std::string::npos);
}

TEST(Replay, NoRepeatWithAValidConfigurationGivesCountsNotNulls) {
  auto r = parse_csv_space(kCsv, "s.csv");
  ReplayResult result{.optimum = r.optimum()};
  result.runs = {ReplayRun{.best = {INFINITY, INFINITY}, .failures = 2}, ReplayRun{.best = {INFINITY}, .failures = 1}};
  const auto stats = ratio_stats(result, 2);
  EXPECT_EQ(stats.with_valid, 0u);
  EXPECT_EQ(stats.without_valid, 2u);
  const std::string json = replay_json(r, result);
  EXPECT_EQ(json.find("null"), std::string::npos) << json;
  EXPECT_EQ(json.find("NaN"), std::string::npos) << json;
  const auto j = nlohmann::json::parse(json);
  EXPECT_EQ(j["best_over_opt"], nlohmann::json::parse(R"({"repeats_with_valid": 0, "repeats_without_valid": 2})"));
  EXPECT_EQ(j["evals_to_5pct"], nlohmann::json::parse(R"({"reached": 0})"));
  EXPECT_EQ(j["per_repeat"][0]["failures"], 2);
  EXPECT_EQ(replay_text(r, result).find("best/opt"), std::string::npos);
}

// Per repeat: best found, evaluations to it and to within 5%, failures; CPU per ask, mean and max.
TEST(Replay, PerRepeatFiguresAndCostPerAsk) {
  auto r = parse_csv_space(kCsv, "s.csv");  // optimum 1.5
  ReplayResult result{.optimum = r.optimum()};
  result.runs = {ReplayRun{.best = {INFINITY, 3.0, 1.55, 1.55, 1.5, 1.5}, .failures = 1, .asks = 6, .ask_cpu_seconds = 0.006,
                           .ask_cpu_max_seconds = 0.004},
                 ReplayRun{.best = {2.0, 2.0}, .asks = 2, .ask_cpu_seconds = 0.002, .ask_cpu_max_seconds = 0.0015}};
  EXPECT_EQ(result.evaluations_to_best(result.runs[0]), 5u);
  EXPECT_EQ(result.evaluations_to_best(result.runs[1]), 1u);
  const auto j = nlohmann::json::parse(replay_json(r, result));
  EXPECT_EQ(j["per_repeat"][0]["best"], 1.5);
  EXPECT_EQ(j["per_repeat"][0]["evals_to_best"], 5);
  EXPECT_EQ(j["per_repeat"][0]["evals_to_5pct"], 3);
  EXPECT_EQ(j["per_repeat"][0]["failures"], 1);
  EXPECT_FALSE(j["per_repeat"][1].contains("evals_to_5pct"));
  EXPECT_DOUBLE_EQ(j["cpu_ms_per_ask"]["mean"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(j["cpu_ms_per_ask"]["max"].get<double>(), 4.0);
}

// Kernel Tuner before 1.0 recorded a failed configuration as the time 1e20.
TEST(Replay, OldKernelTunerFailureMarkerIsAFailure) {
  const auto r = parse_kernel_tuner_cache(
      R"({"tune_params": {"b": [1, 2, 3]}, "objective": "time", "cache": {
          "1": {"b": 1, "time": 2.5}, "2": {"b": 2, "time": 1e20}, "3": {"b": 3, "time": 3.0}}})",
      "old.json");
  EXPECT_EQ(r.failures(), 1u);
  EXPECT_EQ(r.optimum(), 2.5);
  EXPECT_EQ(r.objective(r.space().parse_configuration("b=2")), std::nullopt);
}

// The same markers in a CSV (an export of such a cache): 1e20 and Kernel Tuner's failure
// strings are failures that stay in the space; InvalidConfig is outside it, as in a cache.
TEST(Replay, KernelTunerFailureMarkersInACsvAreFailures) {
  const auto r = parse_csv_space(
      "b,time\n1,2.5\n2,1e20\n3,1E+20\n4,RuntimeFailedConfig\n5,CompilationFailedConfig\n6,InvalidConfig\n7,3.0\n", "kt.csv");
  EXPECT_EQ(r.size(), 6u);
  EXPECT_EQ(r.failures(), 4u);
  EXPECT_EQ(r.optimum(), 2.5);
  EXPECT_EQ(r.objective(r.space().parse_configuration("b=3")), std::nullopt);
  EXPECT_EQ(r.objective(r.space().parse_configuration("b=7")), 3.0);
  EXPECT_EQ(r.failure(r.space().parse_configuration("b=2")), Failure::unknown);  // 1e20 says nothing more
  EXPECT_EQ(r.failure(r.space().parse_configuration("b=4")), Failure::crash);
  EXPECT_EQ(r.failure(r.space().parse_configuration("b=5")), Failure::build);
  // Failures are not the best: replayed, they never enter a repeat's best.
  auto result = replay(r, {.strategy = "grid", .budget = 6, .repeats = 1});
  EXPECT_EQ(result.runs[0].failures, 4u);
  EXPECT_EQ(result.runs[0].best.back(), 2.5);
  EXPECT_EQ(csv_error("b,time\n1,Broken\n"), "s.csv:2: field 'time': 'Broken' is not a number (inf or nan marks a failed configuration)");
}

namespace {
// The kCsv kernel "on another GPU": names in another case, `layout` spelt `order`, an extra
// parameter `shmem`, a block size (128) and a tile (3) this space lacks.
constexpr const char* kOtherCsv =
    "BLOCK,TILE,order,shmem,time\n"
    "16,1,row,0,9.0\n"
    "16,1,row,1,2.5\n"
    "32,2,col,1,1.0\n"
    "32,1,col,1,inf\n"
    "64,2,row,1,3.0\n"
    "128,2,col,1,0.5\n"
    "16,3,row,1,0.7\n";

std::string warm_error(const WarmStartMatch& match) {
  try {
    warm_start_from(parse_csv_space(kCsv, "s.csv"), parse_csv_space(kOtherCsv, "o.csv"), match);
  } catch (const ReplayError& e) {
    return e.what();
  }
  return "no error";
}
}  // namespace

TEST(WarmStartFile, MatchesNamesButForCaseMapsAndPinsTheRest) {
  auto r = parse_csv_space(kCsv, "s.csv");
  auto other = parse_csv_space(kOtherCsv, "o.csv");
  auto data = warm_start_from(r, other, {.map = {{"layout", "order"}}, .fix = {{"shmem", "1"}}});
  EXPECT_EQ(data.source, "o.csv");
  EXPECT_EQ(data.rows, 7u);
  EXPECT_EQ(data.left_out, 1u);  // shmem=0
  // 128 is not a block size here, tile 3 not a tile, and 64,2,row is not a row here.
  EXPECT_EQ(data.ignored, 3u);
  ASSERT_EQ(data.observations.size(), 3u);
  std::vector<std::string> texts;
  for (const auto& o : data.observations) texts.push_back(r.space().to_text(o.config) + (o.failed() ? " failed" : ""));
  EXPECT_EQ(texts, (std::vector<std::string>{"block=16 tile=1 layout=row", "block=32 tile=1 layout=col failed",
                                             "block=32 tile=2 layout=col"}));
  EXPECT_EQ(data.observations[0].loss, std::vector<double>{2.5});
  // Maximised, the loss is negated as this replay's strategies expect.
  auto maximised = warm_start_from(parse_csv_space(kCsv, "s.csv", {.maximize = true}),
                                   parse_csv_space(kOtherCsv, "o.csv", {.maximize = true}),
                                   {.map = {{"layout", "order"}}, .fix = {{"shmem", "1"}}});
  EXPECT_EQ(maximised.observations[0].loss, std::vector<double>{-2.5});
}

TEST(WarmStartFile, AParameterOnlyThisSpaceHasCanBePinned) {
  // Read the other way round: o.csv's `shmem` has no column in s.csv; pinned, every row of s.csv
  // is read as shmem=1 (o.csv's own `order` matched by map, BLOCK and TILE but for case).
  auto other = parse_csv_space(kOtherCsv, "o.csv");
  auto mine = parse_csv_space(kCsv, "s.csv");
  auto data = warm_start_from(other, mine, {.map = {{"order", "layout"}}, .fix = {{"shmem", "1"}}});
  EXPECT_EQ(data.rows, 6u);
  EXPECT_EQ(data.left_out, 0u);
  std::vector<std::string> texts;
  for (const auto& o : data.observations) texts.push_back(other.space().to_text(o.config));
  // s.csv's rows read with shmem=1 that are rows of o.csv: 16,1,row; 32,1,col; 32,2,col.
  EXPECT_EQ(texts, (std::vector<std::string>{"BLOCK=16 TILE=1 order=row shmem=1", "BLOCK=32 TILE=1 order=col shmem=1",
                                             "BLOCK=32 TILE=2 order=col shmem=1"}));
}

TEST(WarmStartFile, ErrorsNameTheFileAndTheParameter) {
  EXPECT_EQ(warm_error({}), "warm start o.csv: no parameter for 'layout' of s.csv (its parameters: BLOCK, TILE, order, shmem; "
                            "--warm-start-map layout=NAME names it, --warm-start-fix layout=VALUE gives it one value)");
  EXPECT_EQ(warm_error({.fix = {{"layout", "diagonal"}}}),
            "warm start o.csv: --warm-start-fix layout=diagonal: 'diagonal' is not one of the values of 'layout' in s.csv");
  EXPECT_EQ(warm_error({.map = {{"layout", "order"}}}),
            "warm start o.csv: its parameter 'shmem' is not in s.csv (--warm-start-fix shmem=VALUE reads the rows with that value)");
  EXPECT_EQ(warm_error({.map = {{"layout", "ordre"}}}),
            "warm start o.csv: --warm-start-map layout=ordre: no parameter 'ordre' (its parameters: BLOCK, TILE, order, shmem)");
  EXPECT_EQ(warm_error({.map = {{"colour", "order"}}}),
            "warm start o.csv: --warm-start-map colour=order: s.csv has no parameter 'colour' (its parameters: block, tile, layout)");
  EXPECT_EQ(warm_error({.map = {{"layout", "order"}}, .fix = {{"shmem", "2"}}}),
            "warm start o.csv: --warm-start-fix shmem=2: '2' is not one of its values");
  EXPECT_EQ(warm_error({.map = {{"layout", "order"}}, .fix = {{"shmem", "1"}, {"TILE", "1"}}}),
            "warm start o.csv: --warm-start-fix TILE=1: 'TILE' is read as a parameter of s.csv");
}

TEST(WarmStartFile, ReplayReportsColdAndWarmSideBySide) {
  auto r = parse_csv_space(kCsv, "s.csv");
  auto data = warm_start_from(r, parse_csv_space(kOtherCsv, "o.csv"), {.map = {{"layout", "order"}}, .fix = {{"shmem", "1"}}});
  ReplayOptions options{.strategy = "bayes", .budget = 3, .repeats = 4, .seed = 2};
  auto cold = replay(r, options);
  options.warm_start = data.observations;
  auto warm = replay(r, options);
  // The warm start's best here (32,2,col, this space's optimum) is every repeat's first proposal.
  for (const auto& run : warm.runs) EXPECT_EQ(run.best.front(), 1.5);
  WarmStartReport report{data, warm};
  auto j = nlohmann::json::parse(replay_json(r, cold, &report));
  ASSERT_TRUE(j.contains("warm_start"));
  EXPECT_EQ(j["warm_start"]["file"], "o.csv");
  EXPECT_EQ(j["warm_start"]["used"], 3);
  EXPECT_EQ(j["warm_start"]["ignored"], 3);
  EXPECT_EQ(j["warm_start"]["evals_to_1pct"]["median"], 1.0);
  EXPECT_EQ(j["warm_start"]["best_over_opt"]["median"], 1.0);
  auto text = replay_text(r, cold, &report);
  EXPECT_NE(text.find("warm start o.csv: 3 of its 7 configurations used (3 not on this space's grid or not in it, 1 left out by "
                      "--warm-start-fix)"),
            std::string::npos)
      << text;
  EXPECT_EQ(replay_json(r, cold).find("warm_start"), std::string::npos);
}

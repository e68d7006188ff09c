// MetricsTest.cpp — the metrics protocol of Metrics.h: both line forms, exact error messages and
// the collector's handling of chunks split anywhere.
#include <gtest/gtest.h>

#include "flotilla/jobs/Metrics.h"

namespace flotilla::jobs {
namespace {

MetricList parsed_metrics(std::string_view line) {
  auto parsed = parse_metric_line(line);
  EXPECT_TRUE(std::holds_alternative<MetricList>(parsed)) << line;
  return std::holds_alternative<MetricList>(parsed) ? std::get<MetricList>(parsed) : MetricList{};
}

std::string parse_error(std::string_view line) {
  auto parsed = parse_metric_line(line);
  EXPECT_TRUE(std::holds_alternative<MetricLineError>(parsed)) << line;
  return std::holds_alternative<MetricLineError>(parsed) ? std::get<MetricLineError>(parsed).message
                                                         : "";
}

bool is_ordinary(std::string_view line) {
  return std::holds_alternative<NotAMetricLine>(parse_metric_line(line));
}

TEST(MetricLine, OnlyTheWallTimeObjectiveAddsTheRunnersMeasurement) {
  EXPECT_EQ(with_wall_time({{"a", 1}}, "a", 0.5), (MetricList{{"a", 1}}));
  EXPECT_EQ(with_wall_time({{"wall_time", 9}, {"a", 1}}, "wall_time", 0.5), (MetricList{{"a", 1}, {"wall_time", 0.5}}));
  EXPECT_EQ(with_wall_time({}, "wall_time", 0.25), (MetricList{{"wall_time", 0.25}}));
}

TEST(MetricLine, KeyValueForm) {
  EXPECT_EQ(parsed_metrics("flotilla-metric: gflops=12.5 time_s=0.0123"),
            (MetricList{{"gflops", 12.5}, {"time_s", 0.0123}}));
  EXPECT_EQ(parsed_metrics("flotilla-metric:\tn=-3  big=1.5e9 small=2E-3 p=+4 h=.5\r"),
            (MetricList{{"n", -3}, {"big", 1.5e9}, {"small", 2e-3}, {"p", 4}, {"h", 0.5}}));
  EXPECT_EQ(parsed_metrics("flotilla-metric: _a.b_2=1"), (MetricList{{"_a.b_2", 1}}));
  EXPECT_EQ(parsed_metrics("flotilla-metric: x=1 y=2 x=3"), (MetricList{{"x", 3}, {"y", 2}}));
  EXPECT_EQ(parsed_metrics("flotilla-metric:"), MetricList{});
}

TEST(MetricLine, JsonForm) {
  EXPECT_EQ(parsed_metrics(R"({"metrics": {"time_s": 0.0123, "gflops": 12.5}})"),
            (MetricList{{"time_s", 0.0123}, {"gflops", 12.5}}));  // printed order, not sorted
  EXPECT_EQ(parsed_metrics(R"(  {"run": 3, "metrics": {"n": 7}})"), (MetricList{{"n", 7}}));
  // A repeated name keeps its first place and takes the last value; a "metrics" deeper down is
  // someone else's; of a repeated top-level "metrics", the last is the document's.
  EXPECT_EQ(parsed_metrics(R"({"metrics": {"b": 1, "a": 2, "b": 3}, "log": {"metrics": {"z": 1}}})"),
            (MetricList{{"b", 3}, {"a", 2}}));
  EXPECT_EQ(parsed_metrics(R"({"metrics": {"x": 1}, "metrics": {"z": 2, "y": 3}})"), (MetricList{{"z", 2}, {"y", 3}}));
}

TEST(MetricLine, OrdinaryOutput) {
  EXPECT_TRUE(is_ordinary(""));
  EXPECT_TRUE(is_ordinary("gflops=12.5"));
  EXPECT_TRUE(is_ordinary(" flotilla-metric: x=1"));  // the prefix must start the line
  EXPECT_TRUE(is_ordinary("{not json"));
  EXPECT_TRUE(is_ordinary(R"({"level": "info", "msg": "hello"})"));
  EXPECT_TRUE(is_ordinary(R"([{"metrics": {"x": 1}}])"));
}

TEST(MetricLine, KeyValueErrors) {
  EXPECT_EQ(parse_error("flotilla-metric: gflops=abc"), "'gflops=abc': value is not a number");
  EXPECT_EQ(parse_error("flotilla-metric: gflops="), "'gflops=': value is not a number");
  EXPECT_EQ(parse_error("flotilla-metric: gflops=1.5x"), "'gflops=1.5x': value is not a number");
  EXPECT_EQ(parse_error("flotilla-metric: x=0x10"), "'x=0x10': value is not a number");
  EXPECT_EQ(parse_error("flotilla-metric: gflops"), "'gflops': expected name=value");
  EXPECT_EQ(parse_error("flotilla-metric: 9x=1"), "'9x=1': bad metric name '9x'");
  EXPECT_EQ(parse_error("flotilla-metric: a-b=1"), "'a-b=1': bad metric name 'a-b'");
  EXPECT_EQ(parse_error("flotilla-metric: =1"), "'=1': bad metric name ''");
  EXPECT_EQ(parse_error("flotilla-metric: x=1e999"), "'x=1e999': value is out of range");
}

TEST(MetricLine, NonFiniteValuesAreRejected) {
  EXPECT_EQ(parse_error("flotilla-metric: x=nan"), "'x=nan': value is not finite");
  EXPECT_EQ(parse_error("flotilla-metric: x=NaN"), "'x=NaN': value is not finite");
  EXPECT_EQ(parse_error("flotilla-metric: x=inf"), "'x=inf': value is not finite");
  EXPECT_EQ(parse_error("flotilla-metric: x=-Infinity"), "'x=-Infinity': value is not finite");
  EXPECT_EQ(parse_error(R"({"metrics": {"x": NaN}})"),
            "value is not finite (NaN and Infinity are not JSON numbers)");  // Python's json.dumps
}

TEST(MetricLine, JsonErrors) {
  EXPECT_EQ(parse_error(R"({"metrics": {"x": "abc"}})"), R"('x="abc"': value is not a number)");
  EXPECT_EQ(parse_error(R"({"metrics": {"ok": true}})"), "'ok=true': value is not a number");
  EXPECT_EQ(parse_error(R"({"metrics": {"9x": 1}})"), "'9x=1': bad metric name '9x'");
  EXPECT_EQ(parse_error(R"({"metrics": [1, 2]})"), "\"metrics\" is not an object");
  EXPECT_EQ(parse_error(R"({"metrics": {"x": 1},})"),
            "metrics line is not valid JSON (at column 22)");
}

TEST(MetricCollector, ChunksSplitAnywhere) {
  const std::string output =
      "hello\nflotilla-metric: gflops=12.5\n{\"metrics\": {\"time_s\": 2}}\nflotilla-metric: "
      "gflops=13";
  for (std::size_t chunk = 1; chunk <= output.size(); ++chunk) {
    MetricCollector collector;
    for (std::size_t pos = 0; pos < output.size(); pos += chunk)
      collector.feed(std::string_view(output).substr(pos, chunk));
    collector.finish();
    EXPECT_EQ(collector.metrics(), (MetricList{{"gflops", 13}, {"time_s", 2}})) << chunk;
    EXPECT_FALSE(collector.error().has_value());
  }
}

TEST(MetricCollector, LastLineWithoutNewlineNeedsFinish) {
  MetricCollector collector;
  collector.feed("flotilla-metric: x=1");
  EXPECT_TRUE(collector.metrics().empty());
  collector.finish();
  EXPECT_EQ(collector.metrics(), (MetricList{{"x", 1}}));
}

TEST(MetricCollector, FirstErrorWithLineNumber) {
  MetricCollector collector;
  collector.feed(
      "a\nb\nflotilla-metric: gflops=abc\nflotilla-metric: y=nan\nflotilla-metric: z=1\n");
  collector.finish();
  EXPECT_EQ(collector.error(), "output line 3: 'gflops=abc': value is not a number");
  EXPECT_EQ(collector.metrics(), (MetricList{{"z", 1}}));
}

TEST(MetricCollector, OverlongLinesAreNotMetricLines) {
  MetricCollector collector;
  const std::string long_line = "flotilla-metric: x=1 " + std::string(70'000, 'y') + "=abc";
  for (std::size_t pos = 0; pos < long_line.size(); pos += 4096)
    collector.feed(long_line.substr(pos, 4096));
  collector.feed("\nflotilla-metric: z=2\n" + long_line + "\nflotilla-metric: w=3");
  collector.finish();
  EXPECT_FALSE(collector.error().has_value());
  EXPECT_EQ(collector.metrics(), (MetricList{{"z", 2}, {"w", 3}}));
}

TEST(MetricCollector, LineNumbersCountOverlongLines) {
  MetricCollector collector;
  collector.feed(std::string(70'000, 'y') + "\nflotilla-metric: x=abc\n");
  EXPECT_EQ(collector.error(), "output line 2: 'x=abc': value is not a number");
}

}  // namespace
}  // namespace flotilla::jobs

namespace flotilla::jobs {
namespace {

// Hostile output (issue: one odd JSON line ended the campaign for good): every line is a metric
// error or ordinary output, never an exception.
TEST(MetricLine, HostileJsonNeverThrows) {
  EXPECT_EQ(parse_error(R"({"metrics": {"other": 1}, "note": 1e999})"),
            "metrics line cannot be read as JSON: number overflow parsing '1e999'");
  EXPECT_TRUE(is_ordinary(R"({"note": 1e999})"));  // no "metrics": someone else's JSON
  EXPECT_EQ(parse_error(std::string("{\"metrics\": {\"x\": 1}}\0", 22)), "metrics line contains a NUL byte");
  EXPECT_EQ(parse_error(std::string("flotilla-metric: x=1\0", 21)), std::string("'x=1") + '\0' + "': value is not a number");
  // Invalid UTF-8 in a member name or value: the message shows it replaced, and nothing throws.
  EXPECT_FALSE(parse_error("{\"metrics\": {\"x\xff\": 1}}").empty());
  EXPECT_FALSE(parse_error("{\"metrics\": {\"x\": \"\xff\"}}").empty());
  // A name the results file cannot hold whole is refused, not cut.
  const std::string long_name(64, 'm');
  EXPECT_EQ(parse_error("flotilla-metric: " + long_name + "=1"),
            "'" + long_name + "=1': metric name is longer than 63 bytes");
  EXPECT_EQ(parsed_metrics("flotilla-metric: " + long_name.substr(1) + "=1").size(), 1u);
}

}  // namespace
}  // namespace flotilla::jobs

namespace flotilla::jobs {
namespace {

// Issue 32: a task printing a new metric name per line (100,000 of them) took 19 s to parse, and
// every name was stored. Past 10,000 distinct names the trial fails with the first name too many;
// names already seen still take new values, and the metrics kept are the first 10,000 in order.
TEST(MetricCollector, DistinctNamesAreCappedWithAReason) {
  MetricCollector collector;
  std::string output;
  for (int i = 0; i <= 10'000; ++i) output += "flotilla-metric: m" + std::to_string(i) + "=" + std::to_string(i) + "\n";
  output += "flotilla-metric: m0=-1 extra=2\n";
  collector.feed(output);
  collector.finish();
  EXPECT_EQ(collector.error(), "output line 10001: 'm10000': a trial may report at most 10000 distinct metric names");
  ASSERT_EQ(collector.metrics().size(), 10'000u);
  EXPECT_EQ(collector.metrics().front(), (std::pair<std::string, double>{"m0", -1}));
  EXPECT_EQ(collector.metrics().back(), (std::pair<std::string, double>{"m9999", 9999}));
}

// The same cap when the names come many to a line, in either form (each line under 64 KiB).
TEST(MetricCollector, TheCapCountsNamesWithinALine) {
  std::string key_value = "flotilla-metric:", json = R"({"metrics": {)";
  for (int i = 0; i < 6'000; ++i) key_value += " n" + std::to_string(i) + "=1";
  for (int i = 0; i < 4'002; ++i) json += (i ? ",\"j" : "\"j") + std::to_string(i) + "\":1";
  MetricCollector collector;
  collector.feed(key_value + "\n" + json + "}}\n");
  EXPECT_EQ(collector.error(), "output line 2: 'j4000': a trial may report at most 10000 distinct metric names");
  ASSERT_EQ(collector.metrics().size(), 10'000u);
  EXPECT_EQ(collector.metrics().back().first, "j3999");
}

}  // namespace
}  // namespace flotilla::jobs

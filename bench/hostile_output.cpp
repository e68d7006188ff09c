// hostile_output — what a hostile task or checker output costs flotilla (issue 32;
// docs/metrics.md, docs/tests.md), each next to a baseline measured in the same run:
//  - the metrics collector on a task printing N distinct metric names (100,000 took 18.8 s and
//    2,000,000 timed out before the cap), next to N metric lines of one name: parsing the lines
//    costs that much anyway;
//  - 20 JSON metric lines of 64 KiB, each of about 6,600 distinct names (36 ms a line while
//    objects were ordered_json), next to the same names in key-value lines;
//  - a per-file summary found over 40,000 progress lines with a "last occurrence" lookahead
//    pattern (quadratic in the output it searches), next to the summary line alone.
// Best of 3 runs each (the machine is shared). Ends with one JSON line of the figures.
// The correctness half, or it exits 1 naming what is wrong: past the cap the collector keeps
// exactly the first MetricCollector::kMaxNames names and fails the trial naming the first name
// past them and its line; one name printed N times is kept once with its last value; the 64 KiB
// lines are collected whole and clean; the summary found is the last line's, with its numbers.
//   ./build/bench/hostile_output [--names N,M] [--progress-lines L]
// Full size: the defaults, --names 100000,2000000 --progress-lines 40000; the ctest
// bench_hostile_output_checks runs --names 12000 --progress-lines 2000. Runs:
// bench/hostile_output/RESULTS.md.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <cstdlib>
#include <string>
#include <vector>

#include "flotilla/jobs/Metrics.h"
#include "flotilla/suites/PerFile.h"

namespace {

using Clock = std::chrono::steady_clock;

template <class F>
double best_seconds(F&& f) {
  double best = 1e300;
  for (int run = 0; run < 3; ++run) {
    const auto start = Clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());
  }
  return best;
}

// "flotilla-metric: m0=1" ... with a new name per line, or "flotilla-metric: m=0" ... with one.
std::string metric_lines(int count, bool distinct) {
  std::string text;
  for (int i = 0; i < count; ++i)
    text +=
        distinct ? "flotilla-metric: m" + std::to_string(i) + "=1\n" : "flotilla-metric: m=" + std::to_string(i) + "\n";
  return text;
}

// Seconds to collect `output`; the collector's verdict goes to `error` so the work is not dropped.
double collect_seconds(const std::string& output, std::string& error) {
  return best_seconds([&] {
    flotilla::jobs::MetricCollector collector;
    collector.feed(output);
    collector.finish();
    error = collector.error().value_or("");
  });
}

// Every problem found, one line each; the bench exits 1 when there is one.
std::vector<std::string> problems;

void expect(bool ok, const std::string& what) {
  if (!ok) problems.push_back(what);
}

// What the collector kept of `output`: how many names, the first and last kept, and its error.
struct Collected {
  std::size_t names = 0;
  std::string first, last;
  double last_value = 0;
  std::string error;
};

Collected collect(const std::string& output) {
  flotilla::jobs::MetricCollector collector;
  collector.feed(output);
  collector.finish();
  Collected c{.names = collector.metrics().size(), .error = collector.error().value_or("")};
  if (c.names) {
    c.first = collector.metrics().front().first;
    c.last = collector.metrics().back().first;
    c.last_value = collector.metrics().back().second;
  }
  return c;
}

std::vector<int> numbers(const char* text) {
  std::vector<int> out;
  for (const char* p = text; *p;) {
    char* end = nullptr;
    out.push_back(static_cast<int>(std::strtol(p, &end, 10)));
    p = *end == ',' ? end + 1 : end;
    if (out.back() <= 0 || (*end && *end != ',')) return {};
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> name_counts{100'000, 2'000'000};
  int progress_lines = 40'000;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--names")
      name_counts = numbers(argv[i + 1]);
    else if (flag == "--progress-lines")
      progress_lines = std::atoi(argv[i + 1]);
    else
      name_counts.clear();
  }
  if (argc % 2 == 0 || name_counts.empty() || progress_lines <= 0)
    return std::fprintf(stderr, "usage: hostile_output [--names N,M,...] [--progress-lines L]\n"), 2;
  constexpr std::size_t cap = flotilla::jobs::MetricCollector::kMaxNames;
  nlohmann::ordered_json figures{{"bench", "hostile_output"}};
  for (const int names : name_counts) {
    std::string error, ignored;
    const std::string distinct_lines = metric_lines(names, true), one_name_lines = metric_lines(names, false);
    const double distinct = collect_seconds(distinct_lines, error);
    const double one_name = collect_seconds(one_name_lines, ignored);
    const std::string key = "metrics_" + std::to_string(names);
    figures[key + "_distinct_s"] = distinct;
    figures[key + "_one_name_s"] = one_name;
    figures[key + "_ratio"] = distinct / one_name;
    figures[key + "_capped"] = error.find("at most 10000 distinct metric names") != std::string::npos;
    const Collected kept = collect(distinct_lines), once = collect(one_name_lines);
    const std::size_t expected = std::min<std::size_t>(static_cast<std::size_t>(names), cap);
    expect(kept.names == expected && kept.first == "m0" && kept.last == "m" + std::to_string(expected - 1),
           std::to_string(names) + " distinct names: kept " + std::to_string(kept.names) + " (" + kept.first + " .. " +
               kept.last + "), not the first " + std::to_string(expected));
    const std::string past = "output line " + std::to_string(cap + 1) + ": ";
    expect(static_cast<std::size_t>(names) <= cap
               ? kept.error.empty()
               : kept.error.rfind(past, 0) == 0 && kept.error.find("'m" + std::to_string(cap) + "'") != std::string::npos,
           std::to_string(names) + " distinct names: the collector's error is '" + kept.error + "'");
    expect(once.names == 1 && once.last == "m" && once.last_value == names - 1 && once.error.empty(),
           std::to_string(names) + " lines of one name: kept " + std::to_string(once.names) + " name(s), m=" +
               std::to_string(once.last_value) + (once.error.empty() ? "" : ", error '" + once.error + "'"));
  }
  std::string json, key_value;
  int names_a_line = 0;
  for (int line = 0; line < 20; ++line) {
    std::string names = "{\"metrics\": {", pairs = "flotilla-metric:";
    int i = 0;
    for (; names.size() < 65'000; ++i) {
      names += (i ? ",\"a" : "\"a") + std::to_string(i) + "\":1";
      pairs += " a" + std::to_string(i) + "=1";
    }
    names_a_line = i;
    json += names + "}}\n";
    key_value += pairs + "\n";
  }
  std::string json_error, key_value_error;
  figures["metrics_json_lines_s"] = collect_seconds(json, json_error);
  figures["metrics_key_value_lines_s"] = collect_seconds(key_value, key_value_error);
  figures["metrics_lines_clean"] = json_error.empty() && key_value_error.empty();
  for (const auto& [form, lines] : {std::pair{"JSON", &json}, std::pair{"key-value", &key_value}}) {
    const Collected c = collect(*lines);
    expect(c.error.empty() && c.names == static_cast<std::size_t>(names_a_line),
           std::string(form) + " lines of " + std::to_string(names_a_line) + " names: kept " + std::to_string(c.names) +
               (c.error.empty() ? "" : ", error '" + c.error + "'"));
  }
  std::string progress;
  for (int i = 0; i < progress_lines; ++i) progress += "1 errors out of " + std::to_string(i) + " tests so far\n";
  const std::string summary_line = "0 errors out of " + std::to_string(progress_lines) + " tests in a.test\n";
  const flotilla::suites::SummaryPattern last(R"((?<errors>\d+) errors out of (?<tests>\d+)(?![\s\S]*errors out of))");
  bool found = false;
  figures["progress_lines"] = progress_lines;
  figures["summary_40000_lines_s"] =
      best_seconds([&] { found = last.last_match(progress + summary_line).has_value(); });
  figures["summary_alone_s"] = best_seconds([&] { found = found && last.last_match(summary_line).has_value(); });
  figures["summary_found"] = found;
  const auto match = last.last_match(progress + summary_line);
  const flotilla::suites::Numbers want{{"errors", 0}, {"tests", progress_lines}};
  expect(match && match->error.empty() && match->numbers == want,
         "the summary after " + std::to_string(progress_lines) + " progress lines: " +
             (match ? "'" + match->text + "' " + match->error : std::string("not found")));
  std::printf("%s\n", figures.dump().c_str());
  for (const auto& problem : problems) std::fprintf(stderr, "hostile_output: %s\n", problem.c_str());
  return problems.empty() ? 0 : 1;
}

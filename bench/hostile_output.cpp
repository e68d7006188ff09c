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
//   ./build/bench/hostile_output
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

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

}  // namespace

int main() {
  nlohmann::ordered_json figures{{"bench", "hostile_output"}};
  for (const int names : {100'000, 2'000'000}) {
    std::string error, ignored;
    const double distinct = collect_seconds(metric_lines(names, true), error);
    const double one_name = collect_seconds(metric_lines(names, false), ignored);
    const std::string key = "metrics_" + std::to_string(names);
    figures[key + "_distinct_s"] = distinct;
    figures[key + "_one_name_s"] = one_name;
    figures[key + "_ratio"] = distinct / one_name;
    figures[key + "_capped"] = error.find("at most 10000 distinct metric names") != std::string::npos;
  }
  std::string json, key_value;
  for (int line = 0; line < 20; ++line) {
    std::string names = "{\"metrics\": {", pairs = "flotilla-metric:";
    for (int i = 0; names.size() < 65'000; ++i) {
      names += (i ? ",\"a" : "\"a") + std::to_string(i) + "\":1";
      pairs += " a" + std::to_string(i) + "=1";
    }
    json += names + "}}\n";
    key_value += pairs + "\n";
  }
  std::string json_error, key_value_error;
  figures["metrics_json_lines_s"] = collect_seconds(json, json_error);
  figures["metrics_key_value_lines_s"] = collect_seconds(key_value, key_value_error);
  figures["metrics_lines_clean"] = json_error.empty() && key_value_error.empty();
  std::string progress;
  for (int i = 0; i < 40'000; ++i) progress += "1 errors out of " + std::to_string(i) + " tests so far\n";
  const std::string summary_line = "0 errors out of 40000 tests in a.test\n";
  const flotilla::suites::SummaryPattern last(R"((?<errors>\d+) errors out of (?<tests>\d+)(?![\s\S]*errors out of))");
  bool found = false;
  figures["summary_40000_lines_s"] =
      best_seconds([&] { found = last.last_match(progress + summary_line).has_value(); });
  figures["summary_alone_s"] = best_seconds([&] { found = found && last.last_match(summary_line).has_value(); });
  figures["summary_found"] = found;
  std::printf("%s\n", figures.dump().c_str());
  return 0;
}

// Metrics.h — the metrics protocol between a task's output and flotilla (docs/metrics.md).
//
// A task reports metrics on stdout or stderr, one of two line forms, anywhere in its output:
//   flotilla-metric: gflops=12.5 time_s=0.0123
//   {"metrics": {"gflops": 12.5, "time_s": 0.0123}}
// Key-value form: the line starts with "flotilla-metric:", then whitespace-separated name=value
// pairs. Names: [A-Za-z_][A-Za-z0-9_.]* . Values: decimal or scientific numbers.
// JSON form: a line whose first non-blank character is '{', that parses as a JSON object and has a
// "metrics" member that is an object of numbers. Other JSON lines are ordinary output.
// A recognised metric line with a bad name, an unparsable value or a non-finite value (nan, inf)
// is a protocol error: the trial fails with that reason. So is a name past the
// MetricCollector::kMaxNames distinct names a trial may report. All functions here are pure.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "flotilla/jobs/Task.h"

namespace flotilla::jobs {

struct NotAMetricLine {};
struct MetricLineError {
  std::string message;  // e.g. "'gflops=abc': value is not a number"
};
using MetricLineParse = std::variant<NotAMetricLine, MetricList, MetricLineError>;

// Parses one line (without its newline).
MetricLineParse parse_metric_line(std::string_view line);

// A task whose objective is `wall_time` is timed by the runner that starts it, as hyperfine does:
// the metric is the seconds from its start to its exit (a monotonic clock), whatever it prints.
inline constexpr std::string_view kWallTimeMetric = "wall_time";
// `metrics` with the runner's measurement when `objective` asks for it: a `wall_time` the task
// printed is replaced (the runner's clock decides), else the list is returned as it is.
MetricList with_wall_time(MetricList metrics, std::string_view objective, double seconds);

// Collects metrics from a stream of output chunks split anywhere, line by line, without keeping
// the whole output. Lines longer than 64 KiB are not metric lines. At most kMaxNames distinct
// names are kept: a new name past them is a protocol error (the trial fails), so a task that
// prints a name per step or per element costs bounded time and memory, here and in the results
// file, instead of a slow campaign that stores a million metrics per trial.
class MetricCollector {
 public:
  static constexpr std::size_t kMaxNames = 10'000;

  void feed(std::string_view chunk);
  void finish();                                   // a last line without '\n' counts too
  const MetricList& metrics() const { return m_metrics; }
  // First protocol error, with its line number: "output line 3: 'gflops=abc': value is not a number"
  const std::optional<std::string>& error() const { return m_error; }

 private:
  void take_line(std::string_view line);
  std::string m_partial;
  bool m_overlong = false;
  std::size_t m_line_number = 0;
  MetricList m_metrics;
  std::map<std::string, std::size_t, std::less<>> m_index;  // name -> its place in m_metrics
  std::optional<std::string> m_error;
};

}  // namespace flotilla::jobs

// fuzz_metrics — the metrics protocol (jobs/include/flotilla/jobs/Metrics.h): every line through
// parse_metric_line, and the whole input through MetricCollector twice, once in one chunk and
// once in chunks split at pseudo-random places (sizes drawn from the first byte and the size, so
// an input replays the same way).
// Normal results: metrics, NotAMetricLine, MetricLineError (a value, never an exception).
// Invariants: accepted names follow [A-Za-z_][A-Za-z0-9_.]* in at most 63 bytes, values are
// finite, and how the output was split never changes what the collector collects.
#include <cmath>

#include "FuzzUtil.h"
#include "flotilla/jobs/Metrics.h"

using namespace flotilla;

namespace {

bool metric_name(std::string_view name) {
  if (name.empty() || name.size() > 63) return false;
  const auto letter = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; };
  if (!letter(name.front())) return false;
  for (char c : name)
    if (!letter(c) && !(c >= '0' && c <= '9') && c != '.') return false;
  return true;
}

void check_lines(std::string_view text) {
  while (true) {
    const std::size_t end = text.find('\n');
    const auto parsed = jobs::parse_metric_line(text.substr(0, end));
    if (const auto* metrics = std::get_if<jobs::MetricList>(&parsed)) {
      for (const auto& [name, value] : *metrics) {
        FUZZ_CHECK(metric_name(name), "a metric name outside the protocol was accepted");
        FUZZ_CHECK(std::isfinite(value), "a non-finite metric value was accepted");
      }
    }
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  check_lines(text);

  jobs::MetricCollector whole;
  whole.feed(text);
  whole.finish();

  jobs::MetricCollector split;
  std::uint64_t state = (size > 0 ? data[0] : 0) * 0x9E3779B97F4A7C15ull + size + 1;
  const std::size_t largest = (state & 1) ? 70'000 : 7;  // across the 64 KiB line limit, or tiny
  for (std::size_t at = 0; at < size;) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;  // xorshift64
    const std::size_t n = std::min<std::size_t>(size - at, 1 + state % largest);
    split.feed(text.substr(at, n));
    at += n;
  }
  split.finish();

  FUZZ_CHECK(whole.metrics() == split.metrics(), "metrics depend on where the output was split");
  FUZZ_CHECK(whole.error() == split.error(), "the protocol error depends on where the output was split");
  return 0;
}

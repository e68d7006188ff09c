// Metrics.cpp — the metrics protocol (Metrics.h, docs/metrics.md): pure functions over lines.
//
// Invariants: a line is either not a metric line, a list of finite metrics, or one error that
// quotes the offending "name=value" text. Merging keeps first-seen order and lets a later value
// of a name replace the earlier one in place. The collector never holds more than one line, nor
// more than MetricCollector::kMaxNames names.
#include "flotilla/jobs/Metrics.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>
#include <vector>

namespace flotilla::jobs {
namespace {

constexpr std::string_view kPrefix = "flotilla-metric:";
constexpr std::size_t kMaxLineBytes = 64 * 1024;
constexpr std::size_t kMaxNameBytes = 63;  // the results file's field (Schema.h): longer would be cut

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

bool is_name_start(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }

bool is_valid_name(std::string_view name) {
  if (name.empty() || !is_name_start(name.front())) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return is_name_start(c) || (c >= '0' && c <= '9') || c == '.'; });
}

using NameIndex = std::map<std::string, std::size_t, std::less<>>;  // name -> its place in a MetricList

// A name already there keeps its place and takes the new value; a new one is appended. Looked up
// through the index: a linear search of the list made a task printing 100,000 distinct names
// take 19 s to parse (issue 32).
void merge_metric(MetricList& metrics, NameIndex& index, std::string_view name, double value) {
  if (const auto it = index.find(name); it != index.end()) {
    metrics[it->second].second = value;
    return;
  }
  index.emplace(std::string(name), metrics.size());
  metrics.emplace_back(std::string(name), value);
}

// Returns the value, or why the text is not an acceptable one. from_chars also accepts "nan" and
// "inf" spellings; they are caught by the finiteness check so that the message says why.
std::variant<double, std::string> parse_number(std::string_view text) {
  if (text.size() > 1 && text.front() == '+' && text[1] != '-' && text[1] != '+')
    text.remove_prefix(1);  // from_chars rejects an explicit '+', which people do write
  double value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec == std::errc::result_out_of_range) return std::string("value is out of range");
  if (ec != std::errc() || ptr != end || text.empty()) return std::string("value is not a number");
  if (!std::isfinite(value)) return std::string("value is not finite");
  return value;
}

MetricLineParse parse_key_values(std::string_view rest) {
  MetricList metrics;
  NameIndex index;
  std::size_t pos = 0;
  while (pos < rest.size()) {
    if (is_blank(rest[pos])) {
      ++pos;
      continue;
    }
    std::size_t end = pos;
    while (end < rest.size() && !is_blank(rest[end])) ++end;
    const std::string_view token = rest.substr(pos, end - pos);
    pos = end;
    const std::string quoted = "'" + std::string(token) + "': ";
    const std::size_t eq = token.find('=');
    if (eq == std::string_view::npos) return MetricLineError{quoted + "expected name=value"};
    const std::string_view name = token.substr(0, eq);
    if (!is_valid_name(name))
      return MetricLineError{quoted + "bad metric name '" + std::string(name) + "'"};
    if (name.size() > kMaxNameBytes)
      return MetricLineError{quoted + "metric name is longer than " + std::to_string(kMaxNameBytes) + " bytes"};
    auto value = parse_number(token.substr(eq + 1));
    if (auto* message = std::get_if<std::string>(&value)) return MetricLineError{quoted + *message};
    merge_metric(metrics, index, name, std::get<double>(value));
  }
  return metrics;
}

// A '{' line that mentions "metrics" but is not JSON is almost certainly a broken metric line,
// most often Python's json.dumps writing NaN or Infinity; say so instead of ignoring it.
MetricLineParse explain_bad_json(std::string_view line) {
  if (line.find("\"metrics\"") == std::string_view::npos) return NotAMetricLine{};
  if (line.find("NaN") != std::string_view::npos || line.find("Infinity") != std::string_view::npos)
    return MetricLineError{"value is not finite (NaN and Infinity are not JSON numbers)"};
  try {
    [[maybe_unused]] const auto reparsed = nlohmann::json::parse(line);
  } catch (const nlohmann::json::parse_error& error) {
    return MetricLineError{"metrics line is not valid JSON (at column " +
                           std::to_string(error.byte) + ")"};
  }
  return NotAMetricLine{};  // unreachable in practice: the first parse failed
}

// A JSON line, and the members of its "metrics" object in printed order (which MetricList
// promises). Parsed as nlohmann::json, whose objects are maps: ordered_json searches a vector
// for every member it adds, 36 ms for one 64 KiB line of distinct names (issue 32). The order
// comes from the parser's key events inside the object that is a top-level "metrics" value.
struct JsonLine {
  nlohmann::json doc;
  std::vector<std::string> metric_names;
};

JsonLine parse_json_line(std::string_view line) {
  using Event = nlohmann::json::parse_event_t;
  JsonLine parsed;
  std::string top_key;
  bool in_metrics = false;
  const auto note_names = [&](int depth, Event event, nlohmann::json& value) {
    if (depth == 1 && event == Event::key) top_key = value.get<std::string>();
    if (depth == 1 && event == Event::object_start && top_key == "metrics") {
      in_metrics = true;
      parsed.metric_names.clear();  // a repeated "metrics": the last one is the document's
    }
    if (depth == 1 && event == Event::object_end) in_metrics = false;
    if (depth == 2 && event == Event::key && in_metrics) parsed.metric_names.push_back(value.get<std::string>());
    return true;
  };
  parsed.doc = nlohmann::json::parse(line, note_names, /*allow_exceptions=*/false);
  return parsed;
}

MetricLineParse parse_json_object(std::string_view line) {
  const auto [doc, names] = parse_json_line(line);
  if (doc.is_discarded()) return explain_bad_json(line);
  if (!doc.is_object()) return NotAMetricLine{};
  const auto it = doc.find("metrics");
  if (it == doc.end()) return NotAMetricLine{};
  if (!it->is_object()) return MetricLineError{"\"metrics\" is not an object"};
  MetricList metrics;
  NameIndex index;
  for (const auto& name : names) {
    const auto& value = it->at(name);  // every name noted is a member of the last "metrics"
    const std::string quoted =
        "'" + name + "=" + value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "': ";
    if (!is_valid_name(name)) return MetricLineError{quoted + "bad metric name '" + name + "'"};
    if (name.size() > kMaxNameBytes)
      return MetricLineError{quoted + "metric name is longer than " + std::to_string(kMaxNameBytes) + " bytes"};
    if (!value.is_number()) return MetricLineError{quoted + "value is not a number"};
    const double number = value.get<double>();
    if (!std::isfinite(number)) return MetricLineError{quoted + "value is not finite"};
    merge_metric(metrics, index, name, number);
  }
  return metrics;
}

// A task's output is untrusted: whatever its JSON line holds (a number too large for a double,
// invalid UTF-8, a NUL), the result is a metric error or an ordinary line, never an exception
// that would end the campaign.
MetricLineParse parse_json(std::string_view line) {
  const bool claims_metrics = line.find("\"metrics\"") != std::string_view::npos;
  if (line.find('\0') != std::string_view::npos)
    return claims_metrics ? MetricLineParse{MetricLineError{"metrics line contains a NUL byte"}} : NotAMetricLine{};
  try {
    return parse_json_object(line);
  } catch (const nlohmann::json::exception& error) {
    if (!claims_metrics) return NotAMetricLine{};
    std::string what = error.what();  // "[json.exception.out_of_range.406] number overflow parsing '1e999'"
    if (auto close = what.find("] "); what.starts_with("[json.exception.") && close != std::string::npos)
      what = what.substr(close + 2);
    return MetricLineError{"metrics line cannot be read as JSON: " + what};
  }
}

}  // namespace

MetricLineParse parse_metric_line(std::string_view line) {
  if (line.starts_with(kPrefix)) return parse_key_values(line.substr(kPrefix.size()));
  const auto first = std::find_if_not(line.begin(), line.end(), is_blank);
  if (first != line.end() && *first == '{') return parse_json(line);
  return NotAMetricLine{};
}

void MetricCollector::feed(std::string_view chunk) {
  while (!chunk.empty()) {
    const std::size_t newline = chunk.find('\n');
    const std::string_view piece = chunk.substr(0, newline);
    const bool complete = newline != std::string_view::npos;
    chunk.remove_prefix(complete ? newline + 1 : chunk.size());
    if (complete && m_partial.empty() && !m_overlong) {  // common case: a whole line, no copy
      ++m_line_number;
      if (piece.size() <= kMaxLineBytes) take_line(piece);
      continue;
    }
    if (!m_overlong && m_partial.size() + piece.size() > kMaxLineBytes) {
      m_overlong = true;  // not a metric line; drop it instead of buffering it whole
      m_partial = std::string();
    }
    if (!m_overlong) m_partial.append(piece);
    if (!complete) return;
    ++m_line_number;
    if (!m_overlong) take_line(m_partial);
    m_partial.clear();
    m_overlong = false;
  }
}

void MetricCollector::finish() {
  if (!m_partial.empty() || m_overlong) feed("\n");
}

void MetricCollector::take_line(std::string_view line) {
  auto parsed = parse_metric_line(line);
  if (auto* metrics = std::get_if<MetricList>(&parsed)) {
    for (const auto& [name, value] : *metrics) {
      if (m_metrics.size() >= kMaxNames && !m_index.contains(name)) {
        // A failure rather than a note: silently dropping names could drop the objective and
        // fail the trial later with a misleading "missing" reason.
        if (!m_error)
          m_error = "output line " + std::to_string(m_line_number) + ": '" + name + "': a trial may report at most " +
                    std::to_string(kMaxNames) + " distinct metric names";
        continue;
      }
      merge_metric(m_metrics, m_index, name, value);
    }
  } else if (auto* error = std::get_if<MetricLineError>(&parsed); error && !m_error) {
    m_error = "output line " + std::to_string(m_line_number) + ": " + error->message;
  }
}

MetricList with_wall_time(MetricList metrics, std::string_view objective, double seconds) {
  if (objective != kWallTimeMetric) return metrics;
  std::erase_if(metrics, [](const auto& metric) { return metric.first == kWallTimeMetric; });
  metrics.emplace_back(std::string(kWallTimeMetric), seconds);
  return metrics;
}

}  // namespace flotilla::jobs

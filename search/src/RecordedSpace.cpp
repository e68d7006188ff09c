// RecordedSpace.cpp — reading recorded tuning spaces: CSV tables and Kernel Tuner caches.
//
// Both formats become rows of (parameter texts, objective or failure); one builder turns the
// rows into typed parameters and a lookup table. A column whose values are all integers is an
// int parameter (values ascending); all numbers, an ordinal one (labels in numeric order);
// anything else, an enum (labels in order of appearance). Parsing is pure; only
// load_recorded_space touches the file system (through zlib's gzread, which reads plain and
// gzip-compressed files alike).
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "flotilla/search/Replay.h"
#include "flotilla/search/Strategy.h"
#include "TextUtil.h"

namespace flotilla::search {

struct RecordedSpace::Table {
  std::unordered_map<Configuration, double, ConfigurationHash> values;  // NaN: failed
  std::unordered_map<Configuration, Failure, ConfigurationHash> kinds;  // failures whose kind is known
  std::size_t failures = 0;
  double optimum = 0;
  Configuration optimum_config;
};

namespace {

struct Row {
  std::vector<std::string> fields;  // parameter values, in column order
  std::optional<double> value;      // nullopt: failed
  Failure failure = Failure::unknown;
  std::string where;                // "file:line" or "file: cache entry 'key'"
};

std::optional<double> numeric(const std::string& text) {
  auto v = to_double(text);
  if (!v && !text.empty() && (text[0] == '+')) v = to_double(std::string_view(text).substr(1));
  return v;
}

// Kernel Tuner before 1.0 recorded a failed configuration as the time 1e20 (a sentinel, not a
// measurement), in cache files and in CSV exports of them alike.
constexpr double kKernelTunerFailureTime = 1e20;

// inf and nan, or Kernel Tuner's failure strings (RuntimeFailedConfig, CompilationFailedConfig,
// the older ErrorConfig) as a CSV export of a cache writes them.
// The kind a Kernel Tuner failure string names (unknown for anything else).
Failure failure_kind(std::string_view text) {
  if (text == "CompilationFailedConfig") return Failure::build;
  if (text == "RuntimeFailedConfig") return Failure::crash;
  return Failure::unknown;
}

bool failure_word(std::string_view text) {
  if (text == "RuntimeFailedConfig" || text == "CompilationFailedConfig" || text == "ErrorConfig") return true;
  std::string lower;
  for (char c : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (!lower.empty() && (lower[0] == '+' || lower[0] == '-')) lower.erase(0, 1);
  return lower == "inf" || lower == "infinity" || lower == "nan";
}

// A failure marker among numbers: not finite, or Kernel Tuner's old sentinel (or beyond).
bool failure_number(double value) { return !std::isfinite(value) || std::abs(value) >= kKernelTunerFailureTime; }

Parameter typed_parameter(const std::string& name, const std::vector<std::string>& texts, const std::string& where) {
  Parameter p;
  p.name = name;
  bool integers = true, numbers = true;
  for (const auto& t : texts) {
    integers = integers && to_int(t).has_value();
    numbers = numbers && numeric(t).has_value();
  }
  if (integers) {
    for (const auto& t : texts) p.values.push_back(static_cast<double>(*to_int(t)));
    std::sort(p.values.begin(), p.values.end());
    return p;
  }
  for (const auto& t : texts)
    if (t.empty() || t.find_first_of(" \t=") != std::string::npos)
      throw ReplayError(fmt::format("{}: parameter '{}': value '{}' is empty or has a blank or '='", where, name, t));
  p.kind = numbers ? ParamKind::ordinal : ParamKind::enumeration;
  p.labels = texts;
  if (numbers)
    std::stable_sort(p.labels.begin(), p.labels.end(), [](const auto& a, const auto& b) { return *numeric(a) < *numeric(b); });
  return p;
}

RecordedSpace build(const std::string& name, const std::vector<std::string>& columns, const std::vector<Row>& rows,
                    const std::string& objective, const ReadOptions& options) {
  if (rows.empty()) throw ReplayError(fmt::format("{}: no configurations recorded", name));
  Space space;
  for (std::size_t c = 0; c < columns.size(); ++c) {
    if (!is_identifier(columns[c]))
      throw ReplayError(fmt::format("{}: column '{}' is not a parameter name (letters, digits and _)", name, columns[c]));
    if (std::find(columns.begin(), columns.begin() + static_cast<long>(c), columns[c]) != columns.begin() + static_cast<long>(c))
      throw ReplayError(fmt::format("{}: column '{}' appears twice", name, columns[c]));
    std::vector<std::string> distinct;
    for (const auto& row : rows)
      if (std::find(distinct.begin(), distinct.end(), row.fields[c]) == distinct.end()) distinct.push_back(row.fields[c]);
    try {
      space.add_parameter(typed_parameter(columns[c], distinct, name));
    } catch (const SpaceError& e) {  // a recorded file is outside input: its errors are ReplayErrors
      throw ReplayError(fmt::format("{}: {}", name, e.what()));
    }
  }
  auto table = std::make_shared<RecordedSpace::Table>();
  std::unordered_map<Configuration, const Row*, ConfigurationHash> first;
  for (const auto& row : rows) {
    Configuration config;
    for (std::size_t c = 0; c < columns.size(); ++c) config.push_back(*space.parameters()[c].parse(row.fields[c]));
    auto [it, added] = first.try_emplace(config, &row);
    if (!added)
      throw ReplayError(fmt::format("{}: configuration '{}' recorded twice (first at {})", row.where, space.to_text(config), it->second->where));
    table->values[config] = row.value.value_or(std::nan(""));
    if (!row.value && row.failure != Failure::unknown) table->kinds[config] = row.failure;
    if (!row.value) ++table->failures;
    else if (table->optimum_config.empty() || (options.maximize ? *row.value > table->optimum : *row.value < table->optimum))
      table->optimum = *row.value, table->optimum_config = config;
  }
  if (table->optimum_config.empty()) throw ReplayError(fmt::format("{}: every configuration failed", name));
  std::shared_ptr<const RecordedSpace::Table> shared = table;
  space.add_predicate("recorded in " + name, [shared](const Configuration& c) { return shared->values.contains(c); });
  return RecordedSpace(name, objective, options.maximize, std::move(space), shared);
}

std::vector<std::string> csv_fields(std::string_view line) {
  std::vector<std::string> out;
  for (auto f : split(line, ',')) {
    f = trim(f);
    if (f.size() >= 2 && f.front() == '"' && f.back() == '"') f = f.substr(1, f.size() - 2);
    out.emplace_back(f);
  }
  return out;
}

}  // namespace

RecordedSpace::RecordedSpace(std::string source, std::string objective, bool maximize, Space space,
                             std::shared_ptr<const Table> table)
    : m_source(std::move(source)), m_objective(std::move(objective)), m_maximize(maximize),
      m_space(std::move(space)), m_table(std::move(table)) {}

std::size_t RecordedSpace::size() const { return m_table->values.size(); }
std::size_t RecordedSpace::failures() const { return m_table->failures; }
double RecordedSpace::optimum() const { return m_table->optimum; }
const Configuration& RecordedSpace::optimum_config() const { return m_table->optimum_config; }

Failure RecordedSpace::failure(const Configuration& config) const {
  auto it = m_table->kinds.find(config);
  return it == m_table->kinds.end() ? Failure::unknown : it->second;
}

std::vector<double> RecordedSpace::successes() const {
  std::vector<double> out;
  for (const auto& [config, value] : m_table->values)
    if (!std::isnan(value)) out.push_back(value);
  return out;
}

std::vector<Configuration> RecordedSpace::configurations() const {
  std::vector<Configuration> out;
  for (const auto& [config, value] : m_table->values) out.push_back(config);
  std::sort(out.begin(), out.end());  // the hash map's order differs between libraries
  return out;
}

std::optional<double> RecordedSpace::objective(const Configuration& config) const {
  auto it = m_table->values.find(config);
  if (it == m_table->values.end())
    throw ReplayError(fmt::format("{}: '{}' is not recorded", m_source, m_space.to_text(config)));
  if (std::isnan(it->second)) return std::nullopt;
  return it->second;
}

RecordedSpace parse_csv_space(std::string_view text, const std::string& name, const ReadOptions& options) {
  auto lines = split(text, '\n');
  std::size_t header_line = 0;
  while (header_line < lines.size() && trim(lines[header_line]).empty()) ++header_line;
  if (header_line == lines.size()) throw ReplayError(fmt::format("{}: empty file (expected a header line)", name));
  auto header = csv_fields(lines[header_line]);
  std::string objective = options.objective;
  if (objective.empty()) objective = std::find(header.begin(), header.end(), "time") != header.end() ? "time" : header.back();
  auto column = std::find(header.begin(), header.end(), objective);
  if (column == header.end())
    throw ReplayError(fmt::format("{}:{}: no column '{}' (columns: {})", name, header_line + 1, objective, fmt::join(header, ", ")));
  const auto objective_at = static_cast<std::size_t>(column - header.begin());
  if (header.size() < 2) throw ReplayError(fmt::format("{}:{}: no parameter columns besides '{}'", name, header_line + 1, objective));
  std::vector<std::string> columns = header;
  columns.erase(columns.begin() + static_cast<long>(objective_at));
  std::vector<Row> rows;
  for (std::size_t i = header_line + 1; i < lines.size(); ++i) {
    if (trim(lines[i]).empty()) continue;
    auto fields = csv_fields(lines[i]);
    std::string where = fmt::format("{}:{}", name, i + 1);
    if (fields.size() != header.size())
      throw ReplayError(fmt::format("{}: expected {} fields, found {}", where, header.size(), fields.size()));
    Row row{.where = where};
    const auto& value = fields[objective_at];
    // InvalidConfig: Kernel Tuner's mark of a configuration its restrictions forbid (it never
    // ran it), as in a cache file: not part of the space.
    if (value == "InvalidConfig") continue;
    if (failure_word(value)) {
      row.failure = failure_kind(value);
    } else {
      row.value = numeric(value);
      if (!row.value)
        throw ReplayError(fmt::format("{}: field '{}': '{}' is not a number (inf or nan marks a failed configuration)", where, objective, value));
      if (failure_number(*row.value)) row.value.reset();
    }
    for (std::size_t c = 0; c < fields.size(); ++c) {
      if (c == objective_at) continue;
      if (fields[c].empty()) throw ReplayError(fmt::format("{}: field '{}' is empty", where, header[c]));
      row.fields.push_back(fields[c]);
    }
    rows.push_back(std::move(row));
  }
  return build(name, columns, rows, objective, options);
}

namespace {

std::string json_text(const nlohmann::ordered_json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<long long>());
  if (v.is_number()) {
    double d = v.get<double>();
    if (d == std::floor(d) && std::abs(d) < 1e15) return std::to_string(static_cast<long long>(d));
    return format_double(d);
  }
  if (v.is_boolean()) return v.get<bool>() ? "1" : "0";
  return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

RecordedSpace parse_kernel_tuner_cache(std::string_view text, const std::string& name, const ReadOptions& options) {
  nlohmann::ordered_json doc;
  try {
    doc = nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw ReplayError(fmt::format("{}: not valid JSON: {}", name, e.what()));
  }
  if (!doc.is_object() || !doc.contains("cache") || !doc["cache"].is_object() || !doc.contains("tune_params") ||
      !doc["tune_params"].is_object())
    throw ReplayError(fmt::format("{}: not a Kernel Tuner cache file (expected objects 'tune_params' and 'cache')", name));
  std::string objective = options.objective;
  if (objective.empty()) objective = doc.contains("objective") && doc["objective"].is_string() ? doc["objective"].get<std::string>() : "time";
  // Parameters with one value are fixed settings, not dimensions of the search.
  std::vector<std::string> columns;
  for (const auto& [param, values] : doc["tune_params"].items())
    if (!values.is_array()) throw ReplayError(fmt::format("{}: tune_params '{}' is not a list", name, param));
    else if (values.size() > 1) columns.push_back(param);
  std::vector<Row> rows;
  for (const auto& [key, entry] : doc["cache"].items()) {
    std::string where = fmt::format("{}: cache entry '{}'", name, key);
    if (!entry.is_object()) throw ReplayError(fmt::format("{}: not an object", where));
    if (!entry.contains(objective)) throw ReplayError(fmt::format("{}: field '{}' is missing", where, objective));
    const auto& value = entry[objective];
    // A string is Kernel Tuner's failure marker (RuntimeFailedConfig, CompilationFailedConfig,
    // ...); InvalidConfig marks a configuration the restrictions forbid: not part of the space.
    if (value.is_string() && value.get<std::string>() == "InvalidConfig") continue;
    Row row{.where = where};
    if (value.is_number()) {
      row.value = value.get<double>();
      // Kernel Tuner before 1.0 marked a failed configuration with the time 1e20, not with a
      // string: a failure, not a real time.
      if (failure_number(*row.value)) row.value.reset();
    } else if (value.is_string()) {
      row.failure = failure_kind(value.get<std::string>());
    } else {
      throw ReplayError(fmt::format("{}: field '{}': {} is neither a number nor a failure", where, objective, value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)));
    }
    for (const auto& c : columns) {
      if (!entry.contains(c)) throw ReplayError(fmt::format("{}: field '{}' is missing", where, c));
      row.fields.push_back(json_text(entry[c]));
    }
    rows.push_back(std::move(row));
  }
  return build(name, columns, rows, objective, options);
}

RecordedSpace load_recorded_space(const std::filesystem::path& path, const ReadOptions& options) {
  const std::string name = path.string();
  gzFile file = gzopen(name.c_str(), "rb");
  if (!file) throw ReplayError(fmt::format("{}: cannot open", name));
  std::string text;
  char buffer[1 << 16];
  int n = 0;
  while ((n = gzread(file, buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<std::size_t>(n));
  int error = 0;
  std::string message = n < 0 ? gzerror(file, &error) : "";
  gzclose(file);
  if (n < 0) throw ReplayError(fmt::format("{}: cannot read: {}", name, message));
  auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') return parse_kernel_tuner_cache(text, name, options);
  return parse_csv_space(text, name, options);
}

}  // namespace flotilla::search

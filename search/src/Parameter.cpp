// Parameter.cpp — parsing and formatting of one space parameter ("name: kind: spec").
// All functions are pure; errors are SpaceError with the parameter's name in them.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <fmt/format.h>
#include <sstream>

#include "flotilla/search/Space.h"
#include "TextUtil.h"

namespace flotilla::search {
namespace {

[[noreturn]] void fail(std::string_view name, const std::string& what) {
  throw SpaceError(fmt::format("param '{}': {}", name, what));
}

// Values are held as doubles: an integer beyond 2^53 would silently become another one.
constexpr long long kExactIntegers = 1LL << 53;

long long exact_int(std::string_view name, long long v) {
  if (v > kExactIntegers || v < -kExactIntegers)
    fail(name, fmt::format("{} is beyond 2^53 (9007199254740992), where integers are no longer exact", v));
  return v;
}

std::vector<double> parse_int_list(std::string_view name, std::string_view spec) {
  std::vector<double> values;
  for (auto item : split(spec, ',')) {
    auto v = to_int(trim(item));
    if (!v) fail(name, fmt::format("'{}' is not an integer", trim(item)));
    values.push_back(static_cast<double>(exact_int(name, *v)));
  }
  return values;
}

// "lo..hi", "lo..hi step s", "lo..hi pow2": sets p.values, or p.range for a long range.
void parse_int_range(Parameter& p, std::string_view spec) {
  const auto& name = p.name;
  auto words = split_words(spec);
  auto dots = words.empty() ? std::string_view::npos : words[0].find("..");
  if (dots == std::string_view::npos) fail(name, fmt::format("'{}' is not an integer range", spec));
  auto lo = to_int(words[0].substr(0, dots));
  auto hi = to_int(words[0].substr(dots + 2));
  if (!lo || !hi) fail(name, fmt::format("'{}' is not an integer range", words[0]));
  exact_int(name, *lo);
  exact_int(name, *hi);
  if (*lo > *hi) fail(name, fmt::format("range '{}' is empty (lower bound above upper)", words[0]));
  if (words.size() == 1 || (words.size() == 3 && words[1] == "step")) {
    long long step = 1;
    if (words.size() == 3) {
      auto s = to_int(words[2]);
      if (!s || *s <= 0) fail(name, fmt::format("step '{}' is not a positive integer", words[2]));
      step = *s;
    }
    // Both bounds are within 2^53, so neither the count nor the last step can overflow.
    if ((*hi - *lo) / step >= 10'000'000) fail(name, "range has more than 10^7 values");
    const auto count = static_cast<std::size_t>((*hi - *lo) / step) + 1;
    if (count > Parameter::kListedRange) {
      p.range = Parameter::IntRange{.first = *lo, .step = step, .count = count};
      return;
    }
    for (long long v = *lo; v <= *hi; v += step) p.values.push_back(static_cast<double>(v));
  } else if (words.size() == 2 && words[1] == "pow2") {
    for (long long v = 1; v <= *hi && v > 0; v *= 2)
      if (v >= *lo) p.values.push_back(static_cast<double>(v));
    if (p.values.empty()) fail(name, fmt::format("no power of two lies in '{}'", words[0]));
  } else {
    fail(name, fmt::format("'{}' is not an integer range (expected lo..hi, lo..hi step S or lo..hi pow2)", spec));
  }
}

Parameter parse_real(std::string name, std::string_view spec) {
  Parameter p;
  p.name = std::move(name);
  p.kind = ParamKind::real;
  auto words = split_words(spec);
  auto dots = words.empty() ? std::string_view::npos : words[0].find("..");
  if (dots == std::string_view::npos) fail(p.name, fmt::format("'{}' is not a real range", spec));
  auto lo = to_double(words[0].substr(0, dots));
  auto hi = to_double(words[0].substr(dots + 2));
  if (!lo || !hi) fail(p.name, fmt::format("'{}' is not a real range", words[0]));
  if (!(*lo < *hi)) fail(p.name, fmt::format("range '{}' is empty (lower bound not below upper)", words[0]));
  p.lo = *lo;
  p.hi = *hi;
  for (std::size_t i = 1; i < words.size(); ++i) {
    if (words[i] == "log") {
      if (p.lo <= 0) fail(p.name, "a log range needs a positive lower bound");
      p.log_scale = true;
    } else if (words[i] == "linear") {
      p.log_scale = false;
    } else if (words[i] == "points" && i + 1 < words.size()) {
      auto n = to_int(words[++i]);
      if (!n || *n < 2 || *n > 1'000'000) fail(p.name, fmt::format("points '{}' must be an integer from 2 to 10^6", words[i]));
      p.grid_points = static_cast<int>(*n);
    } else {
      fail(p.name, fmt::format("unexpected '{}' (expected log, linear or points N)", words[i]));
    }
  }
  return p;
}

// "a,b" or "a=VALUE,b=VALUE": the labels, and each choice's value when any is written.
void parse_labels(Parameter& p, std::string_view spec) {
  const auto& name = p.name;
  std::vector<std::string> values;
  bool any_value = false;
  for (auto item : split(spec, ',')) {
    const auto eq = trim(item).find('=');
    auto label = std::string(trim(trim(item).substr(0, eq)));
    if (label.empty() || label.find_first_of(" \t=") != std::string::npos)
      fail(name, fmt::format("choice '{}' must be non-empty without blanks or '='", trim(item)));
    if (std::find(p.labels.begin(), p.labels.end(), label) != p.labels.end())
      fail(name, fmt::format("choice '{}' appears twice", label));
    std::string value = label;
    if (eq != std::string_view::npos) {
      value = std::string(trim(trim(item).substr(eq + 1)));
      if (value.empty()) fail(name, fmt::format("choice '{}' has no value after '='", trim(item)));
      any_value = true;
    }
    p.labels.push_back(std::move(label));
    values.push_back(std::move(value));
  }
  if (any_value) p.choice_values = std::move(values);
}

}  // namespace

Parameter parse_parameter(std::string_view spec) {
  auto first = spec.find(':');
  auto second = first == std::string_view::npos ? first : spec.find(':', first + 1);
  if (second == std::string_view::npos)
    throw SpaceError(fmt::format("param '{}': expected 'name: kind: values'", trim(spec)));
  auto name = std::string(trim(spec.substr(0, first)));
  auto kind = trim(spec.substr(first + 1, second - first - 1));
  auto rest = trim(spec.substr(second + 1));
  if (!is_identifier(name)) throw SpaceError(fmt::format("param '{}': name must be an identifier", name));
  if (rest.empty()) fail(name, "no values given");
  if (kind == "int") {
    Parameter p;
    p.name = name;
    if (rest.find("..") != std::string_view::npos) parse_int_range(p, rest);
    else p.values = parse_int_list(name, rest);
    return p;
  }
  if (kind == "real") return parse_real(name, rest);
  if (kind == "enum" || kind == "ordinal") {
    Parameter p;
    p.name = name;
    p.kind = kind == "enum" ? ParamKind::enumeration : ParamKind::ordinal;
    parse_labels(p, rest);
    return p;
  }
  fail(name, fmt::format("unknown type '{}' (expected int, real, enum or ordinal)", kind));
}

std::size_t Parameter::grid_size() const {
  switch (kind) {
    case ParamKind::integer: return range ? range->count : values.size();
    case ParamKind::real: return static_cast<std::size_t>(grid_points);
    default: return labels.size();
  }
}

double Parameter::grid_value(std::size_t i) const {
  switch (kind) {
    case ParamKind::integer:
      return range ? static_cast<double>(range->first + static_cast<long long>(i) * range->step) : values[i];
    case ParamKind::real: {
      if (i == 0) return lo;  // the ends exactly: exp(log(lo)) may differ from lo in the last bit
      if (i + 1 >= static_cast<std::size_t>(grid_points)) return hi;
      double t = static_cast<double>(i) / static_cast<double>(grid_points - 1);
      double v = log_scale ? std::exp(std::log(lo) + t * (std::log(hi) - std::log(lo))) : lo + t * (hi - lo);
      // exp(log(0.1)) is 0.10000000000000006: an end point a hair outside [lo, hi] would make a
      // canonical text that parse() refuses (on resume, as a baseline).
      return std::clamp(v, lo, hi);
    }
    default: return static_cast<double>(i);
  }
}

std::optional<std::size_t> Parameter::index_of(double value) const {
  switch (kind) {
    case ParamKind::integer: {
      if (range) {
        // Exact: the range's values are integers within 2^53, as is any double equal to one.
        if (!(value >= static_cast<double>(range->first) && value <= static_cast<double>(range->last())) ||
            value != std::floor(value))
          return std::nullopt;
        const long long offset = static_cast<long long>(value) - range->first;
        if (offset % range->step != 0) return std::nullopt;
        return static_cast<std::size_t>(offset / range->step);
      }
      auto it = std::find(values.begin(), values.end(), value);
      if (it == values.end()) return std::nullopt;
      return static_cast<std::size_t>(it - values.begin());
    }
    case ParamKind::real: return std::nullopt;
    default:
      if (!(value >= 0) || value != std::floor(value) || value >= static_cast<double>(labels.size())) return std::nullopt;
      return static_cast<std::size_t>(value);
  }
}

std::string Parameter::format(double value) const {
  switch (kind) {
    case ParamKind::integer: return std::to_string(static_cast<long long>(value));
    case ParamKind::real: return format_double(value);
    default: return labels.at(static_cast<std::size_t>(value));
  }
}

std::optional<double> Parameter::parse(std::string_view text) const {
  switch (kind) {
    case ParamKind::integer: {
      auto v = to_int(text);
      if (!v || !index_of(static_cast<double>(*v))) return std::nullopt;
      return static_cast<double>(*v);
    }
    case ParamKind::real: {
      auto v = to_double(text);
      if (!v || *v < lo || *v > hi) return std::nullopt;
      return *v;
    }
    default: {
      auto it = std::find(labels.begin(), labels.end(), text);
      if (it == labels.end()) return std::nullopt;
      return static_cast<double>(it - labels.begin());
    }
  }
}

}  // namespace flotilla::search

// Space.cpp — parameters, constraints (muparser) and grid indexing of a search space.
//
// Constraints are compiled once; each parser's variables are bound to slots of m_values, so
// checking a configuration copies it into m_values and evaluates every parser (no allocation).
// Not thread-safe: a Space is used by one strategy on one thread.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>
#include <muParser.h>

#include "flotilla/search/Expression.h"

#include "flotilla/search/Space.h"
#include "TextUtil.h"

namespace flotilla::search {

struct Space::Constraints {
  std::vector<double> values;  // bound to every parser's variables; never reallocated once parsers exist
  std::vector<std::unique_ptr<mu::Parser>> parsers;
};

Space::Space() : m_compiled(std::make_unique<Constraints>()) {}
Space::Space(Space&&) noexcept = default;
Space& Space::operator=(Space&&) noexcept = default;
Space::~Space() = default;

void Space::add_parameter(Parameter parameter) {
  if (!m_constraints.empty()) throw SpaceError("parameters must be declared before constraints");
  for (const auto& p : m_parameters)
    if (p.name == parameter.name) throw SpaceError(fmt::format("param '{}': declared twice", p.name));
  m_parameters.push_back(std::move(parameter));
  m_feasible_known = false;
}

namespace {

// Choice names that belong to exactly one parameter (and are not parameter names) become
// constants, so "precision == float" reads naturally in a constraint.
std::map<std::string, double> choice_constants(const std::vector<Parameter>& params) {
  std::map<std::string, double> constants;
  std::set<std::string> ambiguous;
  for (const auto& p : params)
    for (std::size_t i = 0; i < p.labels.size(); ++i) {
      const auto& label = p.labels[i];
      if (!is_identifier(label)) continue;
      if (constants.contains(label)) ambiguous.insert(label);
      constants[label] = static_cast<double>(i);
    }
  for (const auto& p : params) ambiguous.insert(p.name);
  for (const auto& name : ambiguous) constants.erase(name);
  return constants;
}

double fmod_operator(double a, double b) { return std::fmod(a, b); }

}  // namespace

void Space::add_constraint(std::string expression) {
  auto& c = *m_compiled;
  if (c.values.size() != m_parameters.size()) {
    if (!c.parsers.empty()) throw SpaceError("internal: parameters changed after constraints");
    c.values.assign(m_parameters.size(), 0.0);
  }
  if (const auto at = assignment_position(expression))
    throw SpaceError(fmt::format("constraint '{}': '=' at column {} assigns a value; compare with ==", expression,
                                 *at + 1));
  auto parser = std::make_unique<mu::Parser>();
  try {
    parser->DefineOprt("%", fmod_operator, mu::prMUL_DIV, mu::oaLEFT, true);
    for (std::size_t i = 0; i < m_parameters.size(); ++i) {
      parser->DefineVar(m_parameters[i].name, &c.values[i]);
      c.values[i] = m_parameters[i].grid_value(0);
    }
    for (const auto& [name, value] : choice_constants(m_parameters)) parser->DefineConst(name, value);
    parser->SetExpr(expression);
    parser->Eval();  // compiles; reports syntax errors and unknown names now, not mid-campaign
  } catch (const mu::Parser::exception_type& e) {
    if (e.GetCode() == mu::ecUNASSIGNABLE_TOKEN)
      throw SpaceError(fmt::format("constraint '{}': unknown name '{}'", expression, e.GetToken()));
    throw SpaceError(fmt::format("constraint '{}': {}", expression, e.GetMsg()));
  }
  c.parsers.push_back(std::move(parser));
  m_constraints.push_back(std::move(expression));
  m_feasible_known = false;
}

void Space::add_predicate(std::string description, std::function<bool(const Configuration&)> predicate) {
  m_predicates.push_back(std::move(predicate));
  m_constraints.push_back(std::move(description));
  m_feasible_known = false;
}

const std::vector<std::uint64_t>* Space::feasible_indices() const {
  constexpr std::uint64_t limit = kEnumerateLimit;
  if (!m_feasible_known) {
    m_feasible.reset();
    bool finite = std::none_of(m_parameters.begin(), m_parameters.end(), [](const Parameter& p) { return p.continuous(); });
    if (finite && grid_size() <= limit) {
      auto indices = std::make_shared<std::vector<std::uint64_t>>();
      for_each_feasible([&](std::uint64_t i) { indices->push_back(i); });
      m_feasible = std::move(indices);
    }
    m_feasible_known = true;
  }
  return m_feasible.get();
}

bool Space::feasible(const Configuration& config) const {
  for (const auto& predicate : m_predicates)
    if (!predicate(config)) return false;
  auto& c = *m_compiled;
  if (c.parsers.empty()) return true;
  std::copy(config.begin(), config.end(), c.values.begin());
  for (auto& parser : c.parsers) {
    const double v = parser->Eval();
    if (!std::isfinite(v) || v == 0.0) return false;  // 1/0 holds nowhere, as NaN does not
  }
  return true;
}

std::uint64_t Space::grid_size() const {
  std::uint64_t n = 1;
  for (const auto& p : m_parameters) {
    auto k = static_cast<std::uint64_t>(p.grid_size());
    if (k != 0 && n > std::numeric_limits<std::uint64_t>::max() / k) return std::numeric_limits<std::uint64_t>::max();
    n *= k;
  }
  return n;
}

Configuration Space::grid_point(std::uint64_t index) const {
  Configuration config(m_parameters.size());
  for (std::size_t i = m_parameters.size(); i-- > 0;) {
    auto k = static_cast<std::uint64_t>(m_parameters[i].grid_size());
    config[i] = m_parameters[i].grid_value(static_cast<std::size_t>(index % k));
    index /= k;
  }
  return config;
}

void Space::for_each_feasible(const std::function<void(std::uint64_t)>& visit) const {
  const std::size_t dims = m_parameters.size();
  if (dims == 0) return;
  // Odometer over grid digits: only the digits that change are re-decoded.
  std::vector<std::size_t> digit(dims, 0);
  Configuration config(dims);
  for (std::size_t i = 0; i < dims; ++i) config[i] = m_parameters[i].grid_value(0);
  const std::uint64_t total = grid_size();
  for (std::uint64_t index = 0; index < total; ++index) {
    if (feasible(config)) visit(index);
    for (std::size_t i = dims; i-- > 0;) {
      if (++digit[i] < m_parameters[i].grid_size()) {
        config[i] = m_parameters[i].grid_value(digit[i]);
        break;
      }
      digit[i] = 0;
      config[i] = m_parameters[i].grid_value(0);
    }
  }
}

std::string Space::to_text(const Configuration& config) const {
  std::string text;
  for (std::size_t i = 0; i < m_parameters.size(); ++i) {
    if (i) text += ' ';
    text += m_parameters[i].name + '=' + m_parameters[i].format(config.at(i));
  }
  return text;
}

Configuration Space::parse_configuration(std::string_view text) const {
  Configuration config(m_parameters.size(), std::numeric_limits<double>::quiet_NaN());
  std::vector<bool> seen(m_parameters.size(), false);
  for (auto word : split_words(text)) {
    auto eq = word.find('=');
    if (eq == std::string_view::npos) throw SpaceError(fmt::format("'{}' is not name=value", word));
    auto name = word.substr(0, eq), value = word.substr(eq + 1);
    auto it = std::find_if(m_parameters.begin(), m_parameters.end(), [&](const Parameter& p) { return p.name == name; });
    if (it == m_parameters.end()) throw SpaceError(fmt::format("unknown parameter '{}'", name));
    auto i = static_cast<std::size_t>(it - m_parameters.begin());
    if (seen[i]) throw SpaceError(fmt::format("parameter '{}' given twice", name));
    auto v = it->parse(value);
    if (!v) throw SpaceError(fmt::format("'{}' is not a value of parameter '{}'", value, name));
    config[i] = *v;
    seen[i] = true;
  }
  for (std::size_t i = 0; i < seen.size(); ++i)
    if (!seen[i]) throw SpaceError(fmt::format("parameter '{}' is missing", m_parameters[i].name));
  if (!feasible(config)) throw SpaceError(fmt::format("'{}' violates a constraint", to_text(config)));
  return config;
}

namespace {

// Whether `values` step evenly (an integer range); its ends and step then say all of it.
bool evenly_stepped(const std::vector<double>& values) {
  if (values.size() < 2) return false;
  const double step = values[1] - values[0];
  for (std::size_t i = 2; i < values.size(); ++i)
    if (values[i] - values[i - 1] != step) return false;
  return true;
}

}  // namespace

std::string Space::fingerprint() const {
  // A long, evenly stepped list of values (an integer range may hold up to 10^7) is written as
  // its ends and step: listed one by one, five such ranges made a fingerprint of hundreds of MB
  // that took seconds to build (fuzz_space). Lists of up to kListedValues stay listed, so the
  // fingerprints of campaigns recorded before do not change.
  constexpr std::size_t kListedValues = 4096;
  static_assert(Parameter::kListedRange >= kListedValues, "a range kept unlisted must be one the fingerprint writes by its ends");
  std::string text;
  for (const auto& p : m_parameters) {
    text += "param " + p.name + ":";
    if (p.kind == ParamKind::real)
      text += fmt::format(" real {}..{}{} points {}", format_double(p.lo), format_double(p.hi), p.log_scale ? " log" : "", p.grid_points);
    if (p.range)  // as it was written when it was listed (it is longer than kListedValues)
      text += fmt::format(" {}..{} step {} ({} values)", static_cast<double>(p.range->first),
                          static_cast<double>(p.range->last()), static_cast<double>(p.range->step), p.range->count);
    else if (p.values.size() > kListedValues && evenly_stepped(p.values))
      text += fmt::format(" {}..{} step {} ({} values)", p.values.front(), p.values.back(), p.values[1] - p.values[0],
                          p.values.size());  // shortest exact text: format_double keeps 6 digits
    else
      for (double v : p.values) text += ' ' + format_double(v);
    for (std::size_t i = 0; i < p.labels.size(); ++i) {
      text += (p.kind == ParamKind::ordinal ? " ordinal " : " enum ") + p.labels[i];
      // What a choice runs is part of what was measured; a space without values reads as before.
      if (!p.choice_values.empty()) text += "=" + p.choice_values[i];
    }
    text += '\n';
  }
  for (const auto& c : m_constraints) text += "constraint " + c + '\n';
  return text;
}

}  // namespace flotilla::search

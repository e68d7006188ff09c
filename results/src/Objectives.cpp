// Objectives.cpp — objectives lists and pick rules (see Objectives.h).
#include "flotilla/results/Objectives.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

namespace flotilla::results {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  for (std::size_t begin = 0;;) {
    const auto end = text.find(separator, begin);
    parts.push_back(trim(text.substr(begin, end == std::string_view::npos ? std::string_view::npos : end - begin)));
    if (end == std::string_view::npos) return parts;
    begin = end + 1;
  }
}

// Goals or the problem, in one pass, so the two entry points cannot disagree.
std::vector<Goal> read_objectives(std::string_view text, std::string& problem) {
  std::vector<Goal> goals;
  if (trim(text).empty()) {
    problem = "is empty: give METRIC:min or METRIC:max, separated by commas";
    return {};
  }
  for (const auto item : split(text, ',')) {
    const auto colon = item.rfind(':');
    if (colon == std::string_view::npos) {
      problem = fmt::format("'{}' has no direction: write {}:min or {}:max", item, item, item);
      return {};
    }
    const auto metric = trim(item.substr(0, colon));
    const auto direction = trim(item.substr(colon + 1));
    if (!is_metric_name(metric)) {
      problem = fmt::format("'{}' is not a metric name a task can print ([A-Za-z_][A-Za-z0-9_.]*, at most 63 bytes)",
                            metric);
      return {};
    }
    Goal goal{.metric = std::string(metric)};
    if (direction == "max" || direction == "maximize") goal.maximize = true;
    else if (direction == "min" || direction == "minimize") goal.maximize = false;
    else {
      problem = fmt::format("'{}': the direction must be min or max", item);
      return {};
    }
    if (std::any_of(goals.begin(), goals.end(), [&](const Goal& g) { return g.metric == goal.metric; })) {
      problem = fmt::format("names '{}' twice", goal.metric);
      return {};
    }
    goals.push_back(std::move(goal));
  }
  return goals;
}

std::optional<PickRule> read_pick(std::string_view text, std::size_t goals, std::string& problem) {
  text = trim(text);
  if (text == "knee") return PickRule{};
  if (text == "lexicographic") return PickRule{.kind = PickRule::Kind::lexicographic};
  if (text.starts_with("weighted")) {
    PickRule rule{.kind = PickRule::Kind::weighted};
    const auto list = trim(text.substr(8));
    for (const auto item : split(list, ',')) {
      double w = 0;
      const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), w);
      if (item.empty() || ec != std::errc{} || end != item.data() + item.size() || !std::isfinite(w) || w < 0) {
        problem = fmt::format("weight '{}' is not a number of at least 0", item);
        return std::nullopt;
      }
      rule.weights.push_back(w);
    }
    if (rule.weights.size() != goals) {
      problem = fmt::format("gives {} weights for {} objectives (e.g. weighted {})", rule.weights.size(), goals,
                            fmt::join(std::vector<std::string>(goals, "1"), ","));
      return std::nullopt;
    }
    if (std::all_of(rule.weights.begin(), rule.weights.end(), [](double w) { return w == 0; })) {
      problem = "has only zero weights";
      return std::nullopt;
    }
    return rule;
  }
  problem = fmt::format("'{}' is not knee, weighted W1,W2,... or lexicographic", text);
  return std::nullopt;
}

}  // namespace

bool is_metric_name(std::string_view name) {
  auto word = [](char c, bool first) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_' ||
           (!first && (std::isdigit(static_cast<unsigned char>(c)) || c == '.'));
  };
  if (name.empty() || name.size() > 63) return false;
  for (std::size_t i = 0; i < name.size(); ++i)
    if (!word(name[i], i == 0)) return false;
  return true;
}

std::string objectives_problem(std::string_view text) {
  std::string problem;
  read_objectives(text, problem);
  return problem;
}

std::vector<Goal> parse_objectives(std::string_view text) {
  std::string problem;
  auto goals = read_objectives(text, problem);
  if (!problem.empty()) throw std::invalid_argument(problem);
  return goals;
}

std::string objectives_text(const std::vector<Goal>& goals) {
  std::vector<std::string> parts;
  for (const auto& g : goals) parts.push_back(g.metric + (g.maximize ? ":max" : ":min"));
  return fmt::format("{}", fmt::join(parts, ","));
}

std::string PickRule::text() const {
  switch (kind) {
    case Kind::knee: return "knee";
    case Kind::lexicographic: return "lexicographic";
    case Kind::weighted: return fmt::format("weighted {}", fmt::join(weights, ","));
  }
  return "knee";
}

std::string pick_problem(std::string_view text, std::size_t goals) {
  std::string problem;
  read_pick(text, goals, problem);
  return problem;
}

PickRule parse_pick(std::string_view text, std::size_t goals) {
  std::string problem;
  auto rule = read_pick(text, goals, problem);
  if (!rule) throw std::invalid_argument(problem);
  return *rule;
}

std::size_t pick_member(const std::vector<std::vector<double>>& members, const std::vector<Goal>& goals,
                        const PickRule& rule) {
  const std::size_t n = members.size(), k = goals.size();
  if (rule.kind == PickRule::Kind::lexicographic) {
    std::size_t best = 0;
    for (std::size_t i = 1; i < n; ++i)
      for (std::size_t g = 0; g < k; ++g) {
        const double a = members[i][g], b = members[best][g];
        if (a == b) continue;
        if (goals[g].maximize ? a > b : a < b) best = i;
        break;
      }
    return best;
  }
  // Each objective scaled over the front: 0 at its best value there, 1 at its worst.
  std::vector<double> low(k, std::numeric_limits<double>::infinity()), high(k, -std::numeric_limits<double>::infinity());
  for (const auto& m : members)
    for (std::size_t g = 0; g < k; ++g) low[g] = std::min(low[g], m[g]), high[g] = std::max(high[g], m[g]);
  auto scaled = [&](std::size_t i, std::size_t g) {
    const double range = high[g] - low[g];
    if (!(range > 0)) return 0.0;
    return goals[g].maximize ? (high[g] - members[i][g]) / range : (members[i][g] - low[g]) / range;
  };
  std::size_t best = 0;
  double best_score = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < n; ++i) {
    double score = 0;
    for (std::size_t g = 0; g < k; ++g)
      score += rule.kind == PickRule::Kind::knee ? scaled(i, g) * scaled(i, g) : rule.weights[g] * scaled(i, g);
    if (score < best_score) best_score = score, best = i;
  }
  return best;
}

}  // namespace flotilla::results

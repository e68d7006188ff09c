// Charts.cpp — the data decisions behind each chart (see Charts.h).
#include "flotilla/results/Charts.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>

namespace flotilla::results {
namespace {

// Quantile q of sorted values, by linear interpolation between order statistics.
double quantile(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto i = static_cast<std::size_t>(pos);
  if (i + 1 >= sorted.size()) return sorted.back();
  return sorted[i] + (pos - static_cast<double>(i)) * (sorted[i + 1] - sorted[i]);
}

// [low, high] widened by `margin` of its span each side; a single value gets ±10% (or ±1 at 0),
// so gnuplot never gets an empty range and no point sits on the border.
AxisRange padded(double low, double high, double margin) {
  double span = high - low;
  if (!(span > 0)) span = low != 0 ? std::abs(low) * 0.2 : 2.0;
  const double pad = span * margin;
  return {low - pad, high + pad};
}

PointKind kind_of(CandidateStatus status) {
  return status == CandidateStatus::verified      ? PointKind::verified
         : status == CandidateStatus::rolled_back ? PointKind::rolled_back
                                                  : PointKind::explored;
}

}  // namespace

std::string_view to_string(PointKind kind) {
  switch (kind) {
    case PointKind::explored:
      return "explored";
    case PointKind::verified:
      return "verified";
    case PointKind::rolled_back:
      return "rolled_back";
  }
  return "explored";
}

std::optional<AxisRange> tukey_fence(std::vector<double> values, double k) {
  if (values.size() < 4) return std::nullopt;
  std::sort(values.begin(), values.end());
  const double q1 = quantile(values, 0.25), q3 = quantile(values, 0.75);
  if (!(q3 > q1)) return std::nullopt;
  return AxisRange{q1 - k * (q3 - q1), q3 + k * (q3 - q1)};
}

namespace {

// What a candidate's status and confirmation say, for the caption: "verified, no significant
// difference".
std::string standing(const CandidateSummary& c, bool confirming) {
  auto text = std::string(to_string(c.status));
  std::replace(text.begin(), text.end(), '_', ' ');
  if (!confirming) return text;
  if (!c.confirmation) return text + ", not confirmed";
  if (c.confirmation->result.verdict == stats::Verdict::no_difference) return text + ", no significant difference";
  return fmt::format("{}, confirmation {}", text, stats::verdict_key(c.confirmation->result.verdict));
}

// The caption under the title: who won and why, and whose value the curves end on when that is
// another candidate (the curves are medians; the winner is confirmed faster).
std::string convergence_caption(const CampaignSummary& s, std::optional<std::int64_t> best_median) {
  const bool verifies = s.campaign.shards > 0;
  const bool counted = is_tests_objective(s.campaign.objective);
  if (!s.best) {
    const auto eligible = s.count(verifies ? CandidateStatus::verified : CandidateStatus::explored);
    if (eligible == 0) return verifies ? "no winner: nothing verified" : "no winner: nothing explored";
    return "no winner: nothing is confirmed faster than the baseline, and the baseline itself is not verified";
  }
  const auto& w = s.candidates[*s.best];
  std::string line;
  if (s.best_confirmed)
    line = fmt::format("winner (ringed): candidate {}, {:.3g}x [{:.3g}, {:.3g}] over the baseline, confirmed faster",
                       w.record.id, w.confirmation->result.ratio, w.confirmation->result.low,
                       w.confirmation->result.high);
  else if (s.best == s.baseline && s.confirming)
    line = fmt::format("winner (ringed): the baseline, candidate {} (nothing is confirmed faster)", w.record.id);
  else if (!s.goals.empty())
    line = fmt::format("winner (ringed): candidate {}, picked from the Pareto front of {} goals", w.record.id,
                       s.goals.size());
  else
    line = fmt::format("winner (ringed): candidate {}, the best {} {} ({:.4g})", w.record.id,
                       verifies ? "verified" : "explored", counted ? s.campaign.objective : "median", *w.objective);
  if (best_median && *best_median != w.record.id)
    line += fmt::format("; the curves end on candidate {} ({})", *best_median,
                        standing(s.candidates[static_cast<std::size_t>(*best_median)], s.confirming));
  return line;
}

}  // namespace

double whole_number_step(const AxisRange& range) {
  const double span = range.high - range.low;
  for (double decade = 1;; decade *= 10)
    for (double step : {1.0, 2.0, 5.0})
      if (span / (step * decade) <= 10) return step * decade;
}

ConvergenceChart convergence_chart(const CampaignSummary& summary, const History& history) {
  ConvergenceChart chart;
  chart.x = {0.5, static_cast<double>(std::max<std::size_t>(history.evaluations.size(), 1)) + 0.5};
  const auto winner_id = summary.best ? std::optional(summary.candidates[*summary.best].record.id) : std::nullopt;
  std::vector<double> values;
  std::vector<bool> kept;  // per point: it holds a best-so-far value or is the winner, so it is never clipped
  bool whole = true;       // every plotted value is a whole number
  for (const auto& e : history.evaluations) {
    if (e.best_so_far) chart.best.emplace_back(e.evaluation, *e.best_so_far);
    if (e.best_verified_so_far) chart.best_verified.emplace_back(e.evaluation, *e.best_verified_so_far);
    chart.best_differs = chart.best_differs || (e.best_so_far && e.best_so_far != e.best_verified_so_far);
    const auto& c = summary.candidates[e.candidate];
    if (e.improved) chart.best_median = c.record.id;
    if (!e.objective) {
      chart.failed.emplace_back(e.evaluation, c.record.id);
      continue;
    }
    const auto& interval = c.interval;
    if (c.record.id == winner_id) chart.winner = chart.points.size();
    chart.points.push_back({.evaluation = e.evaluation,
                            .candidate = c.record.id,
                            .kind = kind_of(c.status),
                            .value = *e.objective,
                            .low = interval ? interval->low : *e.objective,
                            .high = interval ? interval->high : *e.objective});
    const auto& p = chart.points.back();
    for (double v : {p.value, p.low, p.high}) whole = whole && v == std::round(v);
    values.push_back(*e.objective);
    kept.push_back(c.record.id == winner_id || (c.status != CandidateStatus::rolled_back &&
                                                (e.objective == e.best_so_far || e.objective == e.best_verified_so_far)));
  }
  chart.caption = convergence_caption(summary, chart.best_median);
  if (values.empty()) return chart;
  const auto fence = tukey_fence(values);
  // The range covers the points inside the fence and their intervals as far as the fence goes:
  // a wide interval must not bring back the squashing that clipping the point avoided.
  double low = INFINITY, high = -INFINITY;
  for (std::size_t i = 0; i < chart.points.size(); ++i) {
    auto& p = chart.points[i];
    if (fence && !fence->contains(p.value) && !kept[i]) {
      p.clipped = p.value < fence->low ? -1 : 1;
      ++chart.clipped;
      continue;
    }
    low = std::min({low, p.value, fence ? std::max(p.low, fence->low) : p.low});
    high = std::max({high, p.value, fence ? std::min(p.high, fence->high) : p.high});
  }
  chart.y = padded(low, high, 0.08);
  // Room above the winner for its label: at least 16% of the axis (high = v + 0.16 (high - low)).
  if (chart.winner)
    chart.y.high = std::max(chart.y.high, (chart.points[*chart.winner].value - 0.16 * chart.y.low) / 0.84);
  if (whole) chart.y_step = whole_number_step(chart.y);
  return chart;
}

std::string_view to_string(LabelPlace place) {
  switch (place) {
    case LabelPlace::right_above: return "right_above";
    case LabelPlace::left_above: return "left_above";
    case LabelPlace::right_below: return "right_below";
    case LabelPlace::left_below: return "left_below";
  }
  return "right_above";
}

namespace {

// Characters, not bytes: a label may quote a configuration in UTF-8.
std::size_t text_width(const std::string& text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

struct Box {
  AxisRange x, y;
  bool meets(const Box& o) const { return x.low < o.x.high && o.x.low < x.high && y.low < o.y.high && o.y.low < y.high; }
};

// The extent of `p`'s label at `place`, in axis units (gnuplot centres a label's line on its y).
Box label_box(const ParetoChartPoint& p, LabelPlace place, const ParetoChart& chart, const LabelMetrics& m) {
  const double cx = m.char_x * (chart.x.high - chart.x.low), cy = m.char_y * (chart.y.high - chart.y.low);
  const double width = cx * static_cast<double>(text_width(p.label));
  const bool right = place == LabelPlace::right_above || place == LabelPlace::right_below;
  const bool above = place == LabelPlace::right_above || place == LabelPlace::left_above;
  const double x0 = right ? p.x + LabelMetrics::kOffsetX * cx : p.x - LabelMetrics::kOffsetX * cx - width;
  const double mid = p.y + (above ? 1 : -1) * LabelMetrics::kOffsetY * cy;
  return {{x0, x0 + width}, {mid - cy / 2, mid + cy / 2}};
}

// Whether the segment from a to b passes through the box (Liang-Barsky clipping).
bool crosses(const Box& box, double ax, double ay, double bx, double by) {
  double t0 = 0, t1 = 1;
  const double dx = bx - ax, dy = by - ay;
  for (const auto& [p, q] : {std::pair{-dx, ax - box.x.low}, std::pair{dx, box.x.high - ax},
                            std::pair{-dy, ay - box.y.low}, std::pair{dy, box.y.high - ay}}) {
    if (p == 0) {
      if (q < 0) return false;
      continue;
    }
    const double t = q / p;
    if (p < 0) t0 = std::max(t0, t);
    else t1 = std::min(t1, t);
    if (t0 > t1) return false;
  }
  return true;
}

// Each labelled point's place: the first of its four in which the label covers no point, meets no
// label placed before it, crosses no segment of the front's line and stays inside the axes; when
// none is free, the fewest faults (a covered point counts most, then another label).
void place_labels(ParetoChart& chart, const LabelMetrics& m) {
  const Box axes{chart.x, chart.y};
  std::vector<Box> marks, placed;
  for (const auto& p : chart.points)
    marks.push_back({{p.x - chart.marker_x, p.x + chart.marker_x}, {p.y - chart.marker_y, p.y + chart.marker_y}});
  std::vector<std::array<double, 4>> line;  // front 1 is drawn joined, in x order
  for (std::size_t i = 1; i < chart.points.size() && chart.points[i].front == 1; ++i)
    line.push_back({chart.points[i - 1].x, chart.points[i - 1].y, chart.points[i].x, chart.points[i].y});
  for (auto& p : chart.points) {
    if (p.label.empty()) continue;
    const bool right_half = p.x > (chart.x.low + chart.x.high) / 2;
    const auto order = right_half ? std::array{LabelPlace::left_above, LabelPlace::left_below, LabelPlace::right_above,
                                               LabelPlace::right_below}
                                  : std::array{LabelPlace::right_above, LabelPlace::right_below, LabelPlace::left_above,
                                               LabelPlace::left_below};
    int best_faults = INT32_MAX;
    for (const auto place : order) {
      const auto box = label_box(p, place, chart, m);
      int faults = 0;
      for (const auto& mark : marks) faults += 4 * box.meets(mark);
      for (const auto& other : placed) faults += 2 * box.meets(other);
      for (const auto& [ax, ay, bx, by] : line) faults += crosses(box, ax, ay, bx, by);
      faults += box.x.low < axes.x.low || box.x.high > axes.x.high || box.y.low < axes.y.low || box.y.high > axes.y.high;
      if (faults < best_faults) best_faults = faults, p.place = place, p.label_x = box.x, p.label_y = box.y;
      if (faults == 0) break;
    }
    placed.push_back({p.label_x, p.label_y});
  }
}

}  // namespace

ParetoChart pareto_chart(const CampaignSummary& summary, const std::vector<ParetoPoint>& fronts,
                         const LabelMetrics& metrics) {
  ParetoChart chart;
  if (fronts.empty()) return chart;
  double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
  for (const auto& p : fronts) {
    chart.on_front += p.front == 1;
    x0 = std::min(x0, p.values[0]), x1 = std::max(x1, p.values[0]);
    y0 = std::min(y0, p.values[1]), y1 = std::max(y1, p.values[1]);
  }
  std::vector<ParetoChartPoint>& points = chart.points;
  for (const auto& p : fronts)
    points.push_back({summary.candidates[p.candidate].record.id, p.values[0], p.values[1], p.front, ""});
  std::stable_sort(points.begin(), points.end(),
                   [](const auto& a, const auto& b) { return a.front != b.front ? a.front < b.front : a.x < b.x; });
  chart.x = padded(x0, x1, 0.08);
  chart.y = padded(y0, y1, 0.1);
  chart.marker_x = metrics.marker_x * (chart.x.high - chart.x.low);
  chart.marker_y = metrics.marker_y * (chart.y.high - chart.y.low);
  // Front 1 always carries its ids, with the configuration while the front is short enough to
  // read it; other points carry theirs unless a labelled point sits within 4% of both axes
  // (front first, so crowded dominated points give way). Points at one place share one label.
  const bool with_config = chart.on_front <= 6;
  const double near_x = 0.04 * (chart.x.high - chart.x.low), near_y = 0.04 * (chart.y.high - chart.y.low);
  std::map<std::pair<double, double>, std::vector<std::size_t>> places;
  for (std::size_t i = 0; i < points.size(); ++i) places[{points[i].x, points[i].y}].push_back(i);
  std::vector<std::size_t> labelled;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto& at = places[{points[i].x, points[i].y}];
    if (at.front() != i) continue;
    auto& p = points[i];
    const bool crowded = std::any_of(labelled.begin(), labelled.end(), [&](auto j) {
      return std::abs(points[j].x - p.x) < near_x && std::abs(points[j].y - p.y) < near_y;
    });
    if (p.front != 1 && crowded) continue;
    for (auto j : at) p.label += fmt::format("{}#{}", p.label.empty() ? "" : ", ", points[j].candidate);
    if (p.front == 1 && with_config && at.size() == 1)
      p.label += " " + summary.candidates[static_cast<std::size_t>(p.candidate)].record.config;
    labelled.push_back(i);
  }
  place_labels(chart, metrics);
  return chart;
}

ImportanceChart importance_chart(const ImportanceReport& report) {
  ImportanceChart chart;
  std::vector<std::string> unreliable;
  for (const auto& p : report.parameters) {
    // With about one candidate per value each value's mean is that candidate's own measurement,
    // so η² approaches 100% whatever the parameter does.
    const bool thin = p.values.size() > 1 && 2 * p.values.size() > report.samples;
    if (thin) unreliable.push_back(p.name);
    const double chance =
        report.samples > 1 ? static_cast<double>(p.values.size() - 1) / static_cast<double>(report.samples - 1) : 1.0;
    chart.bars.push_back({.label = p.name,
                          .percent = 100 * p.importance,
                          .unreliable = thin,
                          .chance_percent = 100 * std::min(1.0, chance)});
    chart.sum_percent += 100 * p.importance;
  }
  const bool overlap = chart.sum_percent > 105;  // a few percent over is sampling noise
  chart.bars.push_back(
      {.label = "interactions + noise", .percent = overlap ? NAN : 100 * report.interactions, .remainder = true});
  if (overlap)
    chart.verdict = fmt::format(
        "the shares add up to {:.0f}%: parameters that varied together share credit, so the shares overlap "
        "and what is left to interactions and noise cannot be told",
        chart.sum_percent);
  else if (report.variance > 0 && report.interactions > 0.5)
    chart.verdict = fmt::format(
        "the parameters alone explain only {:.0f}% of the variance: the rest is interactions "
        "or noise",
        100 * (1 - report.interactions));
  if (!unreliable.empty()) {
    std::string names;
    for (const auto& n : unreliable) names += (names.empty() ? "" : ", ") + n;
    chart.verdict += fmt::format("{}{}: about one candidate per value, so the share mostly fits noise",
                                 chart.verdict.empty() ? "" : "; ", names);
  }
  chart.warning = !chart.verdict.empty();
  if (!chart.warning)
    chart.verdict = fmt::format("the parameters alone explain {:.0f}% of the variance", chart.sum_percent);
  return chart;
}

namespace {

TestsChartRow row_of(const CandidateSummary& c, const CampaignSummary& summary) {
  return {.candidate = c.record.id,
          .status = c.status,
          .baseline = summary.baseline && summary.candidates[*summary.baseline].record.id == c.record.id};
}

void add_totals(TestsChart& chart) {
  for (const auto& r : chart.rows) {
    chart.regressions += r.regressions.value_or(0);
    chart.fixes += r.fixes.value_or(0);
  }
}

}  // namespace

TestsChart tests_chart(const CampaignSummary& summary, const std::vector<TestedCandidate>& tested) {
  TestsChart chart{.per_test = true};
  const TestedCandidate* reference = nullptr;
  if (summary.baseline) {
    const auto id = summary.candidates[*summary.baseline].record.id;
    for (const auto& t : tested)
      if (t.tests.candidate == id) reference = &t, chart.baseline = id;
  }
  for (const auto& t : tested) {
    if (t.tests.candidate < 0 || static_cast<std::size_t>(t.tests.candidate) >= summary.candidates.size()) continue;
    auto row = row_of(summary.candidates[t.tests.candidate], summary);
    const auto s = summarize(t.tests.outcomes);
    row.tests = s.total, row.passed = s.pass, row.failed = s.fail + s.error + s.timeout;
    if (reference) {
      const bool same_suite = reference->tests.suite == t.tests.suite;
      const auto diff = same_suite
                            ? diff_outcomes(reference->tests.outcomes, t.tests.outcomes)
                            : diff_outcomes(*reference->suite, reference->tests.outcomes, *t.suite, t.tests.outcomes);
      row.regressions = static_cast<std::int64_t>(diff.regression_count());
      row.fixes = static_cast<std::int64_t>(diff.fixes.size());
    }
    chart.rows.push_back(row);
  }
  std::sort(chart.rows.begin(), chart.rows.end(),
            [](const auto& a, const auto& b) { return a.candidate < b.candidate; });
  add_totals(chart);
  return chart;
}

TestsChart shard_tests_chart(const CampaignSummary& summary, const std::vector<TrialRecord>& trials) {
  TestsChart chart;
  const int shards = summary.campaign.shards;
  // Latest attempt of each (candidate, shard): passed or not.
  std::map<std::int64_t, std::map<int, std::pair<int, bool>>> shard_ok;
  for (const auto& t : trials) {
    if (t.kind != TrialKind::evaluate || t.index >= shards) continue;
    auto [it, fresh] = shard_ok[t.candidate].try_emplace(t.index, t.attempt, t.status == TrialStatus::ok);
    if (!fresh && t.attempt >= it->second.first) it->second = {t.attempt, t.status == TrialStatus::ok};
  }
  const std::map<int, std::pair<int, bool>>* reference = nullptr;
  if (summary.baseline)
    if (auto it = shard_ok.find(summary.candidates[*summary.baseline].record.id); it != shard_ok.end())
      reference = &it->second, chart.baseline = it->first;
  for (const auto& [id, ok] : shard_ok) {
    if (id < 0 || static_cast<std::size_t>(id) >= summary.candidates.size()) continue;
    auto row = row_of(summary.candidates[id], summary);
    row.tests = static_cast<std::int64_t>(ok.size());
    for (const auto& [shard, result] : ok) row.passed += result.second;
    row.failed = row.tests - row.passed;
    if (reference) {
      row.regressions = row.fixes = 0;
      for (const auto& [shard, result] : ok)
        if (auto r = reference->find(shard); r != reference->end() && r->second.second != result.second)
          ++*(result.second ? row.fixes : row.regressions);
    }
    chart.rows.push_back(row);
  }
  add_totals(chart);
  return chart;
}

}  // namespace flotilla::results

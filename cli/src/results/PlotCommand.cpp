// PlotCommand.cpp — `flotilla results plot FILE.h5 --kind K -o out.png|out.svg`: charts drawn by
// gnuplot, each with a title, axis labels and units.
//
// Kinds: convergence (objective per evaluation with best-so-far curves, outliers clipped),
// pareto (two goals, front 1 highlighted, points labelled), params (importance per parameter,
// with a warning when the shares do not explain the variance), timeline (tasks per rank or slot
// over time, rounds and their waits), tests (regressions and fixes per candidate against the
// baseline, per test or per evaluate shard), lineage (the tree of proposals, the winner's line;
// LineagePlot.cpp). What the charts share is in Plots.h.
//
// What a chart shows is decided in results/Charts.h and results/Timeline.h (pure, unit-tested);
// this file only writes gnuplot, and returns that data too (--json's `chart`).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>

#include "Gnuplot.h"
#include "Plots.h"
#include "ResultsCli.h"
#include "flotilla/results/Charts.h"
#include "flotilla/results/Importance.h"
#include "flotilla/results/Pareto.h"
#include "flotilla/results/Store.h"
#include "flotilla/results/TestOutcomes.h"
#include "flotilla/results/Timeline.h"

namespace flotilla::cli::results_cli {
namespace {

using results::CandidateStatus;

std::string direction_note(bool maximize) { return maximize ? " (higher is better)" : " (lower is better)"; }

std::string range(const results::AxisRange& r) { return fmt::format("[{}:{}]", cell(r.low), cell(r.high)); }

Drawn convergence_script(const LoadedCampaign& c, const PlotFile& file) {
  const auto& info = c.summary.campaign;
  const bool counted = results::is_tests_objective(info.objective) || info.repeats == 0;
  const auto h = results::history(c.summary, c.trials);
  const auto chart = results::convergence_chart(c.summary, h);
  Rows verified, explored, rolled, clipped, best, best_verified, failed, winner;
  const double edge = 0.03 * (chart.y.high - chart.y.low);  // clipped points sit just inside the border
  auto data = nlohmann::json{{"x_range", {chart.x.low, chart.x.high}}, {"y_range", {chart.y.low, chart.y.high}},
                             {"best_differs", chart.best_differs},
                             {"y_step", chart.y_step ? nlohmann::json(*chart.y_step) : nlohmann::json()},
                             {"best_median", chart.best_median ? nlohmann::json(*chart.best_median) : nlohmann::json()},
                             {"failed", nlohmann::json::array()}};
  std::map<std::string, int> counts;  // points per kind
  for (const auto& p : chart.points) {
    const auto x = std::to_string(p.evaluation);
    if (p.clipped) {
      // Labels of neighbouring outliers alternate between two heights, so they do not overprint.
      const double at = p.clipped > 0 ? chart.y.high - edge : chart.y.low + edge;
      const double label_at = at - p.clipped * edge * (1.0 + 1.5 * static_cast<double>(clipped.size() % 2));
      clipped.push_back({x, cell(at), text_cell(fmt::format("#{} {:.4g} ({})", p.candidate, p.value,
                                                       p.kind == results::PointKind::rolled_back ? "rolled back"
                                                                                                 : results::to_string(p.kind))),
                         p.clipped > 0 ? "9" : "11", cell(label_at)});
      data["clipped"].push_back({{"candidate", p.candidate}, {"value", p.value}, {"side", p.clipped > 0 ? "above" : "below"}});
    } else {
      (p.kind == results::PointKind::verified ? verified : p.kind == results::PointKind::rolled_back ? rolled : explored)
          .push_back({x, cell(p.value), cell(p.low), cell(p.high)});
    }
    ++counts[std::string(results::to_string(p.kind))];
  }
  data["points"] = counts;
  if (!data.contains("clipped")) data["clipped"] = nlohmann::json::array();
  if (chart.winner) {
    const auto& w = chart.points[*chart.winner];
    winner.push_back({std::to_string(w.evaluation), cell(w.value), text_cell(fmt::format("winner #{}", w.candidate))});
    data["winner"] = {{"candidate", w.candidate}, {"evaluation", w.evaluation}, {"value", w.value}};
  }
  // Evaluations with no value (the build or a repeat failed) keep their place, marked at the bottom.
  for (const auto& [evaluation, candidate] : chart.failed) {
    failed.push_back({std::to_string(evaluation), cell(chart.y.low + edge)});
    data["failed"].push_back({{"evaluation", evaluation}, {"candidate", candidate}});
  }
  for (const auto& [x, v] : chart.best) best.push_back({std::to_string(x), cell(v)});
  for (const auto& [x, v] : chart.best_verified) best_verified.push_back({std::to_string(x), cell(v)});
  auto title = fmt::format("{}: {} per evaluation and the best so far{} ({} evaluations)\n{}", info.name, info.objective,
                           counted ? "" : " by median", h.evaluations.size(), chart.caption);
  if (chart.clipped)
    title += fmt::format("\n{} outlier{} beyond the axis (never a best so far), drawn at its edge with {} value",
                         chart.clipped, chart.clipped == 1 ? "" : "s", chart.clipped == 1 ? "its" : "their");
  data["title"] = title;
  auto s = script_header(file, wrapped(title, static_cast<std::size_t>(file.width / 7.5)));
  s += datablock("verified", verified) + datablock("explored", explored) + datablock("rolled", rolled);
  s += datablock("clipped", clipped) + datablock("best", best) + datablock("best_verified", best_verified);
  s += datablock("failed", failed) + datablock("winner", winner);
  s += fmt::format("set xlabel {}\n", gnuplot_string(counted ? "evaluation (candidates in the order their tests finished)"
                                                             : "evaluation (candidates in the order they finished exploring)"));
  s += fmt::format("set ylabel {}\n",
                   gnuplot_string(counted ? fmt::format("{}, counted from the tests{}", metric_label(info.objective),
                                                        direction_note(info.direction != "minimize"))
                                          : fmt::format("{}, median of {} repeats{}", metric_label(info.objective),
                                                        info.repeats, direction_note(info.direction != "minimize"))));
  s += fmt::format("set yrange {}\nset xrange {}\n", range(chart.y), range(chart.x));
  if (h.evaluations.size() <= 25) s += "set xtics 1\n";  // evaluations are whole: no tick between two
  if (chart.y_step) s += fmt::format("set ytics {}\nset format y '%g'\n", cell(*chart.y_step));
  std::size_t entries = chart.winner.has_value();
  for (const auto* rows : {&verified, &explored, &rolled, &clipped, &best, &best_verified, &failed})
    entries += !rows->empty();
  s += bottom_key(file, entries);
  // Best verified solid and wide, best so far dashed on top of it: where they agree both stay
  // visible, and where an unverified candidate leads the dashes part from the green.
  return {s + plot_line({{!best_verified.empty(),
                          fmt::format("$best_verified using 1:2 with steps lw 4 lc rgb '{}' title 'best verified so far'",
                                      kGreen)},
                         {!best.empty(),
                          fmt::format("$best using 1:2 with steps lw 2 dt 2 lc rgb '{}' title 'best so far (any status)'",
                                      kBlue)},
                         {!explored.empty(),
                          fmt::format("$explored using 1:2:3:4 with yerrorbars pt 6 ps 0.9 lc rgb '{}' title "
                                      "'explored, not verified (median, interval)'",
                                      kBlue)},
                         {!verified.empty(),
                          fmt::format("$verified using 1:2:3:4 with yerrorbars pt 7 ps 0.9 lc rgb '{}' title 'verified'",
                                      kGreen)},
                         {!rolled.empty(),
                          fmt::format("$rolled using 1:2:3:4 with yerrorbars pt 2 ps 1.0 lc rgb '{}' title 'rolled back'",
                                      kRed)},
                         {!failed.empty(),
                          fmt::format("$failed using 1:2 with points pt 10 ps 1.2 lw 1.5 lc rgb '{}' title 'failed: no "
                                      "value (build or run)'",
                                      kGrey)},
                         {!winner.empty(),
                          "$winner using 1:2 with points pt 6 ps 2.8 lw 2 lc rgb 'black' title 'winner', "
                          "$winner using 1:2:3 with labels center offset 0,1.7 notitle"},
                         {!clipped.empty(),
                          fmt::format("$clipped using 1:2:4 with points pt variable ps 1.6 lc rgb '{0}' notitle, "
                                      "$clipped using 1:5:3 with labels center tc rgb '{0}' notitle, "
                                      "keyentry with points pt 9 ps 1.6 lc rgb '{0}' title 'outlier, off the axis'",
                                      kOrange)}},
                        "no candidate has finished exploring yet"),
          data};
}

// Labels sit at the corner beside their point that Charts.h chose: one text column per corner,
// each drawn with its own offset (in characters, as LabelMetrics says).
Drawn pareto_script(const LoadedCampaign& c, const PlotFile& file, const std::vector<results::Goal>& goals) {
  // The plot area: the size less the margins (tic labels and the y label at the left, the title
  // at the top, the x label and the key at the bottom), in pixels, and a character in it.
  const double area_x = file.width - 90.0, area_y = file.height - 50.0 - 15 * 5.25;
  const results::LabelMetrics metrics{.char_x = 7 / area_x, .char_y = 15 / area_y, .marker_x = 5 / area_x,
                                      .marker_y = 5 / area_y};
  const auto chart = results::pareto_chart(c.summary, results::pareto_fronts(c.summary, goals, false), metrics);
  Rows front, others;
  auto data = nlohmann::json{{"x_range", {chart.x.low, chart.x.high}}, {"y_range", {chart.y.low, chart.y.high}},
                             {"marker", {chart.marker_x, chart.marker_y}}, {"points", nlohmann::json::array()}};
  for (const auto& p : chart.points) {
    Rows::value_type row = {cell(p.x), cell(p.y), text_cell(""), text_cell(""), text_cell(""), text_cell("")};
    row[2 + static_cast<std::size_t>(p.place)] = text_cell(p.label);
    (p.front == 1 ? front : others).push_back(std::move(row));
    auto point = nlohmann::json{{"candidate", p.candidate}, {"x", p.x}, {"y", p.y}, {"front", p.front}, {"label", p.label}};
    if (!p.label.empty())
      point["label_box"] = {{"place", results::to_string(p.place)}, {"x", {p.label_x.low, p.label_x.high}},
                            {"y", {p.label_y.low, p.label_y.high}}};
    data["points"].push_back(std::move(point));
  }
  const auto extra = goals.size() > 2 ? fmt::format(" (fronts over {} metrics)", goals.size()) : std::string();
  auto s = script_header(
      file, fmt::format("{}: Pareto front of {} vs {}{}, {} of {} candidates on it", c.summary.campaign.name,
                        goals[0].metric, goals[1].metric, extra, chart.on_front, chart.points.size()));
  s += datablock("front", front) + datablock("others", others);
  s += fmt::format("set xlabel {}\nset ylabel {}\n",
                   gnuplot_string(metric_label(goals[0].metric) + direction_note(goals[0].maximize)),
                   gnuplot_string(metric_label(goals[1].metric) + direction_note(goals[1].maximize)));
  s += fmt::format("set xrange {}\nset yrange {}\n", range(chart.x), range(chart.y));
  s += bottom_key(file, 2);
  // right_above, left_above, right_below, left_below: columns 3 to 6.
  const auto labels = [](const char* block, const char* color) {
    const double ox = results::LabelMetrics::kOffsetX, oy = results::LabelMetrics::kOffsetY;
    return fmt::format("{0} using 1:2:3 with labels left offset {2},{3} tc rgb '{1}' notitle, "
                       "{0} using 1:2:4 with labels right offset -{2},{3} tc rgb '{1}' notitle, "
                       "{0} using 1:2:5 with labels left offset {2},-{3} tc rgb '{1}' notitle, "
                       "{0} using 1:2:6 with labels right offset -{2},-{3} tc rgb '{1}' notitle",
                       block, color, ox, oy);
  };
  return {s + plot_line({{!others.empty(),
                          fmt::format("$others using 1:2 with points pt 7 ps 0.8 lc rgb '{}' title 'dominated', {}",
                                      kGrey, labels("$others", "#666666"))},
                         {!front.empty(),
                          fmt::format("$front using 1:2 with linespoints pt 7 ps 1.2 lw 2 lc rgb '{}' title 'Pareto "
                                      "front (candidate ids)', {}",
                                      kRed, labels("$front", "black"))}},
                        "no candidate has every metric"),
          data};
}

Drawn params_script(const LoadedCampaign& c, const PlotFile& file, const results::Goal& goal) {
  const auto report = results::parameter_importance(c.summary, goal);
  if (report.samples < 2) throw std::runtime_error("nothing to plot: fewer than two candidates have " + goal.metric);
  const auto chart = results::importance_chart(report);
  Rows bars;
  auto data = nlohmann::json{{"sum_percent", chart.sum_percent}, {"warning", chart.warning},
                             {"verdict", chart.verdict}, {"bars", nlohmann::json::array()}};
  for (const auto& b : chart.bars) {
    const bool unknown = std::isnan(b.percent);
    // Colour: parameter blue, a share that fits noise light grey, the remainder grey.
    const char* color = b.remainder ? kGrey : b.unreliable ? kLightGrey : kBlue;
    const auto text = unknown ? std::string("cannot tell") : fmt::format("{:.1f}%{}", b.percent, b.unreliable ? " (?)" : "");
    bars.push_back({text_cell(b.label), unknown ? "0" : cell(b.percent), std::string("0x") + (color + 1), text_cell(text),
                    b.remainder ? "NaN" : cell(b.chance_percent)});
    data["bars"].push_back({{"label", b.label},
                            {"percent", unknown ? nlohmann::json() : nlohmann::json(b.percent)},
                            {"remainder", b.remainder},
                            {"unreliable", b.unreliable},
                            {"chance_percent", b.chance_percent}});
  }
  auto s = script_header(file, fmt::format("{}: what matters for {} ({} candidates)\n{}", c.summary.campaign.name,
                                           goal.metric, report.samples,
                                           chart.warning ? "" : chart.verdict));
  s += datablock("bars", bars);
  s += "set xlabel 'parameter'\nset ylabel 'share of the variance explained alone [%]'\nset yrange [0:118]\n";
  s += "set ytics 0,20,100\nset style fill solid 0.8 noborder\nset boxwidth 0.6\n";
  s += "set xtics rotate by -30 nomirror\n";
  // The warning sits in the chart, in red, above the bars: it must not be missed.
  if (chart.warning)
    s += fmt::format("set label 1 {} at graph 0.5, graph 0.97 center front tc rgb '{}'\n",
                     gnuplot_string("warning: " + wrapped(chart.verdict, 110)), kRed);
  s += "set key outside bottom center horizontal\n";
  // A black dash across each bar at the share noise alone would give it.
  return {s + "plot $bars using 0:2:3:xtic(1) with boxes lc rgb variable notitle, \\\n"
              "     $bars using 0:2:4 with labels offset 0,0.8 notitle, \\\n"
              "     $bars using ($0-0.34):5:(0.68):(0) with vectors nohead lw 2 lc rgb 'black' "
              "title 'share noise alone would give (chance level)'\n",
          data};
}

// A bar's legend entry and colour; the legend lists the entries the chart draws, in this order.
struct BarEntry {
  const char* title;
  const char* color;
};
constexpr BarEntry kBarEntries[] = {{"build", kTeal},    {"explore", kBlue},  {"evaluate", kGreen},
                                    {"confirm (all pairs)", kPurple}, {"warm-up", kLightGrey},
                                    {"failed", kRed},    {"cancelled", kGrey}};

std::size_t bar_entry(const results::TimelineBar& b) {
  using results::TrialKind;
  if (b.status == results::TrialStatus::cancelled) return 6;
  if (b.status != results::TrialStatus::ok) return 5;
  switch (b.kind) {
    case TrialKind::build: return 0;
    case TrialKind::explore: return 1;
    case TrialKind::evaluate: return 2;
    case TrialKind::confirm: return 3;
    case TrialKind::warmup: return 4;
  }
  return 1;
}

// Tasks per lane over time. Rounds start at dashed lines, the wait for their first task shaded;
// time the campaign was not running (between an interruption or a crash and the resume) is grey
// and counts neither as busy nor as idle.
Drawn timeline_script(const LoadedCampaign& c, const PlotFile& file) {
  const auto tl = results::build_timeline(c.trials);
  if (tl.bars.empty()) throw std::runtime_error("nothing to plot: no trial is recorded yet");
  std::vector<results::CandidateRecord> candidates;
  for (const auto& cand : c.summary.candidates) candidates.push_back(cand.record);
  const auto rounds = results::timeline_rounds(tl, candidates, c.events);
  const auto running = results::running_periods(tl, c.trials, c.events);
  Rows bars;
  std::vector<bool> drawn(std::size(kBarEntries), false);
  for (const auto& b : tl.bars) {
    const auto entry = bar_entry(b);
    drawn[entry] = true;
    bars.push_back({cell(b.start), cell(b.end), std::to_string(b.lane), std::string("0x") + (kBarEntries[entry].color + 1)});
  }
  // At most ~40 lane labels, so a thousand ranks still give a readable axis.
  std::string tics;
  const std::size_t every = (tl.lanes.size() + 39) / 40;
  for (std::size_t l = 0; l < tl.lanes.size(); l += every)
    tics += fmt::format("{}{} {}", l ? ", " : "", gnuplot_string(tl.lanes[l].label), l);
  double longest_wait = 0;
  for (const auto& r : rounds) longest_wait = std::max(longest_wait, r.wait);
  // The gaps between runs, within the span.
  std::vector<results::TimelinePeriod> stopped;
  double at = 0;
  for (const auto& p : running) {
    if (p.start > at) stopped.push_back({at, p.start});
    at = std::max(at, p.end);
  }
  if (!running.empty() && at < tl.span) stopped.push_back({at, tl.span});
  double running_s = running.empty() ? tl.span : 0;
  for (const auto& p : running) running_s += p.end - p.start;
  auto data = nlohmann::json{{"lanes", nlohmann::json::array()}, {"rounds", nlohmann::json::array()},
                             {"bars", tl.bars.size()}, {"span_s", tl.span}, {"running_s", running_s},
                             {"utilisation", tl.utilisation(running)}, {"longest_wait", longest_wait},
                             {"legend", nlohmann::json::array()}};
  for (const auto& lane : tl.lanes) data["lanes"].push_back({{"label", lane.label}, {"tasks", lane.tasks}});
  for (const auto& r : rounds)
    data["rounds"].push_back({{"round", r.round}, {"proposed", r.proposed}, {"wait", r.wait},
                              {"first_start", r.first_start ? nlohmann::json(*r.first_start) : nlohmann::json()}});
  for (std::size_t e = 0; e < std::size(kBarEntries); ++e)
    if (drawn[e]) data["legend"].push_back({{"title", kBarEntries[e].title}, {"color", kBarEntries[e].color}});
  data["stopped"] = nlohmann::json::array();
  for (const auto& p : stopped) data["stopped"].push_back({p.start, p.end});
  auto s = script_header(
      file, fmt::format("{}: tasks over time, {} lane{}{} (utilisation {:.0f}%{})\n{} round{}, longest wait from a "
                        "round's proposal to its first task {:.1f} s",
                        c.summary.campaign.name, tl.lanes.size(), tl.lanes.size() == 1 ? "" : "s",
                        tl.by_rank ? fmt::format(" on {} rank{}", tl.ranks, tl.ranks == 1 ? "" : "s") : "",
                        100 * tl.utilisation(running), stopped.empty() ? "" : " while the campaign ran",
                        rounds.size(), rounds.size() == 1 ? "" : "s", longest_wait));
  s += datablock("bars", bars);
  s += fmt::format("set ytics ({})\nset yrange [{}:-0.6]\nset xrange [{}:*]\n", tics, tl.lanes.size() - 0.4,
                   cell(std::min(0.0, rounds.empty() ? 0.0 : rounds.front().proposed)));
  for (const auto& p : stopped)
    s += fmt::format("set object rect from {}, graph 0 to {}, graph 1 fc rgb '{}' fs solid 0.6 noborder behind\n",
                     cell(p.start), cell(p.end), kLightGrey);
  // Each round starts at a dashed line (its proposal, named at the top); the time until its first
  // task started (queueing, on Slurm) is shaded. Names only while they fit.
  const bool named = rounds.size() <= 16;
  for (const auto& r : rounds) {
    s += fmt::format("set arrow from {0}, graph 0 to {0}, graph 1 nohead dt 3 lc rgb '#777777' back\n", cell(r.proposed));
    if (named)
      s += fmt::format("set label {} at {}, graph 1.02 left font ',8' tc rgb '#555555'\n",
                       gnuplot_string(fmt::format("r{}", r.round)), cell(r.proposed));
    if (r.first_start && r.wait > 0.002 * tl.span)
      s += fmt::format("set object rect from {}, graph 0 to {}, graph 1 fc rgb '{}' fs solid 0.25 noborder behind\n",
                       cell(r.proposed), cell(*r.first_start), kOrange);
  }
  s += fmt::format("set xlabel 'time since the first task started [s]'\nset ylabel {}\n",
                   gnuplot_string(tl.by_rank ? "where it ran: host, rank (and slot)" : "slot (concurrent task lane)"));
  std::size_t entries = 1 + !stopped.empty();
  for (bool d : drawn) entries += d;
  s += "set style fill solid 0.85 noborder\n" + bottom_key(file, entries);
  s += "plot $bars using (($1+$2)/2):3:1:2:($3-0.38):($3+0.38):4 with boxxyerror lc rgb variable notitle";
  for (std::size_t e = 0; e < std::size(kBarEntries); ++e)
    if (drawn[e])
      s += fmt::format(", \\\n     keyentry with boxes fs solid 0.85 lc rgb '{}' title '{}'", kBarEntries[e].color,
                       kBarEntries[e].title);
  s += fmt::format(", \\\n     keyentry with boxes fs solid 0.25 lc rgb '{}' title 'round waiting to start'", kOrange);
  if (!stopped.empty())
    s += fmt::format(", \\\n     keyentry with boxes fs solid 0.6 lc rgb '{}' title 'campaign not running'", kLightGrey);
  return {s + '\n', data};
}

// What changed against the baseline, per tested candidate: fixes up, regressions down, and the
// candidates that were rolled back shaded, so one broken test among thousands of passes shows.
Drawn tests_script(const LoadedCampaign& c, const PlotFile& file) {
  const auto& s0 = c.summary;
  if (s0.campaign.shards == 0)
    throw std::runtime_error("nothing to plot: this campaign has no evaluate stage, so no tests");
  results::TestsChart chart;
  if (const auto store = results::Store::open_read(c.path); !store.tested_candidates().empty()) {
    std::map<std::int64_t, results::TestSuite> suites;
    std::vector<results::TestedCandidate> tested;
    for (auto id : store.tested_candidates()) {
      auto tests = store.test_results(id);
      if (!tests) continue;
      auto it = suites.find(tests->suite);
      if (it == suites.end()) it = suites.emplace(tests->suite, store.test_suite(tests->suite)).first;
      tested.push_back({&it->second, std::move(*tests)});
    }
    chart = results::tests_chart(s0, tested);
  } else {
    chart = results::shard_tests_chart(s0, c.trials);
  }
  if (chart.rows.empty()) throw std::runtime_error("nothing to plot: no evaluate shard is recorded yet");
  const bool compared = chart.baseline.has_value();
  const char* unit = chart.per_test ? "tests" : "evaluate shards";
  Rows rows;
  std::int64_t largest = 1;
  auto data = nlohmann::json{{"per_test", chart.per_test}, {"baseline", compared ? nlohmann::json(*chart.baseline) : nlohmann::json()},
                             {"regressions", chart.regressions}, {"fixes", chart.fixes}, {"rows", nlohmann::json::array()}};
  // Status and failure counts under each bar while there is room; beyond that the ids alone, and
  // the shading still marks what was rolled back.
  const bool roomy = chart.rows.size() <= 10;
  for (std::size_t i = 0; i < chart.rows.size(); ++i) {
    const auto& r = chart.rows[i];
    // Without a tested baseline there is nothing to compare with: failures go down instead.
    const auto up = r.fixes.value_or(0), down = compared ? r.regressions.value_or(0) : r.failed;
    largest = std::max({largest, up, down});
    auto status = r.baseline ? std::string("baseline") : std::string(results::to_string(r.status));
    std::replace(status.begin(), status.end(), '_', ' ');
    const bool rolled = r.status == CandidateStatus::rolled_back;
    rows.push_back({std::to_string(i), text_cell(roomy ? fmt::format("#{}\n{}\n{}/{} failed", r.candidate, status, r.failed, r.tests)
                                           : fmt::format("#{}", r.candidate)), std::to_string(up),
                    std::to_string(-down), rolled ? "1" : "0",
                    text_cell(up ? fmt::format("+{}", up) : ""),
                    text_cell(down ? fmt::format("-{}", down) : (up ? "" : "="))});
    data["rows"].push_back({{"candidate", r.candidate}, {"status", results::to_string(r.status)}, {"baseline", r.baseline}, {"tests", r.tests}, {"passed", r.passed},
                            {"failed", r.failed},
                            {"regressions", r.regressions ? nlohmann::json(*r.regressions) : nlohmann::json()},
                            {"fixes", r.fixes ? nlohmann::json(*r.fixes) : nlohmann::json()}});
  }
  const auto head = fmt::format("{}: {} per candidate ({} candidates evaluated)", s0.campaign.name, unit, rows.size());
  const auto against =
      compared ? fmt::format("against the baseline (candidate {}): {} regression{}, {} fix{} in all", *chart.baseline,
                             chart.regressions, chart.regressions == 1 ? "" : "s", chart.fixes,
                             chart.fixes == 1 ? "" : "es")
               : std::string("the baseline was not tested: failures shown instead of regressions");
  auto s = script_header(file, head + "\n" + against);
  s += datablock("rows", rows);
  const double top = 1.3 * static_cast<double>(largest);
  s += fmt::format("set ylabel {}\n",
                   gnuplot_string(compared ? fmt::format("{} changed vs the baseline: fixes up, regressions down", unit)
                                           : fmt::format("failed {} [count]", unit)));
  s += fmt::format("set yrange [{}:{}]\nset xrange [-0.6:{}]\n", cell(-top), cell(top), rows.size() - 0.4);
  if (largest <= 10) s += "set ytics 1\n";  // counts: no half tests on the axis
  s += "set format y '%g'\nset style fill solid 0.85 noborder\nset boxwidth 0.6\nset xzeroaxis lt -1 lw 1\n";
  s += roomy ? "set bmargin 6\nset xtics nomirror\n" : "set xtics nomirror rotate by -45\n";
  s += "set key outside right top vertical\n";
  bool any_rolled = false;
  for (const auto& r : chart.rows) any_rolled = any_rolled || r.status == CandidateStatus::rolled_back;
  // Rolled-back candidates get a pale red column behind their bars (drawn first, so behind).
  const auto shade = [&](double y, bool titled) {
    return fmt::format("$rows using 1:($5 > 0 ? {} : NaN):(0.9) with boxes fs solid 1.0 lc rgb '{}' {}", cell(y), kPaleRed,
                       titled ? "title 'rolled back'" : "notitle");
  };
  return {s + plot_line({{any_rolled, shade(2 * top, true)},
                         {any_rolled, shade(-2 * top, false)},
                         {true, fmt::format("$rows using 1:3:xtic(2) with boxes lc rgb '{}' {}", kGreen,
                                            compared ? "title 'fixes'" : "notitle")},
                         {true, fmt::format("$rows using 1:4 with boxes lc rgb '{}' title '{}'", kRed,
                                            compared ? "regressions" : "failed")},
                         {true, "$rows using 1:($3 > 0 ? $3 : 0):6 with labels offset 0,0.7 notitle"},
                         {true, "$rows using 1:($4 < 0 ? $4 : 0):7 with labels offset 0,-0.7 notitle"}},
                        "no evaluate shard is recorded yet"),
          data};
}


int run_plot(const po::variables_map& vm, const std::vector<std::string>& files, std::ostream& out) {
  const bool json = vm.count("json");
  if (!vm.count("kind")) throw po::error("plot needs --kind convergence|pareto|params|timeline|tests|lineage");
  if (!vm.count("output")) throw po::error("plot needs -o OUT.png or -o OUT.svg");
  const auto kind = vm["kind"].as<std::string>();
  const auto file = plot_file(vm["output"].as<std::string>(), vm["size"].as<std::string>());
  auto c = load_campaign(files[0], json);
  Drawn drawn;
  auto& script = drawn.script;
  if (kind == "convergence")
    drawn = convergence_script(c, file);
  else if (kind == "pareto") {
    if (!vm.count("objectives")) throw results::AnalysisError("--kind pareto needs --objectives M:max,N:min");
    auto goals = results::parse_goals(vm["objectives"].as<std::string>(), c.summary);
    if (goals.size() < 2) throw results::AnalysisError("--kind pareto needs two or more metrics in --objectives");
    drawn = pareto_script(c, file, goals);
  } else if (kind == "params") {
    drawn = params_script(c, file,
                           vm.count("metric") ? results::parse_goal(vm["metric"].as<std::string>(), c.summary)
                                              : results::objective_goal(c.summary.campaign));
  } else if (kind == "timeline")
    drawn = timeline_script(c, file);
  else if (kind == "tests")
    drawn = tests_script(c, file);
  else if (kind == "lineage")
    drawn = lineage_script(c, file);
  else
    throw po::error("--kind must be convergence, pareto, params, timeline, tests or lineage, not '" + kind + "'");
  if (vm.count("script")) {
    const auto path = vm["script"].as<std::string>();
    std::ofstream out_script(path, std::ios::binary);
    if (!(out_script << script) || !out_script.flush()) throw std::runtime_error(path + ": cannot write the script");
  }
  run_gnuplot(script, file);
  const char* format = file.format == PlotFile::Format::png ? "png" : "svg";
  if (json)
    out << nlohmann::json{{"file", file.path},   {"kind", kind},          {"format", format},
                          {"width", file.width}, {"height", file.height}, {"run", run_json(c.run)},
                          {"chart", drawn.data}}
               .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
        << '\n';
  else
    out << fmt::format("wrote {} ({} plot, {}, {}x{})\n", file.path, kind, format, file.width, file.height);
  return 0;
}

}  // namespace

const Subcommand kPlot{
    .name = "plot",
    .synopsis = "FILE.h5 --kind K -o OUT.png|OUT.svg",
    .what = "draw convergence|pareto|params|timeline|tests|lineage with gnuplot",
    .add_options =
        [](po::options_description& o) {
          o.add_options()("kind", po::value<std::string>(), "convergence, pareto, params, timeline, tests or lineage")(
              "output,o", po::value<std::string>(), "the image: .png or .svg")(
              "size", po::value<std::string>()->default_value("1000x600"), "WIDTHxHEIGHT in pixels")(
              "objectives", po::value<std::string>(), "pareto: metrics with directions, e.g. gflops:max,time_s:min")(
              "metric", po::value<std::string>(), "params: the metric to explain (default: the objective)")(
              "script", po::value<std::string>(), "also save the gnuplot script here, to edit and rerun");
        },
    .run = run_plot};

}  // namespace flotilla::cli::results_cli

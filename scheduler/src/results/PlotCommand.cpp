// PlotCommand.cpp — `flotilla results plot FILE.h5 --kind K -o out.png|out.svg`: charts drawn by
// gnuplot, each with a title, axis labels and units.
//
// Kinds: convergence (objective per evaluation with best-so-far curves), pareto (two goals,
// front 1 highlighted), params (importance per parameter), timeline (tasks per rank or slot
// over time), tests (per-test outcomes per candidate when the campaign ran a suite, otherwise
// evaluate shards passed and failed per candidate).
#include <fmt/format.h>

#include <algorithm>
#include <fstream>

#include "Gnuplot.h"
#include "ResultsCli.h"
#include "flotilla/results/Importance.h"
#include "flotilla/results/Pareto.h"
#include "flotilla/results/Store.h"
#include "flotilla/results/TestOutcomes.h"
#include "flotilla/results/Timeline.h"

namespace flotilla::cli::results_cli {
namespace {

using results::CandidateStatus;
using Rows = std::vector<std::vector<std::string>>;

constexpr const char* kBlue = "#1f77b4";
constexpr const char* kGreen = "#2ca02c";
constexpr const char* kRed = "#d62728";
constexpr const char* kGrey = "#9a9a9a";
constexpr const char* kLightBlue = "#9ecae1";

std::string direction_note(bool maximize) { return maximize ? " (higher is better)" : " (lower is better)"; }

// "plot A, B, C" from the clauses whose data is not empty; gnuplot refuses a plot of nothing.
std::string plot_line(const std::vector<std::pair<bool, std::string>>& clauses, const std::string& what) {
  std::string line;
  for (const auto& [present, clause] : clauses)
    if (present) line += (line.empty() ? "plot " : ", \\\n     ") + clause;
  if (line.empty()) throw std::runtime_error("nothing to plot: " + what);
  return line + '\n';
}

// The headline a chart must not contradict: the winner's verdict and its confirmed ratio.
std::string verdict_line(const results::CampaignSummary& s) {
  if (!s.best) return "nothing verified";
  const auto& w = s.candidates[*s.best];
  if (s.best_confirmed)
    return fmt::format("winner: {:.3g}x [{:.3g}, {:.3g}] over the baseline, confirmed faster",
                       w.confirmation->result.ratio, w.confirmation->result.low, w.confirmation->result.high);
  if (s.best == s.baseline) return "winner: the baseline (nothing is confirmed faster)";
  return "winner by median, not confirmed";
}

std::string convergence_script(const LoadedCampaign& c, const PlotFile& file) {
  const auto& info = c.summary.campaign;
  const auto h = results::history(c.summary, c.trials);
  Rows verified, explored, rolled, best, best_verified;
  for (const auto& e : h.evaluations) {
    const auto x = std::to_string(e.evaluation);
    const auto status = c.summary.candidates[e.candidate].status;
    // Each point with its median's interval (Stats.h), so a lucky median shows as one.
    const auto& interval = c.summary.candidates[e.candidate].interval;
    if (e.objective)
      (status == CandidateStatus::verified      ? verified
       : status == CandidateStatus::rolled_back ? rolled
                                                : explored)
          .push_back({x, cell(*e.objective), cell(interval ? interval->low : *e.objective),
                      cell(interval ? interval->high : *e.objective)});
    if (e.best_so_far) best.push_back({x, cell(*e.best_so_far)});
    if (e.best_verified_so_far) best_verified.push_back({x, cell(*e.best_verified_so_far)});
  }
  auto s = script_header(file, fmt::format("{}: convergence of {} ({} evaluations)\n{}", info.name, info.objective,
                                           h.evaluations.size(), verdict_line(c.summary)));
  s += datablock("verified", verified) + datablock("explored", explored) + datablock("rolled", rolled);
  s += datablock("best", best) + datablock("best_verified", best_verified);
  s += "set xlabel 'evaluation (candidates in the order they finished exploring)'\n";
  s += fmt::format("set ylabel {}\n",
                   gnuplot_string(fmt::format("{}, median of {} repeats{}", metric_label(info.objective), info.repeats,
                                              direction_note(info.direction != "minimize"))));
  s += "set key outside bottom center horizontal\n";
  // Best so far first and wide, so the verified curve drawn over it shows where the two agree.
  return s +
         plot_line({{!best.empty(),
                     fmt::format("$best using 1:2 with steps lw 5 lc rgb '{}' title 'best so far'", kLightBlue)},
                    {!explored.empty(),
                     fmt::format("$explored using 1:2:3:4 with yerrorbars pt 7 ps 0.7 lc rgb '{}' title 'explored "
                                 "(median, interval)'",
                                 kBlue)},
                    {!verified.empty(),
                     fmt::format("$verified using 1:2:3:4 with yerrorbars pt 7 ps 0.9 lc rgb '{}' title 'verified'",
                                 kGreen)},
                    {!rolled.empty(),
                     fmt::format("$rolled using 1:2:3:4 with yerrorbars pt 2 ps 0.9 lc rgb '{}' title 'rolled back'",
                                 kRed)},
                    {!best_verified.empty(),
                     fmt::format("$best_verified using 1:2 with steps lw 2 lc rgb '{}' title 'best verified so far'",
                                 kGreen)}},
                   "no candidate has finished exploring yet");
}

std::string pareto_script(const LoadedCampaign& c, const PlotFile& file, const std::vector<results::Goal>& goals) {
  const auto points = results::pareto_fronts(c.summary, goals, false);
  Rows front, others;
  for (const auto& p : points) (p.front == 1 ? front : others).push_back({cell(p.values[0]), cell(p.values[1])});
  std::sort(front.begin(), front.end(), [](const auto& a, const auto& b) { return std::stod(a[0]) < std::stod(b[0]); });
  const auto extra = goals.size() > 2 ? fmt::format(" (fronts over {} metrics)", goals.size()) : std::string();
  auto s = script_header(
      file, fmt::format("{}: Pareto front of {} vs {}{}, {} of {} candidates on it", c.summary.campaign.name,
                        goals[0].metric, goals[1].metric, extra, front.size(), points.size()));
  s += datablock("front", front) + datablock("others", others);
  s += fmt::format("set xlabel {}\nset ylabel {}\n",
                   gnuplot_string(metric_label(goals[0].metric) + direction_note(goals[0].maximize)),
                   gnuplot_string(metric_label(goals[1].metric) + direction_note(goals[1].maximize)));
  s += "set key outside bottom center horizontal\n";
  return s +
         plot_line({{!others.empty(),
                     fmt::format("$others using 1:2 with points pt 7 ps 0.7 lc rgb '{}' title 'dominated'", kGrey)},
                    {!front.empty(),
                     fmt::format("$front using 1:2 with linespoints pt 7 ps 1.1 lw 2 lc rgb '{}' title 'Pareto front'",
                                 kRed)}},
                   "no candidate has every metric");
}

std::string params_script(const LoadedCampaign& c, const PlotFile& file, const results::Goal& goal) {
  const auto report = results::parameter_importance(c.summary, goal);
  Rows bars;
  for (const auto& p : report.parameters) bars.push_back({text_cell(p.name), cell(100 * p.importance), "0"});
  if (report.samples > 1) bars.push_back({text_cell("interactions + noise"), cell(100 * report.interactions), "1"});
  if (report.samples < 2) throw std::runtime_error("nothing to plot: fewer than two candidates have " + goal.metric);
  auto s = script_header(file, fmt::format("{}: what matters for {} ({} candidates)", c.summary.campaign.name,
                                           goal.metric, report.samples));
  s += datablock("bars", bars);
  s += "set xlabel 'parameter'\nset ylabel 'share of the variance explained [%]'\nset yrange [0:100]\n";
  s += "set style fill solid 0.8 noborder\nset boxwidth 0.6\nunset key\nset xtics rotate by -30 nomirror\n";
  return s + fmt::format(
                 "plot $bars using 0:2:($3 > 0 ? 0x{} : 0x{}):xtic(1) with boxes lc rgb variable, \\\n"
                 "     $bars using 0:2:(sprintf('%.1f%%', $2)) with labels offset 0,0.8 notitle\n",
                 std::string(kGrey + 1), std::string(kBlue + 1));
}

std::string timeline_script(const LoadedCampaign& c, const PlotFile& file) {
  const auto tl = results::build_timeline(c.trials);
  if (tl.bars.empty()) throw std::runtime_error("nothing to plot: no trial is recorded yet");
  Rows bars;
  for (const auto& b : tl.bars) {
    const bool ok = b.status == results::TrialStatus::ok;
    const char* color = b.status == results::TrialStatus::cancelled ? kGrey
                        : !ok                                       ? kRed
                        : b.kind == results::TrialKind::explore     ? kBlue
                                                                    : kGreen;
    bars.push_back({cell(b.start), cell(b.end), std::to_string(b.lane), std::string("0x") + (color + 1)});
  }
  // At most ~40 lane labels, so a thousand ranks still give a readable axis.
  std::string tics;
  const std::size_t every = (tl.lanes.size() + 39) / 40;
  for (std::size_t l = 0; l < tl.lanes.size(); l += every)
    tics += fmt::format("{}{} {}", l ? ", " : "", gnuplot_string(tl.lanes[l].label), l);
  auto s = script_header(
      file,
      fmt::format("{}: tasks over time, {} lanes{} (utilisation {:.0f}%)", c.summary.campaign.name, tl.lanes.size(),
                  tl.by_rank ? fmt::format(" on {} rank{}", tl.ranks, tl.ranks == 1 ? "" : "s") : "",
                  100 * tl.utilisation()));
  s += datablock("bars", bars);
  s += fmt::format("set ytics ({})\nset yrange [{}:-0.6]\nset xrange [0:*]\n", tics, tl.lanes.size() - 0.4);
  s += fmt::format("set xlabel 'time since the first task started [s]'\nset ylabel {}\n",
                   gnuplot_string(tl.by_rank ? "where it ran: host, rank (and slot)" : "slot (concurrent task lane)"));
  s += "set style fill solid 0.85 noborder\nset key outside bottom center horizontal\n";
  s += "plot $bars using (($1+$2)/2):3:1:2:($3-0.38):($3+0.38):4 with boxxyerror lc rgb variable notitle";
  for (auto [name, color] : {std::pair{"explore", kBlue}, {"evaluate", kGreen}, {"failed", kRed}, {"cancelled", kGrey}})
    s += fmt::format(", \\\n     keyentry with boxes fs solid 0.85 lc rgb '{}' title '{}'", color, name);
  return s + '\n';
}

// Per-test outcomes (evaluate.suite): passed, failed (fail, error, timeout), skipped and not run
// per candidate, side by side; a log scale once counts are large, so a handful of failures next
// to millions of passes still shows.
std::string per_test_script(const LoadedCampaign& c, const PlotFile& file, const results::Store& store) {
  Rows rows;
  std::int64_t largest = 0;
  auto tested = store.tested_candidates();
  std::sort(tested.begin(), tested.end());
  for (auto id : tested) {
    const auto summary = results::summarize(*store.test_outcomes(id));
    rows.push_back({text_cell(std::to_string(id)), std::to_string(summary.pass),
                    std::to_string(summary.fail + summary.error + summary.timeout), std::to_string(summary.skip),
                    std::to_string(summary.not_run)});
    largest = std::max(largest, summary.total);
  }
  auto s = script_header(file, fmt::format("{}: per-test outcomes per candidate ({} candidates tested)",
                                           c.summary.campaign.name, rows.size()));
  s += datablock("tests", rows);
  s += "set xlabel 'candidate id'\nset ylabel 'tests [count]'\n";
  s += largest > 1000 ? "set logscale y\nset yrange [0.8:*]\n" : "set yrange [0:*]\n";
  s += "set style data histograms\nset style histogram clustered gap 1\nset style fill solid 0.85 noborder\n";
  s += "set key outside bottom center horizontal\nset xtics rotate by -45 nomirror\n";
  return s + fmt::format("plot $tests using 2:xtic(1) lc rgb '{}' title 'passed', '' using 3 lc rgb '{}' title "
                         "'failed', '' using 4 lc rgb '{}' title 'skipped', '' using 5 lc rgb '{}' title 'not run'\n",
                         kGreen, kRed, kGrey, kLightBlue);
}

std::string tests_script(const LoadedCampaign& c, const PlotFile& file) {
  const auto& s0 = c.summary;
  if (s0.campaign.shards == 0)
    throw std::runtime_error("nothing to plot: this campaign has no evaluate stage, so no tests");
  if (const auto store = results::Store::open_read(c.path); !store.tested_candidates().empty())
    return per_test_script(c, file, store);
  Rows rows;
  for (const auto& cand : s0.candidates)
    if (cand.shards_done > 0)
      rows.push_back({text_cell(std::to_string(cand.record.id)), std::to_string(cand.shards_passed),
                      std::to_string(cand.shards_done - cand.shards_passed)});
  if (rows.empty()) throw std::runtime_error("nothing to plot: no evaluate shard is recorded yet");
  auto s = script_header(file, fmt::format("{}: test outcomes per candidate ({} candidates evaluated, {} shards each)",
                                           s0.campaign.name, rows.size(), s0.campaign.shards));
  s += datablock("shards", rows);
  s += "set xlabel 'candidate id'\nset ylabel 'evaluate shards passed and failed [count]'\nset yrange [0:*]\n";
  if (s0.campaign.shards <= 10) s += "set ytics 1\n";  // counts: no half shards on the axis
  s += "set style data histograms\nset style histogram rowstacked\nset style fill solid 0.85 noborder\nset boxwidth "
       "0.7\n";
  s += "set key outside bottom center horizontal\nset xtics rotate by -45 nomirror\n";
  return s +
         fmt::format("plot $shards using 2:xtic(1) lc rgb '{}' title 'passed', '' using 3 lc rgb '{}' title 'failed'\n",
                     kGreen, kRed);
}

int run_plot(const po::variables_map& vm, const std::vector<std::string>& files, std::ostream& out) {
  const bool json = vm.count("json");
  if (!vm.count("kind")) throw po::error("plot needs --kind convergence|pareto|params|timeline|tests");
  if (!vm.count("output")) throw po::error("plot needs -o OUT.png or -o OUT.svg");
  const auto kind = vm["kind"].as<std::string>();
  const auto file = plot_file(vm["output"].as<std::string>(), vm["size"].as<std::string>());
  auto c = load_campaign(files[0], json);
  std::string script;
  if (kind == "convergence")
    script = convergence_script(c, file);
  else if (kind == "pareto") {
    if (!vm.count("objectives")) throw results::AnalysisError("--kind pareto needs --objectives M:max,N:min");
    auto goals = results::parse_goals(vm["objectives"].as<std::string>(), c.summary);
    if (goals.size() < 2) throw results::AnalysisError("--kind pareto needs two or more metrics in --objectives");
    script = pareto_script(c, file, goals);
  } else if (kind == "params") {
    script = params_script(c, file,
                           vm.count("metric") ? results::parse_goal(vm["metric"].as<std::string>(), c.summary)
                                              : results::objective_goal(c.summary.campaign));
  } else if (kind == "timeline")
    script = timeline_script(c, file);
  else if (kind == "tests")
    script = tests_script(c, file);
  else
    throw po::error("--kind must be convergence, pareto, params, timeline or tests, not '" + kind + "'");
  if (vm.count("script")) {
    const auto path = vm["script"].as<std::string>();
    std::ofstream out_script(path, std::ios::binary);
    if (!(out_script << script) || !out_script.flush()) throw std::runtime_error(path + ": cannot write the script");
  }
  run_gnuplot(script, file);
  const char* format = file.format == PlotFile::Format::png ? "png" : "svg";
  if (json)
    out << nlohmann::json{{"file", file.path},   {"kind", kind},          {"format", format},
                          {"width", file.width}, {"height", file.height}, {"run", run_json(c.run)}}
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
    .what = "draw convergence|pareto|params|timeline|tests with gnuplot",
    .add_options =
        [](po::options_description& o) {
          o.add_options()("kind", po::value<std::string>(), "convergence, pareto, params, timeline or tests")(
              "output,o", po::value<std::string>(), "the image: .png or .svg")(
              "size", po::value<std::string>()->default_value("1000x600"), "WIDTHxHEIGHT in pixels")(
              "objectives", po::value<std::string>(), "pareto: metrics with directions, e.g. gflops:max,time_s:min")(
              "metric", po::value<std::string>(), "params: the metric to explain (default: the objective)")(
              "script", po::value<std::string>(), "also save the gnuplot script here, to edit and rerun");
        },
    .run = run_plot};

}  // namespace flotilla::cli::results_cli

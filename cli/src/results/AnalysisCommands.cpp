// AnalysisCommands.cpp — `flotilla results compare | pareto | params`: views that judge
// candidates across campaigns, across several metrics, or per parameter.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "ResultsCli.h"
#include "flotilla/results/Compare.h"
#include "flotilla/results/Importance.h"
#include "flotilla/results/Pareto.h"

namespace flotilla::cli::results_cli {
namespace {

std::string label_of(const std::string& path) { return std::filesystem::path(path).stem().string(); }

std::string config_cell(const std::string& config, std::size_t limit = 60) {
  return config.size() <= limit ? config : config.substr(0, limit - 3) + "...";
}

nlohmann::json comparison_json(const results::Comparison& cmp, const std::vector<LoadedCampaign>& files) {
  nlohmann::json j = {{"objective", cmp.goal.metric}, {"direction", cmp.goal.maximize ? "maximize" : "minimize"}};
  for (std::size_t k = 0; k < cmp.columns.size(); ++k) {
    const auto& col = cmp.columns[k];
    j["campaigns"].push_back({{"file", files[k].path},
                              {"name", col.name},
                              {"candidates", col.candidates},
                              {"shared", col.shared},
                              {"geomean_ratio", optional_json(col.geomean_ratio)},
                              {"min_ratio", optional_json(col.min_ratio)},
                              {"max_ratio", optional_json(col.max_ratio)},
                              {"winner", col.winner},
                              {"verdict", col.verdict},
                              {"gain", optional_json(col.gain)},
                              {"gain_low", optional_json(col.gain_low)},
                              {"gain_high", optional_json(col.gain_high)},
                              {"run", run_json(files[k].run)}});
  }
  j["rows"] = nlohmann::json::array();
  for (const auto& row : cmp.rows) {
    nlohmann::json cells = nlohmann::json::array();
    for (const auto& cell : row.cells)
      cells.push_back({{"value", optional_json(cell.value)},
                       {"low", optional_json(cell.low)},
                       {"high", optional_json(cell.high)},
                       {"status", cell.status ? nlohmann::json(to_string(*cell.status)) : nlohmann::json(nullptr)},
                       {"ratio", optional_json(cell.ratio)}});
    j["rows"].push_back({{"config", row.config}, {"cells", cells}});
  }
  return j;
}

int run_compare(const po::variables_map& vm, const std::vector<std::string>& files, std::ostream& out) {
  const bool json = vm.count("json");
  std::vector<LoadedCampaign> loaded;
  std::vector<const results::CampaignSummary*> summaries;
  for (const auto& f : files) loaded.push_back(load_campaign(f, json));
  for (const auto& c : loaded) summaries.push_back(&c.summary);
  auto cmp = results::compare(summaries);
  if (vm.count("common"))
    std::erase_if(cmp.rows, [](const results::CompareRow& row) {
      return std::any_of(row.cells.begin(), row.cells.end(), [](const auto& cell) { return !cell.value; });
    });
  if (json) {
    out << comparison_json(cmp, loaded).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    return 0;
  }
  out << fmt::format("{} ({}) across {} campaigns; ratio > 1: better than {} (the reference)\n", cmp.goal.metric,
                     cmp.goal.maximize ? "maximize" : "minimize", files.size(), label_of(files[0]));
  Table campaigns;
  campaigns.column("file", Table::Align::left).column("campaign", Table::Align::left).column("candidates");
  campaigns.column("shared").column("geomean").column("min").column("max");
  campaigns.column("its winner over its baseline", Table::Align::left);
  for (std::size_t k = 0; k < loaded.size(); ++k) {
    const auto& col = cmp.columns[k];
    const std::string verdict =
        col.verdict == "confirmed faster"
            ? fmt::format("{:.3g}x [{:.3g}, {:.3g}] confirmed faster", *col.gain, *col.gain_low, *col.gain_high)
        : col.verdict == "median" && col.gain ? fmt::format("{:.3g}x by median, not confirmed", *col.gain)
        : col.verdict == "baseline"           ? std::string("the baseline: nothing confirmed faster")
                                              : std::string("none verified");
    campaigns.row({label_of(files[k]), col.name, std::to_string(col.candidates), k ? std::to_string(col.shared) : "-",
                   k ? ratio(col.geomean_ratio) : "reference", ratio(col.min_ratio), ratio(col.max_ratio), verdict});
  }
  out << campaigns.text();
  Table rows;
  rows.column("configuration", Table::Align::left);
  for (std::size_t k = 0; k < loaded.size(); ++k) {
    rows.column(label_of(files[k]));
    if (k) rows.column("ratio");
  }
  const auto limit = vm["rows"].as<std::size_t>();
  for (std::size_t r = 0; r < cmp.rows.size() && (limit == 0 || r < limit); ++r) {
    std::vector<std::string> cells = {config_cell(cmp.rows[r].config)};
    for (std::size_t k = 0; k < loaded.size(); ++k) {
      const auto& cell = cmp.rows[r].cells[k];
      const bool rolled = cell.status == results::CandidateStatus::rolled_back;
      cells.push_back(number(cell.value) + (rolled ? " (rolled back)" : ""));
      if (k) cells.push_back(ratio(cell.ratio));
    }
    rows.row(std::move(cells));
  }
  out << '\n' << rows.text();
  if (limit && cmp.rows.size() > limit)
    out << fmt::format("  ... {} more configurations (--rows 0 shows all)\n", cmp.rows.size() - limit);
  return 0;
}

std::vector<results::Goal> goals_from(const po::variables_map& vm, const results::CampaignSummary& s) {
  if (!vm.count("objectives"))
    throw results::AnalysisError(fmt::format("pareto needs two or more metrics, e.g. --objectives {}:{},time_s:min",
                                             s.campaign.objective, s.campaign.direction == "minimize" ? "min" : "max"));
  auto goals = results::parse_goals(vm["objectives"].as<std::string>(), s);
  if (goals.size() < 2) throw results::AnalysisError("pareto needs two or more metrics in --objectives");
  return goals;
}

int run_pareto(const po::variables_map& vm, const std::vector<std::string>& files, std::ostream& out) {
  const bool json = vm.count("json");
  auto c = load_campaign(files[0], json);
  const auto goals = goals_from(vm, c.summary);
  const auto points = results::pareto_fronts(c.summary, goals, vm.count("verified-only"));
  const bool all = vm.count("all-fronts");
  if (json) {
    nlohmann::json j = {{"run", run_json(c.run)}, {"points", nlohmann::json::array()}};
    for (const auto& g : goals)
      j["objectives"].push_back({{"metric", g.metric}, {"direction", g.maximize ? "maximize" : "minimize"}});
    for (const auto& p : points)
      j["points"].push_back(
          {{"front", p.front}, {"values", p.values}, {"candidate", candidate_json(c.summary.candidates[p.candidate])}});
    out << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    return 0;
  }
  std::string what;
  for (const auto& g : goals) what += (what.empty() ? "" : ", ") + g.text();
  out << fmt::format("{}: Pareto front{} over {} ({} candidates compared{})\n", c.summary.campaign.name, all ? "s" : "",
                     what, points.size(), vm.count("verified-only") ? ", verified only" : "");
  Table table;
  table.column("front").column("id");
  for (const auto& g : goals) table.column(g.metric);
  table.column("status", Table::Align::left).column("configuration", Table::Align::left);
  for (const auto& p : points) {
    if (!all && p.front > 1) break;
    const auto& cand = c.summary.candidates[p.candidate];
    std::vector<std::string> row = {std::to_string(p.front), std::to_string(cand.record.id)};
    for (double v : p.values) row.push_back(number(v));
    row.push_back(std::string(to_string(cand.status)));
    row.push_back(cand.record.config);
    table.row(std::move(row));
  }
  out << (table.empty() ? std::string("  no candidate has every metric\n") : table.text());
  return 0;
}

int run_params(const po::variables_map& vm, const std::vector<std::string>& files, std::ostream& out) {
  const bool json = vm.count("json");
  auto c = load_campaign(files[0], json);
  const auto goal = vm.count("metric") ? results::parse_goal(vm["metric"].as<std::string>(), c.summary)
                                       : results::objective_goal(c.summary.campaign);
  const auto report = results::parameter_importance(c.summary, goal);
  if (json) {
    nlohmann::json j = {{"run", run_json(c.run)},
                        {"metric", goal.metric},
                        {"direction", goal.maximize ? "maximize" : "minimize"},
                        {"samples", report.samples},
                        {"mean", report.mean},
                        {"variance", report.variance},
                        {"interactions", report.interactions},
                        {"parameters", nlohmann::json::array()}};
    for (const auto& p : report.parameters) {
      nlohmann::json values = nlohmann::json::array();
      for (const auto& v : p.values) values.push_back({{"value", v.value}, {"count", v.count}, {"mean", v.mean}});
      j["parameters"].push_back({{"name", p.name}, {"importance", p.importance}, {"values", values}});
    }
    out << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    return 0;
  }
  out << fmt::format(
      "{}: how much each parameter matters for {} ({}), over {} candidates\n"
      "importance: share of the variance explained by the parameter alone (first-order)\n",
      c.summary.campaign.name, goal.metric, goal.maximize ? "maximize" : "minimize", report.samples);
  Table table;
  table.column("parameter", Table::Align::left).column("importance").column("", Table::Align::left).column("values");
  table.column("best value", Table::Align::left)
      .column("mean")
      .column("worst value", Table::Align::left)
      .column("mean");
  for (const auto& p : report.parameters) {
    if (p.values.empty()) continue;
    const auto bar = std::string(static_cast<std::size_t>(p.importance * 20 + 0.5), '#');
    const auto& best = p.values.front();
    const auto& worst = p.values.back();
    table.row({p.name, fmt::format("{:.1f}%", 100 * p.importance), bar, std::to_string(p.values.size()), best.value,
               number(best.mean), worst.value, number(worst.mean)});
  }
  out << (table.empty() ? std::string("  no candidate has this metric\n") : table.text());
  double shares = 0;
  for (const auto& p : report.parameters) shares += p.importance;
  if (report.samples > 1 && shares > 1.0005)
    out << fmt::format(
        "the shares add up to {:.1f}%: on a sample that is not a full grid, parameters that vary "
        "together share credit\n",
        100 * shares);
  else if (report.samples > 1)
    out << fmt::format("interactions and noise: {:.1f}% of the variance\n", 100 * report.interactions);
  return 0;
}

}  // namespace

const Subcommand kCompare{.name = "compare",
                          .synopsis = "A.h5 B.h5 ... [--common] [--rows N]",
                          .what = "the same configurations across campaigns, geometric-mean ratios",
                          .add_options =
                              [](po::options_description& o) {
                                o.add_options()("common", "only configurations present in every campaign")(
                                    "rows", po::value<std::size_t>()->default_value(30),
                                    "configurations to list (0: all)");
                              },
                          .min_files = 2,
                          .max_files = 0,
                          .run = run_compare};

const Subcommand kPareto{.name = "pareto",
                         .synopsis = "FILE.h5 --objectives M:max,N:min [--all-fronts]",
                         .what = "multi-objective fronts over chosen metrics",
                         .add_options =
                             [](po::options_description& o) {
                               o.add_options()("objectives", po::value<std::string>(),
                                               "metrics with directions, e.g. gflops:max,time_s:min")(
                                   "all-fronts", "list every front, not only the first")("verified-only",
                                                                                         "only verified candidates");
                             },
                         .run = run_pareto};

const Subcommand kParams{.name = "params",
                         .synopsis = "FILE.h5 [--metric M[:min|max]]",
                         .what = "how much each parameter matters (variance share)",
                         .add_options =
                             [](po::options_description& o) {
                               o.add_options()("metric", po::value<std::string>(),
                                               "metric to explain (default: the objective)");
                             },
                         .run = run_params};

}  // namespace flotilla::cli::results_cli

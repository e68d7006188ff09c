// ReportCommands.cpp — `flotilla results summary | history | top | report`: one campaign, as
// tables, or as one HTML page.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <string>

#include <fmt/format.h>

#include "flotilla/scheduler/Terminal.h"
#include "ResultsCli.h"
#include "flotilla/results/Columns.h"
#include "flotilla/results/HtmlReport.h"

namespace flotilla::cli::results_cli {
namespace {

using results::CandidateStatus;

nlohmann::json campaign_json(const results::CampaignInfo& info) {
  return {{"name", info.name},       {"objective", info.objective}, {"direction", info.direction},
          {"repeats", info.repeats}, {"shards", info.shards},       {"seed", info.seed}};
}

int run_summary(const po::variables_map& vm, const std::vector<std::string>& files, std::ostream& out) {
  const bool json = vm.count("json");
  // The summary alone reads the trials' outcomes, not their host or output texts (issue 35).
  auto c = load_campaign(files[0], json, results::Store::TrialFields::outcomes);
  const auto top = vm["top"].as<std::size_t>();
  if (!json) {
    out << results::wrap_report(results::summary_text(c.summary, top), static_cast<std::size_t>(scheduler::stdout_columns()));
    return 0;
  }
  auto j = nlohmann::json::parse(results::summary_json(c.summary, top));
  j["run"] = run_json(c.run);
  out << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  return 0;
}

std::string status_of(const results::CampaignSummary& s, std::size_t candidate) {
  return std::string(to_string(s.candidates[candidate].status));
}

std::string evaluation_text(const LoadedCampaign& c, const results::History& h) {
  Table table;
  table.column("eval").column("id").column("round").column("elapsed_s").column(c.summary.campaign.objective);
  table.column("status", Table::Align::left)
      .column("best so far")
      .column("best verified")
      .column("", Table::Align::left);
  for (const auto& e : h.evaluations) {
    const auto& cand = c.summary.candidates[e.candidate];
    table.row({std::to_string(e.evaluation), std::to_string(cand.record.id), std::to_string(cand.record.round),
               fmt::format("{:.1f}", e.elapsed), number(e.objective), status_of(c.summary, e.candidate),
               number(e.best_so_far), number(e.best_verified_so_far), e.improved ? "*" : ""});
  }
  return table.text();
}

std::string round_text(const LoadedCampaign& c, const results::History& h) {
  Table table;
  table.column("round").column("candidates").column("failed").column("verified").column("rolled back");
  table.column("pending").column("round best").column("best so far").column("best verified").column("best id");
  for (const auto& r : h.rounds)
    table.row({std::to_string(r.round), std::to_string(r.candidates), std::to_string(r.failed),
               std::to_string(r.verified), std::to_string(r.rolled_back), std::to_string(r.pending),
               number(r.round_best), number(r.best_so_far), number(r.best_verified_so_far),
               r.best_candidate ? std::to_string(c.summary.candidates[*r.best_candidate].record.id) : "-"});
  return table.text();
}

nlohmann::json history_json(const LoadedCampaign& c, const results::History& h) {
  nlohmann::json j = {{"campaign", campaign_json(c.summary.campaign)}, {"run", run_json(c.run)}};
  j["evaluations"] = nlohmann::json::array();
  for (const auto& e : h.evaluations)
    j["evaluations"].push_back({{"evaluation", e.evaluation},
                                {"id", c.summary.candidates[e.candidate].record.id},
                                {"round", c.summary.candidates[e.candidate].record.round},
                                {"elapsed_s", e.elapsed},
                                {"objective", optional_json(e.objective)},
                                {"status", status_of(c.summary, e.candidate)},
                                {"best_so_far", optional_json(e.best_so_far)},
                                {"best_verified_so_far", optional_json(e.best_verified_so_far)},
                                {"improved", e.improved}});
  j["rounds"] = nlohmann::json::array();
  for (const auto& r : h.rounds)
    j["rounds"].push_back(
        {{"round", r.round},
         {"candidates", r.candidates},
         {"failed", r.failed},
         {"verified", r.verified},
         {"rolled_back", r.rolled_back},
         {"pending", r.pending},
         {"round_best", optional_json(r.round_best)},
         {"best_so_far", optional_json(r.best_so_far)},
         {"best_verified_so_far", optional_json(r.best_verified_so_far)},
         {"best_id", r.best_candidate ? nlohmann::json(c.summary.candidates[*r.best_candidate].record.id)
                                      : nlohmann::json(nullptr)}});
  return j;
}

int run_history(const po::variables_map& vm, const std::vector<std::string>& files, std::ostream& out) {
  const bool json = vm.count("json");
  auto c = load_campaign(files[0], json);
  auto h = results::history(c.summary, c.trials);
  if (json) {
    out << history_json(c, h).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    return 0;
  }
  const auto by = vm["by"].as<std::string>();
  if (by != "round" && by != "evaluation") throw po::error("--by must be round or evaluation, not '" + by + "'");
  const auto& info = c.summary.campaign;
  out << fmt::format("{}: best {} ({}) so far, per {}; rolled-back candidates never count\n", info.name, info.objective,
                     info.direction, by);
  out << (by == "round" ? round_text(c, h) : evaluation_text(c, h));
  return 0;
}

// The k best candidates: verified ones, or (--all, or a campaign without an evaluate stage)
// every candidate with an objective that was not rolled back.
std::vector<std::size_t> top_candidates(const results::CampaignSummary& s, std::size_t k, bool all) {
  const bool verified_only = !all && s.campaign.shards > 0;
  std::vector<std::size_t> picked;
  for (auto i : s.ranking())
    if (picked.size() < k && (!verified_only || s.candidates[i].status == CandidateStatus::verified))
      picked.push_back(i);
  return picked;
}

int run_top(const po::variables_map& vm, const std::vector<std::string>& files, std::ostream& out) {
  const bool json = vm.count("json");
  auto c = load_campaign(files[0], json);
  const auto& s = c.summary;
  const bool verified_only = !vm.count("all") && s.campaign.shards > 0;
  const auto picked = top_candidates(s, vm["top"].as<std::size_t>(), vm.count("all"));
  if (json) {
    nlohmann::json j = {{"campaign", campaign_json(s.campaign)},
                        {"run", run_json(c.run)},
                        {"verified_only", verified_only},
                        {"top", nlohmann::json::array()}};
    for (auto i : picked) j["top"].push_back(candidate_json(s.candidates[i]));
    out << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    return 0;
  }
  const auto params = results::parameter_names(s);
  auto metrics = results::metric_names(s);
  std::erase(metrics, s.campaign.objective);
  // A parameter or metric named like a column before it (a parameter `threads` and a metric
  // `threads`) is headed param.NAME or metric.NAME, as export names them: two equal headers
  // would leave the reader guessing which is which.
  std::set<std::string> taken = {"rank", "id", s.campaign.objective, "spread", "status"};
  const auto heading = [&](const std::string& prefix, const std::string& name) {
    const auto chosen = taken.contains(name) ? prefix + name : name;
    taken.insert(chosen);
    return chosen;
  };
  Table table;
  table.column("rank").column("id").column(s.campaign.objective).column("spread").column("status", Table::Align::left);
  for (const auto& p : params) table.column(heading("param.", p));
  for (const auto& m : metrics) table.column(heading("metric.", m));
  for (std::size_t r = 0; r < picked.size(); ++r) {
    const auto& cand = s.candidates[picked[r]];
    std::vector<std::string> row = {std::to_string(r + 1), std::to_string(cand.record.id), number(cand.objective),
                                    fmt::format("{:.1f}%", 100 * cand.spread), std::string(to_string(cand.status))};
    for (const auto& [name, value] : results::split_config(cand.record.config)) row.push_back(value);
    row.resize(5 + params.size());
    for (const auto& m : metrics) row.push_back(cand.metrics.contains(m) ? number(cand.metrics.at(m)) : "-");
    table.row(std::move(row));
  }
  const char* which = verified_only           ? "verified"
                      : s.campaign.shards > 0 ? "explored or verified"
                                              : "explored (no evaluate stage)";
  out << fmt::format("{}: the {} best {} candidates by {} ({})\n", s.campaign.name, picked.size(), which,
                     s.campaign.objective, s.campaign.direction);
  out << (table.empty() ? std::string("  none yet\n") : table.text());
  return 0;
}

}  // namespace

const Subcommand kSummary{.name = "summary",
                          .synopsis = "FILE.h5 [--top K]",
                          .what = "progress, best verified vs baseline, top table, rollbacks, failures",
                          .add_options =
                              [](po::options_description& o) {
                                o.add_options()("top", po::value<std::size_t>()->default_value(5),
                                                "rows in the top table");
                              },
                          .run = run_summary};

const Subcommand kHistory{.name = "history",
                          .synopsis = "FILE.h5 [--by round|evaluation]",
                          .what = "best objective so far, per round or per evaluation",
                          .add_options =
                              [](po::options_description& o) {
                                o.add_options()("by", po::value<std::string>()->default_value("round"),
                                                "round or evaluation");
                              },
                          .run = run_history};

// `results report FILE.h5 -o report.html`: the self-contained HTML report (HtmlReport.h).
int run_report(const po::variables_map& vm, const std::vector<std::string>& files, std::ostream& out) {
  if (!vm.count("output")) throw po::error("results report needs -o FILE.html: where to write the report");
  const auto c = load_campaign(files[0], false);
  const auto path = vm["output"].as<std::string>();
  const auto html = results::html_report(c.summary, results::history(c.summary, c.trials), files[0]);
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << html;
  file.close();
  if (!file) throw std::runtime_error(fmt::format("{}: cannot write the report: {}", path, std::strerror(errno)));
  out << fmt::format("wrote {} ({} KiB): open it in a browser; it fetches nothing\n", path, (html.size() + 1023) / 1024);
  return 0;
}

const Subcommand kReport{.name = "report",
                         .synopsis = "FILE.h5 -o REPORT.html",
                         .what = "one self-contained HTML page to share: summary, charts, top, rollbacks",
                         .add_options =
                             [](po::options_description& o) {
                               o.add_options()("output,o", po::value<std::string>(), "the HTML file to write");
                             },
                         .run = run_report};

const Subcommand kTop{.name = "top",
                      .synopsis = "FILE.h5 [--top K] [--all]",
                      .what = "the k best verified candidates with parameters and metrics",
                      .add_options =
                          [](po::options_description& o) {
                            o.add_options()("top,k", po::value<std::size_t>()->default_value(10),
                                            "how many candidates")("all", "rank unverified (explored) candidates too");
                          },
                      .run = run_top};

}  // namespace flotilla::cli::results_cli

// ExportCommand.cpp — `flotilla results export`: a campaign's tables as CSV (RFC 4180) or JSON,
// one row per candidate (with its parameters and median metrics as columns), per trial, per event
// or per row of the proposal journal, for spreadsheets, pandas and other tools.
//
// Columns are named once here for both formats, so a CSV header and the JSON keys agree, and as
// the Python reader names them: metrics "metric.NAME", parameters by their own name ("param.NAME"
// when that clashes with a fixed column).
#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <map>
#include <set>

#include "ResultsCli.h"
#include "flotilla/results/Columns.h"
#include "flotilla/results/Lineage.h"
#include "flotilla/results/Printable.h"
#include "flotilla/results/Timeline.h"

namespace flotilla::cli::results_cli {
namespace {

// One exported table: column names and rows of JSON scalars (null for "no value").
struct Sheet {
  std::vector<std::string> columns;
  std::vector<std::vector<nlohmann::json>> rows;
};

nlohmann::json value_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }
// A candidate or proposal id, null for none (-1).
nlohmann::json id_or_null(std::int64_t id) { return id >= 0 ? nlohmann::json(id) : nlohmann::json(nullptr); }

std::string unique_name(const std::string& name, std::set<std::string>& taken) {
  auto chosen = taken.contains(name) ? "param." + name : name;
  taken.insert(chosen);
  return chosen;
}

Sheet candidate_sheet(const results::CampaignSummary& s) {
  // proposal, parent: a proposer's candidate's proposal name and the candidate it built on.
  Sheet sheet{.columns = {"id", "round", "origin", "status", "objective", "spread", "repeats_done", "shards_done",
                          "shards_passed", "config", "reason", "proposal", "parent"}};
  std::set<std::string> taken(sheet.columns.begin(), sheet.columns.end());
  const auto params = results::parameter_names(s);
  const auto metrics = results::metric_names(s);
  for (const auto& p : params) sheet.columns.push_back(unique_name(p, taken));
  for (const auto& m : metrics) sheet.columns.push_back("metric." + m);
  for (const auto& c : s.candidates) {
    std::vector<nlohmann::json> row = {
        c.record.id, c.record.round, c.record.origin, to_string(c.status), optional_json(c.objective),
        c.spread,    c.repeats_done, c.shards_done,   c.shards_passed,     c.record.config,
        c.reason,    c.proposal.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.proposal),
        id_or_null(c.parent)};
    const auto values = results::split_config(c.record.config);
    for (const auto& p : params) {
      auto it = std::find_if(values.begin(), values.end(), [&](const auto& v) { return v.first == p; });
      row.push_back(it == values.end() ? nlohmann::json(nullptr) : nlohmann::json(it->second));
    }
    for (const auto& m : metrics) row.push_back(c.metrics.contains(m) ? value_or_null(c.metrics.at(m)) : nullptr);
    sheet.rows.push_back(std::move(row));
  }
  return sheet;
}

// --with-output adds each trial's output tail (a compiler's errors, a crash's last lines).
Sheet trial_sheet(const std::vector<results::TrialRecord>& trials, bool with_output) {
  Sheet sheet{.columns = {"row", "candidate", "kind", "index", "attempt", "status", "start", "end", "duration_s",
                          "exit_code", "objective", "reason", "rank", "host", "device", "cores", "slurm_job"}};
  // Each metric's column, in name order. A trial's values are placed through this index: a
  // search of the trial's metrics per column made a trial of 100,000 metrics take minutes.
  std::map<std::string, std::size_t> column_of;
  for (const auto& t : trials)
    for (const auto& m : t.metrics) column_of.emplace(m.name, 0);
  const std::size_t first_metric = sheet.columns.size();
  for (auto& [name, column] : column_of) {
    column = sheet.columns.size();
    sheet.columns.push_back("metric." + name);
  }
  if (with_output) sheet.columns.push_back("output_tail");
  for (std::size_t r = 0; r < trials.size(); ++r) {
    const auto& t = trials[r];
    const auto place = results::place_of(t);
    std::vector<nlohmann::json> row = {r,
                                       t.candidate,
                                       to_string(t.kind),
                                       t.index,
                                       t.attempt,
                                       to_string(t.status),
                                       t.start,
                                       t.end,
                                       t.end - t.start,
                                       t.exit_code,
                                       value_or_null(t.objective),
                                       t.reason};
    row.push_back(place.known ? nlohmann::json(place.rank) : nlohmann::json(nullptr));
    row.push_back(place.known ? nlohmann::json(place.host) : nlohmann::json(nullptr));
    row.push_back(place.known ? nlohmann::json(place.device) : nlohmann::json(nullptr));
    row.push_back(t.cores.empty() ? nlohmann::json(nullptr) : nlohmann::json(t.cores));
    row.push_back(t.slurm_job.empty() ? nlohmann::json(nullptr) : nlohmann::json(t.slurm_job));
    row.resize(first_metric + column_of.size());  // null where the trial lacks the metric
    for (const auto& m : t.metrics) row[column_of.at(m.name)] = value_or_null(m.value);
    if (with_output) row.push_back(t.output_tail);
    sheet.rows.push_back(std::move(row));
  }
  return sheet;
}

// The proposal journal (docs/propose.md), every row: accepted and refused proposals and each
// proposer's answer; `candidate` is the one an accepted proposal became. --with-output adds the
// patch and the rationale, whole.
Sheet proposal_sheet(const LoadedCampaign& c, bool with_output) {
  Sheet sheet{.columns = {"id", "round", "proposer", "parent", "hash", "status", "name", "reason", "candidate", "time"}};
  if (with_output) sheet.columns.insert(sheet.columns.end(), {"patch", "rationale"});
  std::map<std::int64_t, std::int64_t> candidate_of;
  for (const auto& cand : c.summary.candidates)
    if (const auto p = results::proposal_of(cand.record)) candidate_of[*p] = cand.record.id;
  for (const auto& p : c.proposals) {
    const auto made = candidate_of.find(p.id);
    std::vector<nlohmann::json> row = {p.id,   p.round, p.proposer, id_or_null(p.parent), fmt::format("{:016x}", p.hash),
                                       results::to_string(p.status), p.name, p.reason,
                                       made == candidate_of.end() ? nlohmann::json(nullptr) : nlohmann::json(made->second),
                                       p.time};
    if (with_output) row.insert(row.end(), {p.patch, p.rationale});
    sheet.rows.push_back(std::move(row));
  }
  return sheet;
}

Sheet event_sheet(const std::vector<results::EventRecord>& events) {
  Sheet sheet{.columns = {"time", "kind", "detail"}};
  for (const auto& e : events) sheet.rows.push_back({e.time, e.kind, e.detail});
  return sheet;
}

// RFC 4180: quote a field holding a comma, quote or line break; double its quotes. `shown`: the
// CSV goes to a terminal, so the text is shown escaped (results::printable); in a pipe or a file
// it is data, and a task's bytes stay as they are.
std::string csv_field(const nlohmann::json& v, bool shown) {
  if (v.is_null()) return {};
  std::string text = v.is_string() ? v.get<std::string>() : v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (shown) text = results::printable(text);
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char ch : text) quoted += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return quoted + '"';
}

void write_csv(const Sheet& sheet, std::ostream& out, bool shown) {
  auto line = [&](const auto& cells) {
    for (std::size_t i = 0; i < cells.size(); ++i) out << (i ? "," : "") << csv_field(cells[i], shown);
    out << "\r\n";
  };
  line(sheet.columns);
  for (const auto& row : sheet.rows) line(row);
}

nlohmann::json to_json(const Sheet& sheet, const std::string& table, const LoadedCampaign& c) {
  const auto& info = c.summary.campaign;
  nlohmann::json j = {{"table", table}, {"run", run_json(c.run)}, {"columns", sheet.columns}};
  j["campaign"] = {{"name", info.name},
                   {"objective", info.objective},
                   {"direction", info.direction},
                   {"repeats", info.repeats},
                   {"shards", info.shards},
                   {"seed", info.seed},
                   {"host", info.host},
                   {"created", info.created},
                   {"flotilla_version", info.flotilla_version},
                   {"config_text", info.config_text}};
  j["rows"] = nlohmann::json::array();
  for (const auto& row : sheet.rows) {
    nlohmann::json record = nlohmann::json::object();
    for (std::size_t i = 0; i < row.size(); ++i) record[sheet.columns[i]] = row[i];
    j["rows"].push_back(std::move(record));
  }
  return j;
}

int run_export(const po::variables_map& vm, const std::vector<std::string>& files, std::ostream& out) {
  const auto format = vm.count("json") ? std::string("json") : vm["format"].as<std::string>();
  const auto table = vm["table"].as<std::string>();
  if (format != "csv" && format != "json") throw po::error("--format must be csv or json, not '" + format + "'");
  const bool with_output = vm.count("with-output") > 0;
  if (with_output && table != "trials" && table != "proposals")
    throw po::error("--with-output needs --table trials or --table proposals");
  if (table != "candidates" && table != "trials" && table != "events" && table != "proposals")
    throw po::error("--table must be candidates, trials, events or proposals, not '" + table + "'");
  // The note goes to stderr either way, so it never lands inside the exported data.
  auto c = load_campaign(files[0], false);
  const Sheet sheet = table == "candidates" ? candidate_sheet(c.summary)
                      : table == "trials"   ? trial_sheet(c.trials, with_output)
                      : table == "proposals" ? proposal_sheet(c, with_output)
                                            : event_sheet(c.events);
  std::ofstream file;
  if (vm.count("output")) {
    file.open(vm["output"].as<std::string>(), std::ios::binary);
    if (!file) throw std::runtime_error(vm["output"].as<std::string>() + ": cannot open for writing");
  }
  std::ostream& sink = vm.count("output") ? file : out;
  if (format == "csv")
    write_csv(sheet, sink, !vm.count("output") && ::isatty(STDOUT_FILENO));
  else
    sink << to_json(sheet, table, c).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  if (vm.count("output") && !(file.flush()))
    throw std::runtime_error(vm["output"].as<std::string>() + ": write failed");
  return 0;
}

}  // namespace

const Subcommand kExport{.name = "export",
                         .synopsis = "FILE.h5 [--table T] [--format csv|json] [--with-output] [-o F]",
                         .what = "candidates, trials, events or proposals as CSV or JSON",
                         .add_options =
                             [](po::options_description& o) {
                               o.add_options()("table", po::value<std::string>()->default_value("candidates"),
                                               "candidates, trials, events or proposals")(
                                   "format", po::value<std::string>()->default_value("csv"),
                                   "csv or json (--json: json)")("output,o", po::value<std::string>(),
                                                                 "write to this file instead of standard output")(
                                   "with-output",
                                   "--table trials: add each trial's output tail (its last 1023 bytes); "
                                   "--table proposals: each proposal's patch and rationale");
                             },
                         .run = run_export,
                         .prints_data = true};

}  // namespace flotilla::cli::results_cli

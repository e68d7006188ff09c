// ResultsCli.cpp — reading a campaign file once for a subcommand, tables and shared JSON.
#include "ResultsCli.h"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>

#include "flotilla/results/Columns.h"
#include "flotilla/results/Printable.h"

namespace flotilla::cli::results_cli {
namespace {

// Display width of UTF-8 text: one column per character (no wide characters in our tables).
std::size_t width(std::string_view text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string pad(const std::string& text, std::size_t to, Table::Align align) {
  const auto fill = std::string(to > width(text) ? to - width(text) : 0, ' ');
  return align == Table::Align::left ? text + fill : fill + text;
}

}  // namespace

LoadedCampaign load_campaign(const std::string& path, bool json, results::Store::TrialFields fields) {
  auto store = results::Store::open_read(path);
  LoadedCampaign c{.path = path};
  // Trials first: the writer records a candidate before any of its trials, so while it writes
  // (SWMR), every trial read here finds its candidate in the candidates read after it.
  c.trials = store.trials(fields);
  auto candidates = store.candidates();
  // After the candidates: a proposal is written before the candidate it becomes.
  c.proposals = store.proposals();
  c.events = store.events();
  c.summary = results::summarize(store.campaign(), candidates, c.trials, c.proposals);
  c.summary.provenance = results::provenance_of(c.events);
  results::add_proposals(c.summary, candidates, c.proposals);
  c.run = results::run_status(c.events, c.summary, results::has_live_writer(path));
  if (!json && !c.run.complete()) std::cerr << results::printable(fmt::format("note: {}: {}\n", path, c.run.note()));
  return c;
}

nlohmann::json run_json(const results::RunStatus& run) {
  return {{"state", results::to_string(run.state)},
          {"complete", run.complete()},
          {"pending", run.pending},
          {"note", run.note()}};
}

nlohmann::json optional_json(std::optional<double> value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

nlohmann::json candidate_json(const results::CandidateSummary& c) {
  nlohmann::json params = nlohmann::json::object();
  for (const auto& [name, value] : results::split_config(c.record.config)) params[name] = value;
  nlohmann::json j = {{"id", c.record.id},
                      {"round", c.record.round},
                      {"origin", c.record.origin},
                      {"config", c.record.config},
                      {"parameters", params},
                      {"status", to_string(c.status)},
                      {"objective", optional_json(c.objective)},
                      {"spread", c.spread},
                      {"metrics", c.metrics},
                      {"repeats_done", c.repeats_done},
                      {"shards_done", c.shards_done},
                      {"shards_passed", c.shards_passed}};
  if (!c.reason.empty()) j["reason"] = c.reason;
  if (!c.proposal.empty()) {
    j["proposal"] = c.proposal;
    j["chain"] = c.chain;
    j["parent"] = c.parent;
  }
  return j;
}

Table& Table::column(std::string heading, Align align) {
  m_headings.push_back(std::move(heading));
  m_align.push_back(align);
  return *this;
}

Table& Table::row(std::vector<std::string> cells) {
  cells.resize(m_headings.size());
  m_rows.push_back(std::move(cells));
  return *this;
}

std::string Table::text(std::string_view indent) const {
  std::vector<std::size_t> widths(m_headings.size());
  for (std::size_t i = 0; i < m_headings.size(); ++i) widths[i] = width(m_headings[i]);
  for (const auto& row : m_rows)
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], width(row[i]));
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out(indent);
    for (std::size_t i = 0; i < cells.size(); ++i) {
      // The last left-aligned column is not padded: no trailing blanks.
      const bool last = i + 1 == cells.size();
      out += last && m_align[i] == Align::left ? cells[i] : pad(cells[i], widths[i], m_align[i]);
      if (!last) out += "  ";
    }
    while (out.size() > indent.size() && out.back() == ' ') out.pop_back();  // an empty last cell
    return out + '\n';
  };
  std::string out = line(m_headings);
  for (const auto& row : m_rows) out += line(row);
  return out;
}

std::string number(std::optional<double> value) { return value ? fmt::format("{:.4g}", *value) : "-"; }

std::string ratio(std::optional<double> value) { return value ? fmt::format("{:.2f}x", *value) : "-"; }

std::string metric_label(const std::string& metric) {
  auto unit = results::unit_of(metric);
  return unit.empty() ? metric : fmt::format("{} [{}]", metric, unit);
}

}  // namespace flotilla::cli::results_cli

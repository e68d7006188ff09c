// LineagePlot.cpp — `flotilla results plot --kind lineage`: the tree of proposals (docs/propose.md)
// drawn from results::lineage_chart (Charts.h), which decides every node's place; this file only
// writes gnuplot, fitting the labels to the room each node has.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "Plots.h"
#include "flotilla/results/Charts.h"

namespace flotilla::cli::results_cli {
namespace {

using results::CandidateStatus;

// At most `limit` characters of `text` (UTF-8 code points), with "…" in place of the rest.
std::string shortened(const std::string& text, std::size_t limit) {
  std::size_t chars = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;  // inside a character
    if (++chars == limit && i + 1 < text.size()) {
      std::size_t end = i + 1;
      while (end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) ++end;
      if (end < text.size()) return text.substr(0, i) + "…";
    }
  }
  return text;
}

const char* status_color(CandidateStatus status) {
  switch (status) {
    case CandidateStatus::verified: return kGreen;
    case CandidateStatus::explored: return kBlue;
    case CandidateStatus::screened: return kLightBlue;
    case CandidateStatus::rolled_back: return kRed;
    case CandidateStatus::build_failed: return kBrown;
    case CandidateStatus::explore_failed: return kPurple;
    case CandidateStatus::pending: return kGrey;
  }
  return kGrey;
}

// The second line of a node's label: its confirmed speed-up, else its objective, else what
// stopped it.
std::string node_value(const results::LineageNode& n) {
  if (n.ratio) return fmt::format("{:.3g}x confirmed", *n.ratio);
  if (n.value) return fmt::format("{:.4g}", *n.value);
  auto status = std::string(results::to_string(n.status));
  std::replace(status.begin(), status.end(), '_', ' ');
  return status;
}

}  // namespace

// The tree of proposals: one column per generation, the winner's line along the top row in gold,
// each node coloured by its outcome and labelled with its name and its value. An edge leaves its
// parent to the right and turns down half-way to the child's column: the rows it passes hold
// only the subtrees of earlier siblings, which start right of the turn, so it crosses nothing.
Drawn lineage_script(const LoadedCampaign& c, const PlotFile& file) {
  const auto& s = c.summary;
  const auto chart = results::lineage_chart(s);
  if (chart.nodes.empty()) throw std::runtime_error("nothing to plot: no proposer wrote a candidate in this campaign");
  // Room per node, from the plot area (the size less the margins gnuplot keeps): a label stays
  // inside its column (about 7.5 px a character), so it meets no neighbour and no turn;
  // with rows too close for a line above and below each node, name and value share one line.
  const double column_px = (file.width - 140.0) / static_cast<double>(chart.columns);
  const double row_px = (file.height - 190.0) / static_cast<double>(chart.rows);
  const auto fits = static_cast<std::size_t>(column_px / 7.5);
  const bool two_lines = row_px >= 44;
  // Closer still, a label would sit on the node above it: only the winner's line (the top row,
  // with nothing above) keeps its labels.
  const bool all_labelled = row_px >= 26 || chart.rows == 1;
  const auto label_of = [&](const results::LineageNode& n) {
    if (fits < 5) return fmt::format("#{}", n.candidate);  // too narrow for names
    if (two_lines) return shortened(n.name, fits);
    const auto value = node_value(n);
    return fits > value.size() + 5 ? shortened(n.name, fits - value.size() - 1) + " " + value : shortened(n.name, fits);
  };
  std::map<CandidateStatus, Rows> by_status;
  Rows edges, path, labels, values, refused, winner;
  std::map<std::int64_t, const results::LineageNode*> node_of;
  auto data = nlohmann::json{{"columns", chart.columns}, {"rows", chart.rows}, {"accepted", chart.accepted},
                             {"refused", chart.refused}, {"nodes", nlohmann::json::array()},
                             {"lineage", s.lineage}};
  const auto y_of = [](const results::LineageNode& n) { return -static_cast<double>(n.row); };
  for (const auto& n : chart.nodes) {
    node_of[n.candidate] = &n;
    const double x = static_cast<double>(n.depth), y = y_of(n);
    by_status[n.status].push_back({cell(x), cell(y)});
    if (n.parent >= 0) {
      const auto& p = *node_of.at(n.parent);  // parents come first
      const double px = static_cast<double>(p.depth), py = y_of(p), turn = px + 0.5;
      auto& into = n.on_path ? path : edges;
      const auto segment = [&](double x0, double y0, double x1, double y1) {
        into.push_back({cell(x0), cell(y0), cell(x1 - x0), cell(y1 - y0)});
      };
      if (py == y) {
        segment(px, py, x, y);
      } else {
        segment(px, py, turn, py);
        segment(turn, py, turn, y);
        segment(turn, y, x, y);
      }
    }
    if (all_labelled || n.row == 0) labels.push_back({cell(x), cell(y), text_cell(label_of(n))});
    if (two_lines && fits >= 5) values.push_back({cell(x), cell(y), text_cell(node_value(n))});
    if (n.refused)
      refused.push_back({cell(x + 0.22), cell(y - 0.18), text_cell(n.refused > 1 ? std::to_string(n.refused) : "")});
    data["nodes"].push_back({{"candidate", n.candidate}, {"parent", n.parent >= 0 ? nlohmann::json(n.parent) : nlohmann::json()},
                             {"proposal", n.proposal ? nlohmann::json(*n.proposal) : nlohmann::json()},
                             {"name", n.name}, {"status", results::to_string(n.status)},
                             {"value", optional_json(n.value)}, {"ratio", optional_json(n.ratio)},
                             {"label", label_of(n)}, {"value_label", node_value(n)}, {"depth", n.depth},
                             {"row", n.row}, {"on_path", n.on_path}, {"refused", n.refused}});
  }
  auto head = fmt::format("{}: the tree of proposals ({} accepted, {} refused), each node with its name and {} "
                          "or its confirmed speed-up",
                          s.campaign.name, chart.accepted, chart.refused, s.campaign.objective);
  std::string tail = "no winner";
  if (chart.winner) {
    const auto& w = chart.nodes[*chart.winner];
    data["winner"] = w.candidate;
    winner.push_back({cell(static_cast<double>(w.depth)), cell(y_of(w))});
    tail = fmt::format("winner (ringed, its line in gold): {} (candidate {}), {}", w.name, w.candidate,
                       w.ratio   ? fmt::format("{:.3g}x over the baseline, confirmed faster", *w.ratio)
                       : w.value ? fmt::format("{} {:.4g}", s.campaign.objective, *w.value)
                                 : std::string("no value"));
  }
  data["title"] = head + "\n" + tail;
  const auto title_chars = static_cast<std::size_t>(file.width / 7.5);
  auto script = script_header(file, wrapped(head, title_chars) + "\n" + wrapped(tail, title_chars));
  script += datablock("edges", edges) + datablock("path", path) + datablock("labels", labels) +
            datablock("values", values) + datablock("refused", refused) + datablock("winner", winner);
  for (const auto& [status, rows] : by_status)
    script += datablock(fmt::format("status{}", static_cast<int>(status)), rows);
  script += fmt::format("set xrange [-0.5:{}]\nset yrange [{}:0.75]\n", cell(chart.columns - 0.5),
                        cell(-static_cast<double>(chart.rows) + 0.25));
  script += "unset ytics\nset grid noytics\nset border 1\nset xtics nomirror out 1 format '%g'\n";
  script += "set xlabel 'generation: patches on top of the root'\n";
  script += bottom_key(file, 2 + by_status.size() + !refused.empty());
  // The winner's line over the other edges: a branch's first step shares its parent's row.
  std::vector<std::pair<bool, std::string>> clauses = {
      {!edges.empty(), "$edges using 1:2:3:4 with vectors nohead lw 1.5 lc rgb '#8a8a8a' notitle"},
      {!path.empty(), fmt::format("$path using 1:2:3:4 with vectors nohead lw 9 lc rgb '{}' title 'the winner''s line'", kGold)},
      {!winner.empty(), "$winner using 1:2 with points pt 6 ps 4.2 lw 2.5 lc rgb 'black' notitle, "
                        "keyentry with points pt 6 ps 2 lw 2 lc rgb 'black' title 'winner'"}};
  for (const auto& [status, rows] : by_status) {
    auto label = std::string(results::to_string(status));
    std::replace(label.begin(), label.end(), '_', ' ');
    clauses.emplace_back(true, fmt::format("$status{} using 1:2 with points pt 7 ps 2.4 lc rgb '{}' title '{}'",
                                           static_cast<int>(status), status_color(status), label));
  }
  clauses.emplace_back(!refused.empty(),
                       fmt::format("$refused using 1:2 with points pt 2 ps 0.8 lw 1.5 lc rgb '{0}' title 'refused "
                                   "proposals (count)', $refused using 1:2:3 with labels left offset 0.5,0 font ',8' "
                                   "tc rgb '{0}' notitle",
                                   kGrey));
  clauses.emplace_back(true, "$labels using 1:2:3 with labels center offset 0,1.5 notitle");
  clauses.emplace_back(!values.empty(), "$values using 1:2:3 with labels center offset 0,-1.5 tc rgb '#444444' notitle");
  return {script + plot_line(clauses, "no proposal"), data};
}

}  // namespace flotilla::cli::results_cli

// LineageChart.cpp — the tree of proposals as a grid of nodes (Charts.h, "Lineage").
//
// A proposal's parent is a candidate recorded before it, so a valid parent always has a smaller
// id than its child: links that break this (a damaged file) are not followed, which also keeps
// the walk free of cycles. Rows come from a depth-first walk in which a node's first child stays
// on its row and every other child opens the next free row; the child on the winner's line goes
// first, so that line is one straight row at the top.
#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "flotilla/results/Charts.h"
#include "flotilla/results/Lineage.h"

namespace flotilla::results {
namespace {

// The candidate a proposer's candidate built on, when that link can be followed.
std::optional<std::int64_t> parent_link(const CandidateSummary& c) {
  if (c.proposal.empty() || c.parent < 0 || c.parent >= c.record.id) return std::nullopt;
  return c.parent;
}

LineageNode node_of(const CandidateSummary& c) {
  LineageNode node{.candidate = c.record.id,
                   .parent = parent_link(c).value_or(-1),
                   .proposal = c.proposal.empty() ? std::nullopt : proposal_of(c.record),
                   .name = c.proposal,
                   .status = c.status,
                   .value = c.objective};
  if (node.name.empty())
    node.name = c.record.origin == "baseline" ? std::string("baseline") : "candidate " + std::to_string(c.record.id);
  if (c.confirmed_faster()) node.ratio = c.confirmation->result.ratio;
  return node;
}

}  // namespace

LineageChart lineage_chart(const CampaignSummary& summary) {
  LineageChart chart;
  const auto& all = summary.candidates;
  // The nodes: every proposer's candidate, each ancestor its links reach, and the baseline.
  std::set<std::int64_t> members;
  for (const auto& c : all) {
    if (c.proposal.empty()) continue;
    for (std::optional<std::int64_t> at = c.record.id; at && members.insert(*at).second;)
      at = parent_link(all[static_cast<std::size_t>(*at)]);
  }
  if (members.empty()) return chart;
  if (summary.baseline) members.insert(all[*summary.baseline].record.id);

  const std::set<std::int64_t> path(summary.lineage.begin(), summary.lineage.end());
  std::map<std::int64_t, std::vector<std::int64_t>> children;
  std::vector<std::int64_t> roots;
  for (auto id : members) {
    const auto parent = parent_link(all[static_cast<std::size_t>(id)]);
    (parent ? children[*parent] : roots).push_back(id);
  }
  // The winner's line first, then by id (the order they were proposed).
  const auto line_first = [&](std::vector<std::int64_t>& ids) {
    std::stable_partition(ids.begin(), ids.end(), [&](auto id) { return path.contains(id); });
  };
  line_first(roots);
  for (auto& [parent, kids] : children) line_first(kids);

  std::size_t next_row = 0;
  const std::function<void(std::int64_t, std::size_t, std::size_t)> place = [&](std::int64_t id, std::size_t depth,
                                                                              std::size_t row) {
    auto node = node_of(all[static_cast<std::size_t>(id)]);
    node.depth = depth, node.row = row, node.on_path = path.contains(id);
    chart.columns = std::max(chart.columns, depth + 1);
    chart.nodes.push_back(std::move(node));
    const auto kids = children.find(id);
    if (kids == children.end()) return;
    for (std::size_t i = 0; i < kids->second.size(); ++i) place(kids->second[i], depth + 1, i == 0 ? row : ++next_row);
  };
  for (std::size_t i = 0; i < roots.size(); ++i) place(roots[i], 0, i == 0 ? 0 : ++next_row);
  chart.rows = next_row + 1;

  std::map<std::int64_t, std::size_t> index_of;
  for (std::size_t i = 0; i < chart.nodes.size(); ++i) index_of[chart.nodes[i].candidate] = i;
  for (const auto& p : summary.proposals) {
    chart.accepted += p.status == ProposalStatus::accepted;
    if (p.status != ProposalStatus::refused) continue;
    ++chart.refused;
    if (auto it = index_of.find(p.parent); it != index_of.end()) ++chart.nodes[it->second].refused;
  }
  if (summary.best)
    if (auto it = index_of.find(all[*summary.best].record.id); it != index_of.end()) chart.winner = it->second;
  return chart;
}

}  // namespace flotilla::results

// Compare.cpp — per-configuration values and geometric-mean ratios across campaigns.
#include "flotilla/results/Compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace flotilla::results {

std::optional<double> oriented_ratio(std::optional<double> value, std::optional<double> reference, bool maximize) {
  if (!value || !reference || *value <= 0 || *reference <= 0) return std::nullopt;
  return maximize ? *value / *reference : *reference / *value;
}

Comparison compare(const std::vector<const CampaignSummary*>& campaigns) {
  if (campaigns.empty()) throw AnalysisError("no campaigns to compare");
  const auto& reference = campaigns.front()->campaign;
  Comparison out{.goal = objective_goal(reference)};
  for (const auto* c : campaigns) {
    if (c->campaign.objective != reference.objective || c->campaign.direction != reference.direction)
      throw AnalysisError(
          fmt::format("campaign '{}' optimises {} ({}) but '{}' optimises {} ({}): only campaigns "
                      "with the same objective compare",
                      c->campaign.name, c->campaign.objective, c->campaign.direction, reference.name,
                      reference.objective, reference.direction));
  }
  std::map<std::string, std::size_t> row_of;
  for (std::size_t k = 0; k < campaigns.size(); ++k) {
    for (const auto& c : campaigns[k]->candidates) {
      auto [it, added] = row_of.try_emplace(c.record.config, out.rows.size());
      if (added) out.rows.push_back({c.record.config, std::vector<CompareCell>(campaigns.size())});
      auto& cell = out.rows[it->second].cells[k];
      if (cell.status) continue;  // a configuration appears once per campaign; keep the first
      cell.value = c.objective;
      if (c.interval) cell.low = c.interval->low, cell.high = c.interval->high;
      cell.status = c.status;
    }
  }
  for (std::size_t k = 0; k < campaigns.size(); ++k) {
    const CampaignSummary& s = *campaigns[k];
    CompareColumn col{.name = s.campaign.name, .candidates = s.candidates.size()};
    col.verdict = !s.best ? "none" : s.best_confirmed ? "confirmed faster" : s.best == s.baseline ? "baseline" : "median";
    if (s.best) {
      const auto& w = s.candidates[*s.best];
      col.winner = w.record.config;
      if (s.best_confirmed) {
        col.gain = w.confirmation->result.ratio, col.gain_low = w.confirmation->result.low,
        col.gain_high = w.confirmation->result.high;
      } else if (s.baseline) {
        col.gain = oriented_ratio(w.objective, s.candidates[*s.baseline].objective, out.goal.maximize);
      }
    }
    double log_sum = 0;
    for (auto& row : out.rows) {
      if (k == 0) continue;
      auto& cell = row.cells[k];
      cell.ratio = oriented_ratio(cell.value, row.cells[0].value, out.goal.maximize);
      if (!cell.ratio) continue;
      ++col.shared;
      log_sum += std::log(*cell.ratio);
      col.min_ratio = col.min_ratio ? std::min(*col.min_ratio, *cell.ratio) : *cell.ratio;
      col.max_ratio = col.max_ratio ? std::max(*col.max_ratio, *cell.ratio) : *cell.ratio;
    }
    if (col.shared) col.geomean_ratio = std::exp(log_sum / static_cast<double>(col.shared));
    out.columns.push_back(col);
  }
  return out;
}

}  // namespace flotilla::results

// SummaryReport.cpp — `flotilla results summary` as aligned text for people and one JSON object
// for scripts, both from the same CampaignSummary.
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "flotilla/results/Analysis.h"

namespace flotilla::results {
namespace {

// How many times better the best is than the baseline (>1 is an improvement either way).
std::optional<double> gain(const CampaignSummary& s) {
  if (!s.best || !s.baseline) return std::nullopt;
  double best = *s.candidates[*s.best].objective;
  auto base = s.candidates[*s.baseline].objective;
  if (!base || *base == 0 || best == 0) return std::nullopt;
  return s.campaign.direction == "minimize" ? *base / best : best / *base;
}

std::string objective_text(const CandidateSummary& c) {
  return c.objective ? fmt::format("{:.4g}", *c.objective) : std::string("-");
}

nlohmann::json candidate_json(const CandidateSummary& c) {
  nlohmann::json j = {{"id", c.record.id},          {"round", c.record.round},
                      {"origin", c.record.origin},  {"config", c.record.config},
                      {"status", to_string(c.status)}, {"spread", c.spread},
                      {"metrics", c.metrics}};
  j["objective"] = c.objective ? nlohmann::json(*c.objective) : nlohmann::json(nullptr);
  if (!c.reason.empty()) j["reason"] = c.reason;
  return j;
}

}  // namespace

std::string summary_text(const CampaignSummary& s, std::size_t top_k) {
  const auto& info = s.campaign;
  std::string out;
  out += fmt::format("campaign   {}\n", info.name);
  out += fmt::format("objective  {} ({}) · seed {} · flotilla {} on {}\n", info.objective, info.direction, info.seed,
                     info.flotilla_version, info.host);
  out += fmt::format("progress   {} candidates: {} verified, {} rolled back, {} explored, {} failed, {} pending · "
                     "{} trials, {} failed\n",
                     s.candidates.size(), s.count(CandidateStatus::verified), s.count(CandidateStatus::rolled_back),
                     s.count(CandidateStatus::explored), s.count(CandidateStatus::explore_failed),
                     s.count(CandidateStatus::pending), s.trials, s.failed_trials);
  if (s.baseline) {
    const auto& b = s.candidates[*s.baseline];
    out += fmt::format("baseline   {} {} ({})   {}\n", info.objective, objective_text(b), to_string(b.status), b.record.config);
  }
  if (s.best) {
    const auto& b = s.candidates[*s.best];
    auto g = gain(s);
    std::string note = s.best == s.baseline ? ", the baseline itself: nothing verified beats it"
                       : g                     ? fmt::format(", {:.2f}x baseline", *g)
                                               : "";
    out += fmt::format("best       {} {} ({}{})   {}\n", info.objective, objective_text(b),
                       s.best_verified ? "verified" : "unverified: no evaluate stage", note, b.record.config);
  } else {
    out += "best       none verified yet\n";
  }
  auto ranking = s.ranking();
  if (!ranking.empty()) {
    out += fmt::format("\ntop {}\n  {:>4}  {:>5}  {:>10}  {:>7}  {:<12}  {}\n", std::min(top_k, ranking.size()), "rank",
                       "id", info.objective, "spread", "status", "configuration");
    for (std::size_t r = 0; r < ranking.size() && r < top_k; ++r) {
      const auto& c = s.candidates[ranking[r]];
      out += fmt::format("  {:>4}  {:>5}  {:>10}  {:>6.1f}%  {:<12}  {}\n", r + 1, c.record.id, objective_text(c),
                         100 * c.spread, to_string(c.status), c.record.config);
    }
  }
  std::vector<const CandidateSummary*> rolled;
  for (const auto& c : s.candidates)
    if (c.status == CandidateStatus::rolled_back) rolled.push_back(&c);
  if (!rolled.empty()) {
    out += "\nrolled back (failed verification)\n";
    for (const auto* c : rolled) out += fmt::format("  {:>5}  {}  — {}\n", c->record.id, c->record.config, c->reason);
  }
  if (!s.failures_by_reason.empty()) {
    out += "\nfailed trials by reason\n";
    for (const auto& [reason, n] : s.failures_by_reason) out += fmt::format("  {:>5}  {}\n", n, reason);
  }
  return out;
}

std::string summary_json(const CampaignSummary& s, std::size_t top_k) {
  const auto& info = s.campaign;
  nlohmann::json j;
  j["campaign"] = {{"name", info.name},       {"objective", info.objective}, {"direction", info.direction},
                   {"seed", info.seed},       {"repeats", info.repeats},     {"shards", info.shards}, {"test_gate", info.test_gate},
                   {"host", info.host},       {"flotilla_version", info.flotilla_version}, {"created", info.created}};
  j["progress"] = {{"candidates", s.candidates.size()},
                   {"verified", s.count(CandidateStatus::verified)},
                   {"rolled_back", s.count(CandidateStatus::rolled_back)},
                   {"explored", s.count(CandidateStatus::explored)},
                   {"explore_failed", s.count(CandidateStatus::explore_failed)},
                   {"pending", s.count(CandidateStatus::pending)},
                   {"trials", s.trials},
                   {"failed_trials", s.failed_trials}};
  j["baseline"] = s.baseline ? candidate_json(s.candidates[*s.baseline]) : nlohmann::json(nullptr);
  j["best"] = s.best ? candidate_json(s.candidates[*s.best]) : nlohmann::json(nullptr);
  j["best_verified"] = s.best_verified;
  auto g = gain(s);
  j["gain_over_baseline"] = g ? nlohmann::json(*g) : nlohmann::json(nullptr);
  j["top"] = nlohmann::json::array();
  auto ranking = s.ranking();
  for (std::size_t r = 0; r < ranking.size() && r < top_k; ++r) j["top"].push_back(candidate_json(s.candidates[ranking[r]]));
  j["rolled_back"] = nlohmann::json::array();
  for (const auto& c : s.candidates)
    if (c.status == CandidateStatus::rolled_back) j["rolled_back"].push_back(candidate_json(c));
  j["failures_by_reason"] = s.failures_by_reason;
  return j.dump();
}

}  // namespace flotilla::results

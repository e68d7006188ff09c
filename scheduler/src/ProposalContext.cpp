// ProposalContext.cpp — the context a proposer reads, as JSON (ProposalContext.h).
#include "ProposalContext.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include <fmt/format.h>

#include "flotilla/scheduler/Proposals.h"

namespace flotilla::scheduler {
namespace {

using nlohmann::json;
using results::CandidateStatus;

json number_or_null(std::optional<double> v) { return v && std::isfinite(*v) ? json(*v) : json(nullptr); }

json parameters_of(const std::string& config) {
  json out = json::object();
  std::istringstream words(config);
  for (std::string word; words >> word;) {
    const auto eq = word.find('=');
    if (eq != std::string::npos) out[word.substr(0, eq)] = word.substr(eq + 1);
  }
  return out;
}

// The last failed trial of a candidate (the latest attempt of its kind), for its tail.
const results::TrialRecord* last_failure(const std::vector<results::TrialRecord>& trials, std::int64_t id) {
  const results::TrialRecord* found = nullptr;
  for (const auto& t : trials)
    if (t.candidate == id && t.status != results::TrialStatus::ok && t.kind != results::TrialKind::confirm) found = &t;
  return found;
}

json candidate_json(const ContextInputs& in, const results::CandidateSummary& c, bool detail) {
  const auto& record = c.record;
  json out = {{"id", record.id},
              {"origin", record.origin},
              {"round", record.round},
              {"parameters", parameters_of(record.config)},
              {"status", results::to_string(c.status)}};
  if (const auto proposal = proposal_of(record); proposal && static_cast<std::size_t>(*proposal) < in.proposals.size())
    out["name"] = in.proposals[static_cast<std::size_t>(*proposal)].name;
  else
    out["name"] = record.origin == "baseline" ? "baseline" : record.config;
  json chain = json::array();
  for (auto id : chain_of(record.id, in.candidates, in.proposals)) {
    const auto& p = in.proposals[static_cast<std::size_t>(id)];
    chain.push_back({{"proposal", p.id}, {"name", p.name}, {"parent", p.parent}});
  }
  out["chain"] = std::move(chain);
  out["objective"] = number_or_null(c.objective);
  if (c.interval) out["interval"] = {c.interval->low, c.interval->high};
  json metrics = json::object();
  for (const auto& [name, value] : c.metrics)
    if (std::isfinite(value)) metrics[name] = value;
  out["metrics"] = std::move(metrics);
  if (c.confirmation) {
    const auto& r = c.confirmation->result;
    out["confirmation"] = {{"verdict", results::stats::verdict_key(r.verdict)}, {"ratio", r.ratio},
                           {"low", r.low}, {"high", r.high}, {"pairs", r.pairs}};
    if (!c.confirmation->reason.empty()) out["confirmation"]["reason"] = c.confirmation->reason;
  }
  if (auto it = in.tests.find(record.id); it != in.tests.end()) {
    const auto& t = it->second;
    out["tests"] = {{"passed", t.passed}, {"total", t.total}, {"failing", t.failing}, {"fixed", t.fixed},
                    {"broken", t.broken}};
  }
  if (detail) {
    if (!c.reason.empty()) out["reason"] = c.reason;
    if (const auto* failed = last_failure(in.trials, record.id)) {
      out["failure"] = {{"kind", results::failure_kind(*failed)},
                        {"first_error", results::first_error_line(*failed)},
                        {"output_tail", failed->output_tail}};
    }
  }
  return out;
}

}  // namespace

nlohmann::json proposal_context(const ContextInputs& in) {
  const auto& s = in.settings;
  const auto& summary = in.summary;
  json context = {{"schema", kContextSchema},
                  {"campaign", {{"name", s.name}, {"results", s.campaign_results.string()}, {"seed", s.seed}}},
                  {"round", in.round},
                  {"proposer", {{"index", in.index}, {"count", s.propose.parallel}, {"seed", in.seed}}}};
  json intent = {{"objective", s.objective}, {"direction", s.maximize ? "maximize" : "minimize"}};
  if (summary.baseline) intent["baseline"] = candidate_json(in, summary.candidates[*summary.baseline], false);
  else intent["baseline"] = nullptr;
  intent["test_gate"] = summary.campaign.test_gate.empty() ? json(nullptr) : json(summary.campaign.test_gate);
  context["intent"] = std::move(intent);
  if (s.stage) {
    json profile = json::object();
    for (const auto& [component, share] : s.stage->profile) profile[component] = share;
    context["stage"] = {{"index", s.stage->index}, {"component", s.stage->component},
                        {"share_metric", s.stage->share_metric}, {"share", s.stage->share},
                        {"parameters", s.stage->params}, {"profile", std::move(profile)}};
  } else {
    context["stage"] = nullptr;
  }
  // The best, and a few other eligible candidates that differ from it, best first.
  context["best"] = in.best ? candidate_json(in, summary.candidates[static_cast<std::size_t>(*in.best)], false)
                            : json(nullptr);
  json others = json::array();
  for (auto index : summary.ranking()) {
    const auto& c = summary.candidates[index];
    if (others.size() == kContextOthers) break;
    if ((in.best && c.record.id == *in.best) || c.status == CandidateStatus::rolled_back) continue;
    if (c.status != CandidateStatus::verified && !(summary.campaign.shards == 0 && c.status == CandidateStatus::explored))
      continue;
    others.push_back(candidate_json(in, c, false));
  }
  context["others"] = std::move(others);
  // What happened since this proposer last answered: the candidates of that round on (decided
  // after its answer) and the proposals refused then or later.
  int since = -1;
  for (const auto& p : in.proposals)
    if (p.status == results::ProposalStatus::answered && p.proposer == in.index) since = std::max(since, p.round);
  json latest = json::array();
  for (auto it = summary.candidates.rbegin(); it != summary.candidates.rend() && latest.size() < kContextLatest; ++it)
    if (it->record.round >= since && it->record.round < in.round) latest.push_back(candidate_json(in, *it, true));
  std::reverse(latest.begin(), latest.end());
  context["latest"] = std::move(latest);
  json refused = json::array();
  for (const auto& p : in.proposals)
    if (p.status == results::ProposalStatus::refused && p.round >= since && refused.size() < kContextLatest)
      refused.push_back({{"proposal", p.id}, {"round", p.round}, {"proposer", p.proposer}, {"name", p.name},
                         {"reason", p.reason}});
  context["refused"] = std::move(refused);
  // Every proposal so far (the latest kContextProposals), so a proposer knows what was tried:
  // its candidate when accepted, its reason when refused.
  std::map<std::int64_t, std::int64_t> candidate_of;
  for (const auto& c : in.candidates)
    if (auto p = proposal_of(c)) candidate_of[*p] = c.id;
  json all = json::array();
  const std::size_t from = in.proposals.size() > kContextProposals ? in.proposals.size() - kContextProposals : 0;
  for (std::size_t i = from; i < in.proposals.size(); ++i) {
    const auto& p = in.proposals[i];
    if (p.status == results::ProposalStatus::answered) continue;
    json row = {{"proposal", p.id}, {"round", p.round}, {"proposer", p.proposer}, {"name", p.name},
                {"status", results::to_string(p.status)}, {"parent", p.parent}};
    if (auto it = candidate_of.find(p.id); it != candidate_of.end()) {
      row["candidate"] = it->second;
      row["candidate_status"] = results::to_string(summary.candidates.at(static_cast<std::size_t>(it->second)).status);
    } else {
      row["reason"] = p.reason;
    }
    all.push_back(std::move(row));
  }
  context["proposals"] = std::move(all);
  context["budget"] = {{"proposals_left", in.proposals_left}, {"per_round", s.propose.max_per_round},
                       {"declared_left", in.declared_left}, {"rounds_without_gain", in.rounds_without_gain}};
  context["trees"] = {{"best", in.best_tree.string()}, {"plain", in.plain_tree.string()}};
  context["out"] = in.out.string();
  context["proposal_format"] =
      "NAME.patch: a unified diff against the parent's tree, applied with patch -p1 (paths a/FILE b/FILE); "
      "optional NAME.json: {\"parent\": \"best\" | \"baseline\" | candidate id, \"rationale\": text, "
      "\"parameters\": {name: value}}";
  return context;
}

}  // namespace flotilla::scheduler

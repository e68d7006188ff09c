// SummaryReport.cpp — `flotilla results summary` as aligned text for people and one JSON object
// for scripts, both from the same CampaignSummary.
#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "flotilla/results/Analysis.h"
#include "flotilla/results/Columns.h"

namespace flotilla::results {
namespace {

// How many times better the winner is than the baseline (>1 is an improvement either way): the
// confirmed ratio when the winner was confirmed, else the ratio of medians.
std::optional<double> gain(const CampaignSummary& s) {
  if (!s.best || !s.baseline) return std::nullopt;
  const auto& b = s.candidates[*s.best];
  if (s.best_confirmed) return b.confirmation->result.ratio;
  double best = *b.objective;
  auto base = s.candidates[*s.baseline].objective;
  if (!base || *base == 0 || best == 0) return std::nullopt;
  return s.campaign.direction == "minimize" ? *base / best : best / *base;
}

std::string objective_text(const CandidateSummary& c) {
  return c.objective ? fmt::format("{:.4g}", *c.objective) : std::string("-");
}

std::string interval_text(const CandidateSummary& c) {
  return c.interval ? fmt::format("[{:.4g}, {:.4g}]", c.interval->low, c.interval->high) : std::string("-");
}

std::string ratio_text(const stats::Confirmation& r) {
  return fmt::format("{:.3g}x [{:.3g}, {:.3g}]", r.ratio, r.low, r.high);
}

// "confirmed faster: 2.61x [2.48, 2.75] over the baseline in 17 pairs"
std::string confirmation_text(const ConfirmationSummary& c) {
  const auto& r = c.result;
  if (r.verdict == stats::Verdict::failed) return fmt::format("{}: {}", to_string(r.verdict), c.reason);
  if (r.verdict == stats::Verdict::unreliable)
    return fmt::format("unreliable, not confirmed: {} ({} over the baseline in {} pairs; docs/verdicts.md)", c.reason,
                       ratio_text(r), r.pairs);
  if (r.verdict == stats::Verdict::pending) return fmt::format("confirmation pending after {} pairs", r.pairs);
  return fmt::format("{}: {} over the baseline in {} pairs", to_string(r.verdict), ratio_text(r), r.pairs);
}

// The short form for the table: "faster 2.61x", "n.s. 1.01x", "slower 0.92x", "failed".
std::string verdict_cell(const CandidateSummary& c) {
  if (!c.confirmation) return "";
  const auto& r = c.confirmation->result;
  switch (r.verdict) {
    case stats::Verdict::faster: return fmt::format("faster {:.3g}x", r.ratio);
    case stats::Verdict::no_difference: return fmt::format("n.s. {:.3g}x", r.ratio);
    case stats::Verdict::slower: return fmt::format("slower {:.3g}x", r.ratio);
    case stats::Verdict::failed: return "failed";
    case stats::Verdict::unreliable: return "unreliable";
    case stats::Verdict::pending: return "pending";
  }
  return "";
}

nlohmann::json confirmation_json(const ConfirmationSummary& c, const CampaignInfo& info) {
  const auto& r = c.result;
  nlohmann::json j = {{"verdict", stats::verdict_key(r.verdict)}, {"words", to_string(r.verdict)},
                      {"reference", c.reference},  {"pairs", r.pairs}, {"looks", r.looks},
                      {"ratio", r.ratio},          {"low", r.low},     {"high", r.high},
                      {"confidence", info.confirm_confidence}, {"min_effect", info.confirm_min_effect}};
  if (!c.reason.empty()) j["reason"] = c.reason;
  return j;
}

nlohmann::json candidate_json(const CandidateSummary& c, const CampaignInfo& info) {
  nlohmann::json j = {{"id", c.record.id},          {"round", c.record.round},
                      {"origin", c.record.origin},  {"config", c.record.config},
                      {"status", to_string(c.status)}, {"spread", c.spread},
                      {"repeats", c.repeats_done},  {"metrics", c.metrics}};
  j["objective"] = c.objective ? nlohmann::json(*c.objective) : nlohmann::json(nullptr);
  j["interval"] = c.interval ? nlohmann::json{{"low", c.interval->low}, {"high", c.interval->high},
                                              {"coverage", c.interval->coverage}}
                             : nlohmann::json(nullptr);
  j["confirmation"] = c.confirmation ? confirmation_json(*c.confirmation, info) : nlohmann::json(nullptr);
  if (!c.reason.empty()) j["reason"] = c.reason;
  if (c.status == CandidateStatus::build_failed) {
    j["build_output"] = c.build_lines;  // its last lines
    j["build_log"] = c.build_log.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.build_log);
  }
  if (!c.proposal.empty()) {
    j["proposal"] = c.proposal;
    j["chain"] = c.chain;
    j["parent"] = c.parent;
  }
  return j;
}

// "baseline → interchange (1.72x) → row_pointers (2.57x)": the winner's line of descent, each
// step with the speed-up its confirmation measured over the baseline.
std::string lineage_line(const CampaignSummary& s) {
  if (s.lineage.size() < 2) return "";
  std::vector<std::string> steps;
  for (auto id : s.lineage) {
    const auto& c = s.candidates.at(static_cast<std::size_t>(id));
    std::string name = c.proposal.empty() ? (c.record.origin == "baseline" ? "baseline" : "candidate " + std::to_string(id))
                                          : c.proposal;
    if (c.confirmed_faster()) name += fmt::format(" ({:.3g}x)", c.confirmation->result.ratio);
    else if (c.confirmation) name += fmt::format(" ({})", verdict_cell(c));
    else if (!s.confirming && c.objective) name += fmt::format(" ({:.4g})", *c.objective);
    steps.push_back(std::move(name));
  }
  return fmt::format("lineage    {}   (each step's {})\n", fmt::join(steps, " → "),
                     s.confirming ? "confirmed speed-up over the baseline" : s.campaign.objective);
}

// How the proposers did (docs/propose.md).
std::string proposals_line(const CampaignSummary& s) {
  std::size_t accepted = 0, refused = 0, runs = 0;
  for (const auto& p : s.proposals)
    (p.status == ProposalStatus::accepted ? accepted : p.status == ProposalStatus::refused ? refused : runs) += 1;
  if (accepted + refused + runs == 0) return "";
  return fmt::format("proposals  {} accepted, {} refused, over {} proposer run{} (flotilla results proposals)\n",
                     accepted, refused, runs, runs == 1 ? "" : "s");
}

// "time_s 0.0123, residual 4.5e-05": a candidate's value of each goal.
std::string goal_values_text(const CandidateSummary& c, const CampaignSummary& s) {
  std::vector<std::string> parts;
  for (const auto& g : s.goals) {
    const auto v = goal_value(c, g, s.campaign);
    parts.push_back(fmt::format("{} {}", g.metric, v ? fmt::format("{:.4g}", *v) : std::string("-")));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

// Several objectives: the pick, and what it was picked from.
std::string pick_line(const CampaignSummary& s) {
  if (!s.best) return fmt::format("pick       none yet: no {} candidate on the front\n", s.campaign.shards > 0 ? "verified" : "explored");
  const auto& b = s.candidates[*s.best];
  return fmt::format("pick       {} ({}; {} of {} front members {}; no speed-up is claimed: confirmation is off with "
                     "several objectives)   {}\n",
                     goal_values_text(b, s), s.pick.text(), s.eligible_front.size(), s.front.size(),
                     s.campaign.shards > 0 ? "verified" : "explored, none verified: no evaluate stage", b.record.config);
}

std::string front_table(const CampaignSummary& s) {
  if (s.front.empty()) return "";
  std::vector<std::string> names;
  for (const auto& g : s.goals) names.push_back(g.text());
  std::string out = fmt::format("\nPareto front of {} ({} candidates no other beats on every objective; * = the pick)\n",
                                fmt::join(names, ", "), s.front.size());
  out += fmt::format("  {:>6}", "id");
  for (const auto& g : s.goals) out += fmt::format("  {:>12}", g.metric);
  out += fmt::format("  {:<12}  {}\n", "status", "configuration");
  for (auto i : s.front) {
    const auto& c = s.candidates[i];
    out += fmt::format("  {:>6}", fmt::format("{}{}", s.best == i ? "*" : "", c.record.id));
    for (const auto& g : s.goals) {
      const auto v = goal_value(c, g, s.campaign);
      out += fmt::format("  {:>12}", v ? fmt::format("{:.5g}", *v) : std::string("-"));
    }
    out += fmt::format("  {:<12}  {}\n", to_string(c.status), candidate_label(c));
  }
  return out;
}

std::string best_line(const CampaignSummary& s) {
  const auto& info = s.campaign;
  if (!s.goals.empty()) return pick_line(s);
  if (!s.best) return "best       none verified yet\n";
  const auto& b = s.candidates[*s.best];
  std::string what = s.best_verified ? "verified" : "unverified: no evaluate stage";
  if (s.best == s.baseline)
    what += s.confirming ? "; the baseline itself: nothing is confirmed faster" : ", the baseline itself: nothing verified beats it";
  else if (s.best_confirmed)
    what += "; " + confirmation_text(*b.confirmation);
  else if (is_tests_objective(info.objective) && s.baseline && s.candidates[*s.baseline].objective && b.objective)
    what += fmt::format(", {:+g} against the baseline's {:g}: counted from its tests",
                        *b.objective - *s.candidates[*s.baseline].objective, *s.candidates[*s.baseline].objective);
  else if (auto g = gain(s))
    what += fmt::format(", {:.2f}x baseline by median (not confirmed: confirmation is off)", *g);
  return fmt::format("best       {} {} ({})   {}\n", info.objective, objective_text(b), what, candidate_label(b));
}

// Why the best candidate by median is not the winner.
std::string unconfirmed_line(const CampaignSummary& s) {
  if (!s.best_unconfirmed) return "";
  const auto& c = s.candidates[*s.best_unconfirmed];
  const std::string why = c.confirmation ? confirmation_text(*c.confirmation) : "not confirmed";
  return fmt::format("not chosen candidate {}{} ({} {} {}, {}): {}\n", c.record.id,
                     c.proposal.empty() ? std::string() : " (" + c.proposal + ")", s.campaign.objective,
                     objective_text(c), interval_text(c), to_string(c.status), why);
}

// The finalists measured against the winner head to head (docs/verdicts.md, "Ties").
std::string finals_lines(const CampaignSummary& s) {
  if (!s.best) return "";
  std::string out;
  const auto& w = s.candidates[*s.best];
  if (s.dethroned) {
    const auto& d = s.candidates[*s.dethroned];
    const auto duel = head_to_head(s, *s.best, *s.dethroned);
    out += fmt::format("head2head  candidate {} beat candidate {} (the best ratio over the baseline) head to head: {} "
                       "in {} pairs\n",
                       w.record.id, d.record.id, duel ? ratio_text(duel->result) : std::string("?"),
                       duel ? duel->result.pairs : 0);
  }
  for (const auto& f : s.finals) {
    if (s.dethroned && f.other == *s.dethroned) continue;
    const auto& o = s.candidates[f.other];
    const auto& r = f.result.result;
    if (r.verdict == stats::Verdict::no_difference) {
      out += fmt::format("tie        candidate {} and candidate {} cannot be told apart: {} head to head in {} pairs "
                         "(no significant difference); the winner is named by its ratio over the baseline\n",
                         w.record.id, o.record.id, ratio_text(r), r.pairs);
    } else if (r.verdict == stats::Verdict::faster) {
      out += fmt::format("head2head  candidate {} confirmed faster than candidate {}: {} in {} pairs\n", w.record.id,
                         o.record.id, ratio_text(r), r.pairs);
    } else {
      out += fmt::format("head2head  candidate {} against candidate {}: {}\n", w.record.id, o.record.id,
                         r.verdict == stats::Verdict::failed ? fmt::format("{}: {}", to_string(r.verdict), f.result.reason)
                                                             : fmt::format("{}: {} in {} pairs", to_string(r.verdict),
                                                                           ratio_text(r), r.pairs));
    }
  }
  if (!s.duels_wanted.empty())
    out += fmt::format("head2head  {} head-to-head confirmation{} against the winner not run yet (a resumed run "
                       "runs {})\n",
                       s.duels_wanted.size(), s.duels_wanted.size() == 1 ? "" : "s",
                       s.duels_wanted.size() == 1 ? "it" : "them");
  return out;
}

std::string noise_line(const CampaignSummary& s) {
  std::string out;
  if (s.unlike_placement)
    out += fmt::format("warning    unlike placement: the baseline's repeats ran {:.3g} at a time, the candidates' up "
                       "to {:.3g}: their medians are not comparable, so the best candidates are confirmed against the "
                       "baseline in interleaved pairs whatever their medians; resources.slots = 1 or "
                       "explore.exclusive = true measures each alone\n",
                       s.unlike_placement->baseline, s.unlike_placement->candidates);
  if (!s.noise_cv) return out;
  const auto& b = s.candidates[*s.baseline];
  out += fmt::format("noise      baseline CV {:.1f}% over {} repeats (robust: 1.4826 MAD / median)",
                                100 * *s.noise_cv, b.repeats_done);
  if (s.resolvable_gain)
    out += fmt::format("; confirmation resolves gains above about {:.3g}x within {} pairs", *s.resolvable_gain,
                       s.campaign.confirm_max_pairs);
  out += "\n";
  // What to change depends on how the benchmark ran: fewer runs at once helps only when several ran.
  if (s.too_noisy)
    out += fmt::format("warning    too noisy to resolve the {:.3g}% minimum effect: {}a longer benchmark, or more "
                       "pairs (confirm.max_pairs)\n",
                       100 * s.campaign.confirm_min_effect,
                       s.most_at_once > 1 ? fmt::format("up to {:.3g} benchmark runs ran at once: use resources.slots "
                                                        "= 1 or explore.exclusive = true, ",
                                                        s.most_at_once)
                                          : std::string("one benchmark run at a time already: a quieter machine, "));
  return out;
}

std::string cost_line(const CampaignSummary& s) {
  std::size_t confirmations = 0;
  int pairs = 0;
  for (const auto& c : s.candidates)
    if (c.confirmation) ++confirmations, pairs += c.confirmation->result.pairs;
  if (s.repeats_extra == 0 && confirmations == 0 && s.warmups == 0) return "";
  return fmt::format("cost       {} adaptive repeats; {} confirmation{} ({} pairs, {} runs); {} warm-up runs\n",
                     s.repeats_extra, confirmations, confirmations == 1 ? "" : "s", pairs, s.confirm_runs, s.warmups);
}

}  // namespace

std::string summary_text(const CampaignSummary& s, std::size_t top_k) {
  const auto& info = s.campaign;
  std::string out;
  out += fmt::format("campaign   {}\n", info.name);
  if (s.goals.empty()) {
    out += fmt::format("objective  {} ({}) · seed {} · flotilla {} on {}\n", info.objective, info.direction, info.seed,
                       info.flotilla_version, info.host);
  } else {
    std::vector<std::string> names;
    for (const auto& g : s.goals) names.push_back(g.text());
    out += fmt::format("objectives {} · pick {} · seed {} · flotilla {} on {}\n", fmt::join(names, ", "), s.pick.text(),
                       info.seed, info.flotilla_version, info.host);
  }
  out += provenance_line(s.provenance);
  const auto screened = s.count(CandidateStatus::screened);
  out += fmt::format("progress   {} candidates: {} verified, {} rolled back, {} explored, {}{} failed, {} pending · "
                     "{} trials, {} failed\n",
                     s.candidates.size(), s.count(CandidateStatus::verified), s.count(CandidateStatus::rolled_back),
                     s.count(CandidateStatus::explored),
                     screened > 0 ? fmt::format("{} screened below full fidelity, ", screened) : std::string(),
                     s.count(CandidateStatus::explore_failed) + s.count(CandidateStatus::build_failed),
                     s.count(CandidateStatus::pending), s.trials, s.failed_trials);
  if (!info.fidelity.empty())
    out += fmt::format("fidelity   {}: candidates at another value are screened (ranked among their own fidelity, "
                       "never verified or the winner)\n",
                       info.fidelity);
  if (s.baseline) {
    const auto& b = s.candidates[*s.baseline];
    out += fmt::format("baseline   {} {} {} ({})   {}\n", info.objective, objective_text(b), interval_text(b),
                       to_string(b.status), b.record.config);
  }
  out += best_line(s);
  out += lineage_line(s);
  out += proposals_line(s);
  out += unconfirmed_line(s);
  out += finals_lines(s);
  out += noise_line(s);
  out += cost_line(s);
  out += front_table(s);
  auto ranking = s.ranking();
  if (!ranking.empty()) {
    out += fmt::format("\ntop {}{}\n  {:>4}  {:>5}  {:>10}  {:<20}  {:>7}  {:<12}  {:<14}  {}\n", std::min(top_k, ranking.size()),
                       s.goals.empty() ? std::string() : " by " + info.objective, "rank", "id", info.objective, "interval", "spread", "status", "confirmation", "configuration");
    auto row = [&](std::size_t r) {
      const auto& c = s.candidates[ranking[r]];
      out += fmt::format("  {:>4}  {:>5}  {:>10}  {:<20}  {:>6.1f}%  {:<12}  {:<14}  {}\n", r + 1, c.record.id,
                         objective_text(c), interval_text(c), 100 * c.spread, to_string(c.status), verdict_cell(c),
                         candidate_label(c));
    };
    for (std::size_t r = 0; r < ranking.size() && r < top_k; ++r) row(r);
    // The winner is chosen by its confirmation, not by its median, so it can rank below the top
    // rows; show it there too, or the table would not contain the candidate the best line names.
    if (s.best && s.goals.empty()) {
      const auto rank = static_cast<std::size_t>(std::find(ranking.begin(), ranking.end(), *s.best) - ranking.begin());
      if (rank < ranking.size() && rank >= top_k) {
        out += "   ...  (the winner, by its confirmation:)\n";
        row(rank);
      }
    }
    const auto& first = s.candidates[ranking.front()];
    if (first.interval)
      out += fmt::format("  interval: the median's distribution-free interval, {:.1f}% coverage at {} repeats "
                         "(95% needs 6); confirmation: interleaved pairs against the baseline\n",
                         100 * first.interval->coverage, first.repeats_done);
  }
  std::vector<const CandidateSummary*> rolled;
  for (const auto& c : s.candidates)
    if (c.status == CandidateStatus::rolled_back) rolled.push_back(&c);
  if (!rolled.empty()) {
    out += "\nrolled back (failed verification)\n";
    for (const auto* c : rolled) out += fmt::format("  {:>5}  {}  — {}\n", c->record.id, candidate_label(*c), c->reason);
  }
  std::vector<const CandidateSummary*> unbuilt;
  for (const auto& c : s.candidates)
    if (c.status == CandidateStatus::build_failed) unbuilt.push_back(&c);
  if (!unbuilt.empty()) {
    out += "\nbuild failed (never explored)\n";
    for (const auto* c : unbuilt) {
      out += fmt::format("  {:>5}  {}  — {}\n", c->record.id, candidate_label(*c), c->reason);
      // The reason alone is often "exit code 1": the build's own last words say why.
      for (const auto& line : c->build_lines) out += fmt::format("         | {}\n", line);
      if (!c->build_log.empty()) out += fmt::format("         full log: {}\n", c->build_log);
    }
  }
  if (!s.failures_by_kind.empty()) {
    out += "\nfailures by kind (first error)\n";
    for (const auto& [kind, group] : s.failures_by_kind)
      out += fmt::format("  {:>5}  {:<12}  {}\n", group.count, kind, group.first_error);
  }
  if (!s.failures_by_reason.empty()) {
    out += "\nfailed trials by reason\n";
    for (const auto& [reason, n] : s.failures_by_reason) out += fmt::format("  {:>5}  {}\n", n, reason);
  }
  return out;
}

namespace {
// Columns a UTF-8 string takes (its code points; the report uses no wide characters).
std::size_t columns(std::string_view text) {
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(),
                                                [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

bool is_label_line(std::string_view line) {
  if (line.size() < 12 || line[10] != ' ' || line[11] == ' ') return false;
  if (line.starts_with(std::string_view("           "))) return true;  // a label line's own continuation
  if (!std::islower(static_cast<unsigned char>(line[0]))) return false;
  return std::all_of(line.begin(), line.begin() + 10, [](char c) {
    return c == ' ' || c == '-' || std::isalnum(static_cast<unsigned char>(c));
  });
}
}  // namespace

std::string wrap_report(std::string_view text, std::size_t width) {
  constexpr std::size_t kIndent = 11;
  if (width <= kIndent + 20) return std::string(text);
  std::string out;
  std::size_t begin = 0;
  while (begin < text.size()) {
    auto end = text.find('\n', begin);
    const bool newline = end != std::string_view::npos;
    if (!newline) end = text.size();
    const auto line = text.substr(begin, end - begin);
    begin = end + 1;
    if (columns(line) <= width || !is_label_line(line)) {
      out += line;
      if (newline) out += '\n';
      continue;
    }
    std::string current(line.substr(0, kIndent));
    std::size_t used = kIndent;
    bool first_word = true;
    std::size_t pos = kIndent;
    while (pos < line.size()) {
      const auto space = line.find(' ', pos);
      const auto word = line.substr(pos, space == std::string_view::npos ? std::string_view::npos : space - pos);
      pos = space == std::string_view::npos ? line.size() : space + 1;
      if (word.empty()) continue;
      const auto w = columns(word);
      if (!first_word && used + 1 + w > width) {
        out += current + '\n';
        current = std::string(kIndent, ' ');
        used = kIndent;
        first_word = true;
      }
      if (!first_word) current += ' ', ++used;
      current += word;
      used += w;
      first_word = false;
    }
    out += current;
    if (newline) out += '\n';
  }
  return out;
}

std::string summary_json(const CampaignSummary& s, std::size_t top_k) {
  const auto& info = s.campaign;
  nlohmann::json j;
  j["campaign"] = {{"name", info.name},       {"objective", info.objective}, {"direction", info.direction},
                   {"seed", info.seed},       {"repeats", info.repeats},     {"shards", info.shards}, {"test_gate", info.test_gate},
                   {"host", info.host},       {"flotilla_version", info.flotilla_version}, {"created", info.created},
                   {"schema", info.schema},
                   {"fidelity", info.fidelity.empty() ? nlohmann::json(nullptr) : nlohmann::json(info.fidelity)},
                   {"confirmation", {{"enabled", info.confirm_max_pairs > 0}, {"confidence", info.confirm_confidence},
                                     {"min_effect", info.confirm_min_effect}, {"max_pairs", info.confirm_max_pairs}}}};
  j["progress"] = {{"candidates", s.candidates.size()},
                   {"verified", s.count(CandidateStatus::verified)},
                   {"rolled_back", s.count(CandidateStatus::rolled_back)},
                   {"explored", s.count(CandidateStatus::explored)},
                   {"explore_failed", s.count(CandidateStatus::explore_failed)},
                   {"build_failed", s.count(CandidateStatus::build_failed)},
                   {"screened", s.count(CandidateStatus::screened)},
                   {"pending", s.count(CandidateStatus::pending)},
                   {"trials", s.trials},
                   {"failed_trials", s.failed_trials},
                   {"confirmed_faster", s.confirmed_count(stats::Verdict::faster)},
                   {"no_significant_difference", s.confirmed_count(stats::Verdict::no_difference)},
                   {"confirmed_slower", s.confirmed_count(stats::Verdict::slower)},
                   {"confirmations_failed", s.confirmed_count(stats::Verdict::failed)},
                   {"confirmations_unreliable", s.confirmed_count(stats::Verdict::unreliable)}};
  j["baseline"] = s.baseline ? candidate_json(s.candidates[*s.baseline], info) : nlohmann::json(nullptr);
  j["best"] = s.best ? candidate_json(s.candidates[*s.best], info) : nlohmann::json(nullptr);
  j["lineage"] = s.lineage;  // candidate ids from the root to the winner (proposals; else empty)
  {
    std::size_t accepted = 0, refused = 0;
    for (const auto& p : s.proposals) accepted += p.status == ProposalStatus::accepted, refused += p.status == ProposalStatus::refused;
    j["proposals"] = {{"accepted", accepted}, {"refused", refused}};
  }
  j["best_verified"] = s.best_verified;
  j["best_confirmed"] = s.best_confirmed;
  // One word for scripts: what the headline rests on.
  j["verdict"] = !s.best                 ? "none"
                 : !s.goals.empty()      ? "picked from the front"
                 : s.best_confirmed      ? "confirmed faster"
                 : s.best == s.baseline  ? "baseline"
                 : s.confirming          ? "unconfirmed"
                                         : "median";
  j["best_unconfirmed"] =
      s.best_unconfirmed ? candidate_json(s.candidates[*s.best_unconfirmed], info) : nlohmann::json(nullptr);
  auto g = gain(s);
  j["gain_over_baseline"] = g ? nlohmann::json(*g) : nlohmann::json(nullptr);
  j["gain_interval"] = s.best_confirmed ? nlohmann::json{{"low", s.candidates[*s.best].confirmation->result.low},
                                                         {"high", s.candidates[*s.best].confirmation->result.high}}
                                        : nlohmann::json(nullptr);
  // The finalists measured against the winner head to head, the winner over each.
  j["head_to_head"] = nlohmann::json::array();
  for (const auto& f : s.finals) {
    auto duel = confirmation_json(f.result, info);
    duel["candidate"] = s.candidates[*s.best].record.id;
    duel["tie"] = f.result.result.verdict == stats::Verdict::no_difference;
    j["head_to_head"].push_back(std::move(duel));
  }
  j["dethroned"] = s.dethroned ? nlohmann::json(s.candidates[*s.dethroned].record.id) : nlohmann::json(nullptr);
  j["noise"] = {{"baseline_cv", s.noise_cv ? nlohmann::json(*s.noise_cv) : nlohmann::json(nullptr)},
                {"resolvable_gain", s.resolvable_gain ? nlohmann::json(*s.resolvable_gain) : nlohmann::json(nullptr)},
                {"too_noisy", s.too_noisy}};
  j["cost"] = {{"repeats_extra", s.repeats_extra}, {"confirm_runs", s.confirm_runs}, {"warmups", s.warmups}};
  j["top"] = nlohmann::json::array();
  auto ranking = s.ranking();
  for (std::size_t r = 0; r < ranking.size() && r < top_k; ++r)
    j["top"].push_back(candidate_json(s.candidates[ranking[r]], info));
  j["rolled_back"] = nlohmann::json::array();
  for (const auto& c : s.candidates)
    if (c.status == CandidateStatus::rolled_back) j["rolled_back"].push_back(candidate_json(c, info));
  j["failures_by_reason"] = s.failures_by_reason;
  // The last run's provenance, and every run's commit (null: not a git work tree).
  if (s.provenance.empty()) {
    j["provenance"] = nullptr;
  } else {
    const auto& last = s.provenance.back();
    nlohmann::json commits = nlohmann::json::array();
    for (const auto& run : s.provenance)
      commits.push_back(run.git_commit.empty() ? nlohmann::json(nullptr) : nlohmann::json(run.git_commit));
    j["provenance"] = {{"workdir", last.workdir},
                       {"git_commit", last.git_commit.empty() ? nlohmann::json(nullptr) : nlohmann::json(last.git_commit)},
                       {"git_dirty", last.git_dirty},
                       {"tools", nlohmann::json(std::map<std::string, std::string>(last.tools.begin(), last.tools.end()))},
                       {"env", last.env},
                       {"runs", s.provenance.size()},
                       {"commits", commits}};
  }
  // Several objectives: the goals, the rule, and every front member with its value of each goal.
  if (!s.goals.empty()) {
    j["objectives"] = nlohmann::json::array();
    for (const auto& g : s.goals)
      j["objectives"].push_back({{"metric", g.metric}, {"direction", g.maximize ? "maximize" : "minimize"}});
    j["pick"] = {{"rule", s.pick.text()},
                 {"candidate", s.best ? nlohmann::json(s.candidates[*s.best].record.id) : nlohmann::json(nullptr)},
                 {"eligible", s.eligible_front.size()}};
    j["front"] = nlohmann::json::array();
    for (auto i : s.front) {
      auto member = candidate_json(s.candidates[i], info);
      member["values"] = nlohmann::json::object();
      for (const auto& g : s.goals) {
        const auto v = goal_value(s.candidates[i], g, info);
        member["values"][g.metric] = v ? nlohmann::json(*v) : nlohmann::json(nullptr);
      }
      member["picked"] = s.best == i;
      j["front"].push_back(std::move(member));
    }
  }
  j["failures_by_kind"] = nlohmann::json::object();
  for (const auto& [kind, group] : s.failures_by_kind)
    j["failures_by_kind"][kind] = {{"count", group.count}, {"first_error", group.first_error}};
  j["build_failed"] = nlohmann::json::array();
  for (const auto& c : s.candidates)
    if (c.status == CandidateStatus::build_failed) j["build_failed"].push_back(candidate_json(c, info));
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace flotilla::results

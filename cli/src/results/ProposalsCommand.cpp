// ProposalsCommand.cpp — `flotilla results proposals FILE.h5 [--patch ID|NAME]`: the proposal
// journal (docs/propose.md): every proposal with its proposer, round, parent and what became of
// it (its candidate, status and confirmation, or why it was refused), each proposer's answers,
// and the winner's lineage; --patch prints one proposal's patch and rationale.
#include <fmt/format.h>

#include <charconv>
#include <map>

#include "ResultsCli.h"
#include "flotilla/results/Lineage.h"

namespace flotilla::cli::results_cli {
namespace {

const results::ProposalRecord* find_proposal(const std::vector<results::ProposalRecord>& proposals,
                                             const std::string& wanted) {
  std::int64_t id = -1;
  if (std::from_chars(wanted.data(), wanted.data() + wanted.size(), id).ec == std::errc{} && id >= 0 &&
      static_cast<std::size_t>(id) < proposals.size())
    return &proposals[static_cast<std::size_t>(id)];
  const results::ProposalRecord* found = nullptr;
  for (const auto& p : proposals)
    if (p.name == wanted && p.status != results::ProposalStatus::answered) found = &p;  // the latest of that name
  return found;
}

int run_proposals(const po::variables_map& vm, const std::vector<std::string>& files, std::ostream& out) {
  const bool json = vm.count("json");
  auto c = load_campaign(files[0], json);
  const auto& s = c.summary;
  std::map<std::int64_t, std::int64_t> candidate_of;  // proposal -> its candidate
  for (const auto& cand : s.candidates)
    if (auto p = results::proposal_of(cand.record)) candidate_of[*p] = cand.record.id;
  if (vm.count("patch")) {
    const auto* p = find_proposal(c.proposals, vm["patch"].as<std::string>());
    if (!p) throw std::runtime_error(fmt::format("{}: no proposal '{}' (give its id or name)", files[0], vm["patch"].as<std::string>()));
    if (json) {
      out << nlohmann::json({{"proposal", p->id}, {"name", p->name}, {"patch", p->patch}, {"rationale", p->rationale}})
                 .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
          << '\n';
      return 0;
    }
    if (!p->rationale.empty()) out << fmt::format("# {}: {}\n", p->name, p->rationale);
    out << p->patch;
    return 0;
  }
  if (json) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& p : c.proposals) {
      nlohmann::json row = {{"id", p.id},     {"round", p.round},   {"proposer", p.proposer},
                            {"name", p.name}, {"status", results::to_string(p.status)},
                            {"parent", p.parent}, {"hash", fmt::format("{:016x}", p.hash)},
                            {"reason", p.reason}, {"rationale", p.rationale}};
      if (auto it = candidate_of.find(p.id); it != candidate_of.end()) {
        row["candidate"] = it->second;
        row["candidate_status"] = results::to_string(s.candidates[static_cast<std::size_t>(it->second)].status);
      }
      rows.push_back(std::move(row));
    }
    out << nlohmann::json({{"campaign", s.campaign.name}, {"run", run_json(c.run)}, {"proposals", rows},
                           {"lineage", s.lineage}})
               .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
        << '\n';
    return 0;
  }
  Table table;
  table.column("id").column("round").column("by").column("name", Table::Align::left).column("parent")
      .column("candidate").column("outcome", Table::Align::left);
  std::size_t runs = 0;
  for (const auto& p : c.proposals) {
    if (p.status == results::ProposalStatus::answered) {
      ++runs;
      continue;
    }
    std::string outcome;
    std::string candidate = "-";
    if (auto it = candidate_of.find(p.id); it != candidate_of.end()) {
      const auto& cand = s.candidates[static_cast<std::size_t>(it->second)];
      candidate = std::to_string(cand.record.id);
      outcome = std::string(results::to_string(cand.status));
      if (cand.confirmation)
        outcome += fmt::format(", {} {:.3g}x", results::stats::verdict_key(cand.confirmation->result.verdict),
                               cand.confirmation->result.ratio);
      if (!cand.reason.empty()) outcome += ": " + cand.reason;
    } else {
      outcome = fmt::format("{}: {}", results::to_string(p.status), p.reason);
    }
    if (outcome.size() > 160) outcome = outcome.substr(0, 157) + "...";
    table.row({std::to_string(p.id), std::to_string(p.round), std::to_string(p.proposer), p.name.empty() ? "-" : p.name,
               p.parent >= 0 ? std::to_string(p.parent) : "-", candidate, outcome});
  }
  out << fmt::format("{}: {} proposals over {} proposer runs\n", s.campaign.name, c.proposals.size() - runs, runs);
  out << (table.empty() ? std::string("  none\n") : table.text());
  if (s.lineage.size() > 1) {
    std::string line;
    for (auto id : s.lineage) {
      const auto& cand = s.candidates[static_cast<std::size_t>(id)];
      line += (line.empty() ? "" : " → ") + (!cand.proposal.empty()            ? cand.proposal
                                             : cand.record.origin == "baseline" ? std::string("baseline")
                                                                                : fmt::format("candidate {}", id));
    }
    out << fmt::format("\nthe winner's lineage: {}\n", line);
  }
  for (const auto& p : c.proposals)
    if (p.status == results::ProposalStatus::answered)
      out << fmt::format("  round {} proposer {}: {}\n", p.round, p.proposer, p.reason);
  return 0;
}

}  // namespace

const Subcommand kProposals{.name = "proposals",
                            .synopsis = "FILE.h5 [--patch ID|NAME]",
                            .what = "the proposals proposers wrote: what became of each, the winner's lineage",
                            .add_options =
                                [](po::options_description& o) {
                                  o.add_options()("patch", po::value<std::string>(),
                                                  "print this proposal's patch (and rationale)");
                                },
                            .run = run_proposals};

}  // namespace flotilla::cli::results_cli

// Lineage.cpp — proposals' candidates, chains and lineages (Lineage.h).
#include "flotilla/results/Lineage.h"

#include <algorithm>
#include <charconv>
#include <set>
#include <string_view>

namespace flotilla::results {

std::optional<std::int64_t> proposal_of(const CandidateRecord& candidate) {
  constexpr std::string_view kPrefix = "proposal ";
  if (!candidate.origin.starts_with(kPrefix)) return std::nullopt;
  std::int64_t id = -1;
  const auto text = std::string_view(candidate.origin).substr(kPrefix.size());
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec != std::errc{} || end != text.data() + text.size() || id < 0) return std::nullopt;
  return id;
}

std::vector<std::int64_t> lineage_of(std::int64_t candidate, const std::vector<CandidateRecord>& candidates,
                                     const std::vector<ProposalRecord>& proposals) {
  std::vector<std::int64_t> line;
  std::set<std::int64_t> visited;  // a damaged file cannot make it loop
  for (std::int64_t id = candidate; id >= 0 && static_cast<std::size_t>(id) < candidates.size();) {
    if (!visited.insert(id).second) break;
    line.push_back(id);
    const auto proposal = proposal_of(candidates[static_cast<std::size_t>(id)]);
    if (!proposal || static_cast<std::size_t>(*proposal) >= proposals.size()) break;
    id = proposals[static_cast<std::size_t>(*proposal)].parent;
  }
  std::reverse(line.begin(), line.end());
  return line;
}

std::vector<std::int64_t> chain_of(std::int64_t candidate, const std::vector<CandidateRecord>& candidates,
                                   const std::vector<ProposalRecord>& proposals) {
  std::vector<std::int64_t> chain;
  for (auto id : lineage_of(candidate, candidates, proposals))
    if (auto proposal = proposal_of(candidates[static_cast<std::size_t>(id)]);
        proposal && static_cast<std::size_t>(*proposal) < proposals.size())
      chain.push_back(*proposal);
  return chain;
}

}  // namespace flotilla::results

// Proposals.cpp — the proposer protocol's pure rules (Proposals.h).
#include "flotilla/scheduler/Proposals.h"

#include <algorithm>
#include <charconv>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace flotilla::scheduler {
namespace {

std::uint64_t fnv(std::uint64_t hash, std::string_view bytes) {
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}
constexpr std::uint64_t kFnvBasis = 0xcbf29ce484222325ULL;

// The path of a "--- " / "+++ " header line: up to a tab (diff's timestamp), quotes removed.
std::string header_path(std::string_view line) {
  std::string_view rest = line.substr(4);
  if (const auto tab = rest.find('\t'); tab != std::string_view::npos) rest = rest.substr(0, tab);
  while (!rest.empty() && (rest.back() == '\r' || rest.back() == ' ')) rest.remove_suffix(1);
  if (rest.size() >= 2 && rest.front() == '"' && rest.back() == '"') rest = rest.substr(1, rest.size() - 2);
  return std::string(rest);
}

// The path after -p1 ("a/src/x.c" -> "src/x.c"), or why it cannot be one inside the tree.
std::string strip_one(const std::string& path, std::string& error) {
  const auto slash = path.find('/');
  if (slash == std::string::npos) {
    error = fmt::format("the path '{}' has no a/ or b/ prefix for -p1 to strip", path);
    return {};
  }
  std::string rest = path.substr(slash + 1);
  if (rest.empty() || path.front() == '/') {
    error = fmt::format("the path '{}' is absolute: a patch stays inside its tree", path);
    return {};
  }
  std::istringstream parts(rest);
  for (std::string part; std::getline(parts, part, '/');) {
    if (part == "..") {
      error = fmt::format("the path '{}' leaves the tree ('..')", path);
      return {};
    }
    if (part == ".git") {
      error = fmt::format("the path '{}' is inside .git", path);
      return {};
    }
  }
  return rest;
}

}  // namespace

PatchCheck check_patch(std::string_view text, std::size_t max_bytes) {
  PatchCheck check;
  if (text.size() > max_bytes) {
    check.error = fmt::format("the patch is {} bytes, more than the {} a proposal may have", text.size(), max_bytes);
    return check;
  }
  if (text.find('\0') != std::string_view::npos) {
    check.error = "the patch holds a NUL byte: binary content is not accepted";
    return check;
  }
  std::set<std::string> seen;
  bool hunk = false;
  std::string old_path;
  std::istringstream lines{std::string(text)};
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("GIT binary patch") || (line.starts_with("Binary files ") && line.find(" differ") != std::string::npos)) {
      check.error = "the patch changes a binary file: binary content is not accepted";
      return check;
    }
    if (line.starts_with("@@ ")) hunk = true;
    const bool old_header = line.starts_with("--- "), new_header = line.starts_with("+++ ");
    if (!old_header && !new_header) continue;
    const std::string path = header_path(line);
    if (old_header) {
      old_path = path;
      continue;
    }
    // A created file's old side and a deleted file's new side are /dev/null.
    if (path == "/dev/null" && (old_path.empty() || old_path == "/dev/null")) {
      check.error = "a file header names /dev/null on both sides";
      return check;
    }
    std::string target;
    for (const auto& side : {old_path, path}) {
      if (side.empty() || side == "/dev/null") continue;
      std::string error;
      target = strip_one(side, error);  // the new side's, when it has one: it comes last
      if (!error.empty()) {
        check.error = error;
        return check;
      }
    }
    if (seen.insert(target).second) check.files.push_back(target);
    old_path.clear();
  }
  if (!hunk || check.files.empty()) check.error = "the patch has no hunk: it changes nothing";
  return check;
}

ProposalMeta parse_proposal_meta(std::string_view json_text) {
  ProposalMeta meta;
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception& e) {
    meta.error = fmt::format("not JSON: {}", e.what());
    return meta;
  }
  if (!doc.is_object()) {
    meta.error = "not a JSON object";
    return meta;
  }
  for (const auto& [key, value] : doc.items()) {
    if (key == "parent") {
      if (value.is_string()) meta.parent = value.get<std::string>();
      else if (value.is_number_integer()) meta.parent = std::to_string(value.get<std::int64_t>());
      else meta.error = "\"parent\" is not \"best\", \"baseline\" or a candidate id";
    } else if (key == "rationale") {
      if (value.is_string()) meta.rationale = value.get<std::string>();
      else meta.error = "\"rationale\" is not a string";
    } else if (key == "parameters") {
      if (!value.is_object()) {
        meta.error = "\"parameters\" is not an object of name: value";
        continue;
      }
      for (const auto& [name, v] : value.items()) {
        if (v.is_string()) meta.parameters[name] = v.get<std::string>();
        else if (v.is_number() || v.is_boolean()) meta.parameters[name] = v.dump();
        else meta.error = fmt::format("parameter '{}' is not a string or a number", name);
      }
    } else {
      meta.error = fmt::format("unknown key \"{}\" (known: parent, rationale, parameters)", key);
    }
    if (!meta.error.empty()) return meta;
  }
  return meta;
}

ParentChoice resolve_parent(std::string_view wanted, const results::CampaignSummary& summary) {
  using results::CandidateStatus;
  const bool has_evaluate = summary.campaign.shards > 0;
  const auto eligible = [&](const results::CandidateSummary& c) {
    return c.status == CandidateStatus::verified || (!has_evaluate && c.status == CandidateStatus::explored);
  };
  std::optional<std::size_t> index;
  if (wanted == "best") {
    index = summary.best ? summary.best : summary.baseline;
    if (!index) return {std::nullopt, "there is no verified candidate or baseline to build on yet"};
  } else if (wanted == "baseline") {
    index = summary.baseline;
    if (!index) return {std::nullopt, "the campaign has no baseline"};
  } else {
    std::int64_t id = -1;
    const auto [end, ec] = std::from_chars(wanted.data(), wanted.data() + wanted.size(), id);
    if (ec != std::errc{} || end != wanted.data() + wanted.size() || id < 0)
      return {std::nullopt, fmt::format("parent '{}' is not best, baseline or a candidate id", wanted)};
    if (static_cast<std::size_t>(id) >= summary.candidates.size())
      return {std::nullopt, fmt::format("parent {} is not a candidate of this campaign", id)};
    index = static_cast<std::size_t>(id);
  }
  const auto& c = summary.candidates[*index];
  if (c.status == CandidateStatus::rolled_back)
    return {std::nullopt, fmt::format("parent {} was rolled back: a rolled-back candidate is never built upon", c.record.id)};
  if (!eligible(c))
    return {std::nullopt, fmt::format("parent {} is not {} (it is {})", c.record.id,
                                      has_evaluate ? "verified" : "explored", results::to_string(c.status))};
  return {c.record.id, {}};
}

std::string chain_key(const std::vector<std::int64_t>& chain, const std::vector<results::ProposalRecord>& proposals) {
  std::uint64_t hash = kFnvBasis;
  for (auto id : chain) hash = fnv(hash, fmt::format("{:016x}\n", proposals.at(static_cast<std::size_t>(id)).hash));
  return chain.empty() ? std::string("plain") : fmt::format("{:016x}", hash);
}

std::uint64_t proposal_hash(std::string_view parent_chain, std::string_view parameters, std::string_view patch) {
  std::uint64_t hash = fnv(kFnvBasis, parent_chain);
  hash = fnv(hash, "\n");
  hash = fnv(hash, parameters);
  hash = fnv(hash, "\n");
  return fnv(hash, patch);
}

bool proposer_runs(const Settings::Propose& propose, bool declared_spent, int rounds_without_gain) {
  if (!propose.active()) return false;
  if (declared_spent) return true;
  switch (propose.when) {
    case Settings::Propose::When::every_round: return true;
    case Settings::Propose::When::exhausted: return false;
    case Settings::Propose::When::stall: return rounds_without_gain >= propose.stall_rounds;
  }
  return false;
}

int rounds_without_gain(const results::CampaignSummary& summary, int round) {
  int gained = 0;
  if (summary.best && (!summary.baseline || *summary.best != *summary.baseline))
    gained = summary.candidates[*summary.best].record.round;
  return std::max(0, round - 1 - gained);
}

int proposals_made(const std::vector<results::ProposalRecord>& proposals) {
  return static_cast<int>(std::count_if(proposals.begin(), proposals.end(), [](const auto& p) {
    return p.status != results::ProposalStatus::answered;
  }));
}

bool answered(const std::vector<results::ProposalRecord>& proposals, int round, int index) {
  return std::any_of(proposals.begin(), proposals.end(), [&](const auto& p) {
    return p.status == results::ProposalStatus::answered && p.round == round && p.proposer == index;
  });
}

bool retired(const std::vector<results::ProposalRecord>& proposals, int index) {
  return std::any_of(proposals.begin(), proposals.end(), [&](const auto& p) {
    return p.status == results::ProposalStatus::answered && p.proposer == index && p.name == "done";
  });
}

}  // namespace flotilla::scheduler

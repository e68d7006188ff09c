// Provenance.cpp — the `provenance` event's JSON and the summary's line about it.
#include "flotilla/results/Provenance.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace flotilla::results {

namespace {

constexpr std::size_t kDetailBytes = 1023;

// Cut to at most `bytes`, on a whole UTF-8 character, with "..." when cut.
std::string cut(const std::string& text, std::size_t bytes) {
  if (text.size() <= bytes) return text;
  std::size_t end = bytes - 3;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end) + "...";
}

std::string short_commit(const std::string& commit) { return commit.substr(0, 12); }

}  // namespace

std::string provenance_detail(const RunProvenance& p) {
  nlohmann::json j;
  j["workdir"] = cut(p.workdir, 300);
  if (!p.git_commit.empty()) {
    j["git_commit"] = cut(p.git_commit, 64);
    j["git_dirty"] = p.git_dirty;
  }
  j["env"] = nlohmann::json::array();
  j["tools"] = nlohmann::json::object();
  std::size_t left_out = 0;
  for (const auto& [tool, version] : p.tools) {
    nlohmann::json next = j;
    next["tools"][cut(tool, 32)] = cut(version, 120);
    if (next.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).size() + 32 > kDetailBytes) {
      ++left_out;
      continue;
    }
    j = std::move(next);
  }
  if (left_out > 0) j["tools_left_out"] = left_out;
  // The env lines last, as many as fit: they are in the campaign file anyway, the tools are not.
  for (const auto& line : p.env) {
    nlohmann::json next = j;
    next["env"].push_back(cut(line, 64));
    if (next.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).size() + 32 > kDetailBytes) break;
    j = std::move(next);
  }
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::optional<RunProvenance> parse_provenance(const EventRecord& event) {
  if (event.kind != "provenance") return std::nullopt;
  const auto j = nlohmann::json::parse(event.detail, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  RunProvenance p;
  p.time = event.time;
  if (const auto it = j.find("workdir"); it != j.end() && it->is_string()) p.workdir = *it;
  if (const auto it = j.find("git_commit"); it != j.end() && it->is_string()) p.git_commit = *it;
  if (const auto it = j.find("git_dirty"); it != j.end() && it->is_boolean()) p.git_dirty = *it;
  if (const auto it = j.find("env"); it != j.end() && it->is_array())
    for (const auto& name : *it)
      if (name.is_string()) p.env.push_back(name);
  if (const auto it = j.find("tools"); it != j.end() && it->is_object())
    for (const auto& [tool, version] : it->items())
      if (version.is_string()) p.tools.emplace_back(tool, version.get<std::string>());
  return p;
}

std::vector<RunProvenance> provenance_of(const std::vector<EventRecord>& events) {
  std::vector<RunProvenance> runs;
  for (const auto& event : events)
    if (auto p = parse_provenance(event)) runs.push_back(std::move(*p));
  return runs;
}

std::string provenance_line(const std::vector<RunProvenance>& runs) {
  if (runs.empty()) return "";
  const RunProvenance& last = runs.back();
  std::string line = "provenance ";
  line += last.git_commit.empty() ? std::string("not a git work tree")
                                  : fmt::format("git {}{}", short_commit(last.git_commit), last.git_dirty ? " (dirty)" : "");
  line += fmt::format(" in {}", last.workdir);
  for (const auto& [tool, version] : last.tools) line += fmt::format(" · {}: {}", tool, version);
  line += "\n";
  // Runs of one campaign on different code or compilers: its results mix them.
  std::vector<std::string> commits;
  bool dirty = false, tools_differ = false;
  for (const auto& run : runs) {
    const std::string commit = run.git_commit.empty() ? "none" : short_commit(run.git_commit);
    if (commits.empty() || commits.back() != commit) commits.push_back(commit);
    dirty = dirty || run.git_dirty;
    tools_differ = tools_differ || run.tools != runs.front().tools;
  }
  if (commits.size() > 1) {
    std::string chain;
    for (const auto& c : commits) chain += (chain.empty() ? "" : " -> ") + c;
    line += fmt::format("           warning: the {} runs of this campaign ran on different commits ({}): its "
                        "results mix code versions\n",
                        runs.size(), chain);
  }
  if (tools_differ)
    line += fmt::format("           warning: the compilers' versions changed between the {} runs of this campaign\n",
                        runs.size());
  if (dirty)
    line += "           note: a run had uncommitted changes: the commit alone does not reproduce it\n";
  return line;
}

}  // namespace flotilla::results

// ProgressLine.cpp — the progress line's fields and how they are fitted to a width (ProgressLine.h).
#include "ProgressLine.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include <fmt/format.h>

#include "flotilla/results/Columns.h"
#include "flotilla/results/Printable.h"

namespace flotilla::scheduler {
namespace {

// One piece of the line: shown in full, in brief, or not at all. Fields are kept by priority
// (0 is dropped last) and shown in the order they are listed.
struct Field {
  int priority;
  std::string full;
  std::string brief;
};

constexpr std::string_view kSeparator = " · ";

std::size_t line_width(const std::vector<const std::string*>& texts) {
  std::size_t total = texts.empty() ? 0 : (texts.size() - 1) * display_width(std::string(kSeparator));
  for (const auto* text : texts) total += display_width(*text);
  return total;
}

std::string rate_text(double per_minute, bool brief) {
  const bool hourly = per_minute < 1;
  const double value = hourly ? per_minute * 60 : per_minute;
  const auto number = value >= 9.95 ? fmt::format("{:.0f}", value) : fmt::format("{:.1f}", value);
  return fmt::format("{}{}/{}", number, brief ? "" : " candidates", hourly ? "h" : "min");
}

// In squeue's words: its state names, and R / PD (its compact codes) where space is short.
std::string jobs_text(const jobs::JobsOverview& jobs, bool brief) {
  const auto reason = jobs.pending_reason.empty() ? std::string() : fmt::format(" ({})", jobs.pending_reason);
  std::vector<std::string> parts;
  if (jobs.running > 0) parts.push_back(fmt::format("{} {}", jobs.running, brief ? "R" : "RUNNING"));
  if (jobs.pending > 0) parts.push_back(fmt::format("{} {}{}", jobs.pending, brief ? "PD" : "PENDING", reason));
  return fmt::format("{}{}", brief ? "" : "Slurm: ", fmt::join(parts, ", "));
}

std::vector<Field> fields(const ProgressState& s, Seconds elapsed) {
  const auto number = [](std::optional<double> v) { return v ? fmt::format("{:.4g}", *v) : std::string("-"); };
  std::vector<Field> out;
  out.push_back({5, fmt::format("round {} {}", s.round, s.phase), fmt::format("r{}", s.round)});
  out.push_back(
      {1, fmt::format("{}/{} candidates finished", s.finished, s.budget), fmt::format("{}/{}", s.finished, s.budget)});
  if (s.jobs && s.jobs->pending + s.jobs->running > 0)
    out.push_back({3, jobs_text(*s.jobs, false), jobs_text(*s.jobs, true)});  // why nothing moves, when pending
  if (s.running + s.queued > 0)  // none between phases and at a round's end: nothing to say
    out.push_back(
        {7, fmt::format("{} tasks running, {} queued", s.running, s.queued), fmt::format("{} running", s.running)});
  const auto outcomes = s.verifies
                            ? fmt::format("{} verified, {} rolled back, {} failed", s.verified, s.rolled_back, s.failed)
                            : fmt::format("{} failed", s.failed);
  out.push_back({9, outcomes, outcomes});
  if (s.front > 0) {  // several objectives: the front, and the pick so far
    const auto front = s.verifies ? fmt::format("front {} ({} verified)", s.front, s.front_verified)
                                  : fmt::format("front {} (unverified)", s.front);
    out.push_back({2, front, fmt::format("front {}", s.front)});
    if (!s.pick.empty()) out.push_back({6, "pick " + s.pick, "pick " + s.pick});
  } else if (s.verifies) {
    out.push_back({2, fmt::format("best verified {} {}", s.objective, number(s.best_verified)),
                   fmt::format("verified {}", number(s.best_verified))});
    if (s.best_explored)
      out.push_back({6, fmt::format("{} not verified yet", number(s.best_explored)),
                     fmt::format("unverified {}", number(s.best_explored))});
  } else {  // nothing is ever verified: the best explored is the best there is
    out.push_back({2, fmt::format("best {} {} (unverified)", s.objective, number(s.best_explored)),
                   fmt::format("best {} unverified", number(s.best_explored))});
  }
  out.push_back({0, fmt::format("{} elapsed", duration_text(elapsed)), duration_text(elapsed)});
  if (auto rate = candidates_per_minute(s, elapsed))
    out.push_back({8, rate_text(*rate, false), rate_text(*rate, true)});
  const auto left = eta(s, elapsed);
  const auto eta_text = fmt::format("eta {}", left ? duration_text(*left) : "-");
  out.push_back({4, eta_text, eta_text});
  // Slurm's pending reason and the names come from outside: escaped before they are fitted, so
  // the width counts what the terminal shows (Printable.h).
  for (auto& f : out) f.full = results::printable(f.full), f.brief = results::printable(f.brief);
  return out;
}

}  // namespace

std::size_t finished_candidates(const results::CampaignSummary& summary) {
  return static_cast<std::size_t>(std::count_if(
      summary.candidates.begin(), summary.candidates.end(),
      [](const auto& c) { return c.record.origin != "baseline" && c.status != results::CandidateStatus::pending; }));
}

void fill_from_summary(ProgressState& s, const results::CampaignSummary& summary) {
  using results::CandidateStatus;
  s.finished = finished_candidates(summary);
  s.verified = summary.count(CandidateStatus::verified);
  s.rolled_back = summary.count(CandidateStatus::rolled_back);
  s.failed = summary.count(CandidateStatus::explore_failed) + summary.count(CandidateStatus::build_failed);
  s.verifies = summary.campaign.shards > 0;
  s.best_verified = s.best_explored = std::nullopt;
  s.front = summary.front.size();
  s.front_verified = static_cast<std::size_t>(std::count_if(summary.front.begin(), summary.front.end(), [&](auto i) {
    return summary.candidates[i].status == CandidateStatus::verified;
  }));
  s.pick.clear();
  if (!summary.goals.empty() && summary.best) {
    std::vector<std::string> parts;
    for (const auto& goal : summary.goals)
      if (auto v = results::goal_value(summary.candidates[*summary.best], goal, summary.campaign))
        parts.push_back(fmt::format("{} {:.4g}", goal.metric, *v));
    s.pick = fmt::format("{}", fmt::join(parts, ", "));
  }
  const auto winner = summary.best ? summary.candidates[*summary.best].objective : std::nullopt;
  if (!s.verifies) {  // the report's best, unverified
    s.best_explored = winner;
    return;
  }
  if (summary.best_verified) s.best_verified = winner;
  const bool maximize = summary.campaign.direction != "minimize";
  for (auto i : summary.ranking()) {  // best first
    const auto& c = summary.candidates[i];
    if (c.status != CandidateStatus::explored) continue;
    if (!s.best_verified || results::better(*c.objective, *s.best_verified, maximize)) s.best_explored = c.objective;
    break;
  }
}

std::optional<double> candidates_per_minute(const ProgressState& s, Seconds elapsed) {
  const std::size_t this_run = s.finished > s.finished_before_run ? s.finished - s.finished_before_run : 0;
  if (this_run == 0 || elapsed.count() <= 0) return std::nullopt;
  return static_cast<double>(this_run) / (elapsed.count() / 60);
}

std::optional<Seconds> eta(const ProgressState& s, Seconds elapsed) {
  const auto rate = candidates_per_minute(s, elapsed);
  if (!rate || s.finished >= s.budget) return std::nullopt;
  return Seconds(static_cast<double>(s.budget - s.finished) / *rate * 60);
}

std::string duration_text(Seconds d) {
  const auto total = static_cast<long long>(std::max(0.0, std::floor(d.count())));
  if (total < 60) return fmt::format("{}s", total);
  if (total < 3600) return fmt::format("{}m{:02}s", total / 60, total % 60);
  return fmt::format("{}h{:02}m", total / 3600, total % 3600 / 60);
}

std::size_t display_width(const std::string& text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

// The fields that fit in brief, most important first; then as many of those in full as still
// fit, most important first. So a narrow terminal shows more fields, abbreviated, rather than
// fewer in full.
std::string wrap_note(const std::string& line, int width) {
  const auto limit = static_cast<std::size_t>(width > 20 ? width - 1 : 0);
  if (limit == 0 || display_width(line) <= limit) return line;
  std::string out, row;
  std::size_t pos = 0;
  while (pos < line.size()) {
    auto space = line.find(' ', pos);
    if (space == std::string::npos) space = line.size();
    const auto word = line.substr(pos, space - pos);
    pos = space + 1;
    if (word.empty()) continue;
    if (!row.empty() && display_width(row) + 1 + display_width(word) > limit) {
      out += row + '\n';
      row = "  ";
    }
    if (!row.empty() && row != "  ") row += ' ';
    row += word;
  }
  return out + row;
}

std::string format_progress(const ProgressState& s, int width, Seconds elapsed) {
  const auto all = fields(s, elapsed);
  std::vector<const std::string*> shown(all.size(), nullptr);  // by display position
  const auto limit = width <= 0 ? std::string::npos : static_cast<std::size_t>(width - 1);
  const auto fits = [&] {
    std::vector<const std::string*> texts;
    for (const auto* text : shown)
      if (text) texts.push_back(text);
    return limit == std::string::npos || line_width(texts) <= limit;
  };
  std::vector<std::size_t> by_priority(all.size());
  std::iota(by_priority.begin(), by_priority.end(), 0);
  std::stable_sort(by_priority.begin(), by_priority.end(),
                   [&](std::size_t a, std::size_t b) { return all[a].priority < all[b].priority; });
  for (auto i : by_priority) {
    shown[i] = &all[i].brief;
    if (!fits()) shown[i] = nullptr;
  }
  for (auto i : by_priority) {
    if (!shown[i]) continue;
    shown[i] = &all[i].full;
    if (!fits()) shown[i] = &all[i].brief;
  }
  std::string line;
  for (const auto* text : shown)
    if (text) line += (line.empty() ? "" : std::string(kSeparator)) + *text;
  return line;  // empty on a terminal too narrow for any field: a cut one would say nothing true
}

}  // namespace flotilla::scheduler

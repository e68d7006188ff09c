// Events.cpp — see Events.h.
#include "flotilla/results/Events.h"

#include <charconv>

#include <fmt/format.h>

namespace flotilla::results {
namespace {
constexpr std::string_view kPrefix = "candidate ";
}

EventRecord candidate_event(double time, std::string kind, std::int64_t candidate, std::string_view text) {
  return {time, std::move(kind), fmt::format("{}{}: {}", kPrefix, candidate, text)};
}

std::optional<std::int64_t> event_candidate(const EventRecord& event) {
  const std::string_view detail = event.detail;
  if (!detail.starts_with(kPrefix)) return std::nullopt;
  const auto digits = detail.substr(kPrefix.size());
  std::int64_t id = -1;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), id);
  if (ec != std::errc{} || id < 0) return std::nullopt;
  // The number ends the detail or is followed by its ':' (never "candidate 12abc").
  if (end != digits.data() + digits.size() && *end != ':') return std::nullopt;
  return id;
}

std::set<std::int64_t> decided_candidates(const std::vector<EventRecord>& events) {
  std::set<std::int64_t> decided;
  for (const auto& e : events)
    if (e.kind == "verified" || e.kind == "rolled_back")
      if (auto id = event_candidate(e)) decided.insert(*id);
  return decided;
}

}  // namespace flotilla::results

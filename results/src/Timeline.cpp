// Timeline.cpp — lanes per rank when trials record one, slot lanes packed from intervals when not.
#include "flotilla/results/Timeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace flotilla::results {
namespace {

// Where a trial ran: (host, rank), or nothing known. Known places sort first.
struct Place {
  bool known = false;
  std::string host;
  long rank = 0;
  auto operator<=>(const Place& other) const {
    if (known != other.known) return other.known <=> known;
    if (auto c = host <=> other.host; c != 0) return c;
    return rank <=> other.rank;
  }
  bool operator==(const Place&) const = default;
};

// The rank/host/device columns of /trials came with the MPI worker, which was written alongside
// this file; the requires-expression keeps this file building with and without them. A row from
// a file older than those columns reads as rank 0 with no host: its place is unknown.
template <class Trial>
TrialPlace place_from(const Trial& t) {
  if constexpr (requires {
                  static_cast<long>(t.rank);
                  std::string(t.host);
                  std::string(t.device);
                }) {
    if (!t.host.empty() || t.rank > 0)
      return {.known = true, .host = t.host, .rank = static_cast<long>(t.rank), .device = t.device};
  }
  return {};
}

// Interval partitioning of the trials in `rows`: lane index (from 0) per row, in start order, each
// into the lowest lane free at its start. Returns the number of lanes used.
std::size_t pack(const std::vector<TrialRecord>& trials, std::vector<std::size_t> rows,
                 std::vector<std::size_t>& lane_of) {
  std::stable_sort(rows.begin(), rows.end(), [&](auto a, auto b) { return trials[a].start < trials[b].start; });
  std::vector<double> free_at;  // per lane: when its last task ended
  for (auto row : rows) {
    std::size_t lane = 0;
    while (lane < free_at.size() && free_at[lane] > trials[row].start) ++lane;
    if (lane == free_at.size()) free_at.push_back(0);
    free_at[lane] = trials[row].end;
    lane_of[row] = lane;
  }
  return free_at.size();
}

std::string lane_label(const Place& place, std::size_t slot, std::size_t slots) {
  if (!place.known) return fmt::format("slot {}", slot);
  auto label =
      place.host.empty() ? fmt::format("rank {}", place.rank) : fmt::format("{} rank {}", place.host, place.rank);
  return slots > 1 ? fmt::format("{} slot {}", label, slot) : label;
}

}  // namespace

TrialPlace place_of(const TrialRecord& trial) { return place_from(trial); }

double Timeline::utilisation() const {
  if (lanes.empty() || span <= 0) return 0;
  double busy = 0;
  for (const auto& lane : lanes) busy += lane.busy;
  return std::min(1.0, busy / (span * static_cast<double>(lanes.size())));
}

Timeline build_timeline(const std::vector<TrialRecord>& trials) {
  Timeline tl;
  if (trials.empty()) return tl;
  tl.origin = trials.front().start;
  double last = trials.front().end;
  for (const auto& t : trials) {
    tl.origin = std::min(tl.origin, t.start);
    last = std::max(last, t.end);
  }
  tl.span = last - tl.origin;

  // One group per place; a group whose trials overlap (the local backend runs several slots as
  // "rank 0") gets one lane per concurrent slot.
  std::map<Place, std::vector<std::size_t>> groups;
  for (std::size_t row = 0; row < trials.size(); ++row) {
    const auto where = place_of(trials[row]);
    groups[Place{.known = where.known, .host = where.host, .rank = where.rank}].push_back(row);
  }
  std::vector<std::size_t> lane_of(trials.size()), slot_of(trials.size());
  for (const auto& [place, rows] : groups) {
    const auto first = tl.lanes.size();
    const auto slots = pack(trials, rows, slot_of);
    for (std::size_t s = 0; s < slots; ++s) tl.lanes.push_back({.label = lane_label(place, s, slots)});
    for (auto row : rows) lane_of[row] = first + slot_of[row];
    tl.by_rank = tl.by_rank || place.known;
    tl.ranks += place.known;
  }

  for (std::size_t row = 0; row < trials.size(); ++row) {
    const auto& t = trials[row];
    tl.bars.push_back({.lane = lane_of[row],
                       .trial = row,
                       .candidate = t.candidate,
                       .kind = t.kind,
                       .status = t.status,
                       .start = t.start - tl.origin,
                       .end = t.end - tl.origin});
    tl.lanes[lane_of[row]].busy += std::max(0.0, t.end - t.start);
    ++tl.lanes[lane_of[row]].tasks;
  }
  return tl;
}

}  // namespace flotilla::results

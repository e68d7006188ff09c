// Timeline.cpp — lanes per rank when trials record one, slot lanes packed from intervals when not.
#include "flotilla/results/Timeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <tuple>

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

// `beside_ranks`: other lanes name their rank, so a lane without a place says so (the test gate's
// verdict, decided by the scheduler itself, is recorded as an evaluate trial with no place).
std::string lane_label(const Place& place, std::size_t slot, std::size_t slots, bool beside_ranks) {
  if (!place.known) return (beside_ranks ? "no place recorded, slot " : "slot ") + std::to_string(slot);
  auto label =
      place.host.empty() ? fmt::format("rank {}", place.rank) : fmt::format("{} rank {}", place.host, place.rank);
  return slots > 1 ? fmt::format("{} slot {}", label, slot) : label;
}

}  // namespace

TrialPlace place_of(const TrialRecord& trial) { return place_from(trial); }

namespace {

// The length of [start, end] within the periods (which do not overlap).
double overlap(double start, double end, const std::vector<TimelinePeriod>& periods) {
  double inside = 0;
  for (const auto& p : periods) inside += std::max(0.0, std::min(end, p.end) - std::max(start, p.start));
  return inside;
}

}  // namespace

double Timeline::utilisation(const std::vector<TimelinePeriod>& running) const {
  if (lanes.empty() || span <= 0) return 0;
  const auto periods = running.empty() ? std::vector<TimelinePeriod>{{0, span}} : running;
  double busy = 0;
  for (const auto& bar : bars) busy += overlap(bar.start, bar.end, periods);
  const double time = overlap(0, span, periods);
  return time > 0 ? std::min(1.0, busy / (time * static_cast<double>(lanes.size()))) : 0;
}

bool shared_build_copy(const TrialRecord& trial) {
  if (trial.kind != TrialKind::build) return false;
  for (const auto& m : trial.metrics)
    if (m.name == "built_by") return m.value != static_cast<double>(trial.candidate);
  return false;
}

std::vector<TimelinePeriod> running_periods(const Timeline& timeline, const std::vector<TrialRecord>& trials,
                                            const std::vector<EventRecord>& events) {
  // Each run's start and, when recorded, its end (epoch seconds).
  struct Run {
    double start;
    std::optional<double> end;
  };
  std::vector<Run> runs;
  for (const auto& e : events) {
    if (e.kind == "campaign_started" || e.kind == "campaign_resumed") runs.push_back({e.time, std::nullopt});
    else if ((e.kind == "interrupted" || e.kind == "cancelled" || e.kind == "campaign_finished") && !runs.empty() &&
             !runs.back().end)
      runs.back().end = e.time;
  }
  std::vector<TimelinePeriod> periods;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const double next = i + 1 < runs.size() ? runs[i + 1].start : INFINITY;
    double end = runs[i].start;
    if (runs[i].end) {
      end = *runs[i].end;
    } else {  // no word from it: its last record before the next run
      for (const auto& e : events)
        if (e.time >= runs[i].start && e.time < next) end = std::max(end, e.time);
      for (const auto& t : trials)
        if (t.start >= runs[i].start && t.start < next) end = std::max(end, std::min(t.end, next));
    }
    const double from = std::max(0.0, runs[i].start - timeline.origin);
    const double to = std::min(timeline.span, end - timeline.origin);
    if (to > from) periods.push_back({from, to});
  }
  return periods;
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

  // A confirmation records each interleaved pair with the whole confirmation's start and end:
  // those rows are one task, folded into its first row, not one lane per pair.
  std::vector<std::size_t> runs(trials.size(), 1);
  std::vector<bool> folded(trials.size(), false);
  std::map<std::tuple<std::int64_t, double, double>, std::size_t> confirmations;
  for (std::size_t row = 0; row < trials.size(); ++row) {
    const auto& t = trials[row];
    folded[row] = shared_build_copy(t);  // no task ran for it: the build it copies is drawn
    if (t.kind != TrialKind::confirm) continue;
    auto [it, first] = confirmations.try_emplace({t.candidate, t.start, t.end}, row);
    if (!first) folded[row] = true, ++runs[it->second];
  }

  // One group per place; a group whose trials overlap (the local backend runs several slots as
  // "rank 0") gets one lane per concurrent slot.
  std::map<Place, std::vector<std::size_t>> groups;
  for (std::size_t row = 0; row < trials.size(); ++row) {
    if (folded[row]) continue;
    const auto where = place_of(trials[row]);
    groups[Place{.known = where.known, .host = where.host, .rank = where.rank}].push_back(row);
  }
  std::vector<std::size_t> lane_of(trials.size()), slot_of(trials.size());
  for (const auto& [place, rows] : groups) {
    const auto first = tl.lanes.size();
    const auto slots = pack(trials, rows, slot_of);
    for (std::size_t s = 0; s < slots; ++s) tl.lanes.push_back({.label = lane_label(place, s, slots, tl.by_rank)});
    for (auto row : rows) lane_of[row] = first + slot_of[row];
    tl.by_rank = tl.by_rank || place.known;
    tl.ranks += place.known;
  }

  for (std::size_t row = 0; row < trials.size(); ++row) {
    if (folded[row]) continue;
    const auto& t = trials[row];
    tl.bars.push_back({.lane = lane_of[row],
                       .runs = runs[row],
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

std::vector<TimelineRound> timeline_rounds(const Timeline& timeline, const std::vector<CandidateRecord>& candidates,
                                           const std::vector<EventRecord>& events) {
  std::map<std::int32_t, TimelineRound> rounds;
  for (const auto& e : events) {
    int round = 0;
    // "round 3: 8 candidates (random)", "round 3: proposer 0: ..."; a resumed campaign may
    // propose a round again: the first proposal counts, since its wait began then.
    if ((e.kind != "batch_proposed" && e.kind != "proposals") || std::sscanf(e.detail.c_str(), "round %d:", &round) != 1)
      continue;
    rounds.try_emplace(round, TimelineRound{.round = round, .proposed = e.time - timeline.origin});
  }
  // Drawn bars only: a copy of a shared build carries the start of the build it copies, from an
  // earlier round, and made that round's wait read 0.
  for (const auto& bar : timeline.bars) {
    if (bar.candidate < 0 || static_cast<std::size_t>(bar.candidate) >= candidates.size()) continue;
    const auto it = rounds.find(candidates[static_cast<std::size_t>(bar.candidate)].round);
    if (it == rounds.end()) continue;
    auto& r = it->second;
    if (!r.first_start || bar.start < *r.first_start) r.first_start = bar.start;
  }
  std::vector<TimelineRound> out;
  for (auto& [round, r] : rounds) {
    if (r.first_start) r.wait = std::max(0.0, *r.first_start - r.proposed);
    out.push_back(r);
  }
  return out;
}

}  // namespace flotilla::results

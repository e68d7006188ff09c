// Events.h — journal events about one candidate ("verified", "rolled_back", "confirmed", ...).
//
// The journal (/events) has a kind and a free-text detail; an event about one candidate starts
// its detail with "candidate N: ", and these functions are the only place that writes or reads
// that prefix. A resumed campaign learns from them which decisions it already recorded.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "flotilla/results/Store.h"

namespace flotilla::results {

// An event about `candidate`: its detail reads "candidate N: TEXT".
EventRecord candidate_event(double time, std::string kind, std::int64_t candidate, std::string_view text);

// The candidate an event is about, or nullopt for an event about the campaign (or one whose
// detail does not start with a candidate number).
std::optional<std::int64_t> event_candidate(const EventRecord& event);

// The candidates with a decision in the journal: a "verified" or "rolled_back" event.
std::set<std::int64_t> decided_candidates(const std::vector<EventRecord>& events);

}  // namespace flotilla::results

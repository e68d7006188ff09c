// Provenance.h — what a campaign's results rest on besides its settings: where it ran from, the
// git commit of that directory and whether it had uncommitted changes, and the versions of the
// compilers its commands name. The scheduler records one `provenance` event per run (a start
// or a resume; docs/results-schema.md), so a campaign resumed on another commit says so.
// Pure: the probing is the scheduler's (scheduler/src/Provenance.cpp).
#pragma once

#include <flotilla/results/Store.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace flotilla::results {

struct RunProvenance {
  double time = 0;
  std::string workdir;                 // where the tasks ran
  std::string git_commit;              // empty: not a git work tree (or git missing)
  bool git_dirty = false;              // tracked files differ from the commit
  std::vector<std::pair<std::string, std::string>> tools;  // program, first line of its --version
  std::vector<std::string> env;        // [build] / [explore] / [evaluate] env lines given
};

// The event's JSON, at most 1023 bytes (the /events detail): long texts are cut, and tools
// that do not fit are left out and counted ("tools_left_out").
std::string provenance_detail(const RunProvenance& provenance);
// A `provenance` event read back; nullopt for another kind or a detail that is not its JSON.
std::optional<RunProvenance> parse_provenance(const EventRecord& event);
// Every run's, in order.
std::vector<RunProvenance> provenance_of(const std::vector<EventRecord>& events);

// One line for `results summary`: the last run's commit, dirty state and tools, and a warning
// when runs differ in commit or tool versions (the results then mix code versions). "" when
// none was recorded (files written before provenance was).
std::string provenance_line(const std::vector<RunProvenance>& runs);

}  // namespace flotilla::results

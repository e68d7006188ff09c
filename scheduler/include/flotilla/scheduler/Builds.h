// Builds.h — the build stage's decisions as pure functions (docs/build.md).
//
// A candidate's *build key* is the build command's text with the values of the parameters it
// names, so candidates that differ only in parameters the build does not name share one build.
// Each key has one folder, named by a hash of the key. Invariants kept by plan_builds:
//  - a key is planned at most once, however many candidates of the batch need it (the first
//    one runs it; the others record its outcome as theirs);
//  - a key with a usable recorded build (one that succeeded and whose folder still exists, or
//    one that failed) is never planned again: the candidate shares that outcome.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace flotilla::scheduler {

// "COMMAND\nname=value\n..." over the placeholders of `command` that `values` holds, sorted by
// name. `{build_dir}` is derived from the key, so it is never part of it.
std::string build_key(std::string_view command, const std::map<std::string, std::string, std::less<>>& values);

// The key's folder name: 16 hex digits of its 64-bit FNV-1a hash (stable across runs and hosts).
std::string build_folder_name(std::string_view key);

// A candidate whose build is still to be recorded (attempt: its next attempt number).
struct BuildNeed {
  std::int64_t candidate = 0;
  std::string key;
  int attempt = 0;
  bool operator==(const BuildNeed&) const = default;
};

// A recorded build of a key that still holds: it failed, or it succeeded and its folder exists.
struct KnownBuild {
  std::int64_t candidate = 0;  // whose build trial it is
  bool ok = false;
};

struct BuildPlan {
  struct Build {
    std::string key;
    std::vector<BuildNeed> candidates;  // the first runs it; each gets its outcome
  };
  struct Shared {
    BuildNeed need;
    std::int64_t from = 0;  // the candidate whose recorded build this one shares
  };
  std::vector<Build> run;      // in the order of each key's first candidate
  std::vector<Shared> shared;  // candidates whose key has a known build
};

BuildPlan plan_builds(const std::vector<BuildNeed>& needs, const std::map<std::string, KnownBuild>& known);

}  // namespace flotilla::scheduler

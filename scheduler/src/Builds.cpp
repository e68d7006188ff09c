// Builds.cpp — build keys, folder names and the plan of a batch's builds (Builds.h).
#include "flotilla/scheduler/Builds.h"

#include <fmt/format.h>

#include "flotilla/jobs/Command.h"

namespace flotilla::scheduler {

std::string build_key(std::string_view command, const std::map<std::string, std::string, std::less<>>& values) {
  std::string key(command);
  key += '\n';
  for (const auto& name : jobs::placeholders(command))  // sorted and unique
    if (auto it = values.find(name); it != values.end() && name != "build_dir")
      key += fmt::format("{}={}\n", name, it->second);
  return key;
}

std::string build_folder_name(std::string_view key) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;  // FNV-1a 64: no library, the same on every host
  for (unsigned char c : key) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return fmt::format("{:016x}", hash);
}

BuildPlan plan_builds(const std::vector<BuildNeed>& needs, const std::map<std::string, KnownBuild>& known) {
  BuildPlan plan;
  std::map<std::string, std::size_t> planned;  // key -> index in plan.run
  for (const auto& need : needs) {
    if (auto it = known.find(need.key); it != known.end()) {
      plan.shared.push_back({need, it->second.candidate});
      continue;
    }
    auto [slot, added] = planned.try_emplace(need.key, plan.run.size());
    if (added) plan.run.push_back({need.key, {}});
    plan.run[slot->second].candidates.push_back(need);
  }
  return plan;
}

}  // namespace flotilla::scheduler

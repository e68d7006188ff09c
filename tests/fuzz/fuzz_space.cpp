// fuzz_space — parameter specs and constraints (search/include/flotilla/search/Space.h):
// parse_parameter, Space::add_parameter, Space::add_constraint (muparser) and
// parse_configuration, then the compiled constraints evaluated on the first grid points.
// Input: lines as in a campaign file's [space] section, "param = SPEC", "constraint = EXPR",
// and "config = a=1 b=x" (a configuration to parse against the space); other lines are skipped.
// Normal results: SpaceError. Invariant: a feasible grid point's canonical text parses back to the same text.
#include <algorithm>
#include <vector>

#include "FuzzUtil.h"
#include "flotilla/search/Space.h"

using namespace flotilla;

namespace {

std::string_view value_after(std::string_view line, std::string_view key) {
  if (!fuzz::starts_with(line, key)) return {};
  line.remove_prefix(key.size());
  while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
  if (line.empty() || line.front() != '=') return {};
  line.remove_prefix(1);
  while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
  return line;
}

void check_grid_points(const search::Space& space) {
  const std::uint64_t points = std::min<std::uint64_t>(space.grid_size(), 8);
  for (std::uint64_t i = 0; i < points; ++i) {
    const search::Configuration config = space.grid_point(i);
    if (!space.feasible(config)) continue;  // parse_configuration refuses those
    const std::string text = space.to_text(config);
    std::string again;
    try {
      again = space.to_text(space.parse_configuration(text));
    } catch (const search::SpaceError& error) {
      std::fprintf(stderr, "'%s': %s\n", text.c_str(), error.what());
      FUZZ_CHECK(false, "a grid point's canonical text does not parse back");
    }
    FUZZ_CHECK(again == text, "a grid point's canonical text changes when parsed back");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input = fuzz::as_text(data, size);
  search::Space space;
  std::vector<std::string_view> configs;
  bool constrained = false;
  while (!input.empty()) {
    const std::size_t end = std::min(input.find('\n'), input.size());
    const std::string_view line = input.substr(0, end);
    input.remove_prefix(std::min(end + 1, input.size()));
    try {
      if (auto spec = value_after(line, "param"); !spec.empty()) {
        if (constrained) continue;  // Space.h: parameters come before constraints
        space.add_parameter(search::parse_parameter(spec));
      } else if (auto expression = value_after(line, "constraint"); !expression.empty()) {
        constrained = true;
        space.add_constraint(std::string(expression));
      } else if (auto config = value_after(line, "config"); !config.empty()) {
        configs.push_back(config);
      }
    } catch (const search::SpaceError&) {
    }
  }
  for (auto text : configs) {
    try {
      (void)space.feasible(space.parse_configuration(text));
    } catch (const search::SpaceError&) {
    }
  }
  check_grid_points(space);
  (void)space.fingerprint();
  return 0;
}

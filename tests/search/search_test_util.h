// search_test_util.h — small spaces with known structure, shared by the search tests.
#pragma once

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "flotilla/search/Strategy.h"

namespace flotilla::search::test {

inline Space small_space() {
  Space s;
  s.add_parameter(parse_parameter("x: int: 1..8"));
  s.add_parameter(parse_parameter("y: int: 1..8"));
  s.add_constraint("x + y <= 9");  // 36 feasible points of 64
  return s;
}

// 12 x 12 x 4 x 3 grid with a known constraint (a + b <= 20: 1,548 of 1,728 points feasible).
inline Space structured_space() {
  Space s;
  s.add_parameter(parse_parameter("a: int: 1..12"));
  s.add_parameter(parse_parameter("b: int: 1..12"));
  s.add_parameter(parse_parameter("c: ordinal: s,m,l,xl"));
  s.add_parameter(parse_parameter("d: enum: p,q,r"));
  s.add_constraint("a + b <= 20");
  return s;
}

// A smooth bowl with its minimum 1.0 at a=9 b=4 c=l d=q, and a hidden constraint: every
// configuration with a + b >= 16 fails (like a kernel that runs out of registers): about a
// quarter of the feasible space, beginning three steps from the optimum.
inline std::optional<double> structured_objective(const Configuration& c) {
  if (c[0] + c[1] >= 16) return std::nullopt;
  double bowl = 0.08 * (c[0] - 9) * (c[0] - 9) + 0.05 * (c[1] - 4) * (c[1] - 4) + 0.3 * std::abs(c[2] - 2);
  return 1.0 + bowl + (c[3] == 1 ? 0.0 : 0.4) + 0.01 * std::abs(c[0] - 2 * c[1] - 1);
}

// Asks `budget` configurations in batches, telling each the structured objective; returns them.
inline std::vector<std::string> drive(Strategy& strategy, const Space& space, std::size_t budget, std::size_t batch) {
  std::vector<std::string> out;
  while (out.size() < budget) {
    auto configs = strategy.ask(std::min(batch, budget - out.size()));
    if (configs.empty()) break;
    for (const auto& c : configs) {
      out.push_back(space.to_text(c));
      strategy.tell(c, structured_objective(c));
    }
  }
  return out;
}

}  // namespace flotilla::search::test

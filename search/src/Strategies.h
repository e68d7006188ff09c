// Strategies.h — factories of the built-in strategies, used only by the registry.
#pragma once

#include <cstdint>
#include <memory>

#include "flotilla/search/Strategy.h"

namespace flotilla::search {

std::unique_ptr<Strategy> make_grid_strategy(const Space& space);
std::unique_ptr<Strategy> make_random_strategy(const Space& space, std::uint64_t seed);

}  // namespace flotilla::search

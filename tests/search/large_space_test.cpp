// Every strategy on spaces whose parameters have millions of levels (issue 32, finding 12:
// eight parameters 1..9999999 under the default strategy reached 5.5 GB and std::bad_alloc).
// Each case runs in a child process (a gtest death test) whose address space is capped at
// 1 GiB and CPU time at 60 s, so a strategy that enumerates what it samples fails with
// bad_alloc, or is killed, instead of swapping a shared machine or hanging the suite. The
// cases need a few MB and well under a second each. Sanitizer runtimes reserve terabytes of
// address space for shadow memory: there the memory cap is left off.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

#include "flotilla/search/Strategy.h"

using namespace flotilla::search;

namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

void cap_this_process() {
  constexpr rlim_t kMemory = rlim_t{1} << 30, kCpuSeconds = 60;
  const rlimit memory{kMemory, kMemory}, cpu{kCpuSeconds, kCpuSeconds};
  if (!kSanitized && setrlimit(RLIMIT_AS, &memory) != 0) std::perror("setrlimit(RLIMIT_AS)"), std::exit(2);
  if (setrlimit(RLIMIT_CPU, &cpu) != 0) std::perror("setrlimit(RLIMIT_CPU)"), std::exit(2);
}

// Whether a value is one the parameter allows: inside a real parameter's range, on an
// evenly stepped int parameter's grid (inside its bounds and on its step).
bool allowed(const Parameter& p, double v) {
  if (p.continuous()) return v >= p.lo && v <= p.hi;
  const double first = p.grid_value(0), step = p.grid_value(1) - first, last = p.grid_value(p.grid_size() - 1);
  return v >= first && v <= last && std::fmod(v - first, step) == 0;
}

// A bowl in the unit cube, every fifth configuration told as failed (the failure model keeps
// counts per level of every parameter).
std::optional<double> objective(const Space& space, const Configuration& c, std::size_t told) {
  if (told % 5 == 4) return std::nullopt;
  double sum = 1.0;
  for (std::size_t d = 0; d < c.size(); ++d) {
    const auto& p = space.parameters()[d];
    const double lo = p.grid_value(0), hi = p.grid_value(p.grid_size() - 1);
    const double u = (c[d] - lo) / (hi - lo) - 0.3;
    sum += static_cast<double>(d + 1) * u * u;
  }
  return sum;
}

// Every registered strategy asks `rounds` batches of 8 and is told each proposal. Returns what
// went wrong, or "" when nothing did: a batch not of `expected` configurations, a repeat, an
// infeasible configuration or a value the space does not allow.
std::string run_every_strategy(const Space& space, int rounds, std::size_t expected) {
  std::string problems;
  for (auto name : strategy_names()) {
    auto strategy = make_strategy({.name = std::string(name), .seed = 3, .maximize = false}, space);
    std::set<Configuration> proposed;
    for (int round = 0; round < rounds; ++round) {
      const auto batch = strategy->ask(8);
      if (batch.size() != expected) problems += fmt::format("{}: round {} gave {} of 8\n", name, round, batch.size());
      for (const auto& c : batch) {
        if (!proposed.insert(c).second) problems += fmt::format("{}: {} proposed twice\n", name, space.to_text(c));
        if (!space.feasible(c)) problems += fmt::format("{}: {} is infeasible\n", name, space.to_text(c));
        for (std::size_t d = 0; d < c.size(); ++d)
          if (!allowed(space.parameters()[d], c[d]))
            problems += fmt::format("{}: {} is not a value of {}\n", name, c[d], space.parameters()[d].name);
        strategy->tell(c, objective(space, c, proposed.size()));
      }
    }
  }
  return problems;
}

// Builds the space (parameters p0, p1, ...) and runs the strategies in a capped child, which
// exits 0 when all went well, else prints why.
void expect_every_strategy(const std::vector<std::string>& specs, const std::vector<std::string>& constraints,
                           int rounds, std::size_t expected) {
  EXPECT_EXIT(
      {
        cap_this_process();
        Space space;
        for (std::size_t i = 0; i < specs.size(); ++i)
          space.add_parameter(parse_parameter(fmt::format("p{}: {}", i, specs[i])));
        for (const auto& c : constraints) space.add_constraint(c);
        const auto problems = run_every_strategy(space, rounds, expected);
        std::fputs(problems.c_str(), stderr);
        std::exit(problems.empty() ? 0 : 1);
      },
      testing::ExitedWithCode(0), "");
}

const std::vector<std::string> kEightTenMillions(8, "int: 1..9999999");

}  // namespace

// The finding itself: 8 x 10^7 levels, 3 rounds of 8 from every strategy.
TEST(LargeSpace, EveryStrategyProposesDistinctFeasibleValuesOnEightParametersOfTenMillionLevels) {
  expect_every_strategy(kEightTenMillions, {}, 3, 8);
}

// A stepped range of 10^7 values, real parameters with 10^6 grid points (linear and log), and
// a constraint that rejects 99 configurations in 100 (on the last parameter, the one the grid
// walk varies fastest: on another, the walk would meet its first feasible point only after
// 6 x 10^7 infeasible ones or more).
TEST(LargeSpace, EveryStrategyCopesWithSteppedRangesHugeRealGridsAndASparseConstraint) {
  expect_every_strategy(
      {"int: 0..99999990 step 10", "int: 0..99999990 step 10", "int: 1..9999999", "int: 1..9999999",
       "real: 0..1 points 1000000", "real: 1e-6..1 log points 1000000", "int: 1..9999999", "int: 1..9999999"},
      {"p7 % 100 == 7"}, 3, 8);
}

// A constraint that holds nowhere on a space too large to enumerate: every strategy gives up
// after bounded tries (Space::kMaxRejections) and returns nothing, rather than search forever.
TEST(LargeSpace, EveryStrategyEndsOnAConstraintThatHoldsNowhere) {
  expect_every_strategy(kEightTenMillions, {"p0 < 0"}, 1, 0);
}

// space_enumeration — time to enumerate the feasible points of a constrained 10^6-point space.
//
// Measures Space::for_each_feasible (odometer: only changed digits re-decoded, constraints
// compiled once by muparser) against a named baseline measured in the same run: decoding every
// grid index from scratch with Space::grid_point and checking Space::feasible. Best of 5 runs
// each (the machine is shared and noisy). Ends with one JSON line of the figures.
// The correctness half: both ways must count the same feasible points; otherwise it exits 1.
//   ./build/bench/space_enumeration [--repeats N]   (full size: 5; the ctest
//   bench_space_enumeration_agrees runs 1). Runs: bench/search/RESULTS.md ("Enumerating a space").
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "flotilla/search/Space.h"

using namespace flotilla::search;
using Clock = std::chrono::steady_clock;

namespace {

Space make_space(int constraints) {
  Space s;
  s.add_parameter(parse_parameter("tile_x: int: 1..100"));
  s.add_parameter(parse_parameter("tile_y: int: 1..100"));
  s.add_parameter(parse_parameter("unroll: int: 1..50"));
  s.add_parameter(parse_parameter("precision: enum: double,float"));
  const char* exprs[] = {"tile_x * tile_y <= 4096", "unroll <= tile_x || precision == float", "(tile_x + unroll) % 2 == 0"};
  for (int i = 0; i < constraints; ++i) s.add_constraint(exprs[i]);
  return s;
}

int repeats = 5;

template <class F>
double best_seconds(F&& f) {
  double best = 1e9;
  for (int rep = 0; rep < repeats; ++rep) {
    auto t0 = Clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--repeats" && std::atoi(argv[2]) > 0)
    repeats = std::atoi(argv[2]);
  else if (argc != 1)
    return std::fprintf(stderr, "usage: space_enumeration [--repeats N]\n"), 2;
  std::string json = "{\"bench\":\"space_enumeration\",\"points\":1000000";
  for (int constraints : {1, 3}) {
    auto space = make_space(constraints);
    // The count of feasible points and the sum of their grid indices: the same points, not just as many.
    std::uint64_t feasible = 0, feasible_baseline = 0, sum = 0, sum_baseline = 0;
    double odometer = best_seconds([&] {
      feasible = sum = 0;
      space.for_each_feasible([&](std::uint64_t i) { ++feasible, sum += i; });
    });
    double baseline = best_seconds([&] {
      feasible_baseline = sum_baseline = 0;
      for (std::uint64_t i = 0; i < space.grid_size(); ++i)
        if (space.feasible(space.grid_point(i))) ++feasible_baseline, sum_baseline += i;
    });
    if (feasible != feasible_baseline || sum != sum_baseline) {
      std::fprintf(stderr,
                   "space_enumeration: %d constraint(s): for_each_feasible visited %llu points (index sum %llu), "
                   "the baseline found %llu (index sum %llu)\n",
                   constraints, (unsigned long long)feasible, (unsigned long long)sum,
                   (unsigned long long)feasible_baseline, (unsigned long long)sum_baseline);
      return 1;
    }
    std::printf("%d constraint(s): %llu of %llu points feasible; for_each_feasible %.3f s, baseline (grid_point + feasible) %.3f s, %.2fx\n",
                constraints, (unsigned long long)feasible, (unsigned long long)space.grid_size(), odometer, baseline,
                baseline / odometer);
    char buf[256];
    std::snprintf(buf, sizeof buf, ",\"c%d_feasible\":%llu,\"c%d_seconds\":%.4f,\"c%d_baseline_seconds\":%.4f,\"c%d_speedup\":%.2f",
                  constraints, (unsigned long long)feasible, constraints, odometer, constraints, baseline, constraints,
                  baseline / odometer);
    json += buf;
  }
  std::printf("%s}\n", json.c_str());
}

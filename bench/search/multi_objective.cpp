// multi_objective — how much of a known Pareto front `parego`, `nsga2` and `random` find on
// synthetic two-objective spaces, as the hypervolume of the front found over that of the true
// front (1 = all of it), at 50, 100 and 200 evaluations.
//
// usage: search_multi_objective [--repeats 20] [--seed 1] [--strategies parego,nsga2,random]
// Each repeat runs a strategy one configuration at a time (ask(1), tell_objectives) to 200
// evaluations and reads the front off at 50, 100 and 200 (strategies are not told the budget, so
// a prefix of a run is a shorter run). The reference point is the true front's nadir plus a tenth
// of its range in each objective. Prints a table per space (mean and 10th percentile over
// repeats: the unlucky campaign) and ends with one JSON line. A function of the seed alone.
// No recorded space has two objectives that trade off (docs/search.md), so both are synthetic:
//  - zdt1: ZDT1 on a 32 x 16 x 8 grid (4,096 configurations, a convex front of 32);
//  - tiles: a tile-size trade-off, time against energy, over tile_x and tile_y (12 sizes from 1
//    to 64), unroll 1..4 and a vector width (1 to 128, powers of two) under tile_x * tile_y *
//    vector <= 16384, with a rugged part (the front is computed by brute force).
// The correctness half: the true front is every feasible point's, so no run may find more of it
// (a ratio above 1), and a longer run is a shorter one plus more points, so a run's ratio never
// falls from 50 to 100 to 200 evaluations. Either broken exits 1 naming the run. A small run
// (ctest bench_search_multi_objective): search_multi_objective --repeats 2. Full size: no
// arguments; runs in bench/search/RESULTS.md ("`parego` and several objectives").
#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "Pareto.h"
#include "flotilla/search/Strategy.h"

using namespace flotilla::search;

namespace {

struct Problem {
  std::string name;
  Space space;
  std::vector<double> (*objectives)(const Configuration&);
};

std::vector<double> zdt1(const Configuration& c) {
  const double f1 = c[0] / 31.0, g = 1.0 + 9.0 * (c[1] / 15.0 + c[2] / 7.0) / 2.0;
  return {f1, g * (1.0 - std::sqrt(f1 / g))};
}

// Bigger tiles reuse more data (faster) but spill registers past 256 elements; unrolling and
// wider vectors help time and cost energy; energy grows with the tile's footprint and the time.
std::vector<double> tiles(const Configuration& c) {
  const double area = c[0] * c[1], unroll = c[2], width = c[3];
  const double spill = area > 256 ? 0.004 * (area - 256) : 0.0;
  const double time = (1.0 + 8.0 / std::sqrt(area) + spill + 0.5 / unroll + 0.05 * std::abs(std::sin(c[0] + 2.0 * c[1]))) *
                      (1.0 + 0.3 / width);
  const double energy = time * (0.6 + 0.002 * area + 0.15 * unroll) * (1.0 + 0.01 * width);
  return {time, energy};
}

std::vector<Problem> problems() {
  std::vector<Problem> out;
  Space z;
  z.add_parameter(parse_parameter("x1: int: 0..31"));
  z.add_parameter(parse_parameter("x2: int: 0..15"));
  z.add_parameter(parse_parameter("x3: int: 0..7"));
  out.push_back({"zdt1", std::move(z), zdt1});
  Space t;
  t.add_parameter(parse_parameter("tile_x: int: 1,2,3,4,6,8,12,16,24,32,48,64"));
  t.add_parameter(parse_parameter("tile_y: int: 1,2,3,4,6,8,12,16,24,32,48,64"));
  t.add_parameter(parse_parameter("unroll: int: 1..4"));
  t.add_parameter(parse_parameter("vector: int: 1,2,4,8,16,32,64,128"));
  t.add_constraint("tile_x * tile_y * vector <= 16384");
  out.push_back({"tiles", std::move(t), tiles});
  return out;
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t repeats = 20;
  std::uint64_t seed = 1;
  std::vector<std::string> strategies = {"parego", "nsga2", "random"};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--repeats") repeats = std::stoul(value);
    else if (flag == "--seed") seed = std::stoull(value);
    else if (flag == "--strategies") {
      strategies.clear();
      std::stringstream ss(value);
      for (std::string s; std::getline(ss, s, ',');) strategies.push_back(s);
    } else {
      std::cerr << "usage: search_multi_objective [--repeats N] [--seed S] [--strategies a,b]\n";
      return 2;
    }
  }
  const std::vector<std::size_t> budgets = {50, 100, 200};
  nlohmann::ordered_json out;
  out["bench"] = "search_multi_objective";
  out["repeats"] = repeats;
  out["seed"] = seed;
  for (const auto& problem : problems()) {
    std::vector<std::vector<double>> all;
    problem.space.for_each_feasible([&](std::uint64_t i) { all.push_back(problem.objectives(problem.space.grid_point(i))); });
    std::vector<std::vector<double>> front;
    const auto fronts = pareto_fronts(all);  // kept: a range-for over .front() of a temporary dangles
    for (auto i : fronts.front()) front.push_back(all[i]);
    std::vector<double> reference(2);
    for (std::size_t m = 0; m < 2; ++m) {
      auto [lo, hi] = std::minmax_element(front.begin(), front.end(), [m](const auto& a, const auto& b) { return a[m] < b[m]; });
      reference[m] = (*hi)[m] + 0.1 * ((*hi)[m] - (*lo)[m]);
    }
    const double best = hypervolume(front, reference);
    fmt::print("{}: {} configurations, a true front of {}; hypervolume found / true, mean (p10) at 50 / 100 / 200\n", problem.name,
               all.size(), front.size());
    for (const auto& name : strategies) {
      std::vector<std::vector<double>> ratios(budgets.size());
      for (std::size_t r = 0; r < repeats; ++r) {
        auto s = make_strategy({.name = name, .seed = seed * 1000 + r, .maximize = false}, problem.space);
        std::vector<std::vector<double>> told;
        double last = 0;
        for (std::size_t n = 1; n <= budgets.back(); ++n) {
          for (const auto& c : s->ask(1)) told.push_back(problem.objectives(c)), s->tell_objectives(c, told.back());
          for (std::size_t b = 0; b < budgets.size(); ++b) {
            if (n != budgets[b]) continue;
            const double ratio = hypervolume(told, reference) / best;
            if (ratio > 1 + 1e-9 || ratio < last - 1e-12) {
              std::cerr << fmt::format("search_multi_objective: {} on {}, repeat {}: hypervolume ratio {} at {} "
                                       "evaluations (after {}): more than the true front, or less than a prefix\n",
                                       name, problem.name, r, ratio, n, last);
              return 1;
            }
            ratios[b].push_back(last = ratio);
          }
        }
      }
      nlohmann::ordered_json row;
      std::string line = fmt::format("  {:<8}", name);
      for (std::size_t b = 0; b < budgets.size(); ++b) {
        double mean = 0;
        for (double v : ratios[b]) mean += v / static_cast<double>(ratios[b].size());
        const double p10 = quantile(ratios[b], 0.1);
        row[std::to_string(budgets[b])] = {{"mean", mean}, {"p10", p10}};
        line += fmt::format(" {:.3f} ({:.3f})", mean, p10);
      }
      fmt::print("{}\n", line);
      out["spaces"][problem.name][name] = row;
    }
  }
  std::cout << out.dump() << "\n";
  return 0;
}

// ask_cost — the CPU cost of one `ask` of a strategy after N evaluations (default: the default
// strategy, `bayes`, at 100, 200 and 500), replayed on recorded spaces, with its spread over
// repeats; the uniform `random` strategy is measured in the same run as the floor.
//
// usage: search_ask_cost [SPACES_DIR] [--strategy NAME] [--repeats N] [--seed S]
//                        [--at 100,200,500] [--spaces id1,id2] [--target-ms 50] [--prefill]
// Each repeat replays the strategy one configuration at a time (ask(1), then tell) up to the
// largest N, and times (this thread's CPU clock) the ask made when exactly N outcomes have been
// told, and the mean of the asks at N-4 .. N (one ask may re-choose the model's
// hyperparameters, which costs more than the others; the mean shows the steady cost). The
// figures are the median, the worst and the best over repeats, per space and over every space,
// and the costliest single ask of each run (where the model's hyperparameters are re-chosen).
// Ends with one JSON line; "within_target" says whether the worst ask at the largest N over
// every space and repeat stayed under --target-ms.
// --prefill (issue 35: the ask at 1,000 and 10,000 recorded evaluations, as a resumed campaign
// makes it): for each N, a fresh strategy is told N-4 configurations drawn at random (seeded) from
// the space without asking, as a resume tells the recorded outcomes, then asks and is told 5 more;
// the ask at N is the last of them, the mean is over the 5 (the first re-chooses the model's
// hyperparameters), the costliest is the worst of the 5. Spaces must hold more than N.
// The correctness half: every timed ask must return one configuration that is feasible and was
// never asked before (Strategy.h's contract), or the time is not that of a real ask; otherwise
// it exits 1 naming the space and the ask. A small run (ctest bench_search_ask_cost):
//   search_ask_cost tests/search/data --at 20,40 --repeats 1
// Full size: ./build/bench/search_ask_cost ../shared/data/spaces; runs in bench/search/RESULTS.md ("Cost of an ask").
#include <time.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <unordered_set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "flotilla/search/Replay.h"
#include "flotilla/search/Strategy.h"

using namespace flotilla::search;
namespace fs = std::filesystem;

namespace {

double thread_cpu_ms() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return 1e3 * static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_nsec);
}

struct Spread {
  double median = 0, min = 0, max = 0;
};

Spread spread(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  return {n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]), v.front(), v.back()};
}

// One repeat: for each N in `at`, {the ask at N, the mean of the asks at N-4..N} in ms; and in
// `worst` the costliest ask of the whole run up to the largest N.
std::vector<std::pair<double, double>> one_repeat(const RecordedSpace& space, const std::string& strategy_name,
                                                  std::uint64_t seed, const std::vector<std::size_t>& at, double* worst = nullptr) {
  auto strategy = make_strategy({.name = strategy_name, .seed = seed, .maximize = space.maximize()}, space.space());
  const std::size_t last = at.back();
  std::vector<double> cost(last + 1, 0.0);  // cost[k]: the ask made after k outcomes
  std::size_t told = 0;
  std::unordered_set<Configuration, ConfigurationHash> asked;
  for (; told <= last; ++told) {
    const double before = thread_cpu_ms();
    auto batch = strategy->ask(1);
    cost[told] = thread_cpu_ms() - before;
    if (batch.empty()) break;
    if (batch.size() != 1 || !space.space().feasible(batch.front()) || !asked.insert(batch.front()).second)
      throw std::runtime_error(fmt::format("{}: ask {} of '{}' returned {} configuration(s), not one new and feasible",
                                           space.source(), told + 1, strategy_name, batch.size()));
    auto value = space.objective(batch.front());
    if (value) strategy->tell(batch.front(), *value);
    else strategy->tell(batch.front(), space.failure(batch.front()));
  }
  if (worst) *worst = *std::max_element(cost.begin(), cost.begin() + static_cast<long>(std::min(told, last) + 1));
  std::vector<std::pair<double, double>> out;
  for (auto n : at) {
    if (n > told) throw std::runtime_error(fmt::format("{}: the space ran out before {} evaluations", space.source(), n));
    double sum = 0;
    const std::size_t from = n >= 4 ? n - 4 : 0;
    for (std::size_t k = from; k <= n; ++k) sum += cost[k];
    out.emplace_back(cost[n], sum / static_cast<double>(n - from + 1));
  }
  return out;
}

// --prefill: per N, told N-4 random outcomes, then 5 timed asks (the last at N); `worst` as above.
std::vector<std::pair<double, double>> prefilled_repeat(const RecordedSpace& space, const std::string& strategy_name,
                                                        std::uint64_t seed, const std::vector<std::size_t>& at,
                                                        double* worst = nullptr) {
  auto configs = space.configurations();
  std::mt19937_64 rng(seed);
  std::shuffle(configs.begin(), configs.end(), rng);
  std::vector<std::pair<double, double>> out;
  if (worst) *worst = 0;
  for (auto n : at) {
    if (n + 1 > configs.size()) throw std::runtime_error(fmt::format("{}: too few configurations for {}", space.source(), n));
    auto strategy = make_strategy({.name = strategy_name, .seed = seed, .maximize = space.maximize()}, space.space());
    const std::size_t first = n >= 4 ? n - 4 : 0;
    for (std::size_t k = 0; k < first; ++k) {
      auto value = space.objective(configs[k]);
      if (value) strategy->tell(configs[k], *value);
      else strategy->tell(configs[k], space.failure(configs[k]));
    }
    double sum = 0, last = 0;
    for (std::size_t k = first; k <= n; ++k) {
      const double before = thread_cpu_ms();
      auto batch = strategy->ask(1);
      last = thread_cpu_ms() - before;
      sum += last;
      if (worst) *worst = std::max(*worst, last);
      if (batch.size() != 1 || !space.space().feasible(batch.front()) || strategy->history().size() != k)
        throw std::runtime_error(fmt::format("{}: ask {} of '{}' returned {} configuration(s), not one new and feasible",
                                             space.source(), k + 1, strategy_name, batch.size()));
      auto value = space.objective(batch.front());
      if (value) strategy->tell(batch.front(), *value);
      else strategy->tell(batch.front(), space.failure(batch.front()));
      if (strategy->history().size() != k + 1)
        throw std::runtime_error(fmt::format("{}: ask {} of '{}' returned a configuration told before", space.source(),
                                             k + 1, strategy_name));
    }
    out.emplace_back(last, sum / static_cast<double>(n - first + 1));
  }
  return out;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string s; std::getline(in, s, ',');) out.push_back(s);
  return out;
}

}  // namespace

int main(int argc, char** argv) try {
  fs::path dir = "../shared/data/spaces";
  std::string strategy = "bayes-genetic";  // the default
  std::size_t repeats = 5;
  std::uint64_t seed = 1;
  double target_ms = 50;
  std::vector<std::size_t> at = {100, 200, 500};
  std::vector<std::string> only;
  bool prefill = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--strategy") strategy = value();
    else if (a == "--repeats") repeats = std::stoul(value());
    else if (a == "--seed") seed = std::stoull(value());
    else if (a == "--target-ms") target_ms = std::stod(value());
    else if (a == "--spaces") only = split_list(value());
    else if (a == "--prefill") prefill = true;
    else if (a == "--at") {
      at.clear();
      for (const auto& s : split_list(value())) at.push_back(std::stoul(s));
      std::sort(at.begin(), at.end());
    } else dir = a;
  }
  std::vector<fs::path> files;
  if (fs::is_directory(dir))
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".csv" && (only.empty() || std::find(only.begin(), only.end(), e.path().stem().string()) != only.end()))
        files.push_back(e.path());
  std::sort(files.begin(), files.end());
  if (files.empty() || at.empty() || repeats == 0) {
    std::cerr << fmt::format("search_ask_cost: no <id>.csv spaces in '{}', or nothing to measure\n", dir.string());
    return 1;
  }
  nlohmann::ordered_json json;
  json["bench"] = "search_ask_cost";
  json["strategy"] = strategy;
  json["repeats"] = repeats;
  json["seed"] = seed;
  json["at"] = at;
  json["prefill"] = prefill;
  std::cout << fmt::format("CPU ms of one ask(1) of '{}' after N evaluations, {} repeats: median [min, max] over repeats\n",
                           strategy, repeats);
  std::vector<std::vector<double>> all_at(at.size()), all_mean(at.size());
  std::vector<double> baseline, all_worst;
  for (const auto& file : files) {
    auto space = load_recorded_space(file);
    const auto id = file.stem().string();
    if (space.size() <= at.back()) {
      std::cout << fmt::format("{}: {} configurations, too few for {} evaluations: skipped\n", id, space.size(), at.back());
      continue;
    }
    std::vector<std::vector<double>> v_at(at.size()), v_mean(at.size());
    std::vector<double> v_worst;
    for (std::size_t r = 0; r < repeats; ++r) {
      double worst = 0;
      auto costs = prefill ? prefilled_repeat(space, strategy, seed + r, at, &worst)
                           : one_repeat(space, strategy, seed + r, at, &worst);
      v_worst.push_back(worst), all_worst.push_back(worst);
      for (std::size_t k = 0; k < at.size(); ++k) {
        v_at[k].push_back(costs[k].first), v_mean[k].push_back(costs[k].second);
        all_at[k].push_back(costs[k].first), all_mean[k].push_back(costs[k].second);
      }
      baseline.push_back(prefill ? prefilled_repeat(space, "random", seed + r, {at.back()}).front().second
                                 : one_repeat(space, "random", seed + r, {at.back()}).front().second);
    }
    std::cout << fmt::format("{} ({} configurations)\n", id, space.size());
    for (std::size_t k = 0; k < at.size(); ++k) {
      auto s = spread(v_at[k]), m = spread(v_mean[k]);
      std::cout << fmt::format("  N={:<4} ask {:8.2f} [{:.2f}, {:.2f}]   mean of 5 asks {:8.2f} [{:.2f}, {:.2f}]\n", at[k],
                               s.median, s.min, s.max, m.median, m.min, m.max);
      json["spaces"][id][std::to_string(at[k])] = {{"median_ms", s.median}, {"min_ms", s.min}, {"max_ms", s.max},
                                                  {"mean5_median_ms", m.median}, {"mean5_max_ms", m.max}};
    }
    auto w = spread(v_worst);
    std::cout << fmt::format("  costliest ask of a run to {}: {:.2f} [{:.2f}, {:.2f}]\n", at.back(), w.median, w.min, w.max);
    json["spaces"][id]["run_max"] = {{"median_ms", w.median}, {"max_ms", w.max}};
  }
  if (baseline.empty()) {
    std::cerr << fmt::format("search_ask_cost: no space in '{}' has more than {} configurations\n", dir.string(), at.back());
    return 1;
  }
  std::cout << "every space\n";
  for (std::size_t k = 0; k < at.size(); ++k) {
    auto s = spread(all_at[k]), m = spread(all_mean[k]);
    std::cout << fmt::format("  N={:<4} ask {:8.2f} [{:.2f}, {:.2f}]   mean of 5 asks {:8.2f} [{:.2f}, {:.2f}]\n", at[k], s.median,
                             s.min, s.max, m.median, m.min, m.max);
    json["all"][std::to_string(at[k])] = {{"median_ms", s.median}, {"min_ms", s.min}, {"max_ms", s.max},
                                          {"mean5_median_ms", m.median}, {"mean5_max_ms", m.max}};
  }
  auto w = spread(all_worst);
  std::cout << fmt::format("  costliest ask of a run to {}: {:.2f} [{:.2f}, {:.2f}]\n", at.back(), w.median, w.min, w.max);
  json["all"]["run_max"] = {{"median_ms", w.median}, {"max_ms", w.max}};
  auto b = spread(baseline);
  std::cout << fmt::format("baseline 'random' at N={}: {:.3f} ms [{:.3f}, {:.3f}]\n", at.back(), b.median, b.min, b.max);
  json["baseline_random_ms"] = {{"median_ms", b.median}, {"max_ms", b.max}};
  const double worst = spread(all_at.back()).max;
  json["target_ms"] = target_ms;
  json["within_target"] = worst <= target_ms;
  std::cout << fmt::format("worst ask at N={}: {:.2f} ms, target {:g} ms: {}\n", at.back(), worst, target_ms,
                           worst <= target_ms ? "within" : "OVER");
  std::cout << json.dump() << '\n';
  return 0;
} catch (const std::exception& e) {
  std::cerr << "search_ask_cost: " << e.what() << '\n';
  return 1;
}

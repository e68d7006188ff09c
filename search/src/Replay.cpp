// Replay.cpp — the replay loop over a recorded space, its statistics and its two reports (with
// a warm start: the cold and the warm statistics side by side).
//
// The loop is the campaign's, minus the hardware: ask a batch (never more than the budget
// left), look every configuration up, tell the strategy, record the best so far. Repeat r
// uses the seed mix_seed(seed, r), so one seed fixes every repeat.
#include <ctime>
#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "flotilla/search/Replay.h"
#include "flotilla/search/Strategy.h"
#include "Rng.h"

namespace {
double thread_cpu_seconds() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}
}  // namespace

namespace flotilla::search {

ReplayResult replay(const RecordedSpace& recorded, const ReplayOptions& options) {
  if (!(recorded.optimum() > 0))
    throw ReplayError(fmt::format("{}: the optimum {} is not positive, so best/optimum ratios are undefined",
                                  recorded.source(), recorded.optimum()));
  ReplayResult result{.options = options, .optimum = recorded.optimum(), .maximize = recorded.maximize()};
  const double worst = recorded.maximize() ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  for (std::size_t r = 0; r < options.repeats; ++r) {
    ReplayRun run{.seed = mix_seed(options.seed, r)};
    auto strategy = make_strategy(
        {.name = options.strategy, .seed = run.seed, .maximize = recorded.maximize(), .warm_start = options.warm_start},
        recorded.space());
    double best = worst;
    while (run.best.size() < options.budget) {
      const double cpu_before = thread_cpu_seconds();
      auto batch = strategy->ask(std::min(std::max<std::size_t>(options.batch, 1), options.budget - run.best.size()));
      ++run.asks;
      double cpu = thread_cpu_seconds() - cpu_before;  // this ask and the tells of its batch
      for (const auto& config : batch) {
        auto value = recorded.objective(config);
        if (!value) ++run.failures;
        const double tell_before = thread_cpu_seconds();
        if (value) strategy->tell(config, *value);
        else strategy->tell(config, recorded.failure(config));  // with its kind, where the file gives one
        cpu += thread_cpu_seconds() - tell_before;
        if (value && (recorded.maximize() ? *value > best : *value < best)) best = *value;
        run.best.push_back(best);
      }
      run.ask_cpu_seconds += cpu;
      run.ask_cpu_max_seconds = std::max(run.ask_cpu_max_seconds, cpu);
      if (batch.empty()) {
        run.exhausted = true;
        break;
      }
    }
    result.runs.push_back(std::move(run));
  }
  return result;
}

double ReplayResult::ratio(const ReplayRun& run, std::size_t evaluations) const {
  if (run.best.empty() || evaluations == 0) return std::numeric_limits<double>::infinity();
  double best = run.best[std::min(evaluations, run.best.size()) - 1];
  if (!std::isfinite(best)) return std::numeric_limits<double>::infinity();
  return maximize ? optimum / best : best / optimum;
}

std::optional<std::size_t> ReplayResult::evaluations_to(const ReplayRun& run, double tolerance) const {
  for (std::size_t i = 0; i < run.best.size(); ++i)
    if (ratio(run, i + 1) <= 1.0 + tolerance + 1e-12) return i + 1;
  return std::nullopt;
}

std::optional<std::size_t> ReplayResult::evaluations_to_best(const ReplayRun& run) const {
  if (run.best.empty() || !std::isfinite(run.best.back())) return std::nullopt;
  for (std::size_t i = 0; i < run.best.size(); ++i)
    if (run.best[i] == run.best.back()) return i + 1;
  return std::nullopt;
}

namespace {
double quantile(std::vector<double> v, double q) {  // linear interpolation, as numpy's default
  std::sort(v.begin(), v.end());
  double pos = q * static_cast<double>(v.size() - 1);
  auto lo = static_cast<std::size_t>(std::floor(pos));
  auto hi = std::min(lo + 1, v.size() - 1);
  if (std::isinf(v[hi])) return pos == static_cast<double>(lo) ? v[lo] : v[hi];
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}
}  // namespace

ReplayStats ratio_stats(const ReplayResult& result, std::size_t evaluations) {
  std::vector<double> ratios;
  for (const auto& run : result.runs)
    if (double r = result.ratio(run, evaluations); std::isfinite(r)) ratios.push_back(r);
  const std::size_t without = result.runs.size() - ratios.size();
  if (ratios.empty()) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    return {.median = nan, .p25 = nan, .p75 = nan, .mean = nan, .p90 = nan, .with_valid = 0, .without_valid = without};
  }
  double sum = 0;
  for (double r : ratios) sum += r;
  return {.median = quantile(ratios, 0.5),
          .p25 = quantile(ratios, 0.25),
          .p75 = quantile(ratios, 0.75),
          .mean = sum / static_cast<double>(ratios.size()),
          .p90 = quantile(ratios, 0.9),
          .with_valid = ratios.size(),
          .without_valid = without};
}

std::optional<double> median_evaluations_to(const ReplayResult& result, double tolerance, std::size_t* reached) {
  std::vector<double> counts;
  for (const auto& run : result.runs) {
    auto n = result.evaluations_to(run, tolerance);
    counts.push_back(n ? static_cast<double>(*n) : std::numeric_limits<double>::infinity());
  }
  if (reached) *reached = static_cast<std::size_t>(std::count_if(counts.begin(), counts.end(), [](double c) { return std::isfinite(c); }));
  if (counts.empty()) return std::nullopt;
  double median = quantile(counts, 0.5);
  if (!std::isfinite(median)) return std::nullopt;
  return median;
}

namespace {
// The warm start's lines of the text report: its statistics beside the cold ones, same seeds.
std::string warm_start_text(const ReplayResult& cold, const WarmStartReport& warm) {
  const auto& d = warm.data;
  std::string text = fmt::format("warm start {}: {} of its {} configurations used ({} not on this space's grid or not in it{})\n",
                                 d.source, d.observations.size(), d.rows, d.ignored,
                                 d.left_out > 0 ? fmt::format(", {} left out by --warm-start-fix", d.left_out) : std::string());
  const auto budget = cold.options.budget;
  auto c = ratio_stats(cold, budget), w = ratio_stats(warm.result, budget);
  text += fmt::format("{:<22}{:>8}  {:>8}   (the same seeds)\n", "", "cold", "warm");
  for (auto [name, a, b] : {std::tuple{"median", c.median, w.median}, std::tuple{"mean", c.mean, w.mean},
                            std::tuple{"worst decile", c.p90, w.p90}})
    text += fmt::format("{:<22}{:>8.4f}  {:>8.4f}\n", fmt::format("best/opt {}", name), a, b);
  for (double tolerance : {0.05, 0.01}) {
    std::size_t reached_cold = 0, reached_warm = 0;
    auto mc = median_evaluations_to(cold, tolerance, &reached_cold), mw = median_evaluations_to(warm.result, tolerance, &reached_warm);
    auto show = [](std::optional<double> m) { return m ? fmt::format("{:g}", *m) : std::string(">budget"); };
    text += fmt::format("{:<22}{:>8}  {:>8}   ({} and {} of {} repeats got there)\n",
                        fmt::format("to {}% (median evals)", tolerance * 100), show(mc), show(mw), reached_cold, reached_warm,
                        cold.runs.size());
  }
  return text;
}

nlohmann::ordered_json ratio_json(const ReplayStats& stats) {
  // Over the repeats that found a valid configuration, counted both ways; with none, only the
  // counts: no nulls.
  nlohmann::ordered_json ratios;
  for (auto [name, value] : {std::pair{"median", stats.median}, std::pair{"p25", stats.p25}, std::pair{"p75", stats.p75},
                             std::pair{"p90", stats.p90}, std::pair{"mean", stats.mean}})
    if (std::isfinite(value)) ratios[name] = value;
  ratios["repeats_with_valid"] = stats.with_valid;
  ratios["repeats_without_valid"] = stats.without_valid;
  return ratios;
}

void add_evaluations_to(nlohmann::ordered_json& j, const ReplayResult& result) {
  for (auto [key, tolerance] : {std::pair{"evals_to_5pct", 0.05}, std::pair{"evals_to_1pct", 0.01}}) {
    std::size_t reached = 0;
    auto median = median_evaluations_to(result, tolerance, &reached);
    nlohmann::ordered_json entry;
    if (median) entry["median"] = *median;  // left out when fewer than half the repeats got there
    entry["reached"] = reached;
    j[key] = entry;
  }
}
}  // namespace

std::string replay_text(const RecordedSpace& recorded, const ReplayResult& result, const WarmStartReport* warm) {
  const auto& o = result.options;
  const auto budget = o.budget;
  auto stats = ratio_stats(result, budget);
  std::string text = fmt::format("replay     {}: {} configurations ({} failed), {} parameters\n", recorded.source(),
                                 recorded.size(), recorded.failures(), recorded.space().parameters().size());
  text += fmt::format("objective  {} ({}); optimum {} at {}\n", recorded.objective_name(),
                      recorded.maximize() ? "maximize" : "minimize", result.optimum, recorded.space().to_text(recorded.optimum_config()));
  text += fmt::format("strategy   {} · budget {} · batch {} · {} repeats · seed {}\n", o.strategy, budget, o.batch, o.repeats, o.seed);
  if (stats.with_valid > 0)
    text += fmt::format("best/opt   median {:.4f}  (p25 {:.4f}, p75 {:.4f}, worst decile {:.4f}, mean {:.4f})\n", stats.median,
                        stats.p25, stats.p75, stats.p90, stats.mean);
  if (stats.without_valid > 0)
    text += fmt::format("note       {} of {} repeats found no valid configuration within the budget{}\n", stats.without_valid,
                        result.runs.size(), stats.with_valid > 0 ? " (best/opt is over the others)" : "");
  for (double tolerance : {0.05, 0.01}) {
    std::size_t reached = 0;
    auto median = median_evaluations_to(result, tolerance, &reached);
    text += fmt::format("to {}%{}  {}  ({} of {} repeats got there)\n", tolerance * 100, tolerance < 0.05 ? " " : " ",
                        median ? fmt::format("median {:g} evaluations", *median) : std::string("median not reached"), reached,
                        result.runs.size());
  }
  auto exhausted = std::count_if(result.runs.begin(), result.runs.end(), [](const ReplayRun& r) { return r.exhausted; });
  if (exhausted > 0)
    text += fmt::format("note       the space ({} configurations) is smaller than the budget: every configuration was evaluated\n",
                        recorded.size());
  if (warm) text += warm_start_text(result, *warm);
  return text;
}

std::string replay_json(const RecordedSpace& recorded, const ReplayResult& result, const WarmStartReport* warm) {
  const auto& o = result.options;
  auto stats = ratio_stats(result, o.budget);
  nlohmann::ordered_json j;
  j["space"] = recorded.source();
  j["configurations"] = recorded.size();
  j["failed"] = recorded.failures();
  j["objective"] = recorded.objective_name();
  j["direction"] = recorded.maximize() ? "maximize" : "minimize";
  j["optimum"] = result.optimum;
  j["optimum_config"] = recorded.space().to_text(recorded.optimum_config());
  j["strategy"] = o.strategy;
  j["budget"] = o.budget;
  j["batch"] = o.batch;
  j["repeats"] = o.repeats;
  j["seed"] = o.seed;
  j["best_over_opt"] = ratio_json(stats);
  add_evaluations_to(j, result);
  nlohmann::ordered_json runs = nlohmann::ordered_json::array();
  std::size_t asks = 0;
  double cpu = 0, cpu_max = 0;
  for (const auto& run : result.runs) {
    nlohmann::ordered_json r;
    r["seed"] = run.seed;
    r["evaluations"] = run.best.size();
    r["failures"] = run.failures;
    if (!run.best.empty() && std::isfinite(run.best.back()) && std::isfinite(result.ratio(run, run.best.size()))) {
      r["best"] = run.best.back();
      r["best_over_opt"] = result.ratio(run, run.best.size());
      r["evals_to_best"] = *result.evaluations_to_best(run);
    }
    if (auto n = result.evaluations_to(run, 0.05)) r["evals_to_5pct"] = *n;
    runs.push_back(r);
    asks += run.asks;
    cpu += run.ask_cpu_seconds;
    cpu_max = std::max(cpu_max, run.ask_cpu_max_seconds);
  }
  j["per_repeat"] = runs;
  // Timing, not a result: the only part of the output that differs between two equal runs. An
  // ask counts with the tells of its batch.
  j["cpu_ms_per_ask"] = {{"mean", asks > 0 ? 1000.0 * cpu / static_cast<double>(asks) : 0.0}, {"max", 1000.0 * cpu_max}};
  j["exhausted"] = std::any_of(result.runs.begin(), result.runs.end(), [](const ReplayRun& r) { return r.exhausted; });
  if (warm) {  // the same replay with the warm start, same seeds: its statistics beside the cold ones above
    nlohmann::ordered_json w;
    w["file"] = warm->data.source;
    w["configurations"] = warm->data.rows;
    w["used"] = warm->data.observations.size();
    w["ignored"] = warm->data.ignored;
    w["left_out"] = warm->data.left_out;
    w["best_over_opt"] = ratio_json(ratio_stats(warm->result, o.budget));
    add_evaluations_to(w, warm->result);
    w["exhausted"] = std::any_of(warm->result.runs.begin(), warm->result.runs.end(), [](const ReplayRun& r) { return r.exhausted; });
    j["warm_start"] = w;
  }
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace flotilla::search

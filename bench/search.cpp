// search — every strategy replayed on every recorded space, next to exact random sampling
// and Optuna's TPE sampler run on the same spaces in the same run.
//
// usage: search_bench [SPACES_DIR] [--repeats N] [--seed S] [--batch B] [--strategies a,b]
//                     [--default NAME] [--bar a,b] [--spaces id1,id2] [--optuna-repeats N]
//                     [--no-optuna] [--optuna-lines FILE] [--peer-lines FILE]... [--strategies-as-peers]
// SPACES_DIR (default ../shared/data/spaces, relative to the working directory) holds
// <id>.csv tables (README of that folder); nothing else is read, so the bench runs on any
// folder of recorded spaces. Each repeat runs to the largest budget and is read off at every
// budget: strategies are not told the budget, so the prefix of a 200-evaluation run is exactly
// a 50- or 100-evaluation run. Random sampling is computed exactly (search_random_exact.h),
// Optuna runs in a child process (optuna_tpe.py, Debian's /usr/bin/python3 with
// python3-optuna) on the other core while the strategies run here, with as many repeats as the
// strategies unless --optuna-repeats says otherwise. The child runs at the bench's own
// priority: nice the whole bench on a shared machine, not Optuna alone, or it starves behind
// the strategies and everyone else's work. --optuna-lines FILE reads Optuna's output lines from
// FILE instead (what `optuna_tpe.py SPACES_DIR --repeats N --seed S [--spaces id]` printed, for
// instance run per space in parallel): the same seeds give the same lines. Figures: median over
// repeats of best-found/optimum, and median evaluations until within 5% and 1% of the
// optimum; the mean and the worst decile's edge (p90) of best-found/optimum; issue 20's bar
// (search_bar.h) for the default, or for each strategy --bar names. --peer-lines FILE (as often
// as needed) reads other tuners' rows in the same format, each line naming its row
// ("strategy": "kt-bayes_opt", from peers/run_kernel_tuner.py; a line without one is
// "optuna-tpe"); with peer rows (Optuna TPE's among them), issue 36's bar against the peers is
// judged too (judge_peers) and each space's cells printed side by side with their spread.
// --strategies-as-peers makes flotilla's other strategies run (--strategies, less the one judged)
// peer rows of that bar too, as issue 36 asks ("the best peer row ... and flotilla's other
// strategies"); exact random sampling never is (it has no repeats to resample).
// Ends with one JSON line.
// The correctness half, checked on every run (exit 1, each problem named on stderr and listed in
// the JSON line's "problems"): every strategy's, Optuna's and each peer's runs keep the replay protocol
// (problem_of below), and exact random sampling's figures are ratios >= 1 that never worsen.
// Full size: ./build/bench/search_bench ../shared/data/spaces (the defaults); runs in
// bench/search/RESULTS.md. The ctest search_bench_judges_the_bar runs 3 repeats on tests/search/data.
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "flotilla/search/Replay.h"
#include "flotilla/search/Strategy.h"
#include "search_bar.h"
#include "search_random_exact.h"

using namespace flotilla::search;
namespace fs = std::filesystem;

namespace {

constexpr std::size_t kBudgets[] = {50, 100, 200};

struct Figures {
  double ratio[3] = {0, 0, 0};  // median best/opt at each budget
  double mean[3] = {0, 0, 0};
  double p90[3] = {0, 0, 0};    // the worst decile's edge (search_bar.h: interpolated as numpy's default)
  double to_5pct = INFINITY, to_1pct = INFINITY;  // median evaluations (inf: not within budget)
  std::size_t budget = 200;  // the row's runs' budget: a peer's may be smaller (NaN, no repeats, past it)
  std::vector<double> repeats[3];  // best/opt of each repeat at each budget (empty: exact random sampling)
};

Figures figures_of(const ReplayResult& result) {
  Figures f;
  f.budget = result.options.budget;
  for (int b = 0; b < 3; ++b) {
    if (kBudgets[b] > f.budget) {
      f.ratio[b] = f.mean[b] = f.p90[b] = NAN;
      continue;
    }
    // Over every repeat: one without a valid configuration counts as infinitely far from the
    // optimum (ratio_stats, for the replay report, leaves it out and counts it instead).
    std::vector<double> ratios;
    for (const auto& run : result.runs) ratios.push_back(result.ratio(run, kBudgets[b]));
    f.repeats[b] = ratios;
    f.mean[b] = flotilla::bench::statistic(ratios, flotilla::bench::Statistic::mean);
    f.p90[b] = flotilla::bench::statistic(ratios, flotilla::bench::Statistic::p90);  // as the bar judges it
    std::sort(ratios.begin(), ratios.end());
    const auto n = ratios.size();
    f.ratio[b] = n % 2 ? ratios[n / 2] : 0.5 * (ratios[n / 2 - 1] + ratios[n / 2]);
  }
  f.to_5pct = median_evaluations_to(result, 0.05).value_or(INFINITY);
  f.to_1pct = median_evaluations_to(result, 0.01).value_or(INFINITY);
  return f;
}

std::string evals(double n, std::size_t budget) { return std::isfinite(n) ? fmt::format("{:.0f}", n) : fmt::format(">{}", budget); }

// A figure, or "-" past the row's budget.
std::string cell(double v) { return std::isnan(v) ? std::string("-") : fmt::format("{:.3f}", v); }

std::string row(const std::string& name, const Figures& f) {
  return fmt::format("  {:<20} {:>7} {:>7} {:>7}   {:>7} {:>7} {:>7}   {:>7} {:>7} {:>7}   {:>6} {:>6}\n", name, cell(f.ratio[0]),
                     cell(f.ratio[1]), cell(f.ratio[2]), cell(f.mean[0]), cell(f.mean[1]), cell(f.mean[2]), cell(f.p90[0]),
                     cell(f.p90[1]), cell(f.p90[2]), evals(f.to_5pct, f.budget), evals(f.to_1pct, f.budget));
}

nlohmann::ordered_json json_of(const Figures& f) {
  auto num = [](double v) { return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr); };
  return {{"median", {num(f.ratio[0]), num(f.ratio[1]), num(f.ratio[2])}},
          {"mean", {num(f.mean[0]), num(f.mean[1]), num(f.mean[2])}},
          {"p90", {num(f.p90[0]), num(f.p90[1]), num(f.p90[2])}},
          {"evals_to_5pct", num(f.to_5pct)}, {"evals_to_1pct", num(f.to_1pct)}};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// Optuna's (and the peers') runs arrive as one JSON line per space (and row):
// {"space": id, ["strategy": row,] ["budget": B,] "runs": [[best so far...]]}; no "strategy" is "optuna-tpe".
std::map<std::string, std::map<std::string, ReplayResult>> read_runs(FILE* pipe, const std::map<std::string, const RecordedSpace*>& spaces) {
  std::map<std::string, std::map<std::string, ReplayResult>> out;
  std::string text;
  char buffer[1 << 16];
  while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) text.append(buffer, n);
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] != '{') continue;
    auto j = nlohmann::json::parse(line);
    auto it = spaces.find(j["space"].get<std::string>());
    if (it == spaces.end()) continue;
    const std::string name = j.contains("strategy") ? j["strategy"].get<std::string>() : "optuna-tpe";
    // "budget": what the runs were run to (peers/run_kernel_tuner.py --budget; default 200).
    const auto budget = std::min<std::size_t>(j.value("budget", std::size_t{200}), kBudgets[2]);
    ReplayResult r{.options = {.strategy = name, .budget = budget}, .optimum = it->second->optimum()};
    for (const auto& run : j["runs"]) {
      ReplayRun rr;
      for (const auto& v : run) rr.best.push_back(v.is_null() ? INFINITY : v.get<double>());
      r.runs.push_back(std::move(rr));
    }
    out[it->first][name] = std::move(r);
  }
  return out;
}

// Every row's repeats (or exact figures) per space and budget, as search_bar.h judges them.
flotilla::bench::BarCells bar_cells(const std::map<std::string, std::map<std::string, Figures>>& table) {
  flotilla::bench::BarCells cells;
  for (const auto& [id, by_strategy] : table) {
    auto& by_budget = cells[id];
    by_budget.resize(3);
    for (const auto& [name, f] : by_strategy)
      for (int b = 0; b < 3; ++b) {
        if (kBudgets[b] > f.budget) continue;  // a peer's row run to a smaller budget is not judged past it
        flotilla::bench::RowSample row{.repeats = f.repeats[b]};
        if (f.repeats[b].empty()) row.exact_mean = f.mean[b], row.exact_p90 = f.p90[b];  // exact random sampling
        by_budget[b][name] = std::move(row);
      }
  }
  return cells;
}

// Issue 20's bar (search_bar.h): `candidate` at least as good as every other row, by the mean
// and the p90, at every budget on every space; each miss with a bootstrap interval.
nlohmann::ordered_json print_bar(const flotilla::bench::BarCells& cells, const std::string& candidate) {
  const auto result = flotilla::bench::judge_bar(cells, {kBudgets[0], kBudgets[1], kBudgets[2]}, candidate);
  const auto& misses = result.misses;
  const std::size_t cells_judged = result.cells, significant = result.significant();
  std::cout << fmt::format("\nthe bar for '{}': at least as good as every other row by the mean and the p90 at 50/100/200 on every space\n"
                           "  met in {} of {} cells; {} misses, {} of them significant (90% bootstrap interval of the difference above 0)\n",
                           candidate, cells_judged - misses.size(), cells_judged, misses.size(), significant);
  nlohmann::ordered_json out = {{"strategy", candidate}, {"cells", cells_judged}, {"met", cells_judged - misses.size()},
                                {"significant_misses", significant}, {"misses", nlohmann::ordered_json::array()}};
  for (const auto& m : misses) {
    const char* stat = m.stat == flotilla::bench::Statistic::mean ? "mean" : "p90";
    std::cout << fmt::format("  {:<22} {:>4}@{:<3} {:.4f} vs {} {:.4f}: {:+.4f} [{:+.4f}, {:+.4f}]{}\n", m.space, stat, m.budget, m.value,
                             m.best_other, m.other_value, m.value - m.other_value, m.low, m.high, m.significant() ? "  significant" : "");
    out["misses"].push_back({{"space", m.space}, {"budget", m.budget}, {"statistic", stat}, {"value", m.value},
                             {"best_other", m.best_other}, {"other_value", m.other_value}, {"interval", {m.low, m.high}},
                             {"significant", m.significant()}});
  }
  return out;
}

// The correctness half: why a strategy's replay breaks the protocol, or "". Each of its `repeats`
// runs spends the budget (less only when the space ran out; Optuna's may stop early, its script
// says when); its best so far never worsens, is a recorded value of the table (`values`; empty:
// not checked, as for Optuna's JSON lines) or nothing yet, and is never better than the optimum.
std::string problem_of(const ReplayResult& result, std::size_t repeats, std::size_t space_size,
                       const std::vector<double>& values, bool spends_budget = true) {
  if (result.runs.size() != repeats) return fmt::format("{} runs, not {}", result.runs.size(), repeats);
  for (std::size_t r = 0; r < result.runs.size(); ++r) {
    const auto& run = result.runs[r];
    const std::size_t budget = result.options.budget;
    if (run.best.size() > std::min(budget, space_size) || (spends_budget && !run.exhausted && run.best.size() != budget))
      return fmt::format("run {}: {} evaluations for a budget of {}{}", r, run.best.size(), budget, run.exhausted ? " (space exhausted)" : "");
    for (std::size_t n = 1; n <= run.best.size(); ++n) {
      const double ratio = result.ratio(run, n), best = run.best[n - 1];
      if (ratio < 1 - 1e-12)
        return fmt::format("run {}: best {} after {} evaluations beats the optimum {}", r, best, n, result.optimum);
      if (n > 1 && ratio > result.ratio(run, n - 1))
        return fmt::format("run {}: the best so far worsens at evaluation {}: {} after {}", r, n, best, run.best[n - 2]);
      if (std::isfinite(best) && !values.empty() && !std::binary_search(values.begin(), values.end(), best))
        return fmt::format("run {}: best {} after {} evaluations is no value of the table", r, best, n);
    }
  }
  return {};
}

// Issue 36's bar against the peers (search_bar.h, judge_peers), and the side-by-side table: in
// every cell the candidate's and each peer's mean and p90 with their 90% bootstrap intervals.
nlohmann::ordered_json print_peers(const flotilla::bench::BarCells& cells, const std::string& candidate, const std::vector<std::string>& peers) {
  using flotilla::bench::Statistic;
  std::vector<std::size_t> budgets = {kBudgets[0], kBudgets[1], kBudgets[2]};
  std::cout << fmt::format("\n'{}' beside the peers: mean and p90 of best/optimum [90% bootstrap interval]\n", candidate);
  std::vector<std::string> names = {candidate};
  names.insert(names.end(), peers.begin(), peers.end());
  for (const auto& [space, by_budget] : cells)
    for (std::size_t b = 0; b < by_budget.size(); ++b) {
      std::cout << fmt::format("  {} @{}\n", space, budgets[b]);
      for (const auto& name : names)
        if (auto it = by_budget[b].find(name); it != by_budget[b].end()) {
          auto [ml, mh] = flotilla::bench::bootstrap_statistic(it->second, Statistic::mean);
          auto [pl, ph] = flotilla::bench::bootstrap_statistic(it->second, Statistic::p90);
          std::cout << fmt::format("    {:<22} mean {:.4f} [{:.4f}, {:.4f}]   p90 {:.4f} [{:.4f}, {:.4f}]\n", name,
                                   it->second.value(Statistic::mean), ml, mh, it->second.value(Statistic::p90), pl, ph);
        }
    }
  const auto result = flotilla::bench::judge_peers(cells, budgets, candidate, peers);
  const auto behind = result.behind();
  std::cout << fmt::format("\nthe peers' bar for '{}': in no cell behind the best peer by more than {:.1f}% of the optimum with "
                           "significance (90% bootstrap interval of the difference above +{:.3f}), and a lower geometric mean "
                           "over all cells than every peer row\n  {} of {} cells behind; {}\n",
                           candidate, 100 * result.margin, result.margin, behind.size(), result.cells.size(),
                           result.met() ? "MET" : "NOT met");
  nlohmann::ordered_json out = {{"strategy", candidate}, {"margin", result.margin}, {"cells", result.cells.size()},
                                {"behind", behind.size()}, {"met", result.met()}, {"cells_detail", nlohmann::ordered_json::array()},
                                {"geomean", nlohmann::ordered_json::object()}};
  for (const auto& c : result.cells) {
    const char* stat = c.stat == Statistic::mean ? "mean" : "p90";
    const double d = c.value - c.peer_value;
    if (d > 1e-9)
      std::cout << fmt::format("  {:<22} {:>4}@{:<3} {:.4f} vs {} {:.4f}: {:+.4f} [{:+.4f}, {:+.4f}]{}\n", c.space, stat, c.budget, c.value,
                               c.best_peer, c.peer_value, d, c.low, c.high, c.low > result.margin ? "  BEHIND" : "");
    out["cells_detail"].push_back({{"space", c.space}, {"budget", c.budget}, {"statistic", stat}, {"value", c.value},
                                   {"best_peer", c.best_peer}, {"peer_value", c.peer_value}, {"interval", {c.low, c.high}},
                                   {"behind", c.low > result.margin}});
  }
  std::cout << fmt::format("  geometric mean over the cells: '{}' against each peer (ratio - 1, 90% bootstrap interval)\n", candidate);
  for (const auto& a : result.aggregates) {
    std::cout << fmt::format("    {:<22} {:.4f} vs {:.4f} ({} cells): {:+.4f} [{:+.4f}, {:+.4f}] {}\n", a.peer, a.candidate, a.other, a.cells,
                             a.candidate / a.other - 1, a.low, a.high, a.ahead() ? "ahead" : "NOT ahead");
    out["geomean"][a.peer] = {{"candidate", a.candidate}, {"peer", a.other}, {"cells", a.cells}, {"interval", {a.low, a.high}},
                              {"ahead", a.ahead()}};
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  fs::path dir = "../shared/data/spaces";
  std::size_t repeats = 20, batch = 1, optuna_repeats = 0;  // 0: as many as repeats
  std::uint64_t seed = 1;
  std::string default_strategy = "bayes-genetic";
  bool optuna = true, strategies_as_peers = false;
  std::string optuna_lines;
  std::vector<std::string> strategies, only, bar;  // bar: whose cells to judge (default: the default)
  std::vector<std::string> peer_lines;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--repeats") repeats = std::stoul(value());
    else if (a == "--seed") seed = std::stoull(value());
    else if (a == "--batch") batch = std::stoul(value());
    else if (a == "--default") default_strategy = value();
    else if (a == "--no-optuna") optuna = false;
    else if (a == "--strategies-as-peers") strategies_as_peers = true;
    else if (a == "--optuna-repeats") optuna_repeats = std::stoul(value());
    else if (a == "--optuna-lines") optuna_lines = value();
    else if (a == "--peer-lines") peer_lines.push_back(value());
    else if (a == "--strategies" || a == "--spaces" || a == "--bar") {
      auto& list = a == "--spaces" ? only : a == "--bar" ? bar : strategies;
      std::istringstream in(value());
      for (std::string s; std::getline(in, s, ',');) list.push_back(s);
    } else dir = a;
  }
  if (strategies.empty())
    for (auto name : strategy_names())
      if (name != "grid") strategies.emplace_back(name);  // grid's order is the table's: meaningless here
  std::vector<fs::path> files;
  if (fs::is_directory(dir))
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".csv" &&
          (only.empty() || std::find(only.begin(), only.end(), e.path().stem().string()) != only.end()))
        files.push_back(e.path());
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    std::cerr << fmt::format("search_bench: no <id>.csv spaces in '{}' (give the folder as the first argument)\n", dir.string());
    return 1;
  }
  std::vector<RecordedSpace> spaces;
  std::map<std::string, const RecordedSpace*> by_id;
  for (const auto& f : files) spaces.push_back(load_recorded_space(f));
  for (std::size_t i = 0; i < files.size(); ++i) by_id[files[i].stem().string()] = &spaces[i];

  if (optuna_repeats == 0) optuna_repeats = repeats;
  FILE* pipe = nullptr;
  if (optuna) {
    auto command = fmt::format("/usr/bin/python3 '{}/optuna_tpe.py' '{}' --repeats {} --budget 200 --seed {}{}",
                               FLOTILLA_BENCH_DIR, dir.string(), optuna_repeats, seed,
                               only.empty() ? "" : fmt::format(" --spaces {}", fmt::join(only, ",")));
    pipe = optuna_lines.empty() ? popen(command.c_str(), "r") : std::fopen(optuna_lines.c_str(), "r");
  }
  std::map<std::string, std::map<std::string, Figures>> table;  // space -> strategy -> figures
  std::vector<std::string> problems;  // the correctness half: each one names its space and row
  for (std::size_t i = 0; i < spaces.size(); ++i) {
    const auto id = files[i].stem().string();
    auto successes = spaces[i].successes();
    for (auto& v : successes) v /= spaces[i].optimum();
    Figures exact;
    for (int b = 0; b < 3; ++b) {
      auto r = flotilla::bench::random_exact(successes, spaces[i].size(), kBudgets[b]);
      exact.ratio[b] = r.median, exact.mean[b] = r.mean, exact.p90[b] = r.p90;
      if (b == 2) exact.to_5pct = r.to_5pct > 200 ? INFINITY : r.to_5pct, exact.to_1pct = r.to_1pct > 200 ? INFINITY : r.to_1pct;
    }
    table[id]["random-exact"] = exact;
    auto values = spaces[i].successes();
    std::sort(values.begin(), values.end());
    for (int b = 0; b < 3; ++b)
      if (!(exact.ratio[b] >= 1 - 1e-12 && exact.mean[b] >= 1 - 1e-12 && exact.p90[b] >= exact.ratio[b] - 1e-12) ||
          (b > 0 && exact.mean[b] > exact.mean[b - 1] + 1e-12))
        problems.push_back(fmt::format("{} random-exact at {}: median {}, mean {}, p90 {}", id, kBudgets[b], exact.ratio[b],
                                       exact.mean[b], exact.p90[b]));
    for (const auto& s : strategies) {
      auto result = replay(spaces[i], {.strategy = s, .budget = 200, .repeats = repeats, .seed = seed, .batch = batch});
      if (auto wrong = problem_of(result, repeats, spaces[i].size(), values); !wrong.empty())
        problems.push_back(fmt::format("{} {}: {}", id, s, wrong));
      table[id][s] = figures_of(result);
      std::cerr << fmt::format("{} {} done\n", id, s);
    }
  }
  if (pipe) {
    auto results = read_runs(pipe, by_id);
    const int status = optuna_lines.empty() ? pclose(pipe) : std::fclose(pipe);
    // optuna_tpe.py exits 77 without Optuna, and 1 when a run of its own breaks the protocol.
    if (optuna_lines.empty() && status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 1)
      problems.push_back("optuna_tpe.py failed its own check (its message is above)");
    else if (status != 0 || results.empty())
      std::cerr << "search_bench: Optuna did not run (install python3-optuna for Debian's /usr/bin/python3); its rows are missing\n";
    for (const auto& [id, by_name] : results)
      for (const auto& [name, r] : by_name) {
        table[id][name] = figures_of(r), optuna_repeats = r.runs.size();
        if (auto wrong = problem_of(r, r.runs.size(), by_id[id]->size(), {}, false); !wrong.empty())
          problems.push_back(fmt::format("{} {}: {}", id, name, wrong));
      }
  }
  std::vector<std::string> peers;  // the peer rows read from --peer-lines, then Optuna TPE's
  std::map<std::string, std::size_t> peer_repeats, peer_budgets;
  for (const auto& file : peer_lines) {
    FILE* in = std::fopen(file.c_str(), "r");
    if (!in) {
      std::cerr << fmt::format("search_bench: cannot read --peer-lines '{}'\n", file);
      return 1;
    }
    const auto runs = read_runs(in, by_id);
    if (runs.empty()) problems.push_back(fmt::format("--peer-lines '{}': no rows for the spaces run", file));
    for (const auto& [id, by_name] : runs)
      for (const auto& [name, r] : by_name) {
        // A peer's best so far is a recorded value, as for flotilla's strategies; it may end early.
        auto values = by_id[id]->successes();
        std::sort(values.begin(), values.end());
        if (auto wrong = problem_of(r, r.runs.size(), by_id[id]->size(), values, false); !wrong.empty())
          problems.push_back(fmt::format("{} {}: {}", id, name, wrong));
        table[id][name] = figures_of(r);
        peer_repeats[name] = r.runs.size();
        peer_budgets[name] = r.options.budget;
        if (std::find(peers.begin(), peers.end(), name) == peers.end()) peers.push_back(name);
      }
    std::fclose(in);
  }
  std::sort(peers.begin(), peers.end());
  for (const auto& [id, by_strategy] : table)
    if (by_strategy.contains("optuna-tpe") && std::find(peers.begin(), peers.end(), "optuna-tpe") == peers.end())
      peers.insert(peers.begin(), "optuna-tpe");

  std::vector<std::string> rows = {"random-exact"};
  rows.insert(rows.end(), peers.begin(), peers.end());
  if (std::find(rows.begin(), rows.end(), "optuna-tpe") == rows.end()) rows.push_back("optuna-tpe");
  rows.insert(rows.end(), strategies.begin(), strategies.end());
  std::cout << fmt::format("search bench: {} repeats ({} for Optuna), seed {}, batch {}; median best/optimum (mean after) "
                           "at 50/100/200 evaluations, median evaluations to within 5% / 1%\n",
                           repeats, optuna ? optuna_repeats : 0, seed, batch);
  nlohmann::ordered_json json;
  json["bench"] = "search";
  json["repeats"] = repeats;
  json["optuna_repeats"] = optuna ? optuna_repeats : 0;
  json["seed"] = seed;
  json["batch"] = batch;
  if (!peer_repeats.empty()) {
    json["peer_repeats"] = peer_repeats;
    json["peer_budgets"] = peer_budgets;
    std::cout << "peer rows (--peer-lines):";
    for (const auto& [name, n] : peer_repeats) std::cout << fmt::format(" {} ({} repeats to {})", name, n, peer_budgets[name]);
    std::cout << '\n';
  }
  for (const auto& [id, by_strategy] : table) {
    const auto* s = by_id[id];
    std::cout << fmt::format("\n{} ({} configurations, {} failed, optimum {:g})\n", id, s->size(), s->failures(), s->optimum());
    std::cout << fmt::format("  {:<20} {:>7} {:>7} {:>7}   {:>7} {:>7} {:>7}   {:>7} {:>7} {:>7}   {:>6} {:>6}\n", "strategy", "@50",
                             "@100", "@200", "mean50", "mean100", "mean200", "p90_50", "p90_100", "p90_200", "to5%", "to1%");
    for (const auto& name : rows)
      if (by_strategy.contains(name)) {
        std::cout << row(name, by_strategy.at(name));
        json["spaces"][id][name] = json_of(by_strategy.at(name));
      }
  }
  std::cout << "\nmedian over spaces of the median best/optimum at 50 / 100 / 200\n";
  for (const auto& name : rows) {
    std::vector<double> at[3];
    for (const auto& [id, by_strategy] : table)
      if (by_strategy.contains(name))
        for (int b = 0; b < 3; ++b) at[b].push_back(by_strategy.at(name).ratio[b]);
    if (at[0].empty()) continue;
    double m[3];
    for (int b = 0; b < 3; ++b)
      m[b] = std::any_of(at[b].begin(), at[b].end(), [](double v) { return std::isnan(v); }) ? NAN : median(at[b]);
    std::cout << fmt::format("  {:<20} {:>7} {:>7} {:>7}\n", name, cell(m[0]), cell(m[1]), cell(m[2]));
    auto num = [](double v) { return std::isnan(v) ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(v); };
    json["median_over_spaces"][name] = {num(m[0]), num(m[1]), num(m[2])};
  }
  // The target for the default strategy: no worse than random on every space (mean
  // best/opt against the exact expectation) and below Optuna's median over spaces.
  // Optuna's median counts only when Optuna ran on every space (else it is over other spaces).
  // Both are false when the default strategy was not among those run (--strategies).
  const bool ran_default = json["median_over_spaces"].contains(default_strategy);
  bool optuna_everywhere = json["median_over_spaces"].contains("optuna-tpe");
  for (const auto& [id, by_strategy] : table) optuna_everywhere = optuna_everywhere && by_strategy.contains("optuna-tpe");
  bool beats_random = ran_default, beats_optuna = ran_default && optuna_everywhere;
  for (const auto& [id, by_strategy] : table)
    for (int b = 0; b < 3; ++b)
      if (by_strategy.contains(default_strategy) && by_strategy.at(default_strategy).mean[b] > by_strategy.at("random-exact").mean[b] + 1e-9)
        beats_random = false;
  for (int b = 0; b < 3 && beats_optuna; ++b)
    if (!json["median_over_spaces"]["optuna-tpe"][b].is_null())  // Optuna run to a smaller budget: not past it
      beats_optuna = json["median_over_spaces"][default_strategy][b].get<double>() <= json["median_over_spaces"]["optuna-tpe"][b].get<double>();
  if (!ran_default) std::cout << fmt::format("\ndefault '{}' was not among the strategies run\n", default_strategy);
  else
    std::cout << fmt::format("\ndefault '{}': {} random on every space, {}\n", default_strategy,
                             beats_random ? "no worse than" : "NOT always better than",
                             !optuna_everywhere ? "not compared with Optuna TPE (it did not run on every space)"
                             : beats_optuna     ? "beats or ties Optuna TPE on the median over spaces"
                                                : "does NOT beat Optuna TPE on the median over spaces");
  json["default"] = default_strategy;
  json["default_beats_random_everywhere"] = beats_random;
  json["default_beats_optuna_median"] = beats_optuna;
  if (bar.empty()) bar.push_back(default_strategy);
  const auto cells = bar_cells(table);
  for (const auto& name : bar)
    if (json["median_over_spaces"].contains(name)) {
      json["bar"][name] = print_bar(cells, name);
      auto judged_against = peers;
      if (strategies_as_peers)
        for (const auto& s : strategies)
          if (s != name) judged_against.push_back(s);
      if (!judged_against.empty()) json["peers_bar"][name] = print_peers(cells, name, judged_against);
    } else std::cout << fmt::format("\nthe bar: '{}' was not among the strategies run\n", name);
  json["problems"] = problems;
  std::cout << json.dump() << '\n';
  for (const auto& p : problems) std::cerr << "search_bench: " << p << '\n';
  return problems.empty() ? 0 : 1;
}

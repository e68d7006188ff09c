// store_scale — a campaign's results file at scale (issue 35): 10^4 candidates of ~100 trials each
// (10^6 trials, two metrics each) written through results::Store with Store::Group batching, then
// timed as the user and the scheduler read it: `results summary`'s library call (open read-only,
// results::summarize, the text it prints) and a resume as the campaign loop opens it (Ledger::open
// on an existing file: open_for_append, every table read, every configuration parsed), with its
// first summary. Each read is timed over --repeats (median, min..max), next to a baseline in the
// same run: reading the raw /trials rows alone (Store::trials). Wall and this process's CPU time
// are both reported (the machine is shared). One JSON line at the end.
//
//   store_scale [--candidates 10000] [--explore 96] [--shards 4] [--repeats 3] [--dir DIR] [--keep]
//
// The correctness half: the summary and the resumed ledger must count every candidate and every
// trial written, each candidate with all its explore repeats ok and the median objective it was
// written with; otherwise it exits 1 naming what differs. A small run (ctest bench_scale_store):
//   store_scale --candidates 50 --explore 3 --shards 1 --repeats 1
// Full size: ./build/bench/store_scale (bench/scale/run.py runs it; figures in bench/scale/RESULTS.md).
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "Ledger.h"
#include "flotilla/results/Analysis.h"
#include "flotilla/results/Store.h"

namespace fs = std::filesystem;
using namespace flotilla;
using Clock = std::chrono::steady_clock;

namespace {

double s_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// This process's CPU seconds: the machine is shared, so wall time varies with its load; both are reported.
double cpu_s() {
  timespec t{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

nlohmann::json spread(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  const double median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  return {{"median", median}, {"min", v.front()}, {"max", v.back()}, {"n", n}};
}

struct Size {
  int candidates = 10000;
  int explore = 96;
  int shards = 4;
};

// The objective of candidate c's repeat r: its own level plus a little noise, so medians differ.
double objective_of(int c, int r) { return 100.0 + (c * 7919 % 1000) * 0.1 + ((r * 31 + c) % 7) * 0.01; }

scheduler::Settings make_settings(const Size& size, const fs::path& file) {
  scheduler::Settings s;
  s.name = "scale";
  s.results = file;
  s.campaign_results = file;
  s.workdir = file.parent_path();
  s.objective = "time_s";
  s.maximize = false;
  s.explore_command = "run {x} {y}";
  s.evaluate_command = "check {x} {y}";
  s.repeats = size.explore;
  s.max_repeats = size.explore;
  s.shards = size.shards;
  s.budget = static_cast<std::size_t>(size.candidates);
  s.space.add_parameter(search::parse_parameter("x: int: 1..1000"));
  s.space.add_parameter(search::parse_parameter("y: int: 1..1000"));
  return s;
}

results::CampaignInfo info_of(const scheduler::Settings& s) {
  return {.name = s.name, .config_text = "# synthetic (bench/scale/store_scale.cpp)\n", .fingerprint = s.fingerprint(),
          .objective = s.objective, .direction = "minimize", .repeats = s.repeats, .shards = s.shards,
          .seed = 1, .flotilla_version = "bench", .host = "bench", .created = 1.7e9, .confirm_max_pairs = 0};
}

// Writes the campaign as the scheduler would: the ledger creates the file, then each round of 100
// candidates and their trials goes in one Store::Group (one flush per table per round).
double write_campaign(const Size& size, const scheduler::Settings& s) {
  const auto start = Clock::now();
  scheduler::Ledger ledger(s);
  std::ostringstream err;
  if (ledger.open(info_of(s), err)) throw std::runtime_error(fmt::format("{}: exists already", s.results.string()));
  constexpr int kPerRound = 100;
  for (int first = 0; first < size.candidates; first += kPerRound) {
    results::Store::Group group(ledger.store());
    for (int c = first; c < std::min(size.candidates, first + kPerRound); ++c) {
      const auto config = s.space.parse_configuration(fmt::format("x={} y={}", c % 1000 + 1, c / 1000 + 1));
      ledger.add_candidate(c / kPerRound, config, c == 0 ? "baseline" : "bayes-genetic");
      double t = 1.7e9 + c;
      auto trial = [&](results::TrialKind kind, int index, double objective) {
        results::TrialRecord r{.candidate = c, .kind = kind, .index = index, .status = results::TrialStatus::ok,
                               .start = t, .end = t + 0.01, .objective = objective,
                               .output_tail = fmt::format("flotilla-metric: time_s={}\n", objective),
                               .metrics = {{"time_s", objective}, {"gflops", 1e3 / objective}}, .host = "node017",
                               .device = "cpu", .cores = "3", .slurm_job = fmt::format("{}_{}", 812 + c / 1000, c % 1000)};
        if (std::isnan(objective)) r.metrics.clear(), r.output_tail.clear();
        if (!ledger.add_trial(std::move(r))) throw std::runtime_error(fmt::format("trial of candidate {} refused", c));
        t += 0.01;
      };
      for (int r = 0; r < size.explore; ++r) trial(results::TrialKind::explore, r, objective_of(c, r));
      for (int k = 0; k < size.shards; ++k) trial(results::TrialKind::evaluate, k, std::nan(""));
    }
    group.commit();
  }
  return s_since(start);
}

double median_objective(int c, int repeats) {
  std::vector<double> v;
  for (int r = 0; r < repeats; ++r) v.push_back(objective_of(c, r));
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The correctness half: what was read back is what was written.
void check_summary(const results::CampaignSummary& summary, const Size& size, const char* who) {
  std::size_t trials = 0;
  for (const auto& c : summary.candidates) trials += static_cast<std::size_t>(c.repeats_done + c.shards_done);
  const auto expected = static_cast<std::size_t>(size.candidates) * static_cast<std::size_t>(size.explore + size.shards);
  if (summary.candidates.size() != static_cast<std::size_t>(size.candidates) || trials != expected)
    throw std::runtime_error(fmt::format("{}: {} candidates and {} trials read back, {} and {} written", who,
                                         summary.candidates.size(), trials, size.candidates, expected));
  for (const auto& c : summary.candidates) {
    const int id = static_cast<int>(c.record.id);
    if (c.repeats_done != size.explore || c.shards_passed != size.shards || !c.objective ||
        std::abs(*c.objective - median_objective(id, size.explore)) > 1e-9)
      throw std::runtime_error(fmt::format("{}: candidate {}: {} repeats, {} shards passed, objective {}; written {}, {} and {}",
                                           who, id, c.repeats_done, c.shards_passed, c.objective ? fmt::format("{}", *c.objective) : "none",
                                           size.explore, size.shards, median_objective(id, size.explore)));
  }
}

}  // namespace

int main(int argc, char** argv) try {
  Size size;
  int repeats = 3;
  fs::path dir = fs::temp_directory_path() / "flotilla-store-scale";
  bool keep = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--candidates") size.candidates = std::stoi(value());
    else if (a == "--explore") size.explore = std::stoi(value());
    else if (a == "--shards") size.shards = std::stoi(value());
    else if (a == "--repeats") repeats = std::stoi(value());
    else if (a == "--dir") dir = value();
    else if (a == "--keep") keep = true;
    else throw std::runtime_error(fmt::format("unknown argument '{}'", a));
  }
  if (size.candidates < 1 || size.explore < 1 || size.shards < 0 || repeats < 1)
    throw std::runtime_error("--candidates, --explore and --repeats must be at least 1");
  fs::create_directories(dir);
  const auto file = dir / fmt::format("scale-{}x{}.h5", size.candidates, size.explore + size.shards);
  fs::remove(file);
  const auto settings = make_settings(size, file);
  const auto trials = static_cast<std::size_t>(size.candidates) * static_cast<std::size_t>(size.explore + size.shards);
  std::cout << fmt::format("writing {} candidates x {} trials = {} trials to {}\n", size.candidates,
                           size.explore + size.shards, trials, file.string());
  const double write_s = write_campaign(size, settings);
  const auto bytes = fs::file_size(file);
  std::cout << fmt::format("  written in {:.1f} s, {:.1f} MiB ({:.0f} bytes a trial)\n", write_s, bytes / 1048576.0,
                           static_cast<double>(bytes) / static_cast<double>(trials));

  std::vector<double> raw_s, summary_s, resume_s, resume_summary_s, raw_cpu, summary_cpu, resume_cpu;
  for (int r = 0; r < repeats; ++r) {
    auto start = Clock::now();
    auto cpu = cpu_s();
    const auto raw = results::Store::open_read(file).trials();
    raw_s.push_back(s_since(start));
    raw_cpu.push_back(cpu_s() - cpu);
    if (raw.size() != trials) throw std::runtime_error(fmt::format("baseline: {} trials read, {} written", raw.size(), trials));

    {
      start = Clock::now();  // what `flotilla results summary FILE` does
      cpu = cpu_s();
      const auto store = results::Store::open_read(file);
      const auto summary = results::summarize(store);
      const auto text = results::summary_text(summary, 3);
      summary_s.push_back(s_since(start));
      summary_cpu.push_back(cpu_s() - cpu);
      check_summary(summary, size, "results summary");
      if (text.empty()) throw std::runtime_error("results summary: no text");
    }  // closed: the resume below opens it for writing

    start = Clock::now();  // the campaign loop's resume: Ledger::open on the existing file
    cpu = cpu_s();
    scheduler::Ledger ledger(settings);
    std::ostringstream err;
    if (!ledger.open(info_of(settings), err)) throw std::runtime_error("the ledger did not resume");
    resume_s.push_back(s_since(start));
    resume_cpu.push_back(cpu_s() - cpu);
    const auto resumed = ledger.summarize();
    resume_summary_s.push_back(s_since(start));
    check_summary(resumed, size, "resume");
    if (ledger.trials().size() != trials)
      throw std::runtime_error(fmt::format("resume: {} trials in the ledger, {} written", ledger.trials().size(), trials));
    std::cout << fmt::format("  repeat {}: raw trials {:.2f} s ({:.2f} CPU), summary {:.2f} s ({:.2f} CPU), resume {:.2f} s "
                             "({:.2f} CPU; + first summary {:.2f} s)\n", r + 1, raw_s.back(), raw_cpu.back(), summary_s.back(),
                             summary_cpu.back(), resume_s.back(), resume_cpu.back(), resume_summary_s.back());
  }
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  nlohmann::ordered_json json;
  json["bench"] = "store_scale";
  json["candidates"] = size.candidates;
  json["trials"] = trials;
  json["metrics_per_trial"] = 2;
  json["file_mib"] = static_cast<double>(bytes) / 1048576.0;
  json["bytes_per_trial"] = static_cast<double>(bytes) / static_cast<double>(trials);
  json["write_s"] = write_s;
  json["baseline_read_trials_s"] = spread(raw_s);
  json["summary_s"] = spread(summary_s);
  json["resume_s"] = spread(resume_s);
  json["resume_and_summary_s"] = spread(resume_summary_s);
  json["cpu"] = {{"baseline_read_trials_s", spread(raw_cpu)}, {"summary_s", spread(summary_cpu)}, {"resume_s", spread(resume_cpu)}};
  json["peak_rss_mib"] = static_cast<double>(usage.ru_maxrss) / 1024.0;
  json["file"] = file.string();
  if (!keep) fs::remove(file);
  std::cout << json.dump() << '\n';
  return 0;
} catch (const std::exception& e) {
  std::cerr << "store_scale: " << e.what() << '\n';
  return 1;
}

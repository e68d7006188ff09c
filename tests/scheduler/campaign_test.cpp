// campaign_test.cpp — the campaign loop over a fault-injecting backend (FaultyBackend.h): below
// the integration tests, with nothing run for real, so every fault and its seed is reproducible.
//
// Over lost, refused, killed, duplicated, delayed and reordered results, seed after seed:
//  - every task's result is recorded exactly once (no key twice, none missing);
//  - nothing is decided before it is recorded: each verified / rolled_back event comes after its
//    candidate's evaluate trials, each confirmation after its pairs;
//  - the verified winner is the fault-free run's, with the same seed.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "FaultyBackend.h"
#include "flotilla/results/Analysis.h"
#include "flotilla/results/Store.h"
#include "flotilla/scheduler/Campaign.h"
#include "flotilla/scheduler/Settings.h"

namespace flotilla::scheduler::test {
namespace {

namespace fs = std::filesystem;

double now() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

// The "benchmark": score = x (+0.5 for y = b); verification fails for x > 6.
double score(const std::vector<std::string>& argv, std::size_t at) {
  return std::stod(argv.at(at + 1)) + (argv.at(at + 2) == "b" ? 0.5 : 0.0);
}

jobs::TaskResult run(const jobs::TaskSpec& spec) {
  jobs::TaskResult r;
  r.start = now();
  r.end = r.start;
  r.status = jobs::TaskStatus::ok;
  const auto& argv = spec.argv;
  if (argv.at(0) == "bench") {
    r.metrics = {{"score", score(argv, 0)}};
    r.objective = score(argv, 0);
  } else if (argv.at(0) == "verify") {
    if (std::stoi(argv.at(1)) > 6) {
      r.status = jobs::TaskStatus::failed;
      r.exit_code = 1;
      r.reason = "exit code 1";
    }
  } else if (argv.at(0) == "flotilla-pairs") {  // what flotilla-pairs prints for exact runs
    std::size_t candidate = 0, reference = 0;
    for (std::size_t i = 0; i < argv.size(); ++i) {
      if (argv[i] == "--candidate") candidate = i + 2;
      if (argv[i] == "--reference") reference = i + 2;
    }
    const double c = score(argv, candidate), b = score(argv, reference);
    for (int pair = 0; pair < 12; ++pair) {
      r.metrics.emplace_back(fmt::format("pair.{}.candidate", pair), c);
      r.metrics.emplace_back(fmt::format("pair.{}.reference", pair), b);
      r.metrics.emplace_back(fmt::format("pair.{}.order", pair), pair % 2);
    }
  } else {
    r.status = jobs::TaskStatus::failed;
    r.reason = "unknown command " + argv.at(0);
  }
  return r;
}

constexpr const char* kCampaign = R"([campaign]
name = loop
seed = 5
[intent]
objective = score
baseline = x=1 y=a
[space]
param = x: int: 1..8
param = y: enum: a,b
[explore]
command = bench {x} {y}
repeats = 2
[evaluate]
command = verify {x} {shard}
shards = 3
gate = top 2 per round
[search]
strategy = random
budget = 10
batch = 4
[resources]
max_attempts = 30
)";

struct Outcome {
  std::string winner;
  std::set<std::tuple<std::int64_t, int, int>> tasks;  // (candidate, kind, index) recorded ok
  std::vector<std::string> problems;
};

Outcome run_over(const Faults& faults, FaultCounts& counts, const std::string& tag) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("flotilla-campaign-test-{}-{}", ::getpid(), tag);
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "loop.ini") << kCampaign;
  auto settings = load_settings(dir / "loop.ini", {fmt::format("--campaign.results={}", (dir / "loop.h5").string())});
  RunOptions options{.live_progress = false,
                     .make_backend = [&](const jobs::BackendOptions&) {
                       return std::unique_ptr<jobs::Backend>(std::make_unique<FaultyBackend>(run, faults, &counts));
                     }};
  std::ostringstream out, err;
  const int rc = run_campaign(settings, options, out, err);
  Outcome o;
  if (rc != kExitOk) o.problems.push_back(fmt::format("exit {}: {}", rc, err.str()));
  const auto store = results::Store::open_read(dir / "loop.h5");
  const auto trials = store.trials();
  const auto events = store.events();
  std::set<std::tuple<std::int64_t, int, int, int>> keys;
  for (const auto& t : trials) {
    if (!keys.insert({t.candidate, static_cast<int>(t.kind), t.index, t.attempt}).second)
      o.problems.push_back(fmt::format("trial ({}, {}, {}, {}) recorded twice", t.candidate, static_cast<int>(t.kind),
                                       t.index, t.attempt));
    if (t.status == results::TrialStatus::ok) o.tasks.insert({t.candidate, static_cast<int>(t.kind), t.index});
  }
  const auto summary = results::summarize(store);
  if (summary.best) o.winner = summary.candidates[*summary.best].record.config;
  for (const auto& c : summary.candidates)
    if (c.status == results::CandidateStatus::pending) o.problems.push_back(fmt::format("candidate {} pending", c.record.id));
  // Nothing decided before it is recorded: a decision event follows every trial it rests on.
  for (const auto& e : events) {
    if (e.kind != "verified" && e.kind != "rolled_back" && e.kind != "confirmed" && e.kind != "not_confirmed") continue;
    const auto id = std::stoll(e.detail.substr(10));
    const auto kind = e.kind.find("confirmed") != std::string::npos ? results::TrialKind::confirm
                                                                   : results::TrialKind::evaluate;
    bool any = false;
    for (const auto& t : trials) {
      if (t.candidate != id || t.kind != kind) continue;
      any = true;
      if (t.end > e.time) o.problems.push_back(fmt::format("event {} of candidate {} before its trial", e.kind, id));
    }
    if (!any) o.problems.push_back(fmt::format("event {} of candidate {} with no trial to rest on", e.kind, id));
  }
  fs::remove_all(dir);
  return o;
}

TEST(CampaignLoop, FaultFreeRunIsTheReference) {
  FaultCounts counts;
  const auto o = run_over({}, counts, "clean");
  EXPECT_TRUE(o.problems.empty()) << fmt::format("{}", fmt::join(o.problems, "\n"));
  EXPECT_EQ(o.winner, "x=6 y=b");  // x = 7 and 8 fail verification; b adds half a point
  EXPECT_EQ(counts.total(), 0);
}

// Each fault on its own, then all of them, over several seeds: the same winner, every result
// recorded exactly once, no decision before its records.
TEST(CampaignLoop, EveryResultOnceAndTheSameWinnerUnderFaults) {
  FaultCounts clean_counts;
  const auto reference = run_over({}, clean_counts, "reference");
  ASSERT_TRUE(reference.problems.empty());
  const std::vector<std::pair<const char*, Faults>> kinds = {
      {"lose", {.lose = 0.2}},           {"refuse", {.refuse = 0.2}},       {"kill_job", {.kill_job = 0.2}},
      {"duplicate", {.duplicate = 0.3}}, {"delay", {.delay = 0.5}},
      {"all", {.lose = 0.1, .refuse = 0.05, .kill_job = 0.05, .duplicate = 0.2, .delay = 0.4}}};
  int injected = 0;
  for (const auto& [name, base] : kinds) {
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
      Faults faults = base;
      faults.seed = seed;
      FaultCounts counts;
      const auto o = run_over(faults, counts, fmt::format("{}-{}", name, seed));
      SCOPED_TRACE(fmt::format("{} seed {}", name, seed));
      EXPECT_TRUE(o.problems.empty()) << fmt::format("{}", fmt::join(o.problems, "\n"));
      EXPECT_EQ(o.winner, reference.winner);
      EXPECT_EQ(o.tasks, reference.tasks) << "a task's result lost or added";
      injected += counts.total();
    }
  }
  EXPECT_GT(injected, 100) << "the faults must actually happen";
}

}  // namespace

// Runs every task at once; at collect call `stop_at` (counting from 1) a stop arrives while the
// collect runs and every result still out comes back lost, as a scancel's would.
class StopDuringCollect final : public jobs::Backend {
 public:
  explicit StopDuringCollect(int stop_at, int* collects) : m_stop_at(stop_at), m_collects(collects) {}
  std::string_view name() const override { return "stop-during-collect"; }
  jobs::BackendCapabilities capabilities() const override { return {}; }
  void submit(std::vector<jobs::TaskSpec> tasks) override {
    for (auto& spec : tasks) {
      auto r = run(spec);
      r.id = spec.id;
      r.attempt = spec.attempt;
      m_out.push_back(std::move(r));
    }
  }
  std::vector<jobs::TaskResult> collect(std::chrono::milliseconds) override {
    ++*m_collects;
    auto out = std::move(m_out);
    m_out.clear();
    if (*m_collects == m_stop_at) {
      request_stop();
      for (auto& r : out) r.status = jobs::TaskStatus::lost, r.reason = "cancelled by scancel";
    }
    return out;
  }
  std::size_t queued() const override { return 0; }
  std::size_t running() const override { return m_out.size(); }
  void cancel_all() override {}

 private:
  int m_stop_at;
  int* m_collects;
  std::vector<jobs::TaskResult> m_out;
};

int run_stopping_at(int stop_at, int* collects, std::set<std::tuple<std::int64_t, int, int>>* recorded) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("flotilla-campaign-stop-{}-{}", ::getpid(), stop_at);
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "loop.ini") << kCampaign;
  auto settings = load_settings(dir / "loop.ini", {fmt::format("--campaign.results={}", (dir / "loop.h5").string())});
  RunOptions options{.live_progress = false, .make_backend = [&](const jobs::BackendOptions&) {
                       return std::unique_ptr<jobs::Backend>(std::make_unique<StopDuringCollect>(stop_at, collects));
                     }};
  std::ostringstream out, err;
  const int rc = run_campaign(settings, options, out, err);
  for (const auto& t : results::Store::open_read(dir / "loop.h5").trials())
    recorded->insert({t.candidate, static_cast<int>(t.kind), t.index});
  fs::remove_all(dir);
  return rc;
}

// A stop that arrives during the campaign's very last collect, whose results then come back
// lost, must end the run as interrupted with those tasks unrecorded (to run on resume), not as
// "budget spent" with a task missing (the model's FINAL_PHASE, docs/verification.md).
TEST(CampaignLoop, AStopDuringTheLastCollectIsObeyed) {
  int clean_collects = 0;
  std::set<std::tuple<std::int64_t, int, int>> all, some;
  ASSERT_EQ(run_stopping_at(-1, &clean_collects, &all), kExitOk);
  ASSERT_GT(clean_collects, 1);
  int collects = 0;
  EXPECT_EQ(run_stopping_at(clean_collects, &collects, &some), kExitInterrupted);
  EXPECT_LT(some.size(), all.size());
}
}  // namespace flotilla::scheduler::test

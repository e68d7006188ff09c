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
#include <functional>
#include <gtest/gtest.h>

#include "FaultyBackend.h"
#include "flotilla/results/Analysis.h"
#include "flotilla/results/Lineage.h"
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
  } else if (argv.at(0) == "bench-tree" || argv.at(0) == "verify-tree") {  // the score is in the candidate's tree
    std::ifstream in(argv.at(1));
    double value = 0;
    in >> value;
    if (argv.at(0) == "bench-tree") {
      r.metrics = {{"score", value}};
      r.objective = value;
    } else if (value > 6) {
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
    const auto value = [&](std::size_t at) {
      if (argv.at(at) != "bench-tree") return score(argv, at);
      std::ifstream in(argv.at(at + 1));
      double v = 0;
      in >> v;
      return v;
    };
    const double c = value(candidate), b = value(reference);
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
  std::vector<std::string> accepted;  // the accepted proposals' names, in order
  std::size_t refused = 0;
  std::set<std::tuple<std::int64_t, int, int>> tasks;  // (candidate, kind, index) recorded ok
  std::vector<std::string> problems;
};

Outcome run_over(const Faults& faults, FaultCounts& counts, const std::string& tag,
                 const std::string& campaign = kCampaign, jobs::BackendCapabilities capabilities = {},
                 const std::function<void(const fs::path&)>& prepare = {}) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("flotilla-campaign-test-{}-{}", ::getpid(), tag);
  fs::remove_all(dir);
  fs::create_directories(dir);
  if (prepare) prepare(dir);
  std::ofstream(dir / "loop.ini") << campaign;
  auto settings = load_settings(dir / "loop.ini", {fmt::format("--campaign.results={}", (dir / "loop.h5").string()),
                                                   fmt::format("--campaign.workdir={}", dir.string())});
  RunOptions options{.live_progress = false,
                     .make_backend = [&](const jobs::BackendOptions&) {
                       return std::unique_ptr<jobs::Backend>(
                           std::make_unique<FaultyBackend>(run, faults, &counts, capabilities));
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
  if (summary.best) o.winner = results::candidate_label(summary.candidates[*summary.best]);
  // Every accepted proposal has exactly one candidate (docs/propose.md).
  const auto candidates = store.candidates();
  for (const auto& p : store.proposals()) {
    o.refused += p.status == results::ProposalStatus::refused;
    if (p.status != results::ProposalStatus::accepted) continue;
    o.accepted.push_back(p.name);
    const auto n = std::count_if(candidates.begin(), candidates.end(),
                                 [&](const auto& c) { return c.origin == fmt::format("proposal {}", p.id); });
    if (n != 1) o.problems.push_back(fmt::format("accepted proposal {} ({}) has {} candidates", p.id, p.name, n));
  }
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

// The same matrix with a backend that says what Slurm's says (dependencies, work that outlives
// the scheduler) and gate = all: the pipelined round (evaluations submitted with their
// explorations, dropped when an exploration fails) runs under every fault too.
TEST(CampaignLoop, ThePipelinedRoundUnderFaults) {
  std::string campaign = kCampaign;
  campaign.replace(campaign.find("gate = top 2 per round"), 22, "gate = all");
  const jobs::BackendCapabilities slurm_like{.dependencies = true, .outlives_scheduler = true};
  FaultCounts clean_counts;
  const auto reference = run_over({}, clean_counts, "pipelined-reference", campaign, slurm_like);
  ASSERT_TRUE(reference.problems.empty()) << fmt::format("{}", fmt::join(reference.problems, "\n"));
  int injected = 0;
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    FaultCounts counts;
    const auto o = run_over({.lose = 0.1, .refuse = 0.05, .kill_job = 0.05, .duplicate = 0.2, .delay = 0.4, .seed = seed},
                            counts, fmt::format("pipelined-{}", seed), campaign, slurm_like);
    SCOPED_TRACE(fmt::format("seed {}", seed));
    EXPECT_TRUE(o.problems.empty()) << fmt::format("{}", fmt::join(o.problems, "\n"));
    EXPECT_EQ(o.winner, reference.winner);
    EXPECT_EQ(o.tasks, reference.tasks);
    injected += counts.total();
  }
  EXPECT_GT(injected, 20);
}

// A proposer over the fault-injecting backend (docs/propose.md): its answers, good and bad (a
// patch that does not apply, a wrong one, a failed run, a run that writes nothing, a path out of
// the tree, a repeat, a binary patch, a run past its timeout), journalled once; every accepted
// proposal gets exactly one candidate; the same winner (a chain of two patches) whatever the faults.
constexpr const char* kProposeCampaign = R"([campaign]
name = loop
seed = 5
[intent]
objective = score
baseline = x=1 y=a
[space]
param = x: int: 1
param = y: enum: a
[propose]
command = sh proposer.sh {round} {out}
tree = tree
budget = 12
timeout = 1s
[explore]
command = bench-tree {tree}/value.txt
repeats = 2
[evaluate]
command = verify-tree {tree}/value.txt {shard}
shards = 2
gate = all
[search]
strategy = grid
budget = 0
[resources]
max_attempts = 30
)";

void prepare_proposer(const fs::path& dir) {
  fs::create_directories(dir / "tree");
  std::ofstream(dir / "tree" / "value.txt") << "1\n";
  // Round 1: 3 (good), a patch that does not apply, and a wrong one (9 fails verification);
  // round 2: 5 on the best (3); round 3: a run that fails; round 4: done.
  std::ofstream(dir / "proposer.sh") << R"(r=$1 out=$2
p() { printf -- '--- a/value.txt\n+++ b/value.txt\n@@ -1 +1 @@\n-%s\n+%s\n' "$1" "$2" > "$out/$3.patch"; }
case $r in
1) p 1 3 three; p 7 8 stale; p 1 9 nine ;;
2) p 3 5 five ;;
3) echo 'no idea' >&2; exit 4 ;;
4) ;;
5) printf -- '--- a/../x\n+++ b/../x\n@@ -1 +1 @@\n-1\n+2\n' > "$out/outside.patch"
   p 1 3 again; echo '{"parent": "baseline"}' > "$out/again.json"
   printf -- '--- a/value.txt\n+++ b/value.txt\n@@ -1 +1 @@\n-5\n+\0\n' > "$out/binary.patch" ;;
6) sleep 30 ;;
*) echo finished > "$out/done" ;;
esac
)";
}

TEST(CampaignLoop, ProposalsUnderFaults) {
  FaultCounts clean_counts;
  const auto reference = run_over({}, clean_counts, "propose-reference", kProposeCampaign, {}, prepare_proposer);
  ASSERT_TRUE(reference.problems.empty()) << fmt::format("{}", fmt::join(reference.problems, "\n"));
  EXPECT_EQ(reference.winner, "three+five x=1 y=a");
  EXPECT_EQ(reference.accepted, (std::vector<std::string>{"nine", "three", "five"}));  // a run's, by name
  EXPECT_EQ(reference.refused, 7u);  // stale, the failed run, nothing, outside, again, binary, the timeout
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    FaultCounts counts;
    const auto o = run_over({.lose = 0.1, .refuse = 0.05, .kill_job = 0.05, .duplicate = 0.2, .delay = 0.4, .seed = seed},
                            counts, fmt::format("propose-{}", seed), kProposeCampaign, {}, prepare_proposer);
    SCOPED_TRACE(fmt::format("seed {}", seed));
    EXPECT_TRUE(o.problems.empty()) << fmt::format("{}", fmt::join(o.problems, "\n"));
    EXPECT_EQ(o.winner, reference.winner);
    EXPECT_EQ(o.accepted, reference.accepted);
    EXPECT_EQ(o.refused, reference.refused);
    EXPECT_EQ(o.tasks, reference.tasks);
  }
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

// campaign_parts_test.cpp — the campaign loop's parts on their own (scheduler/src/campaign):
// the ledger's resume state, the task factory's tasks, the dispatcher's requeues and stops.
// The loop as a whole is campaign_test.cpp.
#include <unistd.h>

#include <atomic>
#include <deque>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "BuildStage.h"
#include "Clock.h"
#include "SuiteStage.h"
#include "campaign/Dispatcher.h"
#include "campaign/Ledger.h"
#include "campaign/TaskFactory.h"
#include "flotilla/results/Events.h"
#include "flotilla/scheduler/Planning.h"

namespace flotilla::scheduler::test {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPartsCampaign = R"([campaign]
name = parts
seed = 5
[intent]
objective = score
baseline = x=1
[space]
param = x: int: 1..8
[explore]
command = bench {x} --repeat {repeat}
env = SIZE={x}
repeats = 2
[evaluate]
command = verify {x} {shard}
shards = 2
[resources]
max_attempts = 3
)";

class CampaignParts : public ::testing::Test {
 protected:
  void SetUp() override {
    m_dir = fs::temp_directory_path() / fmt::format("flotilla-parts-{}-{}", ::getpid(),
                                                    ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(m_dir);
    fs::create_directories(m_dir);
    write(kPartsCampaign);
  }
  void TearDown() override { fs::remove_all(m_dir); }

  void write(const std::string& text) { std::ofstream(m_dir / "parts.ini") << text; }
  Settings settings(std::vector<std::string> extra = {}) {
    extra.push_back(fmt::format("--campaign.results={}", (m_dir / "parts.h5").string()));
    extra.push_back(fmt::format("--campaign.workdir={}", m_dir.string()));
    return load_settings(m_dir / "parts.ini", extra);
  }
  static results::CampaignInfo info(const Settings& s) {
    return {.name = s.name, .fingerprint = s.fingerprint(), .objective = s.objective, .direction = "maximize",
            .repeats = s.repeats, .shards = s.shards};
  }
  static results::TrialRecord trial(std::int64_t candidate, results::TrialKind kind, int index,
                                    results::TrialStatus status = results::TrialStatus::ok, int attempt = 0) {
    return {.candidate = candidate, .kind = kind, .index = index, .attempt = attempt, .status = status,
            .objective = status == results::TrialStatus::ok ? 1.0 : std::nan("")};
  }

  fs::path m_dir;
};

TEST_F(CampaignParts, TheLedgerResumesItsDecisionsFromTheJournal) {
  const auto s = settings();
  std::ostringstream err;
  {
    Ledger ledger(s);
    EXPECT_FALSE(ledger.open(info(s), err));
    ledger.add_candidate(0, s.space.parse_configuration("x=1"), "baseline");
    ledger.add_candidate(1, s.space.parse_configuration("x=2"), "random");
    ledger.add_candidate(1, s.space.parse_configuration("x=3"), "proposal 0");
    ledger.store().add_event(results::candidate_event(now_seconds(), "rolled_back", 1, "shard 0 failed"));
    EXPECT_TRUE(ledger.first_decision(2));  // decided, but killed before its event
  }
  Ledger resumed(s);
  EXPECT_TRUE(resumed.open(info(s), err));
  EXPECT_NE(err.str().find("resuming"), std::string::npos);
  EXPECT_FALSE(resumed.first_decision(1)) << "its event is in the journal";
  EXPECT_TRUE(resumed.first_decision(2)) << "no event was recorded for it";
  EXPECT_FALSE(resumed.first_decision(2));
  EXPECT_EQ(resumed.baseline_id(), 0);
  EXPECT_EQ(resumed.round_ids(1), (std::vector<std::int64_t>{1, 2}));
  EXPECT_EQ(resumed.explored_count(), 1u) << "the baseline and proposals are not declared candidates";
  EXPECT_EQ(resumed.config(2), s.space.parse_configuration("x=3"));
}

TEST_F(CampaignParts, TheLedgerRefusesAnotherCampaignsFile) {
  const auto s = settings();
  std::ostringstream err;
  { Ledger(s).open(info(s), err); }
  const auto other = settings({"--explore.command=bench2 {x}"});
  Ledger ledger(other);
  try {
    ledger.open(info(other), err);
    FAIL() << "resumed another campaign's file";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("explore.command"), std::string::npos) << e.what();
  }
}

TEST_F(CampaignParts, TheLedgerAnswersFromItsTrials) {
  const auto s = settings();
  std::ostringstream err;
  Ledger ledger(s);
  ledger.open(info(s), err);
  ledger.add_candidate(0, s.space.parse_configuration("x=1"), "baseline");
  ledger.add_candidate(1, s.space.parse_configuration("x=2"), "random");
  EXPECT_EQ(ledger.explore_outcome(0), std::nullopt);
  ledger.add_trial(trial(0, results::TrialKind::explore, 0));
  EXPECT_EQ(ledger.explore_outcome(0), std::nullopt) << "one repeat of two";
  EXPECT_FALSE(ledger.add_trial(trial(0, results::TrialKind::explore, 0))) << "recorded once";
  ledger.add_trial(trial(0, results::TrialKind::explore, 1));
  EXPECT_EQ(ledger.explore_outcome(0), true);
  ledger.add_trial(trial(1, results::TrialKind::explore, 1, results::TrialStatus::failed));
  EXPECT_EQ(ledger.explore_outcome(1), false);
  ledger.add_trial(trial(1, results::TrialKind::build, 0, results::TrialStatus::failed, 0));
  EXPECT_TRUE(ledger.build_failed(1));
  ledger.add_trial(trial(1, results::TrialKind::build, 0, results::TrialStatus::ok, 1));
  EXPECT_FALSE(ledger.build_failed(1)) << "the latest attempt counts";
}

// The ledger's index of trials by candidate (issue 35): the same lists as a scan of the whole
// table, kept in step by add_trial, and rebuilt from the file on resume.
TEST_F(CampaignParts, TheLedgerIndexesTrialsByCandidateAcrossAResume) {
  const auto s = settings();
  std::ostringstream err;
  const auto scanned = [](const Ledger& ledger, std::int64_t id) {
    std::vector<const results::TrialRecord*> out;
    for (const auto& t : ledger.trials())
      if (t.candidate == id) out.push_back(&t);
    return out;
  };
  // With times: a row without them is one a failed append left behind, which a resume drops.
  double clock = 1.7e9;
  const auto timed = [&](results::TrialRecord t) {
    t.start = clock, t.end = clock + 1, clock += 1;
    return t;
  };
  {
    Ledger ledger(s);
    ledger.open(info(s), err);
    for (int x = 1; x <= 3; ++x) ledger.add_candidate(1, s.space.parse_configuration(fmt::format("x={}", x)), "random");
    // Interleaved, as a round's tasks come back.
    ledger.add_trial(timed(trial(2, results::TrialKind::explore, 0)));
    ledger.add_trial(timed(trial(0, results::TrialKind::explore, 0)));
    ledger.add_trial(timed(trial(2, results::TrialKind::explore, 1, results::TrialStatus::timeout)));
    EXPECT_FALSE(ledger.add_trial(timed(trial(2, results::TrialKind::explore, 1)))) << "recorded once";
    ledger.add_trial(timed(trial(0, results::TrialKind::evaluate, 0)));
    for (std::int64_t id = 0; id < 3; ++id) EXPECT_EQ(ledger.trials_of(id), scanned(ledger, id)) << id;
    EXPECT_EQ(ledger.trials_of(2).size(), 2u);
    EXPECT_TRUE(ledger.trials_of(1).empty());
    EXPECT_TRUE(ledger.trials_of(7).empty()) << "an unknown candidate has no trials";
    EXPECT_TRUE(ledger.trials_of(-1).empty());
  }
  Ledger resumed(s);
  EXPECT_TRUE(resumed.open(info(s), err));
  ASSERT_EQ(resumed.trials().size(), 4u) << "every trial recorded is read back";
  for (std::int64_t id = 0; id < 3; ++id) EXPECT_EQ(resumed.trials_of(id), scanned(resumed, id)) << id;
  ASSERT_EQ(resumed.trials_of(2).size(), 2u);
  EXPECT_EQ(resumed.trials_of(2)[1]->status, results::TrialStatus::timeout);
  const auto reads = resumed.trial_reads();
  EXPECT_EQ(resumed.explore_outcome(2), false);
  EXPECT_EQ(resumed.trial_reads() - reads, 2u) << "candidate 2's trials only";
  EXPECT_EQ(resumed.explore_outcome(0), std::nullopt) << "one repeat of two";
  // The resumed index grows with the trials this run records.
  resumed.add_trial(timed(trial(1, results::TrialKind::build, 0, results::TrialStatus::failed)));
  resumed.add_trial(timed(trial(0, results::TrialKind::explore, 1)));
  for (std::int64_t id = 0; id < 3; ++id) EXPECT_EQ(resumed.trials_of(id), scanned(resumed, id)) << id;
  EXPECT_TRUE(resumed.build_failed(1));
  EXPECT_EQ(resumed.explore_outcome(0), true);
}

// The per-candidate questions read the candidate's trials only, and the summary is computed once
// per change of the tables (issue 35: each was a scan of every trial, so a campaign's rounds cost
// O(candidates x trials)). Counted in trial records read, not timed.
TEST_F(CampaignParts, TheLedgerReadsOneCandidatesTrialsAndSummarisesOncePerChange) {
  const auto s = settings();
  std::ostringstream err;
  Ledger ledger(s);
  ledger.open(info(s), err);
  constexpr int kCandidates = 8;
  ledger.add_candidate(0, s.space.parse_configuration("x=1"), "baseline");
  for (int x = 2; x <= kCandidates; ++x)
    ledger.add_candidate(1, s.space.parse_configuration(fmt::format("x={}", x)), "random");
  for (int id = 0; id < kCandidates; ++id) {
    ledger.add_trial(trial(id, results::TrialKind::explore, 0));
    ledger.add_trial(trial(id, results::TrialKind::explore, 1));
    ledger.add_trial(trial(id, results::TrialKind::evaluate, 0));
  }
  const std::uint64_t all = ledger.trials().size();
  auto reads = ledger.trial_reads();
  const auto read_since = [&] {
    const auto n = ledger.trial_reads() - reads;
    reads = ledger.trial_reads();
    return n;
  };
  EXPECT_EQ(ledger.explore_outcome(5), true);
  EXPECT_EQ(read_since(), 3u) << "candidate 5's three trials";
  EXPECT_FALSE(ledger.build_failed(5));
  EXPECT_EQ(read_since(), 3u);
  EXPECT_EQ(ledger.trials_of(3).size(), 3u);
  EXPECT_EQ(read_since(), 3u);

  const auto fresh = [&] {
    return results::summary_json(
        results::summarize(ledger.store().campaign(), ledger.candidates(), ledger.trials(), ledger.proposals()), 100);
  };
  EXPECT_EQ(results::summary_json(ledger.summarize(), 100), fresh());
  constexpr std::uint64_t kBaselines = 3;  // the baseline's trials, read again for the noise at each summary
  EXPECT_EQ(read_since(), 2 * all + kBaselines) << "the first summary indexes every trial, then reads each candidate's";
  ledger.summarize();
  ledger.summarize_ids({1, 2});
  EXPECT_EQ(read_since(), 0u) << "nothing changed: the same summary";
  ledger.add_trial(trial(2, results::TrialKind::evaluate, 1, results::TrialStatus::failed));
  EXPECT_EQ(ledger.summarize_ids({2})[0].status, results::CandidateStatus::rolled_back) << "a new trial is seen";
  EXPECT_EQ(read_since(), 1 + 4 + kBaselines) << "the new trial, then its candidate's four, not every trial";
  EXPECT_EQ(results::summary_json(ledger.summarize(), 100), fresh());
  read_since();
  ledger.add_candidate(2, s.space.parse_configuration("x=8"), "random");
  EXPECT_EQ(ledger.summarize().candidates.size(), static_cast<std::size_t>(kCandidates + 1)) << "a new candidate too";
  EXPECT_EQ(read_since(), kBaselines) << "a new candidate has no trials to read";
  EXPECT_EQ(results::summary_json(ledger.summarize(), 100), fresh());
  ledger.add_proposal({.round = 2, .status = results::ProposalStatus::refused, .name = "p"});
  ledger.summarize();
  EXPECT_EQ(read_since(), kBaselines) << "and a new proposal: no candidate names it";
}

TEST(PairOrder, BlocksOfTwoRunOneEachWay) {
  for (std::uint64_t seed : {1u, 7u, 1234u}) {
    const auto order = pair_order(seed, 3, 20);
    ASSERT_EQ(order.size(), 20u);
    for (std::size_t i = 0; i < order.size(); i += 2)
      EXPECT_TRUE(order.substr(i, 2) == "AB" || order.substr(i, 2) == "BA") << order;
    EXPECT_EQ(pair_order(seed, 3, 20), order) << "from the seed";
  }
  EXPECT_NE(pair_order(1, 3, 40), pair_order(1, 4, 40)) << "each candidate its own order";
  EXPECT_EQ(pair_order(1, 3, 5).size(), 5u);
}

TEST_F(CampaignParts, TheTaskFactoryFillsEachTrialsCommand) {
  const auto s = settings();
  std::ostringstream err;
  Ledger ledger(s);
  ledger.open(info(s), err);
  ledger.add_candidate(0, s.space.parse_configuration("x=1"), "baseline");
  ledger.add_candidate(1, s.space.parse_configuration("x=5"), "random");
  BuildStage builds(s, {});
  SuiteStage suite(s, {});
  TaskFactory tasks(s, ledger, builds, suite, {});
  const auto explore = tasks.make(1, results::TrialKind::explore, 1);
  EXPECT_EQ(explore.argv, (std::vector<std::string>{"bench", "5", "--repeat", "1"}));
  EXPECT_EQ(explore.objective, "score");
  EXPECT_EQ(explore.resources, "explore");
  ASSERT_EQ(explore.env.size(), 1u);
  EXPECT_EQ(explore.env[0].second, "5");
  const auto evaluate = tasks.make(1, results::TrialKind::evaluate, 1, 2);
  EXPECT_EQ(evaluate.argv, (std::vector<std::string>{"verify", "5", "1"}));
  EXPECT_EQ(evaluate.attempt, 2);
  EXPECT_EQ(evaluate.after, "explore") << "an evaluation waits for the exploration";
  EXPECT_TRUE(evaluate.objective.empty());
  EXPECT_EQ(decode_task_id(evaluate.id).kind, results::TrialKind::evaluate);
  // A confirmation runs both commands, each with its own env, in one task.
  const auto confirm = tasks.make(1, results::TrialKind::confirm, 0);
  const auto& argv = confirm.argv;
  ASSERT_FALSE(argv.empty());
  EXPECT_EQ(argv[0], "flotilla-pairs");
  const auto at = [&](const std::string& flag) {
    return std::find(argv.begin(), argv.end(), flag) - argv.begin();
  };
  ASSERT_LT(at("--candidate"), static_cast<long>(argv.size()));
  EXPECT_EQ(argv[at("--candidate") + 2], "env");
  EXPECT_EQ(argv[at("--candidate") + 3], "SIZE=5");
  EXPECT_EQ(argv[at("--reference") + 3], "SIZE=1");
  EXPECT_EQ(argv[at("--order") + 1], pair_order(s.seed, 1, s.confirm_max_pairs));
  EXPECT_TRUE(confirm.exclusive);
}

// A backend whose results the test hands out: each submitted task comes back as the next
// status of its script (ok once the script is spent).
class ScriptedBackend final : public jobs::Backend {
 public:
  ScriptedBackend(std::deque<jobs::TaskStatus> script, jobs::BackendCapabilities capabilities = {})
      : m_script(std::move(script)), m_capabilities(capabilities) {}
  std::string_view name() const override { return "scripted"; }
  jobs::BackendCapabilities capabilities() const override { return m_capabilities; }
  void submit(std::vector<jobs::TaskSpec> tasks) override {
    for (auto& t : tasks) submitted.push_back(t);
    for (auto& t : tasks) m_pending.push_back(std::move(t));
  }
  std::vector<jobs::TaskResult> collect(std::chrono::milliseconds) override {
    std::vector<jobs::TaskResult> out;
    for (const auto& spec : m_pending) {
      jobs::TaskResult r{.id = spec.id, .status = jobs::TaskStatus::ok, .objective = 2.0, .attempt = spec.attempt};
      if (!m_script.empty()) {
        r.status = m_script.front();
        m_script.pop_front();
      }
      if (m_cancelled) r.status = jobs::TaskStatus::cancelled;
      if (r.status == jobs::TaskStatus::lost) r.reason = "its rank died";
      out.push_back(r);
    }
    m_pending.clear();
    return out;
  }
  std::size_t queued() const override { return 0; }
  std::size_t running() const override { return m_pending.size(); }
  void cancel_all() override { m_cancelled = true; }
  std::size_t detach() override {
    detached = true;
    return 1;
  }

  std::vector<jobs::TaskSpec> submitted;
  bool detached = false;

 private:
  std::deque<jobs::TaskStatus> m_script;
  std::vector<jobs::TaskSpec> m_pending;
  jobs::BackendCapabilities m_capabilities;
  bool m_cancelled = false;
};

class DispatcherParts : public CampaignParts {
 protected:
  void start(std::deque<jobs::TaskStatus> script, jobs::BackendCapabilities capabilities = {}) {
    m_settings.emplace(settings());
    m_ledger.emplace(*m_settings);
    std::ostringstream err;
    m_ledger->open(info(*m_settings), err);
    m_ledger->add_candidate(0, m_settings->space.parse_configuration("x=1"), "baseline");
    m_builds.emplace(*m_settings, BuildStage::BackendFactory{});
    m_suite.emplace(*m_settings, std::vector<fs::path>{});
    m_tasks.emplace(*m_settings, *m_ledger, *m_builds, *m_suite, TaskFactory::TreeOf{});
    m_stops.emplace(m_signal, m_dir / "parts.h5.stop");
    m_dispatch.emplace(*m_settings, m_options, *m_ledger, *m_tasks, *m_suite, *m_stops);
    auto backend = std::make_unique<ScriptedBackend>(std::move(script), capabilities);
    m_backend = backend.get();
    m_dispatch->set_backend(std::move(backend));
  }
  Halt run_explore() {
    return m_dispatch->run({m_tasks->make(0, results::TrialKind::explore, 0)}, [](bool) {});
  }

  std::atomic<bool> m_signal{false};
  RunOptions m_options;
  std::optional<Settings> m_settings;
  std::optional<Ledger> m_ledger;
  std::optional<BuildStage> m_builds;
  std::optional<SuiteStage> m_suite;
  std::optional<TaskFactory> m_tasks;
  std::optional<StopSignals> m_stops;
  std::optional<Dispatcher> m_dispatch;
  ScriptedBackend* m_backend = nullptr;
};

TEST_F(DispatcherParts, ATaskLostToItsLauncherRunsAgainAsItsNextAttempt) {
  start({jobs::TaskStatus::lost, jobs::TaskStatus::lost});
  EXPECT_EQ(run_explore(), std::nullopt);
  ASSERT_EQ(m_backend->submitted.size(), 3u);
  EXPECT_EQ(m_backend->submitted[2].attempt, 2);
  ASSERT_EQ(m_ledger->trials().size(), 1u) << "one result, charged to no attempt before it";
  EXPECT_EQ(m_ledger->trials()[0].attempt, 2);
  EXPECT_EQ(m_ledger->trials()[0].status, results::TrialStatus::ok);
  int requeued = 0;
  for (const auto& e : m_ledger->store().events()) requeued += e.kind == "task_requeued";
  EXPECT_EQ(requeued, 2);
}

// Lost on every attempt while nothing of the run came back: the launcher fails (issue 34: mpirun
// dying at MPI_Init was recorded as the baseline's own failure, and a resumed run stopped at once).
TEST_F(DispatcherParts, AttemptsRunOutWithNothingBackAndTheLauncherIsBlamed) {
  start({jobs::TaskStatus::lost, jobs::TaskStatus::lost, jobs::TaskStatus::lost});
  try {
    (void)run_explore();
    ADD_FAILURE() << "no LauncherFailed";
  } catch (const LauncherFailed& failed) {
    EXPECT_NE(std::string(failed.what()).find("was lost 3 times, and no task of this run came back: its rank died"),
              std::string::npos)
        << failed.what();
  }
  EXPECT_EQ(m_backend->submitted.size(), 3u) << "resources.max_attempts = 3";
  EXPECT_TRUE(m_ledger->trials().empty()) << "nothing charged to the candidate";
}

// Once a task came back, the launcher works: a task lost on every attempt is its own (its code may
// crash the rank), recorded as failed.
TEST_F(DispatcherParts, AttemptsRunOutAfterATaskCameBackAndTheLossIsRecorded) {
  start({jobs::TaskStatus::ok, jobs::TaskStatus::lost, jobs::TaskStatus::lost, jobs::TaskStatus::lost});
  EXPECT_EQ(run_explore(), std::nullopt);
  EXPECT_EQ(m_dispatch->run({m_tasks->make(0, results::TrialKind::explore, 1)}, [](bool) {}), std::nullopt);
  EXPECT_EQ(m_backend->submitted.size(), 4u);
  ASSERT_EQ(m_ledger->trials().size(), 2u);
  EXPECT_EQ(m_ledger->trials()[0].status, results::TrialStatus::ok);
  EXPECT_NE(m_ledger->trials()[1].status, results::TrialStatus::ok);
}

// A batch system's lost jobs have their own accounting: no launcher to blame.
TEST_F(DispatcherParts, WorkThatOutlivesTheSchedulerRecordsItsLosses) {
  start({jobs::TaskStatus::lost, jobs::TaskStatus::lost, jobs::TaskStatus::lost}, {.outlives_scheduler = true});
  EXPECT_EQ(run_explore(), std::nullopt);
  ASSERT_EQ(m_ledger->trials().size(), 1u);
  EXPECT_NE(m_ledger->trials()[0].status, results::TrialStatus::ok);
}

TEST_F(DispatcherParts, AStopRequestCancelsAndRecordsNothingCancelled) {
  start({});
  std::ofstream(m_dir / "parts.h5.stop") << "";
  EXPECT_EQ(run_explore(), Stop::cancelled);
  EXPECT_TRUE(m_ledger->trials().empty()) << "a cancelled task runs again on resume";
  EXPECT_FALSE(m_backend->detached);
}

TEST_F(DispatcherParts, ASignalLeavesWorkThatOutlivesTheScheduler) {
  start({}, {.outlives_scheduler = true});
  m_signal = true;
  EXPECT_EQ(run_explore(), Stop::interrupted);
  EXPECT_TRUE(m_backend->detached);
  EXPECT_EQ(m_dispatch->detached(), 1u);
}

}  // namespace
}  // namespace flotilla::scheduler::test

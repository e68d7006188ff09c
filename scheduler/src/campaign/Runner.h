// Runner.h — one campaign from its first round to its report (Campaign.h: run_campaign).
//
// The parts, each with one job:
//   Ledger       what is recorded: the results file, its tables in memory, the resume state
//   TaskFactory  the task of each trial (command lines, env, timeouts, resources)
//   Dispatcher   runs tasks on the backend, records their results, obeys stops
//   BuildStage, SuiteStage, ProposeStage   builds, test suites, proposers (their own headers)
// The runner holds them and the strategy, and runs the rounds (Round.cpp): each round is
//   propose -> build -> explore -> evaluate -> confirm
// where every step that runs tasks returns a Halt when it obeyed a stop (Stop.h), and the
// round returns how it ended as a value (RoundEnd).
#pragma once

#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "flotilla/scheduler/Campaign.h"
#include "flotilla/search/Strategy.h"
#include "../BuildStage.h"
#include "../Progress.h"
#include "../ProposalContext.h"
#include "../ProposeStage.h"
#include "../SuiteStage.h"
#include "Dispatcher.h"
#include "Ledger.h"
#include "Stop.h"
#include "TaskFactory.h"

namespace flotilla::scheduler {

// How a round ended: the next round follows, the campaign is over (why), or a stop was obeyed.
struct RoundEnd {
  enum class Kind { next, finished, stopped };
  Kind kind = Kind::next;
  std::string reason;  // finished: what the report says
  Stop stop{};         // stopped: which

  static RoundEnd next() { return {}; }
  static RoundEnd finished(std::string why) { return {Kind::finished, std::move(why), {}}; }
  static RoundEnd stopped(Stop stop) { return {Kind::stopped, {}, stop}; }
};

class CampaignRunner {
 public:
  CampaignRunner(const Settings& settings, const RunOptions& options, std::ostream& out, std::ostream& err,
                 const StopSignals& stops);
  int run();

 private:
  // Runner.cpp: setting up, the loop, the report.
  void open();
  results::CampaignInfo campaign_info() const;
  void note(std::string kind, std::string message);
  void tell(const results::CandidateSummary& c);
  void add_candidates(int round, const std::vector<search::Configuration>& configs, const std::string& origin);
  int stopped(Stop stop);
  int report(const std::string& stop, double seconds);
  ProgressState progress(int round, const char* phase) const;
  std::function<void(bool)> show(int round, const char* phase);
  std::filesystem::path tree_of(std::int64_t id) const;

  // Round.cpp: the steps of a round.
  RoundEnd run_round(int round);
  std::optional<RoundEnd> new_batch(int round);
  Halt run_builds(int round, const std::vector<std::int64_t>& ids);
  Halt explore(int round, const std::vector<std::int64_t>& ids, bool pipelined);
  Halt run_adaptive_repeats(int round, const std::vector<std::int64_t>& ids);
  Halt evaluate_round(int round, const std::vector<std::int64_t>& ids, bool pipelined);
  Halt evaluate_front(int round);
  Halt evaluate(int round, const std::vector<std::int64_t>& ids);
  Halt run_test_gates(int round, const std::vector<std::int64_t>& ids);
  Halt confirm_round(int round);
  void record_estimates(const results::CampaignSummary& summary, const std::vector<std::int64_t>& ids);
  void record_confirmation(const results::CandidateSummary& c, const results::ConfirmationSummary& done);
  void record_decisions(const std::vector<std::int64_t>& chosen);
  struct PhasePart {
    const std::vector<std::int64_t>& ids;
    results::TrialKind kind;
    int count;
  };
  Halt run_phases(int round, const char* phase, const std::vector<PhasePart>& parts);
  Halt head_to_head_round(int round);
  std::optional<search::Configuration> full_fidelity_twin(const results::CampaignSummary& summary) const;

  // Proposing.cpp: proposers' rounds (docs/propose.md).
  bool fleet_answered(int round) const;
  void complete_proposals(int round);
  std::map<std::int64_t, ContextTests> context_tests(const std::vector<std::int64_t>& ids) const;
  Halt propose(int round, const results::CampaignSummary& summary, const std::vector<search::Configuration>& configs,
               bool declared_spent);

  const Settings& m_s;
  const RunOptions& m_o;
  std::ostream& m_out;
  std::ostream& m_err;
  const StopSignals& m_stops;
  Progress m_progress;
  Ledger m_ledger;
  SuiteStage m_suite;            // per-test outcomes and the test gate (evaluate.suite)
  BuildStage m_builds;           // builds once per build key (build.command)
  mutable ProposeStage m_propose;  // proposers and candidates' trees ([propose]); trees are made on demand
  TaskFactory m_tasks;
  Dispatcher m_dispatch;
  std::unique_ptr<search::Strategy> m_strategy;
  std::string m_warm_note;                 // what search.warm_start gave the strategy, said once per run
  std::size_t m_detached_builds = 0;       // build jobs left running when interrupted (BuildStage)
  std::size_t m_finished_before_run = 0;   // candidates an earlier run finished (ProgressLine.h)
};

// What a backend tells the user that is not a task's result (BackendOptions::notice).
using Notice = std::function<void(std::string kind, std::string message)>;

// The backends of a campaign (Backends.cpp): where its tasks run, and where its builds run.
std::unique_ptr<jobs::Backend> make_campaign_backend(const Settings& s, const RunOptions& o,
                                                     Notice notice);
BuildStage::BackendFactory make_build_backend_factory(const Settings& s, const RunOptions& o,
                                                      Notice notice);
// What every local task of this campaign carries in its environment (Descendants.h).
std::string campaign_tag(const Settings& s);
// The strategy, with search.warm_start's advice; `note` says what the warm start gave it.
std::unique_ptr<search::Strategy> make_campaign_strategy(const Settings& s, std::string& note);

}  // namespace flotilla::scheduler

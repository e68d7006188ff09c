// Campaign.cpp — the campaign loop (see Campaign.h for its invariants).
//
// Rounds: round 0 holds the baseline (when one is given); every later round holds one batch
// asked from the strategy. Each round explores its candidates (repeats), gates the best of them
// and evaluates those (shards). On resume the same loop runs over recorded rounds, running only
// the tasks without a recorded result.
#include "flotilla/scheduler/Campaign.h"

#include <unistd.h>

#include <atomic>
#include <charconv>
#include <chrono>
#include <cmath>
#include <map>
#include <ostream>
#include <set>
#include <sstream>
#include <utility>

#include <fmt/format.h>

#include "flotilla/jobs/Backend.h"
#include "flotilla/jobs/Command.h"
#include "flotilla/jobs/Placement.h"
#include "flotilla/jobs/Slurm.h"  // shell_quote
#include "flotilla/results/Analysis.h"
#include "flotilla/results/Columns.h"
#include "flotilla/results/Printable.h"
#include "flotilla/results/Store.h"
#include "flotilla/scheduler/Ingest.h"
#include "flotilla/scheduler/Planning.h"
#include "flotilla/scheduler/Proposals.h"
#include "flotilla/search/Strategy.h"
#include "BuildInputs.h"
#include "BuildStage.h"
#include "ProposalContext.h"
#include "ProposeStage.h"
#include "Progress.h"
#include "Provenance.h"
#include "SuiteStage.h"

namespace flotilla::scheduler {
namespace {

std::atomic<bool> g_stop{false};

struct Interrupted {};
struct Cancelled {};  // a stop request (`flotilla cancel`) was obeyed

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

class CampaignRunner {
 public:
  CampaignRunner(const Settings& s, const RunOptions& o, std::ostream& out, std::ostream& err)
      : m_s(s), m_o(o), m_out(out), m_err(err), m_progress(err, o.live_progress), m_suite(s, o.path_prepend, [this](std::int64_t id) {
          return task_values(id, results::TrialKind::evaluate, 0);
        }), m_builds(s, build_backend_factory(s, o)), m_propose(s, o.path_prepend) {
    jobs::SlurmResources slurm{.client = s.slurm.client, .shape = s.slurm.explore,
                               .stages = {{"explore", s.slurm.explore}, {"evaluate", s.slurm.evaluate}},
                               .workdir = s.slurm.jobs_dir, .job_prefix = s.name, .max_attempts = s.max_attempts,
                               .max_submit_jobs = s.slurm.max_submit_jobs, .hold = o.hold_jobs,
                               .start = s.slurm.start, .setup = s.slurm.setup,
                               .launcher = s.slurm.launcher, .srun_mpi = s.slurm.srun_mpi};
    auto notice = [this](std::string kind, std::string message) { note(std::move(kind), std::move(message)); };
    const auto make = o.make_backend ? o.make_backend : [](const jobs::BackendOptions& b) { return jobs::make_backend(b); };
    m_backend = make(
        {.name = s.backend, .slots = s.slots, .pin = s.pin, .ranks = s.ranks, .path_prepend = o.path_prepend,
         .jobs_dir = s.slurm.jobs_dir, .campaign_tag = campaign_tag(s),
         .slurm = std::move(slurm), .notice = notice});
    search::StrategyOptions options{.name = s.strategy, .seed = s.seed, .maximize = s.maximize, .fidelity = s.fidelity};
    for (const auto& goal : s.objectives) options.maximize_objectives.push_back(goal.maximize);
    if (!s.warm_start.empty()) {
      const auto file = s.warm_start.string();
      results::CampaignSummary other;
      try {
        other = results::summarize(results::Store::open_read(s.warm_start));
      } catch (const results::StoreError& e) {
        throw ConfigError(fmt::format("[search] warm_start: {}", e.what()));
      }
      auto warm = warm_start_from(other, s, file);
      m_warm_note = fmt::format("warm start: {} outcomes of {} given to the strategy as advice ({} failed{})",
                                warm.observations.size(), file, warm.failed,
                                warm.off_space > 0 ? fmt::format("; {} not configurations of this space, e.g. {}",
                                                                 warm.off_space, warm.first_off_space)
                                                   : std::string());
      options.warm_start = std::move(warm.observations);
    }
    m_strategy = search::make_strategy(options, s.space);
  }

  // What every local task of this campaign carries in its environment (Descendants.h).
  static std::string campaign_tag(const Settings& s) { return std::filesystem::absolute(s.results).string(); }

  // What a backend tells the user that is not a task's result (BackendOptions::notice). The store
  // opens later (run()); a notice before that is only printed.
  void note(std::string kind, std::string message) {
    if (m_store) m_store->add_event({now_seconds(), kind, message});
    m_progress.note(fmt::format("flotilla: {}", message));
  }

  // Where builds run (BuildStage.h): Slurm jobs of their own on [resources.build], in
  // JOBS_DIR/builds (build.on = job), or processes on this host, build.parallel at a time.
  BuildStage::BackendFactory build_backend_factory(const Settings& s, const RunOptions& o) {
    if (s.build_jobs) {
      jobs::SlurmResources slurm{.client = s.slurm.client, .shape = s.slurm.build, .stages = {{"build", s.slurm.build}},
                                 .workdir = s.slurm.jobs_dir / "builds", .job_prefix = s.name + "-build",
                                 .max_attempts = s.max_attempts, .max_submit_jobs = s.slurm.max_submit_jobs,
                                 .hold = o.hold_jobs, .start = "batch", .setup = s.slurm.setup,
                                 .launcher = s.slurm.launcher, .srun_mpi = s.slurm.srun_mpi};
      return [this, slurm, path_prepend = o.path_prepend] {
        return jobs::make_backend({.name = "slurm", .path_prepend = path_prepend, .slurm = slurm,
                                   .notice = [this](std::string kind, std::string message) {
                                     note(std::move(kind), std::move(message));
                                   }});
      };
    }
    return [slots = s.build_parallel, path_prepend = o.path_prepend, tag = campaign_tag(s)] {
      return jobs::make_backend(
          {.name = "local", .slots = slots, .pin = false, .path_prepend = path_prepend, .campaign_tag = tag});
    };
  }

  int run() {
    m_suite.prepare();
    open_store();
    if (m_builds.active()) {
      try {  // two campaigns on one build.dir would overwrite each other's builds (BuildInputs.h)
        claim_build_root(m_s.build_root, m_s.campaign_results.string());
      } catch (const std::runtime_error& e) {
        throw ConfigError(fmt::format("{}: [build] dir: {}", m_s.config_path.string(), e.what()));
      }
    }
    // We hold the results file's lock: any process still carrying the campaign's tag was left
    // by an earlier scheduler of it that was killed (a task's setsid child, a daemon).
    if (const auto killed = jobs::kill_campaign_leftovers(campaign_tag(m_s)); !killed.empty()) {
      m_store->add_event({now_seconds(), "leftovers_killed", killed + " left by an earlier run"});
      // `killed` names processes by their command names, which a task sets as it likes.
      m_err << results::printable(fmt::format("{}: killed {} that an earlier, killed run of this campaign left running\n",
                                              m_s.results.string(), killed));
    }
    if (!m_backend->capabilities().outlives_scheduler) {
      m_suite.remove_stale_temporaries();
      // Which guarantee holds that a task's descendants end with it (docs/verification.md).
      m_store->add_event({now_seconds(), "containment", jobs::task_containment()});
    }
    if (std::error_code ec; std::filesystem::remove(stop_request_path(m_s), ec))
      m_err << fmt::format("{}: removed a stop request no run obeyed\n", stop_request_path(m_s).string());
    const double started = now_seconds();
    m_finished_before_run = finished_candidates(summarize());  // a resume's: not this run's rate
    std::string stop;
    try {
      for (int round = 0; stop.empty(); ++round) {
        stop = run_round(round);
        if (stop.empty()) m_progress.round_end(progress(round, "done"));  // a stop ran no round
      }
    } catch (const Interrupted&) {
      m_progress.finish();
      const std::size_t detached = m_detached + m_detached_builds;
      const std::string left = detached > 0 ? fmt::format("; {} Slurm job(s) keep running, and the next run takes "
                                                         "them up again", detached)
                                              : std::string();
      m_store->add_event({now_seconds(), "interrupted", "stopped by signal; run again to resume" + left});
      m_err << fmt::format("interrupted: finished tasks are recorded in {}{}; run the same command again to resume\n",
                           m_s.results.string(), left);
      return kExitInterrupted;
    } catch (const results::StoreSpaceError&) {
      // The disk is nearly full: a task that writes large files may be the cause, so the tasks
      // running now are named here and in the journal, which the resumed run repeats.
      m_progress.finish();
      const auto running = disk_full_text();
      m_err << fmt::format("{}: stopped with its file system nearly full: {}\n", m_s.results.string(), running);
      try {
        m_store->add_last_event({now_seconds(), "disk_full", "stopped with the file system nearly full: " + running});
      } catch (const results::StoreError&) {
      }
      throw;
    } catch (const Cancelled&) {
      m_progress.finish();
      std::error_code ec;
      std::filesystem::remove(stop_request_path(m_s), ec);
      m_store->add_event({now_seconds(), "cancelled", "stopped by `flotilla cancel`; nothing was resubmitted"});
      m_err << fmt::format("cancelled by `flotilla cancel`: finished tasks are recorded in {}; nothing was "
                           "resubmitted; run the same command again to resume\n",
                           m_s.results.string());
      return kExitCancelled;
    }
    m_progress.finish();
    m_store->add_event({now_seconds(), "campaign_finished", stop});
    return report(stop, now_seconds() - started);
  }

 private:
  void open_store() {
    if (std::filesystem::exists(m_s.results)) {
      m_store.emplace(results::Store::open_for_append(m_s.results));
      const auto& info = m_store->campaign();
      if (const auto change = fingerprint_change(info.fingerprint, m_s.fingerprint()))
        throw ConfigError(fmt::format(
            "{}: recorded by a different campaign, so its results cannot be resumed: {}. Restore the setting, or "
            "give a new results file (--campaign.results=FILE)",
            m_s.results.string(), *change));
      m_candidates = m_store->candidates();
      m_trials = m_store->trials();
      m_proposals = m_store->proposals();
      for (const auto& e : m_store->estimates()) m_estimated.insert({e.candidate, e.repeats});
      for (const auto& e : m_store->events())
        if ((e.kind == "verified" || e.kind == "rolled_back") && e.detail.starts_with("candidate "))
          m_decided.insert(std::strtoll(e.detail.c_str() + 10, nullptr, 10));
      for (const auto& c : m_store->confirmations()) m_confirmed.insert(c.candidate);
      for (const auto& c : m_candidates) m_configs.push_back(m_s.space.parse_configuration(c.config));
      m_err << fmt::format("resuming {}: {} candidates and {} trials recorded\n", m_s.results.string(),
                           m_candidates.size(), m_trials.size());
      if (const auto events = m_store->events(); !events.empty() && events.back().kind == "disk_full")
        m_err << fmt::format("{}: the last run {}\n", m_s.results.string(), events.back().detail);
      for (const auto& repair : m_store->repairs()) {
        m_err << results::printable(fmt::format("{}: repaired: {}\n", m_s.results.string(), repair));
        m_store->add_event({now_seconds(), "file_repaired", repair});
      }
      m_store->add_event({now_seconds(), "campaign_resumed", fmt::format("pid {}", getpid())});
    } else {
      results::CampaignInfo info{.name = m_s.name, .config_text = m_s.config_text, .fingerprint = m_s.fingerprint(),
                                 .objective = m_s.objective, .direction = m_s.maximize ? "maximize" : "minimize",
                                 .repeats = m_s.repeats, .shards = m_s.evaluate_command.empty() ? 0 : m_s.shards,
                                 .test_gate = !m_suite.active()                            ? std::string()
                                              : m_s.require == results::TestGate::all_pass ? "all_pass"
                                                                                           : "no_regression",
                                 .seed = m_s.seed, .flotilla_version = FLOTILLA_VERSION, .host = jobs::host_name(),
                                 .created = now_seconds(), .confirm_confidence = m_s.confirm_confidence,
                                 .confirm_min_effect = m_s.confirm_min_effect,
                                 .confirm_max_pairs = m_s.confirm ? m_s.confirm_max_pairs : 0,
                                 .objectives = results::objectives_text(m_s.objectives),
                                 .pick = m_s.objectives.empty() ? std::string() : m_s.pick.text(),
                                 .fidelity = m_s.fidelity.empty() ? std::string()
                                                                  : m_s.fidelity + "=" + m_s.fidelity_full()};
      try {
        m_store.emplace(results::Store::create(m_s.results, info));
      } catch (const results::StoreError&) {
        if (!std::filesystem::exists(m_s.results)) throw;
        // Two first runs at the same moment: the other one made the file and runs the campaign.
        throw ConfigError(fmt::format("{}: another run of this campaign created it a moment ago and is running it; "
                                      "wait for it to finish, or stop it, then run the same command again to resume",
                                      m_s.results.string()));
      }
      m_store->add_event({now_seconds(), "campaign_started", fmt::format("pid {}", getpid())});
      // Reports and discoveries left by an earlier campaign of the same name belong to another
      // results file: reusing them would judge this campaign's candidates by someone else's tests.
      if (m_suite.active() && std::filesystem::exists(m_s.tests_dir)) {
        m_err << fmt::format("{}: left by an earlier campaign with no results file: removed\n", m_s.tests_dir.string());
        std::filesystem::remove_all(m_s.tests_dir);
      }
    }
    if (!m_warm_note.empty()) {
      m_store->add_event({now_seconds(), "warm_start", m_warm_note});
      m_err << results::printable(m_warm_note) << "\n";  // names read from another campaign's file
    }
    // What this run's results rest on besides the settings (Provenance.h): once per run, so a
    // campaign resumed on another commit or compiler says so in its summary.
    m_store->add_event({now_seconds(), "provenance",
                        results::provenance_detail(probe_provenance(m_s, {m_s.build_command, m_s.explore_command, m_s.evaluate_command}))});
    if (m_propose.active()) m_propose.trees().remove_stale();
    // Replay: the strategy learns every recorded candidate it could have proposed, in order (a
    // proposal's candidate is a code change: its value says nothing of the plain code's space).
    auto summary = summarize();
    for (const auto& c : summary.candidates)
      if (!proposal_of(c.record)) tell(c);
    if (m_candidates.empty() && m_s.baseline)
      add_candidates(0, {m_s.space.parse_configuration(*m_s.baseline)}, "baseline");
    m_suite.set_reference(&*m_store, baseline_id());
    // A writer killed between a confirmation's pairs and its record: the pairs decide it again.
    for (const auto& c : summary.candidates)
      if (c.confirmation) record_confirmation(c);
  }

  static std::optional<double> told_value(const results::CandidateSummary& c) {
    return c.status == results::CandidateStatus::rolled_back ? std::nullopt : c.objective;
  }

  // A candidate's outcome to the strategy; a failure says its kind (failure_of, Planning.h).
  // With several objectives, the value of each (the median of its metric over the repeats).
  void tell(const results::CandidateSummary& c) {
    const auto& config = m_configs[static_cast<std::size_t>(c.record.id)];
    if (const auto failure = failure_of(c, m_trials)) {
      m_strategy->tell(config, *failure);
    } else if (!m_s.objectives.empty() && told_value(c)) {
      std::vector<double> values;
      for (const auto& goal : m_s.objectives)
        if (auto v = results::goal_value(c, goal, m_store->campaign())) values.push_back(*v);
      if (values.size() == m_s.objectives.size()) m_strategy->tell_objectives(config, values);
      else m_strategy->tell(config, search::Failure::crash);
    } else {
      m_strategy->tell(config, told_value(c));
    }
  }

  results::CampaignSummary summarize() const {
    return results::summarize(m_store->campaign(), m_candidates, m_trials, m_proposals);
  }

  // Declared candidates (search.budget counts them): the baseline and proposals are not.
  std::size_t explored_count() const {
    return static_cast<std::size_t>(std::count_if(m_candidates.begin(), m_candidates.end(), [](const auto& c) {
      return c.origin != "baseline" && !proposal_of(c);
    }));
  }

  void add_candidates(int round, const std::vector<search::Configuration>& configs, const std::string& origin) {
    // One flush for the batch, before any of its tasks reaches a backend: a crash before the
    // commit loses only candidates that nothing has run for, and a resumed campaign asks again.
    results::Store::Group group(*m_store);
    for (const auto& config : configs) add_candidate(round, config, origin);
    m_store->add_event({now_seconds(), "batch_proposed", fmt::format("round {}: {} candidates ({})", round,
                                                                     configs.size(), origin)});
    group.commit();
  }

  void add_candidate(int round, const search::Configuration& config, const std::string& origin) {
    results::CandidateRecord record{.id = static_cast<std::int64_t>(m_candidates.size()), .round = round,
                                    .config = m_s.space.to_text(config), .origin = origin};
    m_store->add_candidate(record);
    m_candidates.push_back(record);
    m_configs.push_back(config);
  }

  // --- proposals (docs/propose.md) ----------------------------------------------------------

  // Whether every proposer of the fleet answered `round` (or had retired before it).
  bool fleet_answered(int round) const {
    bool any = false;
    for (int i = 0; i < m_s.propose.parallel; ++i) {
      if (answered(m_proposals, round, i)) any = true;
      else if (!retired(m_proposals, i)) return false;
    }
    return any;
  }

  // Accepted proposals of `round` whose candidate a killed run did not record: their candidates
  // now, so an accepted proposal is never lost (and never added twice: origins are checked).
  void complete_proposals(int round) {
    std::set<std::int64_t> have;
    for (const auto& c : m_candidates)
      if (auto p = proposal_of(c)) have.insert(*p);
    std::vector<const results::ProposalRecord*> missing;
    for (const auto& p : m_proposals)
      if (p.round == round && p.status == results::ProposalStatus::accepted && !have.contains(p.id)) missing.push_back(&p);
    if (missing.empty()) return;
    results::Store::Group group(*m_store);
    for (const auto* p : missing) {
      // The configuration is the parent's, with the proposal's parameters: judged when accepted.
      const auto config = m_s.space.parse_configuration(accepted_config(*p));
      add_candidate(round, config, fmt::format("proposal {}", p->id));
    }
    m_store->add_event({now_seconds(), "proposals_completed",
                        fmt::format("round {}: {} accepted proposals got the candidates a stopped run had not recorded",
                                    round, missing.size())});
    group.commit();
  }

  // An accepted proposal's configuration: its rationale's parameters were applied to its parent's
  // configuration when it was judged, and the journal keeps the result in the reason field.
  std::string accepted_config(const results::ProposalRecord& p) const {
    constexpr std::string_view kPrefix = "configuration: ";
    if (p.reason.starts_with(kPrefix)) return p.reason.substr(kPrefix.size());
    return m_candidates.at(static_cast<std::size_t>(p.parent)).config;
  }

  // A candidate's tree: [propose] tree with its chain of patches applied (Trees.h).
  std::filesystem::path tree_of(std::int64_t id) const {
    return m_propose.trees().ensure(chain_of(id, m_candidates, m_proposals), m_proposals);
  }

  // The per-test view a proposer reads of each candidate it is shown.
  std::map<std::int64_t, ContextTests> context_tests(const std::vector<std::int64_t>& ids) const {
    std::map<std::int64_t, ContextTests> out;
    const auto reference = baseline_id();
    std::optional<results::CandidateTests> base;
    std::optional<results::TestSuite> base_suite;
    if (reference) base = m_store->test_results(*reference);
    if (base) base_suite = m_store->test_suite(base->suite);
    for (auto id : ids) {
      if (out.contains(id)) continue;
      auto tests = m_store->test_results(id);
      if (!tests) continue;
      const auto suite = m_store->test_suite(tests->suite);
      ContextTests view;
      const auto sum = results::summarize(tests->outcomes);
      view.passed = sum.pass;
      view.total = sum.total;
      for (std::size_t i = 0; i < tests->outcomes.size() && view.failing.size() < kContextFailingTests; ++i)
        if (results::effective_outcome(tests->outcomes[i]) != results::TestOutcome::pass &&
            results::effective_outcome(tests->outcomes[i]) != results::TestOutcome::skip)
          view.failing.push_back(suite.names.at(i));
      if (base && base_suite && id != *reference) {
        const auto diff = results::diff_outcomes(*base_suite, base->outcomes, suite, tests->outcomes);
        for (auto i : diff.fixes)
          if (view.fixed.size() < kContextFailingTests) view.fixed.push_back(suite.names.at(static_cast<std::size_t>(i)));
        for (auto i : diff.regressions)
          if (view.broken.size() < kContextFailingTests) view.broken.push_back(suite.names.at(static_cast<std::size_t>(i)));
      }
      out.emplace(id, std::move(view));
    }
    return out;
  }

  // Runs the proposers for a fresh round and records, in one flush, what they proposed (accepted
  // and refused), the candidates of the accepted ones after the round's declared `configs`, and
  // each proposer's `answered` row.
  void propose(int round, const results::CampaignSummary& summary, const std::vector<search::Configuration>& configs,
               bool declared_spent) {
    const int made = proposals_made(m_proposals);
    const auto best = resolve_parent("best", summary).id;
    const auto plain = m_propose.trees().ensure({}, m_proposals);
    const auto best_tree = best ? tree_of(*best) : plain;
    std::vector<std::int64_t> shown;
    if (best) shown.push_back(*best);
    if (auto base = baseline_id()) shown.push_back(*base);
    for (auto index : summary.ranking())
      if (shown.size() < kContextOthers + 2) shown.push_back(summary.candidates[index].record.id);
    for (const auto& c : m_candidates)
      if (c.round >= round - 2) shown.push_back(c.id);
    const auto tests = context_tests(shown);
    const int left = std::max(0, m_s.propose.budget - made);
    const auto declared_left = declared_spent ? 0 : static_cast<int>(m_s.budget - std::min(m_s.budget, explored_count()));
    const int stall = rounds_without_gain(summary, round);
    std::vector<int> indices;
    for (int i = 0; i < m_s.propose.parallel; ++i)
      if (!answered(m_proposals, round, i) && !retired(m_proposals, i)) indices.push_back(i);
    m_progress.update(progress(round, "propose"));
    const auto runs = m_propose.run(
        round, indices,
        [&](int index) {
          ContextInputs in{.settings = m_s, .summary = summary, .candidates = m_candidates, .trials = m_trials,
                           .proposals = m_proposals, .round = round, .index = index, .seed = m_propose.seed(round, index),
                           .out = m_propose.folder() / fmt::format("r{}", round) / fmt::format("out{}", index),
                           .plain_tree = plain, .best_tree = best_tree, .best = best, .tests = tests,
                           .proposals_left = left, .declared_left = declared_left, .rounds_without_gain = stall};
          return proposal_context(in).dump(2);
        },
        [this] { return g_stop || stop_requested(); }, {plain, best_tree});
    if (g_stop || stop_requested()) obey_stop();  // nothing they wrote counts: asked again on resume
    auto judged = m_propose.judge(round, runs, summary, m_candidates, m_proposals, made);
    results::Store::Group group(*m_store);
    std::vector<std::int64_t> ids(judged.records.size());
    for (const auto& a : judged.accepted)  // the configuration an accepted proposal's candidate gets
      judged.records[a.record].reason = "configuration: " + a.config;
    for (std::size_t i = 0; i < judged.records.size(); ++i) {
      ids[i] = m_store->add_proposal(judged.records[i]);
      judged.records[i].id = ids[i];
      m_proposals.push_back(judged.records[i]);
    }
    for (const auto& config : configs) add_candidate(round, config, std::string(m_strategy->name()));
    // Every accepted proposal of the round without its candidate, in the journal's order: those a
    // stopped flush left (answers of proposers that are not asked again) and today's.
    std::set<std::int64_t> have;
    for (const auto& c : m_candidates)
      if (auto p = proposal_of(c)) have.insert(*p);
    for (const auto& p : m_proposals)
      if (p.round == round && p.status == results::ProposalStatus::accepted && !have.contains(p.id))
        add_candidate(round, m_s.space.parse_configuration(accepted_config(p)), fmt::format("proposal {}", p.id));
    std::vector<std::string> said;
    for (const auto& r : judged.records)
      if (r.status == results::ProposalStatus::answered) said.push_back(fmt::format("proposer {}: {}", r.proposer, r.reason));
    m_store->add_event({now_seconds(), "proposals", fmt::format("round {}: {}", round, fmt::join(said, "; "))});
    if (!configs.empty())
      m_store->add_event({now_seconds(), "batch_proposed",
                          fmt::format("round {}: {} candidates ({})", round, configs.size(), m_strategy->name())});
    group.commit();
    for (const auto& line : said) m_progress.note(fmt::format("round {}: {}", round, line));
    for (const auto& r : judged.records)
      if (r.status == results::ProposalStatus::refused)
        m_progress.note(fmt::format("round {}: proposal '{}' refused: {}", round, r.name.empty() ? "-" : r.name, r.reason));
  }

  // Runs one round; returns a non-empty reason when the campaign is over.
  std::string run_round(int round) {
    // A round every proposer answered was recorded in one flush; a stop part-way through that
    // flush can leave accepted proposals without their candidates: they get them now. A round
    // only some answered (the flush stopped between two proposers' rows) is asked again of the
    // others below, and completed with their answers.
    if (m_propose.active() && fleet_answered(round)) complete_proposals(round);
    auto ids = round_ids(round);
    if (ids.empty() && m_propose.active() && fleet_answered(round)) return {};  // answered with nothing to run
    if (ids.empty()) {
      auto summary = summarize();
      std::optional<double> best;
      if (summary.best && summary.best_verified) best = summary.candidates[*summary.best].objective;
      if (m_s.stop_on_baseline_failure)
        if (auto failure = baseline_failure(summary))
          return fmt::format("stopped: {}; intent.on_baseline_failure = continue searches anyway", *failure);
      auto reason = stop_reason(m_s, explored_count(), best);
      const bool target = reason && m_s.target && reason->starts_with("target");
      std::vector<search::Configuration> configs;
      if (!reason) {
        configs = m_strategy->ask(std::min(m_s.batch, m_s.budget - explored_count()));
        if (configs.empty())
          reason = fmt::format("search space exhausted after {} candidates (budget {})", explored_count(), m_s.budget);
      }
      // A campaign never ends on a pick measured below full fidelity (a target is reached only
      // at full fidelity, so it needs none).
      if (reason && !target) {
        if (auto twin = full_fidelity_twin(summary)) {
          m_progress.note(fmt::format("measuring the best screened candidate at full fidelity: {}",
                                      m_s.space.to_text(*twin)));
          m_strategy->reserve(*twin);  // the strategy did not propose it, and must not propose it again
          add_candidates(round, {*twin}, "fidelity");
          reason.reset();
        }
      }
      // Proposers (docs/propose.md): they add code candidates while their budget lasts, and
      // once the declared candidates are spent they are what the campaign goes on with.
      const int made = proposals_made(m_proposals);
      int retired_now = 0;
      for (int i = 0; i < m_s.propose.parallel; ++i) retired_now += retired(m_proposals, i);
      const bool proposing = !target && m_propose.active() && made < m_s.propose.budget &&
                             retired_now < m_s.propose.parallel &&
                             proposer_runs(m_s.propose, reason.has_value(), rounds_without_gain(summary, round));
      if (reason && !proposing) {
        if (!m_propose.active() || target) return *reason;
        return fmt::format("{}; {} proposals made (propose.budget {}){}", *reason, made, m_s.propose.budget,
                           retired_now == m_s.propose.parallel ? ", and the proposers are done" : "");
      }
      if (proposing) {
        propose(round, summary, configs, reason.has_value());
      } else {
        if (!configs.empty()) add_candidates(round, configs, std::string(m_strategy->name()));
        complete_proposals(round);  // the answers of a partly answered round, if any
      }
      ids = round_ids(round);
      if (ids.empty()) return {};  // the proposers' answers were all refused: the next round asks again
    }
    run_builds(round, ids);
    // gate = all on Slurm: the round's evaluations do not depend on the explore results, so they
    // are submitted with the explore job and start when it completes (afterok), without a round
    // trip through the scheduler. Evaluations of a candidate whose exploration failed are dropped.
    // Not with a fidelity: screened candidates are never verified, and a pipelined round would
    // submit their evaluations before knowing which are screened.
    const bool pipelined = m_backend->capabilities().dependencies && m_s.gate.kind == Gate::Kind::all &&
                           !m_s.evaluate_command.empty() && m_s.fidelity.empty();
    if (pipelined) {
      m_speculative = true;
      run_phases(round, "explore+evaluate", {{ids, results::TrialKind::explore, m_s.repeats},
                                             {ids, results::TrialKind::evaluate, m_s.shards}});
      record(std::exchange(m_held, {}));  // every exploration is in now: keep or drop each
      m_speculative = false;
    } else {
      run_phase(round, "explore", ids, results::TrialKind::explore, m_s.repeats);
    }
    run_adaptive_repeats(round, ids);
    auto summary = summarize();
    record_estimates(summary, ids);
    std::vector<results::CandidateSummary> in_round;
    for (auto id : ids) {
      in_round.push_back(summary.candidates[static_cast<std::size_t>(id)]);
      // An objective counted from tests is known once the candidate is evaluated: told then.
      if (!proposal_of(in_round.back().record) && !m_s.tests_objective()) tell(in_round.back());
    }
    if (m_s.evaluate_command.empty()) {
      confirm_round(round);
      return {};
    }
    if (pipelined) {
      run_test_gates(round, ids);
      record_decisions(ids);
    }
    for (const auto& c : in_round)
      if (c.record.origin == "baseline" && (c.objective || m_s.tests_objective())) evaluate(round, {c.record.id});
    // An evaluation a killed run started is finished, whatever the gate says now: the gate
    // may have moved (a better incumbent), but a candidate is never left half-verified.
    std::vector<std::int64_t> started;
    for (const auto& c : summarize_ids(ids))
      if (c.status == results::CandidateStatus::explored && c.shards_done > 0 && c.record.origin != "baseline")
        started.push_back(c.record.id);
    if (!started.empty()) evaluate(round, started);
    if (!m_s.objectives.empty()) {
      if (m_s.gate.kind == Gate::Kind::all) {  // every explored candidate of the round, then the front
        std::vector<std::int64_t> all;
        for (const auto& c : summarize_ids(ids))
          if (c.status == results::CandidateStatus::explored) all.push_back(c.record.id);
        if (!all.empty()) evaluate(round, all);
      }
      evaluate_front(round);
      record_decisions(ids);
      return {};
    }
    // Waves: each rollback makes room for the next best candidate of the round.
    for (;;) {
      auto summary_now = summarize();
      std::vector<results::CandidateSummary> current;
      for (auto id : ids) current.push_back(summary_now.candidates[static_cast<std::size_t>(id)]);
      std::optional<double> incumbent;
      if (summary_now.best && summary_now.best_verified) incumbent = summary_now.candidates[*summary_now.best].objective;
      auto chosen = next_evaluations(current, m_s.gate, m_s.maximize, incumbent);
      if (chosen.empty()) break;
      evaluate(round, chosen);
    }
    record_decisions(ids);  // a decision a killed run recorded no event for
    if (m_s.tests_objective()) {
      const auto evaluated = summarize_ids(ids);
      for (const auto& c : evaluated)
        if (!proposal_of(c.record) && c.status == results::CandidateStatus::verified) tell(c);
    }
    confirm_round(round);
    return {};
  }

  // search.fidelity: the configuration, at full fidelity, of the best candidate screened at the
  // highest fidelity below full, when no candidate has that configuration yet (so a campaign
  // adds it once, at its end).
  std::optional<search::Configuration> full_fidelity_twin(const results::CampaignSummary& summary) const {
    if (m_s.fidelity.empty()) return std::nullopt;
    const auto& params = m_s.space.parameters();
    const auto d = static_cast<std::size_t>(
        std::find_if(params.begin(), params.end(), [&](const auto& p) { return p.name == m_s.fidelity; }) -
        params.begin());
    const double full = params[d].grid_value(params[d].grid_size() - 1);
    const results::CandidateSummary* best = nullptr;
    for (const auto& c : summary.candidates) {
      if (c.status != results::CandidateStatus::screened || !c.objective) continue;
      const double level = m_configs[static_cast<std::size_t>(c.record.id)][d];
      const double best_level = best ? m_configs[static_cast<std::size_t>(best->record.id)][d] : -INFINITY;
      if (!best || level > best_level || (level == best_level && results::better(*c.objective, *best->objective, m_s.maximize)))
        best = &c;
    }
    if (!best) return std::nullopt;
    auto twin = m_configs[static_cast<std::size_t>(best->record.id)];
    twin[d] = full;
    if (!m_s.space.feasible(twin) || std::find(m_configs.begin(), m_configs.end(), twin) != m_configs.end())
      return std::nullopt;
    return twin;
  }

  // Several objectives (docs/objectives.md): every member of the Pareto front of the explored
  // candidates is verified, from whichever round it came. Waves: a rolled-back member leaves the
  // front, and the candidates it alone dominated join it and are verified in turn.
  void evaluate_front(int round) {
    std::set<std::int64_t> tried;
    for (;;) {
      const auto summary = summarize();
      std::vector<std::int64_t> chosen;
      for (auto i : summary.front) {
        const auto& c = summary.candidates[i];
        if (c.status == results::CandidateStatus::explored && tried.insert(c.record.id).second)
          chosen.push_back(c.record.id);
      }
      if (chosen.empty()) return;
      evaluate(round, chosen);
    }
  }

  // The build stage (BuildStage.h): the round's candidates are built, once per build key, before
  // any of their tasks is submitted; each build trial is recorded as soon as it is known.
  void run_builds(int round, const std::vector<std::int64_t>& ids) {
    if (!m_builds.active()) return;
    m_progress.update(progress(round, "build"));
    m_detached_builds += m_builds.run(
        ids, m_trials, [this](std::int64_t id) { return parameter_values(id); },
        [this](results::TrialRecord t) {
          if (m_store->add_trial(t)) m_trials.push_back(std::move(t));
        },
        [this] { return g_stop || stop_requested(); }, [this] { return !(g_stop && m_o.cancel_on_interrupt); });
    if (g_stop || stop_requested()) obey_stop();
    m_progress.update(progress(round, "build"), true);
  }

  // Whether the candidate's build is recorded as failed: none of its tasks runs.
  bool build_failed(std::int64_t id) const {
    const results::TrialRecord* latest = nullptr;
    for (const auto& t : m_trials)
      if (t.candidate == id && t.kind == results::TrialKind::build && (!latest || t.attempt >= latest->attempt))
        latest = &t;
    return latest && latest->status != results::TrialStatus::ok;
  }

  std::vector<results::CandidateSummary> summarize_ids(const std::vector<std::int64_t>& ids) const {
    const auto summary = summarize();
    std::vector<results::CandidateSummary> out;
    for (auto id : ids) out.push_back(summary.candidates[static_cast<std::size_t>(id)]);
    return out;
  }

  // The objective every contender is measured against: the winner's (the best confirmed, or
  // the best verified without confirmation), else the baseline's.
  std::optional<double> incumbent_objective(const results::CampaignSummary& summary) const {
    if (summary.best && summary.candidates[*summary.best].objective) return summary.candidates[*summary.best].objective;
    if (summary.baseline) return summary.candidates[*summary.baseline].objective;
    return std::nullopt;
  }

  // Racing (Planning.h, more_repeats): waves of `repeats` more repeats for the candidates whose interval
  // still contains the incumbent's objective, until none does or they reach max_repeats.
  void run_adaptive_repeats(int round, const std::vector<std::int64_t>& ids) {
    if (m_s.repeats == 0) return;  // nothing is explored (an objective counted from tests)
    for (;;) {
      const auto summary = summarize();
      std::vector<results::CandidateSummary> in_round;
      for (auto id : ids) in_round.push_back(summary.candidates[static_cast<std::size_t>(id)]);
      const auto more = more_repeats(in_round, incumbent_objective(summary), m_s.repeats, m_s.max_repeats);
      if (more.empty()) return;
      std::vector<std::vector<const results::TrialRecord*>> recorded(m_candidates.size());
      for (const auto& t : m_trials) recorded[static_cast<std::size_t>(t.candidate)].push_back(&t);
      std::vector<jobs::TaskSpec> specs;
      std::vector<std::string> named;
      for (const auto& m : more) {
        for (int index : missing_indices(recorded[static_cast<std::size_t>(m.candidate)], results::TrialKind::explore,
                                         m.total))
          specs.push_back(make_task(m.candidate, results::TrialKind::explore, index));
        named.push_back(fmt::format("{}", m.candidate));
      }
      m_store->add_event({now_seconds(), "repeats_added",
                          fmt::format("round {}: candidates {}: their intervals contain the incumbent's {}", round,
                                      fmt::join(named, " "), m_s.objective)});
      run_tasks(round, "explore (adaptive repeats)", std::move(specs));
    }
  }

  // Each explored candidate's estimate, once its exploration is final (recorded again only if a
  // resumed campaign added repeats).
  void record_estimates(const results::CampaignSummary& summary, const std::vector<std::int64_t>& ids) {
    results::Store::Group group(*m_store);
    for (auto id : ids) {
      const auto& c = summary.candidates[static_cast<std::size_t>(id)];
      if (!c.interval || !m_estimated.insert({id, c.repeats_done}).second) continue;
      m_store->add_estimate({.candidate = id, .repeats = c.repeats_done, .estimate = c.interval->estimate,
                             .low = c.interval->low, .high = c.interval->high, .coverage = c.interval->coverage,
                             .time = now_seconds()});
    }
    group.commit();
  }

  // The performance half of verification (docs/verdicts.md): the best candidates that would
  // beat the winner are measured against the baseline in interleaved pairs, one at a time, until
  // one is confirmed faster.
  void confirm_round(int round) {
    if (!m_s.confirm) return;
    const auto reference = baseline_id();
    if (!reference) return;
    auto summary = summarize();
    if (!summary.candidates[static_cast<std::size_t>(*reference)].objective) return;  // nothing to compare with
    for (auto id : confirmation_candidates(summary, incumbent_objective(summary), m_s.confirm_tries, m_s.max_repeats)) {
      run_tasks(round, "confirm", {make_task(id, results::TrialKind::confirm, 0)});
      summary = summarize();
      const auto& c = summary.candidates[static_cast<std::size_t>(id)];
      if (c.confirmation) record_confirmation(c);
      if (c.confirmed_faster()) break;
    }
  }

  // The confirmation's record and event, once per candidate.
  void record_confirmation(const results::CandidateSummary& c) {
    if (!c.confirmation || c.confirmation->result.verdict == results::stats::Verdict::pending) return;
    if (!m_confirmed.insert(c.record.id).second) return;
    const auto& r = c.confirmation->result;
    results::Store::Group group(*m_store);
    m_store->add_confirmation({.candidate = c.record.id, .reference = c.confirmation->reference,
                               .verdict = std::string(results::stats::verdict_key(r.verdict)), .pairs = r.pairs,
                               .looks = r.looks, .ratio = r.ratio, .low = r.low, .high = r.high,
                               .confidence = m_s.confirm_confidence, .min_effect = m_s.confirm_min_effect,
                               .time = now_seconds(), .reason = c.confirmation->reason});
    const auto words = r.verdict == results::stats::Verdict::failed || r.verdict == results::stats::Verdict::unreliable
                           ? fmt::format("{}: {}", results::stats::to_string(r.verdict), c.confirmation->reason)
                           : fmt::format("{}: {:.4g}x [{:.4g}, {:.4g}] over the baseline in {} pairs",
                                         results::stats::to_string(r.verdict), r.ratio, r.low, r.high, r.pairs);
    m_store->add_event({now_seconds(), r.verdict == results::stats::Verdict::faster ? "confirmed" : "not_confirmed",
                        fmt::format("candidate {}: {}", c.record.id, words)});
    group.commit();
    m_progress.note(fmt::format("candidate {}: {}", c.record.id, words));
  }

  void evaluate(int round, const std::vector<std::int64_t>& ids) {
    run_phase(round, "evaluate", ids, results::TrialKind::evaluate, m_s.shards);
    run_test_gates(round, ids);
    record_decisions(ids);
  }

  // Suites (SuiteStage.h): once a candidate's shards are in, one re-run of its failures, then
  // its outcomes and the gate's verdict are recorded.
  void run_test_gates(int round, const std::vector<std::int64_t>& ids) {
    if (!m_suite.active()) return;
    std::vector<jobs::TaskSpec> reruns;
    for (auto id : ids)
      if (m_suite.awaits_verdict(id, m_trials))
        if (auto spec = m_suite.rerun_task(id, suite_argv(id), m_trials)) reruns.push_back(std::move(*spec));
    run_tasks(round, "re-run failures", std::move(reruns));
    for (auto id : ids) {
      if (!m_suite.awaits_verdict(id, m_trials)) continue;
      auto verdict = m_suite.verdict(*m_store, id, suite_argv(id), m_trials, baseline_id());
      m_ran_evaluate.insert(id);
      if (m_store->add_trial(verdict)) m_trials.push_back(std::move(verdict));
    }
  }

  // The candidate's evaluate command as discovery and the re-run use it (the kinds whose protocol
  // lists tests by the command itself: gtest, ctest, lit, pytest).
  std::vector<std::string> suite_argv(std::int64_t id) const {
    if (!suites::suite_protocol(m_s.suite).discovery.parse) return {};
    return jobs::render_argv(m_s.evaluate_command, task_values(id, results::TrialKind::evaluate, 0));
  }

  std::optional<std::int64_t> baseline_id() const {
    for (const auto& c : m_candidates)
      if (c.origin == "baseline") return c.id;
    return std::nullopt;
  }

  std::vector<std::int64_t> round_ids(int round) const {
    std::vector<std::int64_t> ids;
    for (const auto& c : m_candidates)
      if (c.round == round) ids.push_back(c.id);
    return ids;
  }

  // The journal's verified / rolled_back event of each decided candidate, once: m_decided holds
  // those the journal already has (read on resume), so a run killed between a candidate's last
  // shard and its event records the event when it resumes.
  void record_decisions(const std::vector<std::int64_t>& chosen) {
    auto summary = summarize();
    for (auto id : chosen) {
      const auto& c = summary.candidates[static_cast<std::size_t>(id)];
      if (c.status != results::CandidateStatus::verified && c.status != results::CandidateStatus::rolled_back) continue;
      if (!m_decided.insert(id).second) continue;
      if (c.status == results::CandidateStatus::verified) {
        m_store->add_event({now_seconds(), "verified", fmt::format("candidate {}: {}", id, c.record.config)});
      } else if (c.status == results::CandidateStatus::rolled_back) {
        m_store->add_event({now_seconds(), "rolled_back", fmt::format("candidate {}: {}", id, c.reason)});
        // The replay on resume told the strategy of rollbacks already recorded; only one this
        // run saw happen is news to it.
        if (m_ran_evaluate.contains(id) && !proposal_of(m_candidates[static_cast<std::size_t>(id)]))
          m_strategy->tell(m_configs[static_cast<std::size_t>(id)], search::Failure::verification);
      }
    }
  }

  struct PhasePart {
    const std::vector<std::int64_t>& ids;
    results::TrialKind kind;
    int count;
  };

  void run_phase(int round, const char* phase, const std::vector<std::int64_t>& ids, results::TrialKind kind, int count) {
    run_phases(round, phase, {{ids, kind, count}});
  }

  // Runs the missing tasks of every part together, until each has come back.
  void run_phases(int round, const char* phase, const std::vector<PhasePart>& parts) {
    std::vector<jobs::TaskSpec> specs;
    std::vector<std::vector<const results::TrialRecord*>> recorded(m_candidates.size());
    for (const auto& t : m_trials) recorded[static_cast<std::size_t>(t.candidate)].push_back(&t);
    for (const auto& part : parts)
      for (auto id : part.ids) {
        if (part.kind == results::TrialKind::evaluate && explore_outcome(id) == false) continue;
        if (m_builds.active() && build_failed(id)) continue;  // never explored, never evaluated
        // Warm-ups first: the local backend starts tasks in submission order.
        if (part.kind == results::TrialKind::explore)
          for (int index : missing_indices(recorded[static_cast<std::size_t>(id)], results::TrialKind::warmup, m_s.warmup))
            specs.push_back(make_task(id, results::TrialKind::warmup, index));
        for (int index : missing_indices(recorded[static_cast<std::size_t>(id)], part.kind, part.count))
          specs.push_back(make_task(id, part.kind, index));
      }
    run_tasks(round, phase, std::move(specs));
  }

  // Submits the tasks and records their results until each has come back.
  void run_tasks(int round, const char* phase, std::vector<jobs::TaskSpec> specs) {
    if (specs.empty()) return;
    submit(std::move(specs));
    while (m_backend->queued() + m_backend->running() > 0) {
      if (g_stop || stop_requested()) obey_stop();
      record(m_backend->collect(std::chrono::milliseconds(200)));
      m_progress.update(progress(round, phase));
    }
    // A stop that came while the last collect ran: its lost results were dropped by record(),
    // so the phase is not complete and must not be decided on (the model's FINAL_PHASE,
    // docs/verification.md).
    if (g_stop || stop_requested()) obey_stop();
    m_progress.update(progress(round, phase), true);
  }

  // A signal: work that outlives us (Slurm jobs) is left running, unless asked otherwise; a stop
  // request: `flotilla cancel` is cancelling the jobs itself, so the same. Never returns.
  [[noreturn]] void obey_stop() {
    const bool cancelled = !g_stop;
    if (m_backend->capabilities().outlives_scheduler && !(g_stop && m_o.cancel_on_interrupt)) {
      record(m_backend->collect(std::chrono::milliseconds(0)));  // what has come back is kept
      m_detached = m_backend->detach();
    } else {
      m_backend->cancel_all();
      while (m_backend->queued() + m_backend->running() > 0) record(m_backend->collect(std::chrono::milliseconds(200)));
    }
    if (cancelled) throw Cancelled{};
    throw Interrupted{};
  }

  // The candidate's parameter values, as the build key names them, and its source tree (its
  // chain of patches is part of what it is).
  std::map<std::string, std::string, std::less<>> parameter_values(std::int64_t id) const {
    std::map<std::string, std::string, std::less<>> values;
    const auto& config = m_configs[static_cast<std::size_t>(id)];
    for (std::size_t i = 0; i < config.size(); ++i)
      values[m_s.space.parameters()[i].name] = m_s.space.parameters()[i].format(config[i]);
    if (!m_s.propose.tree.empty()) values["tree"] = tree_of(id).string();
    return values;
  }

  std::map<std::string, std::string, std::less<>> task_values(std::int64_t id, results::TrialKind kind,
                                                               int index) const {
    auto values = parameter_values(id);
    if (m_builds.active()) values["build_dir"] = m_builds.folder(values).string();
    values["candidate"] = std::to_string(id);
    const bool explore = kind == results::TrialKind::explore;
    values[explore ? "repeat" : "shard"] = std::to_string(index);
    if (!explore) values["shards"] = std::to_string(m_s.shards);
    return values;
  }

  jobs::TaskSpec make_task(std::int64_t id, results::TrialKind kind, int index, int attempt = 0) {
    if (kind == results::TrialKind::confirm) return make_confirm_task(id, attempt);
    // A warm-up runs the benchmark command as a repeat does, with no objective required.
    const bool bench = kind == results::TrialKind::explore || kind == results::TrialKind::warmup;
    auto values = task_values(id, bench ? results::TrialKind::explore : kind, index);
    if (!bench && m_suite.active()) m_suite.add_shard_values(values, id, index, attempt);
    auto spec = jobs::TaskSpec{.id = encode_task_id({id, kind, index}),
                          .argv = jobs::render_argv(bench ? m_s.explore_command : m_s.evaluate_command, values),
                          .timeout = bench ? m_s.explore_timeout : m_s.evaluate_timeout,
                          .objective = kind == results::TrialKind::explore ? m_s.objective : std::string(),
                          .attempt = attempt,
                          .exclusive = bench && m_s.explore_exclusive,
                          .resources = bench ? "explore" : "evaluate",
                          .after = bench ? "" : "explore",
                          .array_index = bench ? -1 : index};
    spec.env = jobs::render_env(bench ? m_s.explore_env : m_s.evaluate_env, values);
    if (!bench && m_suite.active()) m_suite.finish_shard_task(spec, id, index, attempt);
    return spec;
  }

  // A benchmark command with its [explore] env in front, through env(1): a confirmation runs the
  // candidate's and the baseline's commands in one task, each with its own values.
  std::vector<std::string> with_env(std::vector<std::string> argv, std::int64_t id) const {
    if (m_s.explore_env.empty()) return argv;
    std::vector<std::string> out{"env"};
    for (const auto& [name, value] : jobs::render_env(m_s.explore_env, task_values(id, results::TrialKind::explore, 0)))
      out.push_back(name + "=" + value);
    out.insert(out.end(), argv.begin(), argv.end());
    return out;
  }

  // Every task runs in the campaign's working directory, on every backend (a Slurm job's ranks
  // start in the job's folder).
  void submit(std::vector<jobs::TaskSpec> specs) {
    for (auto& spec : specs) {
      if (spec.workdir.empty()) spec.workdir = m_s.workdir;
      m_in_flight.insert(spec.id);
    }
    m_backend->submit(std::move(specs));
  }

  // Task ids as a person reads them ("candidate 3 explore 1, ..."), ten at most.
  static std::string tasks_text(const std::vector<std::uint64_t>& ids) {
    std::vector<std::string> names;
    for (auto id : ids) {
      const auto key = decode_task_id(id);
      names.push_back(fmt::format("candidate {} {} {}", key.candidate, results::to_string(key.kind), key.index));
      if (names.size() == 10) break;
    }
    return fmt::format("{}{}", fmt::join(names, ", "),
                       ids.size() > names.size() ? fmt::format(" and {} more", ids.size() - names.size()) : std::string());
  }

  // What was running when the disk filled: the tasks whose results could not be written (they
  // ended last, and the file system filled while they ran), then those still running or queued.
  std::string disk_full_text() const {
    std::vector<std::uint64_t> running;
    for (auto id : m_in_flight)
      if (std::find(m_unwritten.begin(), m_unwritten.end(), id) == m_unwritten.end()) running.push_back(id);
    std::string text = m_unwritten.empty() ? std::string("no result was being written")
                                           : "the results of " + tasks_text(m_unwritten) + " could not be written";
    if (!running.empty()) text += "; still running or queued: " + tasks_text(running);
    return text;
  }

  // A confirmation is one task (flotilla-pairs): the candidate's and the baseline's benchmark
  // commands, in pairs, in a seeded random order, alone in one slot (one rank of one job under
  // mpi and Slurm), stopping at the first look that decides.
  jobs::TaskSpec make_confirm_task(std::int64_t id, int attempt) {
    const auto reference = *baseline_id();
    auto candidate = with_env(jobs::render_argv(m_s.explore_command, task_values(id, results::TrialKind::explore, 0)), id);
    auto baseline = with_env(
        jobs::render_argv(m_s.explore_command, task_values(reference, results::TrialKind::explore, 0)), reference);
    std::vector<std::string> argv = {"flotilla-pairs",
                                     "--objective", m_s.objective,
                                     "--direction", m_s.maximize ? "maximize" : "minimize",
                                     "--order", pair_order(m_s.seed, id, m_s.confirm_max_pairs),
                                     "--timeout", std::to_string(m_s.explore_timeout.count()),
                                     "--warmup", std::to_string(m_s.warmup),
                                     "--confidence", fmt::format("{}", m_s.confirm_confidence),
                                     "--min-effect", fmt::format("{}", m_s.confirm_min_effect),
                                     "--max-pairs", std::to_string(m_s.confirm_max_pairs),
                                     "--candidate", std::to_string(candidate.size())};
    argv.insert(argv.end(), candidate.begin(), candidate.end());
    argv.push_back("--reference");
    argv.push_back(std::to_string(baseline.size()));
    argv.insert(argv.end(), baseline.begin(), baseline.end());
    // Each run has the explore timeout; the task as a whole has the sum, and a minute to spare.
    const auto runs = 2 * (m_s.confirm_max_pairs + m_s.warmup);
    const auto limit = m_s.explore_timeout.count() > 0 ? m_s.explore_timeout * runs + std::chrono::minutes(1)
                                                       : std::chrono::milliseconds(0);
    return jobs::TaskSpec{.id = encode_task_id({id, results::TrialKind::confirm, 0}), .argv = std::move(argv),
                          .timeout = limit, .attempt = attempt, .exclusive = true, .resources = "explore"};
  }

  // "ABBABA...": pair i runs the candidate first (A) or the baseline first (B); from the seed,
  // in blocks of two pairs that run one each way (AB or BA), so that at any look the two orders
  // are as many (within one) and an order effect can be measured (Stats.h, unreliability).
  static std::string pair_order(std::uint64_t seed, std::int64_t candidate, int pairs) {
    std::uint64_t state = seed ^ (0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(candidate + 1));
    std::string order;
    while (static_cast<int>(order.size()) < pairs) {
      state += 0x9e3779b97f4a7c15ULL;  // splitmix64
      std::uint64_t z = state;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      order += ((z ^ (z >> 31)) >> 63) ? "AB" : "BA";
    }
    order.resize(static_cast<std::size_t>(pairs));
    return order;
  }

  // A confirmation task's result as one trial per pair (index = pair), and one failed trial
  // after them when the task failed: the pairs are what the verdict is computed from.
  void record_pairs(const jobs::TaskResult& r) {
    std::map<int, std::map<std::string, double>> pairs;
    for (const auto& [name, value] : r.metrics) {
      if (!name.starts_with("pair.")) continue;
      const auto dot = name.find('.', 5);
      if (dot == std::string::npos) continue;
      int index = -1;
      const auto digits = std::string_view(name).substr(5, dot - 5);
      if (std::from_chars(digits.data(), digits.data() + digits.size(), index).ec != std::errc{} || index < 0) continue;
      pairs[index][name.substr(dot + 1)] = value;
    }
    const auto base = to_trial_record(r);
    if (!base) return;
    const double reference = static_cast<double>(*baseline_id());
    int n = 0;
    for (;; ++n) {
      auto it = pairs.find(n);
      if (it == pairs.end() || !it->second.contains("candidate") || !it->second.contains("reference")) break;
      const double c = it->second["candidate"], b = it->second["reference"];
      results::TrialRecord t = *base;
      t.index = n;
      t.status = results::TrialStatus::ok;
      t.exit_code = 0;
      t.reason.clear();
      t.output_tail.clear();
      t.objective = m_s.maximize ? c / b : b / c;
      t.metrics = {{"candidate", c}, {"reference", b}, {"order", it->second["order"]}, {"reference_candidate", reference}};
      if (m_store->add_trial(t)) m_trials.push_back(std::move(t));
    }
    if (r.status == jobs::TaskStatus::ok && n > 0) return;
    results::TrialRecord failed = *base;
    failed.index = n;
    if (failed.status == results::TrialStatus::ok) failed.status = results::TrialStatus::failed;
    failed.objective = std::nan("");
    std::string detail;
    std::istringstream lines(r.output_tail);
    for (std::string line; std::getline(lines, line);)
      if (line.starts_with("flotilla-pairs: pair "))  // "flotilla-pairs: pair N: WHAT": the summary adds "pair N"
        if (auto colon = line.find(": ", 21); colon != std::string::npos) detail = line.substr(colon + 2);
    failed.reason = detail.empty() ? (r.reason.empty() ? "no pair was measured" : r.reason) : detail;
    failed.metrics = {{"reference_candidate", reference}};
    if (m_store->add_trial(failed)) m_trials.push_back(std::move(failed));
  }

  void record(const std::vector<jobs::TaskResult>& finished) {
    // One flush for everything one collect() returned (1,000 results of a job cost one flush per
    // table, not 1,000). A crash before the commit loses only this call's results: those a job's
    // workers wrote are still in its results file, and a resumed campaign takes them from there;
    // the others (a local task's, a lost task's) run again, as any result not yet recorded would.
    // Nothing outside this call acts on them before the commit.
    results::Store::Group group(*m_store);
    for (const auto& r : finished) {
      m_suite.task_ended(r.id, r.attempt);  // a per_file shard's temporary folders, however it ended
      // Cancelled (or lost while stopping) is not a result: the task runs again on resume.
      // Cancelled (or lost while stopping, or to `flotilla cancel`) is not a result: the task
      // runs again on resume, never now.
      if (r.status == jobs::TaskStatus::cancelled ||
          (r.status == jobs::TaskStatus::lost && (g_stop || stop_requested())))
        continue;
      // Before any requeue: an evaluation whose exploration failed is dropped, not run again (its
      // array was cancelled with the failed explore job, and that must not cost it an attempt).
      const auto key = decode_task_id(r.id);
      if (key.kind == results::TrialKind::evaluate && m_speculative && explore_outcome(key.candidate) == false) {
        drop_evaluation(key.candidate, key.index);
        continue;
      }
      if (should_requeue(r, m_s.max_attempts)) {
        requeue(r);
        continue;
      }
      if (key.kind == results::TrialKind::confirm) {
        record_pairs(r);
        continue;
      }
      auto t = *to_trial_record(r);
      require_objectives(t);
      m_suite.judge(t);  // a suite's shard: ok once its report is readable
      if (t.kind == results::TrialKind::evaluate && !keep_evaluation(r, t.candidate, t.index)) continue;
      if (t.kind == results::TrialKind::evaluate) m_ran_evaluate.insert(t.candidate);
      if (m_store->add_trial(t)) m_trials.push_back(std::move(t));
    }
    try {
      group.commit();
    } catch (const results::StoreError&) {
      for (const auto& r : finished) m_unwritten.push_back(r.id);  // named by disk_full_text
      throw;
    }
    for (const auto& r : finished) m_in_flight.erase(r.id);
  }

  // Several objectives: a benchmark run must print every one (the worker checks the first); one
  // that leaves one out failed, as a run without the objective does.
  void require_objectives(results::TrialRecord& t) const {
    if (t.kind != results::TrialKind::explore || t.status != results::TrialStatus::ok) return;
    for (std::size_t g = 1; g < m_s.objectives.size(); ++g) {
      const auto& name = m_s.objectives[g].metric;
      const auto it = std::find_if(t.metrics.begin(), t.metrics.end(), [&](const auto& m) { return m.name == name; });
      if (it != t.metrics.end() && std::isfinite(it->value)) continue;
      t.status = results::TrialStatus::failed;
      t.reason = fmt::format("objective '{}' {} output", name, it == t.metrics.end() ? "missing from" : "not finite in");
      return;
    }
  }

  // Whether every repeat of the candidate's exploration succeeded; nullopt while some are missing.
  std::optional<bool> explore_outcome(std::int64_t candidate) const {
    std::set<int> ok, failed;
    for (const auto& t : m_trials)
      if (t.candidate == candidate && t.kind == results::TrialKind::explore)
        (t.status == results::TrialStatus::ok && !std::isnan(t.objective) ? ok : failed).insert(t.index);
    if (!failed.empty()) return false;
    if (static_cast<int>(ok.size()) < m_s.repeats) return std::nullopt;
    return true;
  }

  // A speculative evaluation (submitted with its exploration) is kept only for a candidate whose
  // exploration succeeded, as the gate would have chosen it; it waits while that is not known yet.
  bool keep_evaluation(const jobs::TaskResult& r, std::int64_t candidate, int shard) {
    if (!m_speculative) return true;
    auto outcome = explore_outcome(candidate);
    if (!outcome) {
      m_held.push_back(r);
      return false;
    }
    if (outcome == true) return true;
    drop_evaluation(candidate, shard);
    return false;
  }

  void drop_evaluation(std::int64_t candidate, int shard) {
    m_store->add_event({now_seconds(), "evaluation_dropped",
                        fmt::format("candidate {} shard {}: its exploration failed, so the gate does not choose it",
                                    candidate, shard)});
  }

  // A task whose rank died before it reported runs again in the next job, as its next attempt.
  void requeue(const jobs::TaskResult& r) {
    const auto key = decode_task_id(r.id);
    std::optional<jobs::TaskSpec> rerun;
    if (m_suite.active() && key.kind == results::TrialKind::evaluate && key.index == m_suite.rerun_index()) {
      rerun = m_suite.rerun_task(key.candidate, suite_argv(key.candidate), m_trials, r.attempt + 1);
      if (!rerun) return;
    }
    auto spec = rerun ? std::move(*rerun) : make_task(key.candidate, key.kind, key.index, r.attempt + 1);
    m_store->add_event({now_seconds(), "task_requeued",
                        fmt::format("candidate {} {} {} attempt {}: {}", key.candidate, results::to_string(key.kind),
                                    key.index, spec.attempt, r.reason)});
    submit({std::move(spec)});
  }

  ProgressState progress(int round, const char* phase) const {
    ProgressState p{.round = round, .phase = phase, .finished_before_run = m_finished_before_run,
                    .budget = m_s.budget + (m_propose.active() ? static_cast<std::size_t>(m_s.propose.budget) : 0),
                    .running = m_backend->running(), .queued = m_backend->queued(),
                    .objective = m_s.objective, .jobs = m_backend->jobs_overview()};
    fill_from_summary(p, summarize());
    return p;
  }

  int report(const std::string& stop, double seconds) {
    auto summary = summarize();
    summary.provenance = results::provenance_of(m_store->events());
    results::add_proposals(summary, m_candidates, m_proposals);
    // The report quotes task output (reasons, test names, a failed baseline's reason in `stop`):
    // shown escaped, so none of it can drive the terminal (Printable.h).
    m_out << results::printable(
        fmt::format("{}: {} in {:.1f} s\n{}\nresults    {}  (flotilla results summary {})\n", m_s.name, stop, seconds,
                    results::summary_text(summary, 5), m_s.results.string(), jobs::shell_quote(m_s.results.string())));
    return summary.best ? kExitOk : kExitNothingVerified;
  }

  bool stop_requested() const {
    std::error_code ec;
    return std::filesystem::exists(stop_request_path(m_s), ec);
  }

  const Settings& m_s;
  const RunOptions& m_o;
  std::size_t m_detached = 0;  // jobs left running when interrupted
  std::size_t m_detached_builds = 0;  // build jobs left running when interrupted (BuildStage)
  std::size_t m_finished_before_run = 0;  // candidates an earlier run finished (ProgressLine.h)
  std::ostream& m_out;
  std::ostream& m_err;
  Progress m_progress;
  std::unique_ptr<jobs::Backend> m_backend;
  std::unique_ptr<search::Strategy> m_strategy;
  std::string m_warm_note;  // what search.warm_start gave the strategy, said once per run
  std::optional<results::Store> m_store;
  std::vector<results::CandidateRecord> m_candidates;
  std::vector<search::Configuration> m_configs;
  std::vector<results::TrialRecord> m_trials;
  std::set<std::pair<std::int64_t, int>> m_estimated;  // (candidate, repeats) with an estimate recorded
  std::set<std::int64_t> m_confirmed;                  // candidates with a confirmation recorded
  std::set<std::int64_t> m_decided;
  std::set<std::int64_t> m_ran_evaluate;
  std::set<std::uint64_t> m_in_flight;      // task ids submitted whose results are not in the file yet
  std::vector<std::uint64_t> m_unwritten;   // task ids whose results a failed write kept out
  bool m_speculative = false;               // evaluations run alongside their explorations (pipelined)
  std::vector<jobs::TaskResult> m_held;     // speculative evaluations whose exploration is not in yet
  SuiteStage m_suite;                       // per-test outcomes and the test gate (evaluate.suite)
  BuildStage m_builds;                      // builds once per build key (build.command)
  mutable ProposeStage m_propose;           // proposers and candidates' trees ([propose]); trees are made on demand
  std::vector<results::ProposalRecord> m_proposals;  // the proposal journal, as recorded
};

}  // namespace

void request_stop() { g_stop = true; }

std::filesystem::path stop_request_path(const Settings& settings) { return settings.results.string() + ".stop"; }

int run_campaign(const Settings& settings, const RunOptions& options, std::ostream& out, std::ostream& err) {
  g_stop = false;
  return CampaignRunner(settings, options, out, err).run();
}

}  // namespace flotilla::scheduler

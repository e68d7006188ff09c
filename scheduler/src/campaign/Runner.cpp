// Runner.cpp — setting a campaign up, its loop of rounds, and its report (Runner.h).
#include "Runner.h"
#include "../Clock.h"

#include <ostream>
#include <thread>

#include <fmt/format.h>

#include "flotilla/jobs/Placement.h"
#include "flotilla/jobs/Slurm.h"  // shell_quote
#include "flotilla/results/Columns.h"
#include "flotilla/results/Lineage.h"
#include "flotilla/results/Printable.h"
#include "flotilla/scheduler/Planning.h"
#include "flotilla/scheduler/Proposals.h"
#include "../BuildInputs.h"
#include "../Provenance.h"

namespace flotilla::scheduler {

CampaignRunner::CampaignRunner(const Settings& s, const RunOptions& o, std::ostream& out, std::ostream& err,
                               const StopSignals& stops)
    : m_s(s), m_o(o), m_out(out), m_err(err), m_stops(stops), m_progress(err, o.live_progress), m_ledger(s),
      m_suite(s, o.path_prepend,
              [this](std::int64_t id) { return m_tasks.task_values(id, results::TrialKind::evaluate, 0); }),
      m_builds(s, make_build_backend_factory(s, o, [this](std::string kind, std::string message) {
                 note(std::move(kind), std::move(message));
               })),
      m_propose(s, o.path_prepend),
      m_tasks(s, m_ledger, m_builds, m_suite, [this](std::int64_t id) { return tree_of(id); }),
      m_dispatch(s, o, m_ledger, m_tasks, m_suite, stops) {
  m_dispatch.set_backend(make_campaign_backend(
      s, o, [this](std::string kind, std::string message) { note(std::move(kind), std::move(message)); }));
  m_strategy = make_campaign_strategy(s, m_warm_note);
}

// What a backend tells the user that is not a task's result (BackendOptions::notice). The file
// opens later (run()); a notice before that is only printed.
void CampaignRunner::note(std::string kind, std::string message) {
  if (m_ledger.is_open()) m_ledger.event(kind, message);
  m_progress.note(fmt::format("flotilla: {}", message));
}

int CampaignRunner::run() {
  m_suite.prepare();
  open();
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
    m_ledger.event("leftovers_killed", killed + " left by an earlier run");
    // `killed` names processes by their command names, which a task sets as it likes.
    m_err << results::printable(fmt::format("{}: killed {} that an earlier, killed run of this campaign left running\n",
                                            m_s.results.string(), killed));
  }
  if (!m_dispatch.backend().capabilities().outlives_scheduler) {
    m_suite.remove_stale_temporaries();
    // Which guarantee holds that a task's descendants end with it (docs/verification.md).
    m_ledger.event("containment", jobs::task_containment());
  }
  // The cores this process may use (its affinity: an allocation's share of the host), which the
  // local backend's tasks share; the mpi backend's ranks see the same kind of host.
  const auto cores = static_cast<unsigned>(jobs::allowed_cpus().size());
  if (const auto warning = oversubscription_warning(m_dispatch.backend().capabilities(),
                                                    cores ? cores : std::thread::hardware_concurrency(),
                                                    m_s.explore_exclusive)) {
    m_ledger.event("warning", *warning);
    m_err << fmt::format("{}: warning: {}\n", m_s.config_path.string(), *warning);
  }
  if (std::error_code ec; std::filesystem::remove(stop_request_path(m_s), ec))
    m_err << fmt::format("{}: removed a stop request no run obeyed\n", stop_request_path(m_s).string());
  const double started = now_seconds();
  m_finished_before_run = finished_candidates(m_ledger.summarize());  // a resume's: not this run's rate
  try {
    for (int round = 0;; ++round) {
      const auto end = run_round(round);
      if (end.kind == RoundEnd::Kind::stopped) return stopped(end.stop);
      if (end.kind == RoundEnd::Kind::finished) {
        m_progress.finish();
        m_ledger.event("campaign_finished", end.reason);
        return report(end.reason, now_seconds() - started);
      }
      m_progress.round_end(progress(round, "done"));
    }
  } catch (const LauncherFailed& failed) {
    m_progress.finish();
    m_ledger.event("launcher_failed", failed.what());
    m_err << fmt::format("{}: stopped: {}\n", m_s.config_path.string(), failed.what());
    return kExitError;
  } catch (const results::StoreSpaceError&) {
    // The disk is nearly full: a task that writes large files may be the cause, so the tasks
    // running now are named here and in the journal, which the resumed run repeats.
    m_progress.finish();
    const auto running = m_dispatch.disk_full_text();
    m_err << fmt::format("{}: stopped with its file system nearly full: {}\n", m_s.results.string(), running);
    try {
      m_ledger.store().add_last_event(
          {now_seconds(), "disk_full", "stopped with the file system nearly full: " + running});
    } catch (const results::StoreError&) {
    }
    throw;
  }
}

// A stop obeyed: what it leaves, in the journal and for the user.
int CampaignRunner::stopped(Stop stop) {
  m_progress.finish();
  if (stop == Stop::held) {  // hold mode: the job is written, for a person to submit (nothing journalled)
    const auto held = m_builds.held() ? m_builds.held() : m_dispatch.backend().held();
    if (held && m_o.on_held) m_o.on_held(*held);
    return kExitHeld;
  }
  if (stop == Stop::cancelled) {
    std::error_code ec;
    std::filesystem::remove(stop_request_path(m_s), ec);
    m_ledger.event("cancelled", "stopped by `flotilla cancel`; nothing was resubmitted");
    m_err << fmt::format("cancelled by `flotilla cancel`: finished tasks are recorded in {}; nothing was "
                         "resubmitted; run the same command again to resume\n",
                         m_s.results.string());
    return kExitCancelled;
  }
  const std::size_t detached = m_dispatch.detached() + m_detached_builds;
  const std::string left = detached > 0 ? fmt::format("; {} Slurm job(s) keep running, and the next run takes "
                                                     "them up again", detached)
                                          : std::string();
  m_ledger.event("interrupted", "stopped by signal; run again to resume" + left);
  m_err << fmt::format("interrupted: finished tasks are recorded in {}{}; run the same command again to resume\n",
                       m_s.results.string(), left);
  return kExitInterrupted;
}

results::CampaignInfo CampaignRunner::campaign_info() const {
  return {.name = m_s.name, .config_text = m_s.config_text, .fingerprint = m_s.fingerprint(),
          .objective = m_s.objective, .direction = m_s.maximize ? "maximize" : "minimize", .repeats = m_s.repeats,
          .shards = m_s.evaluate_command.empty() ? 0 : m_s.shards,
          .test_gate = !m_suite.active()                            ? std::string()
                       : m_s.require == results::TestGate::all_pass ? "all_pass"
                                                                    : "no_regression",
          .seed = m_s.seed, .flotilla_version = FLOTILLA_VERSION, .host = jobs::host_name(), .created = now_seconds(),
          .confirm_confidence = m_s.confirm_confidence, .confirm_min_effect = m_s.confirm_min_effect,
          .confirm_max_pairs = m_s.confirm ? m_s.confirm_max_pairs : 0,
          .objectives = results::objectives_text(m_s.objectives),
          .pick = m_s.objectives.empty() ? std::string() : m_s.pick.text(),
          .fidelity = m_s.fidelity.empty() ? std::string() : m_s.fidelity + "=" + m_s.fidelity_full()};
}

void CampaignRunner::open() {
  const bool resumed = m_ledger.open(campaign_info(), m_err);
  // Reports and discoveries left by an earlier campaign of the same name belong to another
  // results file: reusing them would judge this campaign's candidates by someone else's tests.
  if (!resumed && m_suite.active() && std::filesystem::exists(m_s.tests_dir)) {
    m_err << fmt::format("{}: left by an earlier campaign with no results file: removed\n", m_s.tests_dir.string());
    std::filesystem::remove_all(m_s.tests_dir);
  }
  if (!m_warm_note.empty()) {
    m_ledger.event("warm_start", m_warm_note);
    m_err << results::printable(m_warm_note) << "\n";  // names read from another campaign's file
  }
  // What this run's results rest on besides the settings (Provenance.h): once per run, so a
  // campaign resumed on another commit or compiler says so in its summary.
  m_ledger.event("provenance", results::provenance_detail(probe_provenance(
                                   m_s, {m_s.build_command, m_s.explore_command, m_s.evaluate_command})));
  if (m_propose.active()) m_propose.trees().remove_stale();
  // Replay: the strategy learns every recorded candidate it could have proposed, in order (a
  // proposal's candidate is a code change: its value says nothing of the plain code's space).
  auto summary = m_ledger.summarize();
  for (const auto& c : summary.candidates)
    if (!results::proposal_of(c.record)) tell(c);
  if (m_ledger.candidates().empty() && m_s.baseline)
    add_candidates(0, {m_s.space.parse_configuration(*m_s.baseline)}, "baseline");
  m_suite.set_reference(&m_ledger.store(), m_ledger.baseline_id());
  // A writer killed between a confirmation's pairs and its record: the pairs decide it again
  // (head-to-head ones too: the Python reader reads their rows).
  for (const auto& c : summary.candidates) {
    if (c.confirmation) record_confirmation(c, *c.confirmation);
    for (const auto& [opponent, duel] : c.head_to_head) record_confirmation(c, duel);
  }
}

// A candidate's outcome to the strategy; a failure says its kind (failure_of, Planning.h).
// With several objectives, the value of each (the median of its metric over the repeats).
void CampaignRunner::tell(const results::CandidateSummary& c) {
  const auto& config = m_ledger.config(c.record.id);
  const auto value = c.status == results::CandidateStatus::rolled_back ? std::nullopt : c.objective;
  if (const auto failure = failure_of(c, m_ledger.trials_of(c.record.id))) {
    m_strategy->tell(config, *failure);
  } else if (!m_s.objectives.empty() && value) {
    std::vector<double> values;
    for (const auto& goal : m_s.objectives)
      if (auto v = results::goal_value(c, goal, m_ledger.store().campaign())) values.push_back(*v);
    if (values.size() == m_s.objectives.size()) m_strategy->tell_objectives(config, values);
    else m_strategy->tell(config, search::Failure::crash);
  } else {
    m_strategy->tell(config, value);
  }
}

void CampaignRunner::add_candidates(int round, const std::vector<search::Configuration>& configs,
                                    const std::string& origin) {
  // One flush for the batch, before any of its tasks reaches a backend: a crash before the
  // commit loses only candidates that nothing has run for, and a resumed campaign asks again.
  results::Store::Group group(m_ledger.store());
  for (const auto& config : configs) m_ledger.add_candidate(round, config, origin);
  m_ledger.event("batch_proposed", fmt::format("round {}: {} candidates ({})", round, configs.size(), origin));
  group.commit();
}

// A candidate's tree: [propose] tree with its chain of patches applied (Trees.h).
std::filesystem::path CampaignRunner::tree_of(std::int64_t id) const {
  return m_propose.trees().ensure(results::chain_of(id, m_ledger.candidates(), m_ledger.proposals()),
                                  m_ledger.proposals());
}

ProgressState CampaignRunner::progress(int round, const char* phase) const {
  const auto& backend = m_dispatch.backend();
  ProgressState p{.round = round, .phase = phase, .finished_before_run = m_finished_before_run,
                  .budget = m_s.budget + (m_propose.active() ? static_cast<std::size_t>(m_s.propose.budget) : 0),
                  .running = backend.running(), .queued = backend.queued(), .objective = m_s.objective,
                  .jobs = backend.jobs_overview()};
  fill_from_summary(p, m_ledger.summary());
  return p;
}

std::function<void(bool)> CampaignRunner::show(int round, const char* phase) {
  // progress() brings the ledger's summary up to date: built only when the line is drawn (issue 35:
  // built at every task that came back, when it summarised every recorded trial, it made a
  // campaign's CPU quadratic in its tasks, even off a terminal).
  return [this, round, phase](bool final) {
    if (m_progress.due(final)) m_progress.update(progress(round, phase), final);
  };
}

int CampaignRunner::report(const std::string& stop, double seconds) {
  auto summary = m_ledger.summarize();
  summary.provenance = results::provenance_of(m_ledger.store().events());
  results::add_proposals(summary, m_ledger.candidates(), m_ledger.proposals());
  // The report quotes task output (reasons, test names, a failed baseline's reason in `stop`):
  // shown escaped, so none of it can drive the terminal (Printable.h).
  m_out << results::wrap_report(
      results::printable(fmt::format("{}: {} in {:.1f} s\n{}\nresults    {}  (flotilla results summary {})\n",
                                     m_s.name, stop, seconds, results::summary_text(summary, 5), m_s.results.string(),
                                     jobs::shell_quote(m_s.results.string()))),
      static_cast<std::size_t>(stdout_columns()));
  return summary.best ? kExitOk : kExitNothingVerified;
}

}  // namespace flotilla::scheduler

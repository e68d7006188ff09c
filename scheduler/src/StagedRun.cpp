// StagedRun.cpp — a staged, bottleneck-driven campaign ([intent] stages = bottleneck): profile the
// baseline, tune the component with the largest share, verify, keep the best verified candidate
// or the incumbent, re-profile, until a stage gains less than the threshold (Campaign.h,
// Stages.h). Each stage is an ordinary campaign (run_campaign) in a results file of its own, so
// resume, verification and rollback are the campaign loop's.
#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <ostream>
#include <sstream>

#include <fmt/format.h>

#include "flotilla/results/Analysis.h"
#include "flotilla/results/Lineage.h"
#include "flotilla/results/Printable.h"
#include "flotilla/results/Store.h"
#include "flotilla/scheduler/Campaign.h"
#include "flotilla/scheduler/Proposals.h"
#include "flotilla/scheduler/Stages.h"
#include "BuildInputs.h"

namespace flotilla::scheduler {
namespace {

// RESULTS.stageK.h5 beside RESULTS.h5.
std::filesystem::path stage_path(const std::filesystem::path& results, int stage) {
  return results.parent_path() /
         fmt::format("{}.stage{}{}", results.stem().string(), stage, results.extension().string());
}

// The settings of stage `stage`: the campaign's, with the incumbent as baseline and every
// parameter outside `component` pinned to the incumbent's value (stage 0, no component: the
// baseline alone, for its profile).
Settings stage_settings(const std::function<Settings()>& load, int stage, const std::string& incumbent,
                        const Component* component, const std::filesystem::path& incumbent_tree = {},
                        const std::map<std::string, double>& profile = {}) {
  Settings s = load();
  // With a proposer, a stage starts from the incumbent's code: its tree (the chain of patches
  // that won so far) is this stage's source tree, and the stage tells its proposer what it tunes.
  if (s.propose.active() && !incumbent_tree.empty()) {
    s.propose.tree = incumbent_tree;
    s.propose.tree_digest = digest_build_inputs(incumbent_tree, {"."});
  }
  if (component) {
    Settings::StageInfo info{.index = stage, .component = component->name, .share_metric = component->share_metric,
                             .params = component->params};
    for (const auto& c : s.components)
      if (auto it = profile.find(c.share_metric); it != profile.end()) info.profile[c.name] = it->second;
    if (auto it = profile.find(component->share_metric); it != profile.end()) info.share = it->second;
    s.stage = std::move(info);
  }
  const auto campaign_results = s.results;
  s.results = stage_path(campaign_results, stage);
  if (s.jobs_dir == campaign_results.string() + ".jobs") s.jobs_dir = s.results.string() + ".jobs";
  s.tests_dir = s.results.string() + ".tests";  // each stage's candidates are its own
  s.name += fmt::format(".stage{}", stage);
  s.staged = false;
  s.baseline = incumbent;
  const auto pinned = s.space.parse_configuration(incumbent);
  std::vector<bool> free(pinned.size(), false);
  for (std::size_t i = 0; i < free.size(); ++i)
    free[i] = component && std::find(component->params.begin(), component->params.end(),
                                     s.space.parameters()[i].name) != component->params.end();
  std::string description = component ? fmt::format("stage {}: only {}'s parameters vary ({}), the others are the "
                                                     "baseline's", stage, component->name,
                                                     fmt::join(component->params, " "))
                                       : "stage 0: the baseline alone (its profile)";
  s.space.add_predicate(std::move(description), [pinned, free](const search::Configuration& c) {
    for (std::size_t i = 0; i < c.size(); ++i)
      if (!free[i] && c[i] != pinned[i]) return false;
    return true;
  });
  if (!component) s.budget = 0;
  return s;
}

// The final check (issue 34): the staged winner measured against the original baseline directly,
// in RESULTS.final.h5: a campaign whose baseline is stage 0's and whose only candidate is the
// winner, explored, verified and confirmed in interleaved pairs like any. The stages' ratios
// multiplied are no measurement of the whole gain (each stage re-measured its incumbent).
Settings final_settings(const std::function<Settings()>& load, const std::string& baseline, const std::string& winner) {
  Settings s = load();
  const auto campaign_results = s.results;
  s.results = campaign_results.parent_path() /
              fmt::format("{}.final{}", campaign_results.stem().string(), campaign_results.extension().string());
  if (s.jobs_dir == campaign_results.string() + ".jobs") s.jobs_dir = s.results.string() + ".jobs";
  s.tests_dir = s.results.string() + ".tests";
  s.name += ".final";
  s.staged = false;
  s.propose.command.clear();
  s.baseline = baseline;
  const auto only = s.space.parse_configuration(winner);
  const auto reference = s.space.parse_configuration(baseline);
  s.space.add_predicate("final: the staged winner alone, against the original baseline",
                        [only, reference](const search::Configuration& c) { return c == only || c == reference; });
  s.strategy = "grid";
  s.budget = 1;
  s.batch = 1;
  return s;
}

// What a finished stage file says.
struct StageOutcome {
  std::filesystem::path file;
  std::filesystem::path best_tree;  // with a proposer: the tree of the stage's winner (its chain of patches)
  std::optional<results::CandidateSummary> baseline;  // the incumbent, measured again in this stage
  std::optional<results::CandidateSummary> best;      // the stage's winner (confirmed faster than the incumbent,
                                                      // or the incumbent itself; Analysis.h)
  bool confirming = false;                            // the stage confirmed its winner against the incumbent
  std::size_t explored = 0;
  std::size_t rolled_back = 0;
  int shards = 0;
};

StageOutcome read_stage(const std::filesystem::path& file, const Settings& settings) {
  const auto store = results::Store::open_read(file);
  const auto summary = results::summarize(store);
  StageOutcome o{.file = file, .shards = summary.campaign.shards};
  if (summary.baseline) o.baseline = summary.candidates[*summary.baseline];
  if (summary.best && summary.best_verified) o.best = summary.candidates[*summary.best];
  if (settings.propose.active() && summary.best) {
    const auto proposals = store.proposals();
    const auto chain = results::chain_of(static_cast<std::int64_t>(*summary.best), store.candidates(), proposals);
    o.best_tree = chain.empty() ? settings.propose.tree
                                : std::filesystem::path(file.string() + ".trees") / chain_key(chain, proposals);
  }
  o.confirming = summary.confirming;
  o.explored = static_cast<std::size_t>(std::count_if(summary.candidates.begin(), summary.candidates.end(),
                                                      [](const auto& c) { return c.record.origin != "baseline"; }));
  o.rolled_back = summary.count(results::CandidateStatus::rolled_back);
  return o;
}

std::map<std::string, double> profile_of(const std::vector<Component>& components,
                                         const results::CandidateSummary& candidate) {
  std::map<std::string, double> shares;
  for (const auto& c : components)
    if (auto it = candidate.metrics.find(c.share_metric); it != candidate.metrics.end()) shares[c.share_metric] = it->second;
  return shares;
}

std::string profile_text(const std::vector<Component>& components, const std::map<std::string, double>& shares) {
  std::vector<std::string> parts;
  for (const auto& c : components)
    if (auto it = shares.find(c.share_metric); it != shares.end()) parts.push_back(c.name + " " + percent(it->second));
  return parts.empty() ? "none" : fmt::format("{}", fmt::join(parts, ", "));
}

// The words of a configuration text that set one of `params`.
std::string settings_of(const std::string& config, const std::vector<std::string>& params) {
  std::istringstream in(config);
  std::vector<std::string> chosen;
  for (std::string word; in >> word;)
    if (std::find(params.begin(), params.end(), word.substr(0, word.find('='))) != params.end()) chosen.push_back(word);
  return fmt::format("{}", fmt::join(chosen, " "));
}

std::string verification(const results::CandidateSummary& c, int shards) {
  return fmt::format("verified {}/{} shards", c.shards_passed, shards);
}

}  // namespace

int run_staged_campaign(const std::function<Settings()>& load, const RunOptions& options, std::ostream& out,
                        std::ostream& err) {
  const Settings base = load();
  const auto started = std::chrono::steady_clock::now();
  const auto& objective = base.objective;

  // Stage 0: the baseline's profile (and its verification).
  auto profile_settings = stage_settings(load, 0, *base.baseline, nullptr);
  profile_settings.propose.command.clear();  // stage 0 measures the baseline alone: nothing to propose
  err << fmt::format("stage 0: profiling the baseline ({})\n", profile_settings.results.string());
  if (run_campaign(profile_settings, options, err, err) == kExitInterrupted) return kExitInterrupted;
  const auto profile = read_stage(profile_settings.results, profile_settings);
  out << fmt::format("{}: staged by bottleneck (threshold {})\n", base.name, percent(base.stage_threshold));
  if (!profile.best) {
    const auto why = profile.baseline ? profile.baseline->reason : std::string("not recorded");
    // The reason quotes the baseline's output: shown escaped (Printable.h).
    out << results::printable(fmt::format("profile    the baseline did not verify ({}): nothing to stage from   {}\n",
                                          why, profile.file.string()));
    return kExitNothingVerified;
  }
  auto incumbent = *profile.best;
  auto incumbent_tree = base.propose.tree;
  std::vector<std::string> applied;  // with a proposer: the patches the incumbent's tree has, in order
  auto shares = profile_of(base.components, incumbent);
  out << fmt::format("profile    {} {:.4g} ({}); shares: {}   {}\n", objective, *incumbent.objective,
                     verification(incumbent, profile.shards), profile_text(base.components, shares),
                     profile.file.string());

  std::vector<StageRecord> history;
  double overall = 1.0;
  int last_stage = 0, incumbent_stage = 0;
  std::string stop;
  for (int k = 1;; ++k) {
    const auto decision = next_stage(base.components, shares, history, base.stage_threshold, base.propose.active());
    if (decision.stop) {
      stop = decision.reason;
      break;
    }
    const auto& component = *std::find_if(base.components.begin(), base.components.end(),
                                          [&](const Component& c) { return c.name == decision.component; });
    auto settings = stage_settings(load, k, incumbent.record.config, &component, incumbent_tree, shares);
    err << fmt::format("stage {}: {} ({})\n", k, decision.reason, settings.results.string());
    if (run_campaign(settings, options, err, err) == kExitInterrupted) return kExitInterrupted;
    const auto o = read_stage(settings.results, settings);
    last_stage = k;
    const auto head = fmt::format("stage {:<4} bottleneck {} (share {}): explored {}, {} rolled back;", k,
                                  component.name, percent(decision.share), o.explored, o.rolled_back);
    if (!o.baseline || !o.baseline->objective || !o.best) {
      out << fmt::format("{} chosen none (incumbent kept): {}   {}\n", head,
                         !o.best ? "nothing verified" : "the incumbent's measurement failed", o.file.string());
      stop = fmt::format("stage {} could not compare against the incumbent", component.name);
      break;
    }
    // A stage's gain counts only when its winner is confirmed faster than the incumbent, in
    // interleaved pairs (docs/verdicts.md); the gain is then the confirmed ratio.
    const double before = *o.baseline->objective, after = *o.best->objective;
    const bool confirmed = o.best->confirmed_faster();
    const bool accepted = o.best->record.id != o.baseline->record.id &&
                          (o.confirming ? confirmed : stage_gain(before, after, base.maximize) > 0);
    const double gain = !accepted ? 0.0
                        : confirmed ? o.best->confirmation->result.ratio - 1
                                    : stage_gain(before, after, base.maximize);
    const auto& chosen = accepted ? *o.best : *o.baseline;
    const std::string confirmation =
        confirmed ? fmt::format(", confirmed {:.3g}x [{:.3g}, {:.3g}] in {} pairs", o.best->confirmation->result.ratio,
                                o.best->confirmation->result.low, o.best->confirmation->result.high,
                                o.best->confirmation->result.pairs)
                  : "";
    const auto chosen_text = !accepted                ? std::string("none (incumbent kept)")
                             : !chosen.proposal.empty() ? results::candidate_label(chosen)
                                                        : settings_of(chosen.record.config, component.params);
    out << fmt::format("{} chosen {}; {} {:.4g} -> {:.4g} (+{}{}); {}   {}\n", head, chosen_text,
                       objective, before, accepted ? after : before, percent(gain), confirmation,
                       chosen.status == results::CandidateStatus::verified ? verification(chosen, o.shards)
                                                                           : "incumbent verified in an earlier stage",
                       o.file.string());
    history.push_back({.component = component.name, .gain = gain});
    overall *= 1.0 + gain;
    if (accepted) {
      incumbent = *o.best;
      incumbent_stage = k;
      if (!o.best_tree.empty()) incumbent_tree = o.best_tree;
      applied.insert(applied.end(), o.best->chain.begin(), o.best->chain.end());
    }
    shares = profile_of(base.components, chosen);  // the re-profile
  }

  // The whole gain, measured: the winner against the original baseline in interleaved pairs.
  std::string whole = fmt::format("{:.2f}x over the stages, their ratios multiplied: not measured", overall);
  std::string final_line;
  if (incumbent_stage > 0 && base.confirm && applied.empty()) {
    auto settings = final_settings(load, profile.best->record.config, incumbent.record.config);
    err << fmt::format("final: the winner against the original baseline ({})\n", settings.results.string());
    if (run_campaign(settings, options, err, err) == kExitInterrupted) return kExitInterrupted;
    const auto store = results::Store::open_read(settings.results);
    const auto summary = results::summarize(store);
    const results::CandidateSummary* winner = nullptr;
    for (const auto& c : summary.candidates)
      if (c.record.origin != "baseline") winner = &c;
    if (winner && winner->confirmation && winner->confirmation->result.verdict != results::stats::Verdict::pending) {
      const auto& r = winner->confirmation->result;
      whole = r.verdict == results::stats::Verdict::faster
                  ? fmt::format("confirmed {:.3g}x [{:.3g}, {:.3g}] over the baseline in {} pairs", r.ratio, r.low,
                                r.high, r.pairs)
                  : fmt::format("{} against the baseline: {:.3g}x [{:.3g}, {:.3g}] in {} pairs",
                                results::stats::to_string(r.verdict), r.ratio, r.low, r.high, r.pairs);
    } else {
      whole = fmt::format("not confirmed against the baseline: {}; the stages' ratios multiplied: {:.2f}x",
                          winner ? (winner->reason.empty() ? std::string("its median did not beat the baseline's")
                                                           : winner->reason)
                                 : std::string("not measured"),
                          overall);
    }
    std::vector<std::string> ratios;
    for (const auto& h : history)
      if (h.gain > 0) ratios.push_back(fmt::format("{} {:.3g}x", h.component, 1 + h.gain));
    final_line = results::printable(fmt::format("final      the winner against the original baseline: {} (stages: {})   {}\n",
                                                whole, fmt::join(ratios, ", "), settings.results.string()));
  } else if (incumbent_stage > 0 && !applied.empty()) {
    whole += " (with proposals the winner's code differs from the baseline's tree: measured stage by stage only)";
  } else if (incumbent_stage == 0) {
    whole = "the baseline itself";
  }

  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  out << final_line;
  out << fmt::format("stop       {}\n", stop);
  out << fmt::format("baseline   {} {:.4g} (verified)   {}\n", objective, *profile.best->objective,
                     profile.best->record.config);
  out << fmt::format("best       {} {:.4g} (verified in stage {}; {})   {}{}\n", objective,
                     *incumbent.objective, incumbent_stage, whole,
                     applied.empty() ? std::string() : fmt::format("{} ", fmt::join(applied, "+")),
                     incumbent.record.config);
  out << fmt::format("results    {} .. {}  ({} stages in {:.1f} s; flotilla results summary FILE)\n",
                     profile.file.string(), stage_path(base.results, last_stage).string(), last_stage, seconds);
  return kExitOk;
}

}  // namespace flotilla::scheduler

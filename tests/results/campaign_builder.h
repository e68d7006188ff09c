// campaign_builder.h — small campaigns as records, for the analysis tests: one explore repeat per
// candidate (or a failure), an optional verdict, and times that advance one second per trial.
#pragma once

#include <flotilla/results/Analysis.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

namespace flotilla::results::testing {

enum class Verdict { none, pass, fail };

struct CampaignBuilder {
  CampaignInfo info;
  std::vector<CandidateRecord> candidates;
  std::vector<TrialRecord> trials;
  double clock = 1000;

  explicit CampaignBuilder(std::string direction = "maximize", int shards = 1) {
    info.name = "test";
    info.objective = "score";
    info.direction = std::move(direction);
    info.repeats = 1;
    info.shards = shards;
  }

  // A candidate explored with `score` (none: its explore repeat failed), then judged by `verdict`.
  std::int64_t add(const std::string& config, int round, std::optional<double> score, Verdict verdict = Verdict::none,
                   std::vector<Metric> metrics = {}) {
    const auto id = static_cast<std::int64_t>(candidates.size());
    candidates.push_back({id, round, config, id == 0 ? "baseline" : "grid"});
    TrialRecord t{.candidate = id, .kind = TrialKind::explore, .start = clock, .end = clock + 1};
    clock += 1;
    t.status = score ? TrialStatus::ok : TrialStatus::failed;
    t.objective = score.value_or(std::nan(""));
    t.reason = score ? "" : "exit code 1";
    t.metrics = std::move(metrics);
    if (score) t.metrics.push_back({info.objective, *score});
    trials.push_back(t);
    if (verdict != Verdict::none) evaluate(id, verdict == Verdict::pass);
    return id;
  }

  void evaluate(std::int64_t id, bool pass) {
    for (int shard = 0; shard < info.shards; ++shard) {
      TrialRecord t{.candidate = id, .kind = TrialKind::evaluate, .index = shard, .start = clock, .end = clock + 1};
      clock += 1;
      t.status = pass ? TrialStatus::ok : TrialStatus::failed;
      t.objective = std::nan("");
      trials.push_back(t);
    }
  }

  CampaignSummary summary() const { return summarize(info, candidates, trials); }
};

}  // namespace flotilla::results::testing

// summary_cache_test.cpp — results::SummaryCache against results::summarize: on tables that grow
// a record at a time, in random order, every update equals a summary of the whole tables.
#include <gtest/gtest.h>

#include <flotilla/results/Analysis.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace {

using namespace flotilla::results;

// Everything a summary decides, as text: the JSON report and the fields it leaves out.
std::string everything(const CampaignSummary& s) {
  std::string text = summary_json(s, 1'000'000);
  for (const auto& c : s.candidates)
    text += fmt::format("\n{} {} {} {} {} {}", c.record.id, static_cast<int>(c.status), c.concurrency, c.repeats_done,
                        c.reason, fmt::join(c.chain, "+"));
  text += fmt::format("\nmost {} unlike {} noise {} gain {} noisy {} trials {} failed {} warmups {} extra {}", s.most_at_once,
                      s.unlike_placement ? s.unlike_placement->candidates : -1.0, s.noise_cv.value_or(-1),
                      s.resolvable_gain.value_or(-1), s.too_noisy, s.trials, s.failed_trials, s.warmups,
                      s.repeats_extra);
  for (const auto& [reason, n] : s.failures_by_reason) text += fmt::format("\n{} {}", reason, n);
  for (const auto& [kind, g] : s.failures_by_kind) text += fmt::format("\n{} {} {}", kind, g.count, g.first_error);
  return text;
}

struct Tables {
  CampaignInfo info;
  std::vector<CandidateRecord> candidates;
  std::vector<TrialRecord> trials;
  std::vector<ProposalRecord> proposals;
};

CampaignInfo campaign(bool minimize) {
  CampaignInfo info;
  info.name = "cache";
  info.objective = "t";
  info.direction = minimize ? "minimize" : "maximize";
  info.repeats = 3;
  info.shards = 2;
  return info;
}

// Campaigns whose summary has more parts: confirmation (pairs against the baseline and head to
// head), several objectives (the front), and a baseline recorded after other candidates.
struct Shape {
  bool confirm = false;
  bool objectives = false;
  std::int64_t baseline = 0;  // the id of the candidate that is the baseline
};

// One random step: a candidate (the first the baseline, some from proposals), a proposal, or a
// trial of any kind, status and attempt, at times that overlap other trials' (so each new run
// can change others' concurrency), now and then of a candidate not recorded yet.
void grow(Tables& t, const Shape& shape, std::mt19937_64& rng, double& clock) {
  const auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<std::uint64_t>(n)); };
  const int what = pick(20);
  if (t.candidates.empty() || what < 3) {
    const auto id = static_cast<std::int64_t>(t.candidates.size());
    std::string origin = id == shape.baseline ? "baseline" : "random";
    // Some name a proposal recorded later (one past the last).
    if (id != shape.baseline && pick(3) == 0)
      origin = fmt::format("proposal {}", pick(static_cast<int>(t.proposals.size()) + 1));
    t.candidates.push_back({id, static_cast<std::int32_t>(id / 4), fmt::format("x={}", id), origin});
    return;
  }
  if (what == 3) {
    const auto id = static_cast<std::int64_t>(t.proposals.size());
    t.proposals.push_back({.id = id, .round = 0, .parent = pick(static_cast<int>(t.candidates.size())),
                           .status = ProposalStatus::accepted, .name = fmt::format("p{}", id)});
    return;
  }
  TrialRecord r;
  r.candidate = pick(12) == 0 ? static_cast<std::int64_t>(t.candidates.size()) : pick(static_cast<int>(t.candidates.size()));
  const int kind = pick(shape.confirm ? 12 : 10);
  r.kind = kind < 6    ? TrialKind::explore
           : kind < 8  ? TrialKind::evaluate
           : kind < 9  ? TrialKind::warmup
           : kind < 10 ? TrialKind::build
                       : TrialKind::confirm;
  r.index = pick(r.kind == TrialKind::evaluate ? 3 : 5);
  if (r.kind == TrialKind::confirm) {  // a pair against the baseline, or head to head
    const bool duel = pick(3) == 0;
    const auto reference = duel ? pick(static_cast<int>(t.candidates.size())) : shape.baseline;
    if (duel) r.index = kHeadToHeadIndex + static_cast<std::int32_t>(reference + 1) * kHeadToHeadStride + pick(6);
    else r.index = pick(6);
    r.metrics = {{"candidate", 1.0 + pick(20) / 10.0}, {"reference", 1.0 + pick(20) / 10.0},
                 {"reference_candidate", static_cast<double>(reference)}};
  }
  if (shape.objectives) r.metrics.push_back({"u", static_cast<double>(pick(50))});
  r.attempt = pick(3);
  r.status = pick(6) == 0 ? TrialStatus::failed : TrialStatus::ok;
  r.objective = r.status == TrialStatus::ok ? 1.0 + pick(100) / 10.0 : std::nan("");
  r.reason = r.status == TrialStatus::ok ? "" : fmt::format("exit code {}", pick(3));
  clock += pick(3) * 0.5;
  r.start = pick(15) == 0 ? 0 : clock - pick(4);  // some runs without times, some starting back
  r.end = r.start + pick(6) * 0.75;
  t.trials.push_back(std::move(r));
}

void expect_equal_as_it_grows(bool minimize, std::uint64_t seed, int steps, const Shape& shape = {}) {
  Tables t{.info = campaign(minimize)};
  if (shape.confirm) t.info.confirm_max_pairs = 10;
  if (shape.objectives) t.info.objectives = "t:min, u:max";
  std::mt19937_64 rng(seed);
  double clock = 1000;
  SummaryCache cache;
  for (int step = 0; step < steps; ++step) {
    const int grown = 1 + static_cast<int>(rng() % 3);  // several records between two updates, as a round adds
    for (int g = 0; g < grown; ++g) grow(t, shape, rng, clock);
    const auto& cached = cache.update(t.info, t.candidates, t.trials, t.proposals);
    const auto fresh = summarize(t.info, t.candidates, t.trials, t.proposals);
    ASSERT_EQ(everything(cached), everything(fresh)) << "seed " << seed << ", step " << step;
  }
}

TEST(SummaryCache, EqualsAWholeSummaryAtEveryStepOfAGrowingCampaign) {
  for (std::uint64_t seed = 1; seed <= 12; ++seed) expect_equal_as_it_grows(seed % 2 == 0, seed, 150);
}

// The same with confirmation pairs and head-to-head duels, several objectives, a baseline
// recorded after other candidates, and candidates naming proposals recorded after them.
TEST(SummaryCache, EqualsAWholeSummaryWithConfirmationsObjectivesAndALateBaseline) {
  for (std::uint64_t seed = 21; seed <= 32; ++seed)
    expect_equal_as_it_grows(seed % 2 == 0, seed, 150,
                             {.confirm = seed % 3 != 0, .objectives = seed % 3 != 1,
                              .baseline = static_cast<std::int64_t>(seed % 4)});
}

TEST(SummaryCache, ReadsTheNewTrialsAndTheirCandidatesNotEveryTrial) {
  Tables t{.info = campaign(true)};
  for (std::int64_t id = 0; id < 100; ++id) {
    t.candidates.push_back({id, 0, fmt::format("x={}", id), id == 0 ? "baseline" : "grid"});
    for (int r = 0; r < 3; ++r)  // one at a time, far apart: no run overlaps another candidate's
      t.trials.push_back({.candidate = id, .index = r, .start = 1000.0 + 10 * id + r, .end = 1000.5 + 10 * id + r,
                          .objective = 1.0 + static_cast<double>(id)});
  }
  SummaryCache cache;
  cache.update(t.info, t.candidates, t.trials, t.proposals);
  const auto first = cache.trials_read();
  EXPECT_EQ(first, 2 * t.trials.size() + 3) << "each trial indexed, each candidate's read, the baseline's for the noise";
  t.trials.push_back({.candidate = 42, .kind = TrialKind::evaluate, .start = 5000, .end = 5001});
  const auto& s = cache.update(t.info, t.candidates, t.trials, t.proposals);
  EXPECT_EQ(cache.trials_read() - first, 1u + 4u + 3u) << "the new trial, its candidate's four, the baseline's three";
  EXPECT_EQ(s.candidates[42].shards_done, 1);
  EXPECT_EQ(everything(s), everything(summarize(t.info, t.candidates, t.trials, t.proposals)));
  const auto before = cache.trials_read();
  cache.update(t.info, t.candidates, t.trials, t.proposals);
  EXPECT_EQ(cache.trials_read() - before, 3u) << "nothing new: only the baseline's noise is read again";
}

}  // namespace

// verdicts_test.cpp — the winner rules of Analysis.h with confirmation: a candidate never beats
// the baseline on a median alone; the confirmed one with the highest ratio wins; a failed pair
// ends the confirmation; the report and its JSON carry the verdict words and intervals.
#include <flotilla/results/Analysis.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace flotilla::results {
namespace {

CampaignInfo confirming_campaign(int max_pairs = 40) {
  return {.name = "v", .objective = "rate", .direction = "maximize", .repeats = 3, .shards = 1,
          .confirm_confidence = 0.95, .confirm_min_effect = 0.02, .confirm_max_pairs = max_pairs};
}

struct Records {
  std::vector<CandidateRecord> candidates;
  std::vector<TrialRecord> trials;

  // A verified candidate whose three repeats are `values`.
  void add(const std::string& origin, std::vector<double> values) {
    const auto id = static_cast<std::int64_t>(candidates.size());
    candidates.push_back({.id = id, .config = "x=" + std::to_string(id), .origin = origin});
    for (int i = 0; i < static_cast<int>(values.size()); ++i)
      trials.push_back({.candidate = id, .kind = TrialKind::explore, .index = i, .objective = values[i]});
    trials.push_back({.candidate = id, .kind = TrialKind::evaluate, .index = 0, .objective = std::nan("")});
  }
  // Pairs of the candidate's confirmation against candidate 0, with these ratios.
  void confirm(std::int64_t id, const std::vector<double>& ratios, int attempt = 0) {
    for (int i = 0; i < static_cast<int>(ratios.size()); ++i)
      trials.push_back({.candidate = id, .kind = TrialKind::confirm, .index = i, .attempt = attempt,
                        .objective = ratios[i], .metrics = {{"reference_candidate", 0}}});
  }
  // Head-to-head pairs of the candidate against `opponent` (task index 1 + opponent).
  void duel(std::int64_t id, std::int64_t opponent, const std::vector<double>& ratios) {
    for (int i = 0; i < static_cast<int>(ratios.size()); ++i)
      trials.push_back({.candidate = id, .kind = TrialKind::confirm, .index = kHeadToHeadIndex + i,
                        .objective = ratios[i], .metrics = {{"reference_candidate", static_cast<double>(opponent)}}});
  }
  CampaignSummary summary(const CampaignInfo& info = confirming_campaign()) const {
    return summarize(info, candidates, trials);
  }
};

TEST(Verdicts, AMedianAloneNeverBeatsTheBaseline) {
  Records r;
  r.add("baseline", {1.0, 1.1, 0.9});
  r.add("random", {2.0, 2.2, 1.8});  // twice as fast by median, not confirmed
  auto s = r.summary();
  ASSERT_TRUE(s.best);
  EXPECT_EQ(*s.best, 0u);
  EXPECT_FALSE(s.best_confirmed);
  EXPECT_EQ(s.best_unconfirmed, 1u);
  EXPECT_NE(summary_text(s, 5).find("the baseline itself: nothing is confirmed faster"), std::string::npos);
  // With confirmation off the median decides, as it did before confirmation existed.
  auto off = r.summary(confirming_campaign(0));
  EXPECT_EQ(*off.best, 1u);
  EXPECT_FALSE(off.confirming);
}

TEST(Verdicts, TheConfirmedCandidateWithTheHighestRatioWins) {
  Records r;
  r.add("baseline", {1.0, 1.0, 1.0});
  r.add("random", {3.0, 3.0, 3.0});  // best median, but its pairs say no difference
  r.add("random", {1.5, 1.5, 1.5});
  r.add("random", {1.6, 1.6, 1.6});
  r.confirm(1, std::vector<double>(40, 1.0));
  r.confirm(2, std::vector<double>(11, 1.5));
  r.confirm(3, std::vector<double>(11, 1.3));
  const auto s = r.summary();
  ASSERT_TRUE(s.best);
  EXPECT_EQ(*s.best, 2u);  // 1.5x confirmed beats 1.3x confirmed, whatever the medians
  EXPECT_TRUE(s.best_confirmed);
  EXPECT_EQ(s.best_unconfirmed, 1u);
  EXPECT_EQ(s.candidates[1].confirmation->result.verdict, stats::Verdict::no_difference);
  EXPECT_EQ(s.candidates[2].confirmation->result.pairs, 11);
  EXPECT_EQ(s.candidates[2].confirm_runs, 22);
  EXPECT_EQ(s.confirm_runs, 80 + 22 + 22);
  EXPECT_EQ(s.candidates[2].confirmation->reference, 0);
  const auto text = summary_text(s, 5);
  EXPECT_NE(text.find("confirmed faster: 1.5x [1.5, 1.5] over the baseline in 11 pairs"), std::string::npos) << text;
  EXPECT_NE(text.find("not chosen candidate 1 (rate 3 [3, 3], verified): no significant difference: 1x [1, 1] over "
                      "the baseline in 11 pairs"),
            std::string::npos)
      << text;
  const auto json = nlohmann::json::parse(summary_json(s, 5));
  EXPECT_EQ(json["verdict"], "confirmed faster");
  EXPECT_DOUBLE_EQ(json["gain_over_baseline"].get<double>(), 1.5);
  EXPECT_EQ(json["best"]["confirmation"]["verdict"], "faster");
  EXPECT_EQ(json["best"]["confirmation"]["words"], "confirmed faster");
  EXPECT_EQ(json["best_unconfirmed"]["id"], 1);
  EXPECT_EQ(json["progress"]["confirmed_faster"], 2);
  EXPECT_EQ(json["progress"]["no_significant_difference"], 1);
}

// The winner is chosen by its confirmation, so it can rank below the rows shown: the table then
// shows it as well, after the top rows, so that it holds the candidate the best line names.
TEST(Verdicts, TheTableShowsAWinnerThatRanksBelowItsTopRows) {
  Records r;
  r.add("baseline", {1.0, 1.0, 1.0});
  r.add("random", {3.0, 3.0, 3.0});  // best median, no confirmed difference
  r.add("random", {1.5, 1.5, 1.5});  // third by median, the winner
  r.add("random", {1.6, 1.6, 1.6});
  r.confirm(1, std::vector<double>(40, 1.0));
  r.confirm(2, std::vector<double>(11, 1.5));
  r.confirm(3, std::vector<double>(11, 1.3));
  const auto s = r.summary();
  ASSERT_EQ(s.best, 2u);
  const auto top1 = summary_text(s, 1);
  const auto marker = top1.find("   ...  (the winner, by its confirmation:)\n");
  ASSERT_NE(marker, std::string::npos) << top1;
  const auto row = top1.substr(marker, top1.find('\n', top1.find('\n', marker) + 1) - marker);
  EXPECT_NE(row.find("\n     3      2         1.5"), std::string::npos) << row;  // rank 3, id 2
  EXPECT_NE(row.find("faster 1.5x"), std::string::npos) << row;
  const auto top3 = summary_text(s, 3);  // the winner is among the rows: no second mention
  EXPECT_EQ(top3.find("(the winner, by its confirmation:)"), std::string::npos) << top3;
}

TEST(Verdicts, AFailedPairEndsTheConfirmation) {
  Records r;
  r.add("baseline", {1.0, 1.0, 1.0});
  r.add("random", {2.0, 2.0, 2.0});
  r.confirm(1, {2.0, 2.0, 2.0});
  r.trials.push_back({.candidate = 1, .kind = TrialKind::confirm, .index = 3, .status = TrialStatus::failed,
                      .objective = std::nan(""), .reason = "candidate run failed: exit code 1"});
  const auto s = r.summary();
  const auto& c = *s.candidates[1].confirmation;
  EXPECT_EQ(c.result.verdict, stats::Verdict::failed);
  EXPECT_EQ(c.reason, "pair 3: candidate run failed: exit code 1");
  EXPECT_EQ(*s.best, 0u);
  // A later attempt (the task ran again) is what counts.
  r.confirm(1, std::vector<double>(11, 2.0), 1);
  EXPECT_EQ(r.summary().candidates[1].confirmation->result.verdict, stats::Verdict::faster);
}

TEST(Verdicts, IntervalsAdaptiveRepeatsAndNoise) {
  Records r;
  r.add("baseline", {1.0, 1.2, 0.8});
  r.add("random", {2.0, 2.2, 1.8});
  // Three adaptive repeats after the first three; the median is over all six.
  for (int i = 3; i < 6; ++i)
    r.trials.push_back({.candidate = 1, .kind = TrialKind::explore, .index = i, .objective = 2.0 + 0.01 * i});
  r.trials.push_back({.candidate = 1, .kind = TrialKind::warmup, .index = 0, .objective = 100});  // never counts
  const auto s = r.summary();
  const auto& c = s.candidates[1];
  EXPECT_EQ(c.repeats_done, 6);
  ASSERT_TRUE(c.interval);
  EXPECT_NEAR(c.interval->coverage, 1 - 2.0 / 64, 1e-12);  // 6 repeats reach 95%: [min, max] at 96.9%
  EXPECT_DOUBLE_EQ(*c.objective, 2.035);
  EXPECT_EQ(s.repeats_extra, 3);
  EXPECT_EQ(s.warmups, 1);
  EXPECT_EQ(s.trials, 11u);  // explore and evaluate trials only
  ASSERT_TRUE(s.noise_cv);
  EXPECT_NEAR(*s.noise_cv, 1.4826 * 0.2, 1e-12);
  EXPECT_TRUE(s.too_noisy);  // a CV of 30% cannot resolve a 2% effect with 40 pairs
  EXPECT_NE(summary_text(s, 5).find("warning    too noisy to resolve the 2% minimum effect"), std::string::npos);
}

// Each explore repeat's concurrency is the runs in progress at its midpoint; the baseline's three
// ran one after another, the candidates' six at a time: the medians are not like with like.
TEST(Verdicts, UnlikePlacementIsNamedAndOnlyWhenItIsUnlike) {
  const auto timed = [](Records r, double baseline_gap, double others_gap) {
    double clock = 100;
    for (auto& t : r.trials) {
      if (t.kind != TrialKind::explore) continue;
      const bool base = t.candidate == 0;
      t.start = clock;
      t.end = clock + 1;
      clock += base ? baseline_gap : others_gap;
    }
    return r.summary();
  };
  Records r;
  r.add("baseline", {1.0, 1.0, 1.0});
  r.add("random", {0.5, 0.5, 0.5});
  r.add("random", {0.6, 0.6, 0.6});
  // The baseline's repeats one after another (1 at a time), the candidates' all six at once.
  auto s = timed(r, 1.0, 0.0);
  EXPECT_DOUBLE_EQ(s.candidates[0].concurrency, 1);
  EXPECT_DOUBLE_EQ(s.candidates[1].concurrency, 6);
  EXPECT_DOUBLE_EQ(s.most_at_once, 6);
  ASSERT_TRUE(s.unlike_placement);
  EXPECT_DOUBLE_EQ(s.unlike_placement->baseline, 1);
  EXPECT_DOUBLE_EQ(s.unlike_placement->candidates, 6);
  EXPECT_NE(summary_text(s, 5).find("unlike placement: the baseline's repeats ran 1 at a time, the candidates' up to 6"),
            std::string::npos);
  // Everything one at a time: like with like, nothing said.
  s = timed(r, 1.0, 1.0);
  EXPECT_DOUBLE_EQ(s.most_at_once, 1);
  EXPECT_FALSE(s.unlike_placement);
  EXPECT_EQ(summary_text(s, 5).find("unlike placement"), std::string::npos);
  // Trials without times (older files) say nothing either.
  s = r.summary();
  EXPECT_DOUBLE_EQ(s.most_at_once, 0);
  EXPECT_FALSE(s.unlike_placement);
}

// "Use resources.slots = 1" only when more than one benchmark ran at a time.
TEST(Verdicts, TheTooNoisyAdviceDependsOnHowTheRunsWerePlaced) {
  Records r;
  r.add("baseline", {1.0, 1.3, 0.7});
  r.add("random", {2.0, 2.2, 1.8});
  double clock = 100;
  for (auto& t : r.trials) t.start = clock, t.end = clock + 1, clock += 1;  // one at a time
  auto s = r.summary();
  ASSERT_TRUE(s.too_noisy);
  auto text = summary_text(s, 5);
  EXPECT_EQ(text.find("use resources.slots = 1"), std::string::npos);
  EXPECT_NE(text.find("one benchmark run at a time already"), std::string::npos);
  for (auto& t : r.trials) t.start = 100, t.end = 101;  // all at once
  s = r.summary();
  text = summary_text(s, 5);
  EXPECT_NE(text.find("benchmark runs ran at once: use resources.slots = 1"), std::string::npos);
}

// Ratios around `center`, spread +-3%: 40 of them decide against a 2% minimum effect.
std::vector<double> around(double center, int n = 40) {
  std::vector<double> r;
  for (int i = 0; i < n; ++i) r.push_back(center * (1 + 0.03 * ((i % 3) - 1)));
  return r;
}

// Two candidates confirmed faster whose intervals overlap cannot be told apart by their ratios
// over the baseline: the one with the larger ratio is not simply the winner (issue 34, the DGEMM
// campaign's 2x [1.47, 2.56] against 1.75x [1.41, 2.24]); they meet head to head.
TEST(Ties, OverlappingFinalistsMeetHeadToHead) {
  Records r;
  r.add("baseline", {1.0, 1.0, 1.0});
  r.add("random", {2.0, 2.0, 2.0});
  r.add("random", {2.1, 2.1, 2.1});
  r.add("random", {1.1, 1.1, 1.1});
  r.confirm(1, around(2.0));
  r.confirm(2, around(2.05));
  r.confirm(3, around(1.1));  // confirmed faster too, its interval far below the others'
  auto s = r.summary();
  ASSERT_EQ(s.best, 2u);
  EXPECT_TRUE(s.finals.empty());
  EXPECT_EQ(s.duels_wanted, (std::vector<std::pair<std::int64_t, std::int64_t>>{{1, 2}}));  // not 3: told apart
  EXPECT_NE(summary_text(s, 5).find("1 head-to-head confirmation against the winner not run yet"), std::string::npos);

  // They tie: the winner stays the better ratio over the baseline, and the tie is named.
  auto tie = r;
  tie.duel(1, 2, around(1.0));
  s = tie.summary();
  EXPECT_EQ(s.best, 2u);
  EXPECT_TRUE(s.duels_wanted.empty());
  EXPECT_EQ(s.tied(), (std::vector<std::size_t>{1}));
  EXPECT_FALSE(s.dethroned);
  const auto text = summary_text(s, 5);
  EXPECT_NE(text.find("tie        candidate 2 and candidate 1 cannot be told apart"), std::string::npos) << text;
  EXPECT_NE(summary_json(s, 5).find("\"tie\":true"), std::string::npos);

  // The challenger is confirmed faster head to head: it wins, whatever the ratios over the baseline.
  auto beaten = r;
  beaten.duel(1, 2, around(1.2));
  s = beaten.summary();
  EXPECT_EQ(s.best, 1u);
  EXPECT_EQ(s.dethroned, 2u);
  EXPECT_TRUE(s.tied().empty());
  EXPECT_NE(summary_text(s, 5).find("head2head  candidate 1 beat candidate 2"), std::string::npos);
  // The same pairs seen from the other side (the holder measured against the challenger).
  auto reversed = r;
  reversed.duel(2, 1, around(1 / 1.2));
  s = reversed.summary();
  EXPECT_EQ(s.best, 1u);
  const auto duel = head_to_head(s, 1, 2);
  ASSERT_TRUE(duel);
  EXPECT_EQ(duel->result.verdict, stats::Verdict::faster);
  EXPECT_GT(duel->result.low, 1.0);
}

// Pairs against another candidate never count as the confirmation against the baseline.
TEST(Ties, HeadToHeadPairsAreNotTheBaselinesConfirmation) {
  Records r;
  r.add("baseline", {1.0, 1.0, 1.0});
  r.add("random", {2.0, 2.0, 2.0});
  r.add("random", {2.1, 2.1, 2.1});
  r.duel(2, 1, around(1.0));
  const auto s = r.summary();
  EXPECT_FALSE(s.candidates[2].confirmation);
  EXPECT_EQ(s.candidates[2].head_to_head.size(), 1u);
  EXPECT_EQ(s.best, 0u);  // nothing confirmed faster than the baseline
}

}  // namespace
}  // namespace flotilla::results

// Stats.h — the statistics behind flotilla's verdicts (docs/verdicts.md). Pure functions, no I/O.
//
// Benchmark repeats are not normal: they are skewed, drift, and carry outliers (a task that
// shared a core, a page-cache miss). So every estimate here is distribution-free:
//  - A candidate's objective is the median of its repeats, with the order-statistic interval
//    [x_(k), x_(n+1-k)], whose coverage is exactly 1 - 2 P(Bin(n, 1/2) < k) for any continuous
//    distribution. With fewer than 6 repeats no k reaches 95%: the interval is then [min, max],
//    and the coverage it does have (75% for 3 repeats) is reported, never the one asked for.
//  - A confirmation compares a candidate with its reference in pairs run back to back in the
//    same slot, in random order. The pair's log ratio cancels what the two runs share (the
//    node, the moment's load). Its centre is the Hodges-Lehmann estimate (median of the Walsh
//    averages), its interval the inverted Wilcoxon signed-rank test: exact up to 200 pairs,
//    normal approximation above. Randomised order makes the differences symmetric, which is
//    all the signed-rank test needs.
//  - Sequential looks: the interval is examined only at a fixed schedule of pair counts
//    (look_schedule), each at level alpha / K for K looks (Bonferroni). By the union bound the
//    chance that any look wrongly excludes the truth is at most alpha, however the looks fall:
//    looking after every pair at level alpha would not keep that promise.
#pragma once

#include <cstddef>
#include <optional>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace flotilla::results::stats {

double median(std::vector<double> values);  // NaN for none

// P(Bin(n, 1/2) <= k); 0 for k < 0, 1 for k >= n.
double binomial_half_cdf(int n, int k);

struct Interval {
  double estimate = 0;
  double low = 0;
  double high = 0;
  double coverage = 0;  // the interval's actual coverage (distribution-free), 0..1
};

// The median and its order-statistic interval at `confidence` (or the widest one, [min, max],
// when n is too small to reach it). nullopt for no values.
std::optional<Interval> median_interval(std::vector<double> values, double confidence);

// P(T+ <= t) for the Wilcoxon signed-rank statistic of n untied pairs, t = 0 .. n(n+1)/2.
std::vector<double> signed_rank_cdf(int n);

// Hodges-Lehmann estimate of the centre of `differences` and its signed-rank interval at
// `confidence` (the widest, [min, max] of the Walsh averages, when n is too small).
std::optional<Interval> hodges_lehmann(std::span<const double> differences, double confidence);

// The pair counts at which a confirmation looks at its interval: a geometric schedule (x1.5)
// ending at max_pairs, starting where one look at level alpha/K can exclude anything at all.
// Empty when max_pairs is too small for even one such look (min_pairs_for tells how many).
std::vector<int> look_schedule(int max_pairs, double confidence);
int min_pairs_for(double confidence);  // the smallest max_pairs with a non-empty schedule

struct ConfirmSettings {
  double confidence = 0.95;
  double min_effect = 0.02;  // the smallest gain worth reporting: ratio 1.02
  int max_pairs = 40;
};

// unreliable: the interval said faster, but the pairs show an order effect or a trend
// (unreliability), so no speed-up is confirmed. Stored in the results file as `failed` with its
// reason, so files keep their enum.
enum class Verdict { pending, faster, no_difference, slower, failed, unreliable };
std::string_view to_string(Verdict verdict);   // "confirmed faster", "no significant difference", ...
std::string_view verdict_key(Verdict verdict); // "faster", "no_difference", ... (JSON, HDF5)
std::optional<Verdict> verdict_from_key(std::string_view key);

struct Confirmation {
  Verdict verdict = Verdict::pending;
  int pairs = 0;       // pairs the verdict rests on (the look it stopped at)
  int looks = 0;       // looks examined, of the schedule's
  double ratio = 1;    // Hodges-Lehmann estimate of the speed-up, > 1: the candidate is better
  double low = 1;      // its interval, simultaneous over the looks at settings.confidence
  double high = 1;
  double look_level = 0;  // the level of each look, 1 - alpha / K
  std::string reason;     // unreliable: why ("order effect: 2.9x when the candidate runs first, ...")
};

// How one pair ran: which command ran first, and the log of each one's value.
struct PairRun {
  bool candidate_first = true;
  double log_candidate = 0;
  double log_reference = 0;
};

// Why pairs whose ratio would be confirmed faster cannot be trusted, or "" (docs/verdicts.md):
//  - an order effect that favours one command: carry-over from one run to the next (a candidate
//    fast only right after the reference ran). Runs in second place may all be faster (a warm
//    cache): both commands gain alike, the orders balance and the ratio holds. What the balance
//    cannot cancel is one command gaining more from its place than the other; then the product
//    candidate x reference of a pair depends on its order. Welch's t on log(candidate x
//    reference) by order, significant and larger than log(1 + min_effect);
//  - a trend: the log ratio rises or falls with the pair's index (Spearman's rho) and the two
//    halves of the pairs differ by more than 1 + min_effect: carry-over that builds up, a
//    warming cache. (Drift that slows both commands alike leaves the ratio alone.)
// Each test is at level `level`; `runs` may be empty (no order known: no order test).
std::string unreliability(std::span<const double> log_ratios, std::span<const PairRun> runs, double min_effect,
                          double level);

// A look that would say `faster` says `unreliable` instead when unreliability() at level
// 0.01 / K (K looks) names a reason; `runs[i]` is pair i (its order and values), or empty.
Confirmation decide_confirmation(std::span<const double> log_ratios, const ConfirmSettings& settings,
                                 std::span<const PairRun> runs = {});

// Robust coefficient of variation: 1.4826 * MAD / |median| (0 for fewer than 2 values).
double robust_cv(std::vector<double> values);

// The half-width, in log ratio, that a confirmation's last look is expected to reach for runs
// whose coefficient of variation is `cv`: z(1 - alpha/2K) * sqrt(2) * cv / sqrt(0.955 n).
// A gain much below (1 + min_effect) * exp(half-width) is unlikely to be confirmed.
double expected_half_width(double cv, const ConfirmSettings& settings);

// Normal quantile (Acklam's rational approximation, relative error < 1.2e-9).
double normal_quantile(double p);

}  // namespace flotilla::results::stats

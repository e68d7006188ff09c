// TestOutcomes.cpp — summary, diff and gate over per-test outcome bytes (pure).
#include <flotilla/results/TestOutcomes.h>
#include <fmt/format.h>

#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>

namespace flotilla::results {

namespace {

constexpr std::array<std::string_view, 6> kOutcomeNames = {"not_run", "pass", "fail", "skip", "error", "timeout"};
constexpr double kDurationBase = 1e-3;  // q = 1 stands for 1 ms
constexpr double kDurationStep = 1.07;  // 7% per step: 254 steps reach about 8 hours

void classify(TestDiff& diff, std::int64_t index, std::uint8_t reference, std::uint8_t candidate) {
  const TestOutcome before = effective_outcome(reference);
  const TestOutcome after = effective_outcome(candidate);
  if (before == TestOutcome::pass && after != TestOutcome::pass) diff.regressions.push_back(index);
  if (is_failure(before) && after == TestOutcome::pass) diff.fixes.push_back(index);
}

}  // namespace

std::string_view to_string(TestOutcome outcome) {
  const auto index = static_cast<std::size_t>(outcome);
  return index < kOutcomeNames.size() ? kOutcomeNames[index] : "unknown";
}

std::optional<TestOutcome> test_outcome_from_string(std::string_view text) {
  for (std::size_t i = 0; i < kOutcomeNames.size(); ++i) {
    if (kOutcomeNames[i] == text) return static_cast<TestOutcome>(i);
  }
  return std::nullopt;
}

std::uint8_t quantise_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return 0;
  if (seconds <= kDurationBase) return 1;
  const double steps = std::log(seconds / kDurationBase) / std::log(kDurationStep);
  return static_cast<std::uint8_t>(std::min(255.0, 1.0 + std::round(steps)));
}

double duration_seconds(std::uint8_t quantised) {
  if (quantised == 0) return std::numeric_limits<double>::quiet_NaN();
  return kDurationBase * std::pow(kDurationStep, quantised - 1);
}

double TestSummary::pass_rate() const {
  const std::int64_t ran = total - skip - not_run;
  return ran > 0 ? static_cast<double>(pass) / static_cast<double>(ran) : 0.0;
}

TestSummary summarize(std::span<const std::uint8_t> outcomes) {
  // Counting all 256 byte values first keeps the pass over millions of tests branch-free.
  std::array<std::int64_t, 256> counts{};
  for (const std::uint8_t code : outcomes) ++counts[code];
  TestSummary summary;
  summary.total = static_cast<std::int64_t>(outcomes.size());
  for (unsigned code = 0; code < counts.size(); ++code) {
    const std::int64_t n = counts[code];
    if (n == 0) continue;
    const auto byte = static_cast<std::uint8_t>(code);
    if (rerun_outcome(byte) != TestOutcome::not_run) summary.rerun += n;
    if (is_flaky(byte)) summary.flaky += n;
    switch (effective_outcome(byte)) {
      case TestOutcome::pass:
        summary.pass += n;
        break;
      case TestOutcome::fail:
        summary.fail += n;
        break;
      case TestOutcome::skip:
        summary.skip += n;
        break;
      case TestOutcome::error:
        summary.error += n;
        break;
      case TestOutcome::timeout:
        summary.timeout += n;
        break;
      default:
        summary.not_run += n;
        break;  // not_run, or a code from a newer writer
    }
  }
  return summary;
}

TestDiff diff_outcomes(std::span<const std::uint8_t> reference, std::span<const std::uint8_t> candidate) {
  TestDiff diff;
  const std::size_t common = std::min(reference.size(), candidate.size());
  for (std::size_t i = 0; i < common; ++i) {
    // Equal bytes can be neither a regression nor a fix: the common case costs one compare.
    if (reference[i] != candidate[i]) {
      classify(diff, static_cast<std::int64_t>(i), reference[i], candidate[i]);
    }
  }
  diff.only_in_reference = static_cast<std::int64_t>(reference.size() - common);
  diff.only_in_candidate = static_cast<std::int64_t>(candidate.size() - common);
  // A shared suite has one size; a shorter array can only come from a damaged record, and a
  // reference pass beyond the candidate's end is then a test the candidate does not have.
  for (std::size_t i = common; i < reference.size(); ++i)
    if (effective_outcome(reference[i]) == TestOutcome::pass) diff.dropped.push_back(static_cast<std::int64_t>(i));
  return diff;
}

TestDiff diff_outcomes(const TestSuite& reference_suite, std::span<const std::uint8_t> reference,
                       const TestSuite& candidate_suite, std::span<const std::uint8_t> candidate) {
  if (reference.size() != reference_suite.names.size() || candidate.size() != candidate_suite.names.size()) {
    throw std::invalid_argument("diff_outcomes: one outcome per test of each suite");
  }
  std::unordered_map<std::string_view, std::size_t> reference_index;
  reference_index.reserve(reference_suite.names.size());
  for (std::size_t i = 0; i < reference_suite.names.size(); ++i) {
    reference_index.emplace(reference_suite.names[i], i);
  }
  TestDiff diff;
  std::int64_t matched = 0;
  std::vector<bool> seen(reference_suite.names.size(), false);
  for (std::size_t i = 0; i < candidate_suite.names.size(); ++i) {
    const auto found = reference_index.find(candidate_suite.names[i]);
    if (found == reference_index.end()) {
      ++diff.only_in_candidate;
      continue;
    }
    ++matched;
    seen[found->second] = true;
    classify(diff, static_cast<std::int64_t>(i), reference[found->second], candidate[i]);
  }
  diff.only_in_reference = static_cast<std::int64_t>(reference_suite.names.size()) - matched;
  for (std::size_t i = 0; i < seen.size(); ++i)
    if (!seen[i] && effective_outcome(reference[i]) == TestOutcome::pass) diff.dropped.push_back(static_cast<std::int64_t>(i));
  return diff;
}

std::vector<NumberDrop> number_drops(const TestSuite& reference_suite, const CandidateTests& reference,
                                     const TestSuite& candidate_suite, const CandidateTests& candidate,
                                     const std::vector<std::string>& names) {
  // (test name, number name) -> the reference's value; only finite ones can be fallen below.
  std::unordered_map<std::string, double> recorded;
  const auto key = [](std::string_view test, std::string_view number) {
    return std::string(test) + '\n' + std::string(number);  // '\n' is in neither name
  };
  for (const auto& n : reference.numbers)
    if (std::isfinite(n.value)) recorded.emplace(key(reference_suite.names.at(static_cast<std::size_t>(n.test)), n.name), n.value);
  std::unordered_map<std::string, double> mine;
  for (const auto& n : candidate.numbers) mine.emplace(key(candidate_suite.names.at(static_cast<std::size_t>(n.test)), n.name), n.value);
  std::vector<NumberDrop> drops;
  for (std::size_t test = 0; test < candidate_suite.names.size(); ++test) {
    for (const auto& name : names) {
      const std::string k = key(candidate_suite.names[test], name);
      const auto theirs = recorded.find(k);
      if (theirs == recorded.end()) continue;
      const auto ours = mine.find(k);
      const double value = ours == mine.end() ? std::numeric_limits<double>::quiet_NaN() : ours->second;
      if (!(value >= theirs->second))  // NaN included
        drops.push_back({static_cast<std::int64_t>(test), name, theirs->second, value});
    }
  }
  return drops;
}

std::vector<std::int64_t> failing_tests(std::span<const std::uint8_t> outcomes) {
  std::vector<std::int64_t> failing;
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    const TestOutcome outcome = effective_outcome(outcomes[i]);
    if (is_failure(outcome) || outcome == TestOutcome::not_run) failing.push_back(static_cast<std::int64_t>(i));
  }
  return failing;
}

std::string name_list(const std::vector<std::string>& names, std::size_t total) {
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i) text += (i ? ", " : "") + names[i];
  if (total > names.size()) text += fmt::format(" and {} more", total - names.size());
  return text;
}

GateVerdict decide_gate(TestGate gate, const TestSummary& candidate, const TestSummary* baseline,
                        const TestDiff* against_baseline, const GateNames& names) {
  const std::int64_t failing = candidate.fail + candidate.error + candidate.timeout;
  const auto named = [&](std::size_t total) {
    if (names.unmatched_total > 0)
      return fmt::format(
          "; {} reported name{} matched no file given: {} (a report must name each file as it was "
          "given, or by its absolute path)",
          names.unmatched_total, names.unmatched_total == 1 ? "" : "s",
          name_list(names.unmatched, names.unmatched_total));
    return names.tests.empty() ? std::string() : ": " + name_list(names.tests, total);
  };
  if (gate == TestGate::all_pass) {
    if (candidate.total == 0) return {false, "no tests were found"};
    if (failing > 0 || candidate.not_run > 0) {
      return {false, fmt::format("{} of {} tests failed ({} fail, {} error, {} timeout, {} not run){}",
                                 failing + candidate.not_run, candidate.total, candidate.fail, candidate.error,
                                 candidate.timeout, candidate.not_run,
                                 named(static_cast<std::size_t>(failing + candidate.not_run)))};
    }
    return {true, ""};
  }
  // Compatibility climbing. Without the baseline's outcomes there is nothing to judge against,
  // and a gate must not open for want of data. (The baseline, compared with itself, passes.)
  if (baseline == nullptr || against_baseline == nullptr)
    return {false, "the baseline's test outcomes are missing: nothing to compare with"};
  // A suite that ran nothing (a wrong filter or test directory) proves nothing, even against a
  // baseline that ran nothing either.
  if (candidate.total == 0) return {false, "no tests were found"};
  if (const auto n = against_baseline->regression_count(); n > 0) {
    return {false, fmt::format("{} regression{} against the baseline{}", n, n == 1 ? "" : "s", named(n))};
  }
  return {true, ""};
}

}  // namespace flotilla::results

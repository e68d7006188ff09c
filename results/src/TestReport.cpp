// TestReport.cpp — the per-test report of one candidate, as a value, text and JSON.
#include <flotilla/results/TestReport.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>

namespace flotilla::results {

namespace {

std::vector<std::string> names_of(const TestSuite& suite, const std::vector<std::int64_t>& indices, std::size_t limit) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < std::min(limit, indices.size()); ++i) {
    names.push_back(suite.names[static_cast<std::size_t>(indices[i])]);
  }
  return names;
}

std::vector<TimedTest> slowest_tests(const TestSuite& suite, const CandidateTests& tests, std::size_t limit) {
  if (tests.durations.empty()) return {};
  std::vector<std::size_t> order(tests.durations.size());
  std::iota(order.begin(), order.end(), 0);
  const std::size_t keep = std::min(limit, order.size());
  // Ties in index order, so the list does not depend on the sort.
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(keep), order.end(),
                    [&](std::size_t a, std::size_t b) {
                      return tests.durations[a] != tests.durations[b] ? tests.durations[a] > tests.durations[b] : a < b;
                    });
  std::vector<TimedTest> slowest;
  for (std::size_t i = 0; i < keep && tests.durations[order[i]] > 0; ++i) {
    slowest.push_back({suite.names[order[i]], duration_seconds(tests.durations[order[i]])});
  }
  return slowest;
}

std::vector<FailureGroup> failure_groups(const TestSuite& suite, const CandidateTests& tests,
                                         const TestReportLimits& limits) {
  std::map<std::int64_t, const std::string*> message_of;
  for (const auto& message : tests.messages) message_of.emplace(message.test, &message.text);
  std::map<std::string, FailureGroup> groups;
  for (std::size_t i = 0; i < tests.outcomes.size(); ++i) {
    if (!is_failure(effective_outcome(tests.outcomes[i]))) continue;
    const auto found = message_of.find(static_cast<std::int64_t>(i));
    const std::string message = found == message_of.end() ? std::string() : *found->second;
    FailureGroup& group = groups[message];
    group.message = message;
    ++group.count;
    if (group.examples.size() < limits.examples) group.examples.push_back(suite.names[i]);
  }
  std::vector<FailureGroup> sorted;
  for (auto& [message, group] : groups) sorted.push_back(std::move(group));
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.count > b.count; });
  if (sorted.size() > limits.groups) sorted.resize(limits.groups);
  return sorted;
}

nlohmann::json summary_json(const TestSummary& s) {
  return {{"total", s.total},     {"pass", s.pass},
          {"fail", s.fail},       {"skip", s.skip},
          {"error", s.error},     {"timeout", s.timeout},
          {"not_run", s.not_run}, {"flaky", s.flaky},
          {"rerun", s.rerun},     {"pass_rate", s.pass_rate()}};
}

std::string summary_line(const TestSummary& s) {
  return fmt::format("{} tests: {} pass, {} fail, {} error, {} timeout, {} skip{} · pass rate {:.2f}%", s.total, s.pass,
                     s.fail, s.error, s.timeout, s.skip, s.not_run ? fmt::format(", {} not run", s.not_run) : "",
                     100.0 * s.pass_rate());
}

}  // namespace

// Per-test numbers summed per name, in the order the names first appear.
static std::vector<std::pair<std::string, double>> number_totals(const CandidateTests& tests) {
  std::vector<std::pair<std::string, double>> totals;
  for (const auto& n : tests.numbers) {
    if (std::isnan(n.value)) continue;  // a group that took no part adds nothing
    auto it = std::find_if(totals.begin(), totals.end(), [&](const auto& total) { return total.first == n.name; });
    if (it == totals.end()) totals.emplace_back(n.name, n.value);
    else it->second += n.value;
  }
  return totals;
}

TestReport make_test_report(const TestSuite& suite, const CandidateTests& tests, const TestSuite* reference_suite,
                            const CandidateTests* reference, const TestReportLimits& limits) {
  TestReport report;
  report.candidate = tests.candidate;
  report.summary = summarize(tests.outcomes);
  if (reference != nullptr && reference_suite != nullptr) {
    report.reference = reference->candidate;
    report.reference_summary = summarize(reference->outcomes);
    report.diff = reference->suite == tests.suite
                      ? diff_outcomes(reference->outcomes, tests.outcomes)
                      : diff_outcomes(*reference_suite, reference->outcomes, suite, tests.outcomes);
    report.regressions = names_of(suite, report.diff->regressions, limits.names);
    // A test the reference passed that this candidate's suite lacks is a regression too.
    for (auto i : report.diff->dropped)
      if (report.regressions.size() < limits.names)
        report.regressions.push_back(reference_suite->names[static_cast<std::size_t>(i)] + " (absent)");
    report.fixes = names_of(suite, report.diff->fixes, limits.names);
  }
  for (std::size_t i = 0; i < tests.outcomes.size() && report.flaky.size() < limits.names; ++i) {
    if (is_flaky(tests.outcomes[i])) report.flaky.push_back(suite.names[i]);
  }
  report.slowest = slowest_tests(suite, tests, limits.slowest);
  report.failures = failure_groups(suite, tests, limits);
  report.number_totals = number_totals(tests);
  if (reference != nullptr && reference_suite != nullptr) report.reference_number_totals = number_totals(*reference);
  return report;
}

std::string test_report_text(const TestReport& r) {
  std::string out = fmt::format("candidate  {}\ntests      {}\n", r.candidate, summary_line(r.summary));
  if (r.summary.flaky > 0) out += fmt::format("flaky      {} (failed, then passed on the re-run)\n", r.summary.flaky);
  const auto joined = [](const std::vector<std::pair<std::string, double>>& totals) {
    std::string text;
    for (const auto& [name, value] : totals) text += fmt::format("{}{} {}", text.empty() ? "" : " · ", name, value);
    return text;
  };
  if (!r.number_totals.empty()) {
    out += fmt::format("numbers    {} (summed over the tests{})\n", joined(r.number_totals),
                       r.reference_number_totals.empty() ? "" : "; reference: " + joined(r.reference_number_totals));
  }
  if (r.reference) {
    out += fmt::format("reference  candidate {}: {}\n", *r.reference, summary_line(*r.reference_summary));
    out += fmt::format("versus     {} regressions, {} fixes, pass count {:+}", r.diff->regression_count(),
                       r.diff->fixes.size(), r.summary.pass - r.reference_summary->pass);
    if (r.diff->only_in_reference || r.diff->only_in_candidate) {
      out += fmt::format(" · {} tests only in the reference, {} only here", r.diff->only_in_reference,
                         r.diff->only_in_candidate);
    }
    out += "\n";
  }
  const auto list = [&](const char* title, const std::vector<std::string>& names, std::size_t total) {
    if (names.empty()) return;
    out +=
        fmt::format("\n{} ({}{})\n", title, total, names.size() < total ? fmt::format(", first {}", names.size()) : "");
    for (const auto& name : names) out += "  " + name + "\n";
  };
  if (r.diff) {
    list("regressions", r.regressions, r.diff->regression_count());
    list("fixes", r.fixes, r.diff->fixes.size());
  }
  list("flaky", r.flaky, static_cast<std::size_t>(r.summary.flaky));
  if (!r.failures.empty()) {
    out += "\nfailures by message\n";
    for (const auto& g : r.failures) {
      out += fmt::format("  {:>8}  {}\n            e.g. {}\n", g.count, g.message.empty() ? "(no message)" : g.message,
                         fmt::join(g.examples, ", "));
    }
  }
  if (!r.slowest.empty()) {
    out += "\nslowest\n";
    for (const auto& t : r.slowest) out += fmt::format("  {:>10.3f} s  {}\n", t.seconds, t.name);
  }
  return out;
}

std::string test_report_json(const TestReport& r) {
  nlohmann::json j = {{"candidate", r.candidate}, {"summary", summary_json(r.summary)}, {"flaky", r.flaky}};
  if (r.reference) {
    j["reference"] = {{"candidate", *r.reference}, {"summary", summary_json(*r.reference_summary)}};
    j["regressions"] = {{"count", r.diff->regression_count()}, {"dropped", r.diff->dropped.size()},
                        {"names", r.regressions}};
    j["fixes"] = {{"count", r.diff->fixes.size()}, {"names", r.fixes}};
    j["only_in_reference"] = r.diff->only_in_reference;
    j["only_in_candidate"] = r.diff->only_in_candidate;
  }
  j["slowest"] = nlohmann::json::array();
  for (const auto& t : r.slowest) j["slowest"].push_back({{"name", t.name}, {"seconds", t.seconds}});
  if (!r.number_totals.empty()) {
    j["numbers"] = nlohmann::json::object();
    for (const auto& [name, value] : r.number_totals) j["numbers"][name] = value;
  }
  if (r.reference && !r.reference_number_totals.empty()) {
    j["reference"]["numbers"] = nlohmann::json::object();
    for (const auto& [name, value] : r.reference_number_totals) j["reference"]["numbers"][name] = value;
  }
  j["failures"] = nlohmann::json::array();
  for (const auto& g : r.failures)
    j["failures"].push_back({{"message", g.message}, {"count", g.count}, {"examples", g.examples}});
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace flotilla::results

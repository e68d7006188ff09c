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

// Each test's row: its outcome and numbers, and the reference's test of the same name.
static std::vector<TestRow> test_rows(const TestSuite& suite, const CandidateTests& tests,
                                      const TestSuite* reference_suite, const CandidateTests* reference) {
  const auto numbers_by_test = [](const CandidateTests& t) {
    std::map<std::int64_t, std::vector<std::pair<std::string, double>>> by_test;
    for (const auto& n : t.numbers) by_test[n.test].emplace_back(n.name, n.value);
    return by_test;
  };
  const auto mine = numbers_by_test(tests);
  std::map<std::string, std::size_t, std::less<>> reference_index;
  std::map<std::int64_t, std::vector<std::pair<std::string, double>>> theirs;
  if (reference != nullptr && reference_suite != nullptr) {
    for (std::size_t i = 0; i < reference_suite->names.size(); ++i)
      reference_index.emplace(reference_suite->names[i], i);
    theirs = numbers_by_test(*reference);
  }
  std::vector<TestRow> rows;
  for (std::size_t i = 0; i < tests.outcomes.size(); ++i) {
    TestRow row{.name = suite.names[i], .outcome = std::string(to_string(effective_outcome(tests.outcomes[i])))};
    if (const auto it = mine.find(static_cast<std::int64_t>(i)); it != mine.end()) row.numbers = it->second;
    if (const auto at = reference_index.find(row.name);
        at != reference_index.end() && at->second < reference->outcomes.size()) {
      row.reference_outcome = std::string(to_string(effective_outcome(reference->outcomes[at->second])));
      if (const auto it = theirs.find(static_cast<std::int64_t>(at->second)); it != theirs.end())
        row.reference_numbers = it->second;
    }
    rows.push_back(std::move(row));
  }
  return rows;
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
  if (limits.per_test) report.per_test = test_rows(suite, tests, reference_suite, reference);
  return report;
}

// `--per-file`: a row per test, its outcome and each number (the reference's in brackets).
static std::string per_test_table(const TestReport& r) {
  std::vector<std::string> columns;  // number names, in the order they first appear
  for (const auto& row : r.per_test)
    for (const auto& numbers : {row.numbers, row.reference_numbers})
      for (const auto& [name, value] : numbers)
        if (std::find(columns.begin(), columns.end(), name) == columns.end()) columns.push_back(name);
  const auto value_of = [](const std::vector<std::pair<std::string, double>>& numbers, const std::string& name) {
    for (const auto& [n, v] : numbers)
      if (n == name) return std::isnan(v) ? std::string("-") : fmt::format("{}", v);
    return std::string("-");
  };
  const bool compared = r.reference.has_value();
  std::vector<std::vector<std::string>> cells = {{"test", "outcome"}};
  for (const auto& c : columns) cells[0].push_back(c);
  for (const auto& row : r.per_test) {
    const auto with_reference = [&](const std::string& mine, const std::string& theirs) {
      return compared ? fmt::format("{} ({})", mine, row.reference_outcome ? theirs : "-") : mine;
    };
    std::vector<std::string> line = {row.name, with_reference(row.outcome, row.reference_outcome.value_or(""))};
    for (const auto& c : columns)
      line.push_back(with_reference(value_of(row.numbers, c), value_of(row.reference_numbers, c)));
    cells.push_back(std::move(line));
  }
  std::vector<std::size_t> width(cells[0].size(), 0);
  for (const auto& line : cells)
    for (std::size_t i = 0; i < line.size(); ++i) width[i] = std::max(width[i], line[i].size());
  std::string out = fmt::format("\nper file ({} tests{})\n", r.per_test.size(),
                                compared ? fmt::format("; candidate {} in brackets", *r.reference) : "");
  for (const auto& line : cells) {
    std::string text = "  ";
    for (std::size_t i = 0; i < line.size(); ++i)
      text += i == 0 ? fmt::format("{:<{}}", line[i], width[i]) : fmt::format("  {:>{}}", line[i], width[i]);
    out += text + "\n";
  }
  return out;
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
  if (!r.per_test.empty()) out += per_test_table(r);
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
  if (!r.per_test.empty()) {
    j["per_test"] = nlohmann::json::array();
    for (const auto& row : r.per_test) {
      nlohmann::json entry = {{"name", row.name}, {"outcome", row.outcome}, {"numbers", nlohmann::json::object()}};
      for (const auto& [name, value] : row.numbers) entry["numbers"][name] = value;
      if (row.reference_outcome) {
        entry["reference"] = {{"outcome", *row.reference_outcome}, {"numbers", nlohmann::json::object()}};
        for (const auto& [name, value] : row.reference_numbers) entry["reference"]["numbers"][name] = value;
      }
      j["per_test"].push_back(std::move(entry));
    }
  }
  j["failures"] = nlohmann::json::array();
  for (const auto& g : r.failures)
    j["failures"].push_back({{"message", g.message}, {"count", g.count}, {"examples", g.examples}});
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace flotilla::results

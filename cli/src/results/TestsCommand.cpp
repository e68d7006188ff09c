// TestsCommand.cpp — `flotilla results tests FILE.h5 --candidate N [--vs baseline|M]`: one
// candidate's per-test outcomes (counts, regressions and fixes against a reference, flaky and
// slowest tests, failures grouped by message). The report itself is results::make_test_report.
#include <fmt/format.h>

#include <charconv>

#include "ResultsCli.h"
#include "flotilla/results/TestReport.h"

namespace flotilla::cli::results_cli {
namespace {

std::int64_t parse_id(const std::string& text, const char* option) {
  std::int64_t id = -1;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec != std::errc() || end != text.data() + text.size() || id < 0) {
    throw po::error(fmt::format("--{} must be a candidate id, not '{}'", option, text));
  }
  return id;
}

std::optional<std::int64_t> baseline_of(const results::Store& store) {
  for (const auto& c : store.candidates())
    if (c.origin == "baseline") return c.id;
  return std::nullopt;
}

// The reference named by --vs; by default the baseline, unless the candidate is the baseline.
std::optional<std::int64_t> reference_of(const po::variables_map& vm, const results::Store& store,
                                         std::int64_t candidate, const std::string& path) {
  const auto baseline = baseline_of(store);
  if (!vm.count("vs")) return baseline && *baseline != candidate ? baseline : std::nullopt;
  const auto vs = vm["vs"].as<std::string>();
  if (vs != "baseline") return parse_id(vs, "vs");
  if (!baseline) throw std::runtime_error(fmt::format("{}: --vs baseline: the campaign has no baseline", path));
  return baseline;
}

results::CandidateTests tests_of(const results::Store& store, std::int64_t candidate, const std::string& path) {
  auto tests = store.test_results(candidate);
  if (tests) return std::move(*tests);
  const auto tested = store.tested_candidates();
  if (tested.empty()) {
    throw std::runtime_error(
        fmt::format("{}: no per-test outcomes recorded (no test suite was recorded, or the "
                    "file is from before flotilla recorded them)",
                    path));
  }
  throw std::runtime_error(fmt::format("{}: candidate {} has no per-test outcomes; candidates with some: {}", path,
                                       candidate, fmt::join(tested, " ")));
}

int run_tests(const po::variables_map& vm, const std::vector<std::string>& files, std::ostream& out) {
  if (!vm.count("candidate")) throw po::error("--candidate N is required");
  const std::string& path = files[0];
  const auto store = results::Store::open_read(path);
  const std::int64_t candidate = parse_id(vm["candidate"].as<std::string>(), "candidate");
  const auto tests = tests_of(store, candidate, path);
  const auto suite = store.test_suite(tests.suite);
  results::TestReportLimits limits;
  limits.names = vm["list"].as<std::size_t>();
  limits.slowest = vm["slowest"].as<std::size_t>();
  limits.per_test = vm.count("per-file") > 0;
  std::optional<results::CandidateTests> reference;
  std::optional<results::TestSuite> reference_suite;
  if (const auto id = reference_of(vm, store, candidate, path)) {
    reference = tests_of(store, *id, path);
    reference_suite = reference->suite == tests.suite ? suite : store.test_suite(reference->suite);
  }
  const auto report = results::make_test_report(suite, tests, reference_suite ? &*reference_suite : nullptr,
                                                reference ? &*reference : nullptr, limits);
  out << (vm.count("json") ? results::test_report_json(report) + "\n" : results::test_report_text(report));
  return 0;
}

}  // namespace

const Subcommand kTests{
    .name = "tests",
    .synopsis = "FILE.h5 --candidate N [--vs baseline|M]",
    .what = "one candidate's test outcomes: counts, regressions, fixes, flaky, slowest, failures by message",
    .add_options =
        [](po::options_description& o) {
          o.add_options()("candidate", po::value<std::string>(), "the candidate's id")(
              "vs", po::value<std::string>(), "compare with 'baseline' (the default) or candidate M")(
              "list", po::value<std::size_t>()->default_value(20), "regressions, fixes and flaky tests listed by name")(
              "slowest", po::value<std::size_t>()->default_value(10), "slowest tests listed")(
              "per-file",
              "every test (per_file and files suites: every file) with its outcome and numbers, the "
              "reference's beside them");
        },
    .run = run_tests};

}  // namespace flotilla::cli::results_cli

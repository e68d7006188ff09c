// Real suites through flotilla's suite pieces: GoogleTest's own samples (an external gtest binary)
// discovered, sharded with flotilla's rule, parsed, re-run, assembled and recorded, then checked
// against running the binary directly; and a generated corpus of 100,000 file-based cases run
// through a checker in shards. Both end with `flotilla results tests` reading the file.
//
// The processes are started here through /bin/sh (test code; flotilla's backends never use a
// shell). What is under test is everything else: listing and report parsing, sharding, assembly,
// re-runs, the /tests group and the CLI.
#include <flotilla/results/Store.h>
#include <flotilla/suites/Assemble.h>
#include <flotilla/suites/Reports.h>
#include <flotilla/suites/Sharding.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

using namespace flotilla;
using namespace flotilla::suites;
using results::TestOutcome;
namespace fs = std::filesystem;

namespace {

class Scratch {
 public:
  Scratch() : m_path(fs::temp_directory_path() / fmt::format("flotilla-suites-{}-{}", ::getpid(), s_count++)) {
    fs::create_directories(m_path);
  }
  ~Scratch() {
    std::error_code ignored;
    fs::remove_all(m_path, ignored);
  }
  fs::path operator/(const std::string& name) const { return m_path / name; }

 private:
  static inline int s_count = 0;
  fs::path m_path;
};

int shell(const std::string& command) {
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> names_of(const std::vector<TestResult>& results) {
  std::vector<std::string> names;
  for (const auto& r : results) names.push_back(r.name);
  return names;
}

// `flotilla results tests --json`; where python3 has h5py and pandas, also checks that the
// pandas reader (results/python/flotilla_results.py) counts the same.
nlohmann::json flotilla_tests_json(const fs::path& file, std::int64_t candidate, const std::string& extra = "") {
  const fs::path out = file.string() + fmt::format(".{}.json", candidate);
  // --list: every name, so the pandas reader's full lists can be compared with the CLI's.
  const int rc = shell(fmt::format("'{}' results tests '{}' --candidate {} --json --list 100000000 {} > '{}'", FLOTILLA_BIN,
                                   file.string(), candidate, extra, out.string()));
  EXPECT_EQ(rc, 0);
  if (std::string(FLOTILLA_PYTHON).empty()) {
    ADD_FAILURE() << "no python3 with h5py and pandas (scripts/install-deps.sh installs them): the pandas reader "
                     "cannot be checked";
  } else {
    EXPECT_EQ(shell(fmt::format("'{}' '{}' '{}' '{}' '{}' {}", FLOTILLA_PYTHON, CHECK_TESTS_READER, FLOTILLA_READER_DIR,
                                file.string(), out.string(), candidate)),
              0);
  }
  return nlohmann::json::parse(slurp(out));
}

// One candidate of the gtest samples: discovery, shards with GoogleTest's sharding protocol,
// one re-run of the failures; returns the assembled outcomes.
Assembled run_gtest_candidate(const Scratch& dir, const std::string& tag, int shards, const std::string& env) {
  const fs::path listing = dir / (tag + "-list.txt");
  EXPECT_EQ(shell(fmt::format("'{}' --gtest_list_tests > '{}'", GTEST_SAMPLES, listing.string())), 0);
  const auto names = parse_gtest_list(slurp(listing), listing.string());
  const auto assignment = assign_gtest_shards(names, shards);
  std::vector<ShardRun> runs;
  for (int k = 0; k < shards; ++k) {
    const fs::path report = dir / fmt::format("{}-shard-{}.json", tag, k);
    const int rc =
        shell(fmt::format("{} GTEST_TOTAL_SHARDS={} GTEST_SHARD_INDEX={} '{}' --gtest_output=json:'{}' > /dev/null",
                          env, shards, k, GTEST_SAMPLES, report.string()));
    ShardRun run{k, tests_of_shard(assignment, k), parse_gtest_json(slurp(report), report.string()), false,
                 rc == 0 ? "" : fmt::format("exit code {}", rc)};
    // flotilla's idea of the shard is GoogleTest's: the report holds exactly the given tests.
    std::vector<std::string> given;
    for (auto i : run.given) given.push_back(names[static_cast<std::size_t>(i)]);
    EXPECT_EQ(names_of(run.results), given) << "shard " << k << " of " << shards;
    runs.push_back(std::move(run));
  }
  Assembled assembled = assemble(names, runs);
  const auto failed = failures_to_rerun(assembled);
  if (!failed.empty()) {
    std::string filter;
    for (auto i : failed) filter += (filter.empty() ? "" : ":") + assembled.suite.names[static_cast<std::size_t>(i)];
    const fs::path report = dir / (tag + "-rerun.json");
    shell(fmt::format("{} '{}' --gtest_filter='{}' --gtest_output=json:'{}' > /dev/null", env, GTEST_SAMPLES, filter,
                      report.string()));
    apply_rerun(assembled, failed, parse_gtest_json(slurp(report), report.string()), false);
  }
  return assembled;
}

std::map<std::string, TestOutcome> direct_run(const Scratch& dir, const std::string& env) {
  const fs::path report = dir / "direct.json";
  shell(fmt::format("{} '{}' --gtest_output=json:'{}' > /dev/null", env, GTEST_SAMPLES, report.string()));
  std::map<std::string, TestOutcome> outcomes;
  for (const auto& r : parse_gtest_json(slurp(report), report.string())) outcomes[r.name] = r.outcome;
  return outcomes;
}

results::CampaignInfo campaign(const std::string& name) {
  results::CampaignInfo info;
  info.name = name;
  info.objective = "gflops";
  info.direction = "maximize";
  return info;
}

std::int64_t record(results::Store& store, std::int64_t candidate, const Assembled& assembled) {
  store.add_candidate({candidate, 0, fmt::format("variant={}", candidate), candidate == 0 ? "baseline" : "grid"});
  const std::int64_t suite = store.add_test_suite(assembled.suite);
  EXPECT_TRUE(store.add_test_results({candidate, suite, assembled.outcomes, assembled.durations, assembled.messages}));
  return suite;
}

}  // namespace

TEST(GtestSamples, ShardedThroughFlotillaMatchesADirectRun) {
  Scratch dir;
  // The baseline: one known failure, one flaky test (fails, then passes on the re-run), a skip
  // and a disabled test among GoogleTest's samples.
  const std::string baseline_env = fmt::format("FLOTILLA_FLAKY_MARKER='{}'", (dir / "flaky-a").string());
  const std::string variant_env =
      fmt::format("FLOTILLA_SAMPLE_VARIANT=b FLOTILLA_FLAKY_MARKER='{}'", (dir / "flaky-b").string());
  const fs::path file = dir / "samples.h5";
  std::vector<Assembled> candidates;
  {
    results::Store store = results::Store::create(file, campaign("gtest-samples"));
    for (int shards : {1, 3, 5}) {
      const Assembled a = run_gtest_candidate(
          dir, fmt::format("s{}", shards), shards,
          fmt::format("FLOTILLA_FLAKY_MARKER='{}'", (dir / fmt::format("flaky-s{}", shards)).string()));
      // Direct run after the flaky test has been seen once: it passes now, as the re-run did.
      const auto direct =
          direct_run(dir, fmt::format("FLOTILLA_FLAKY_MARKER='{}'", (dir / fmt::format("flaky-s{}", shards)).string()));
      ASSERT_EQ(a.suite.names.size(), direct.size());
      for (std::size_t i = 0; i < a.suite.names.size(); ++i) {
        EXPECT_EQ(results::effective_outcome(a.outcomes[i]), direct.at(a.suite.names[i]))
            << a.suite.names[i] << ", " << shards << " shards";
      }
    }
    candidates.push_back(run_gtest_candidate(dir, "base", 3, baseline_env));
    candidates.push_back(run_gtest_candidate(dir, "b", 4, variant_env));
    const std::int64_t base_suite = record(store, 0, candidates[0]);
    EXPECT_EQ(record(store, 1, candidates[1]), base_suite);  // same discovery: one suite
  }
  const auto summary = results::summarize(candidates[0].outcomes);
  EXPECT_EQ(summary.fail, 1);
  EXPECT_EQ(summary.flaky, 1);
  EXPECT_EQ(summary.skip, 2);  // GTEST_SKIP and DISABLED_
  // samples 1 (6 tests), 2 (4), 3 (3), 4 (1), 6 (2 typed suites x 2 types x 3), 7 (3 x 2 params),
  // and outcomes_unittest.cc (5)
  EXPECT_EQ(summary.total, 6 + 4 + 3 + 1 + 12 + 6 + 5);

  const auto base = flotilla_tests_json(file, 0);
  EXPECT_EQ(base["summary"]["fail"], 1);
  EXPECT_EQ(base["flaky"], nlohmann::json::array({"Outcomes.FlakyOnFirstRun"}));
  EXPECT_EQ(base["failures"][0]["examples"], nlohmann::json::array({"Outcomes.FailsUnlessVariantB"}));
  const auto vs = flotilla_tests_json(file, 1, "--vs baseline");
  EXPECT_EQ(vs["reference"]["candidate"], 0);
  EXPECT_EQ(vs["regressions"]["names"], nlohmann::json::array({"Outcomes.PassesUnlessVariantB"}));
  EXPECT_EQ(vs["fixes"]["names"], nlohmann::json::array({"Outcomes.FailsUnlessVariantB"}));
  EXPECT_EQ(vs["summary"]["pass"], base["summary"]["pass"]);
}

TEST(FileCorpus, HundredThousandCasesThroughACheckerInShards) {
  Scratch dir;
  constexpr int kFiles = 200, kCasesPerFile = 500, kShards = 4;
  std::vector<std::string> files;
  std::vector<bool> file_has_wrong(kFiles, false);
  long wrong = 0, skipped = 0;
  for (int f = 0; f < kFiles; ++f) {
    files.push_back((dir / fmt::format("case{:03}.test", f)).string());
    std::ofstream out(files.back());
    out << "# generated: A OP B = C, some wrong on purpose\n";
    for (int c = 0; c < kCasesPerFile; ++c) {
      const long i = static_cast<long>(f) * kCasesPerFile + c, a = i % 1000, b = i % 37;
      if (i % 1009 == 0) {
        out << "c" << c << ": skip\n";
        ++skipped;
        continue;
      }
      const bool bad = i % 997 == 0;
      wrong += bad;
      if (bad) file_has_wrong[static_cast<std::size_t>(f)] = true;
      out << "c" << c << ": " << a << " * " << b << " = " << a * b + (bad ? 1 : 0) << "\n";
    }
  }
  const auto assignment = assign_shards({}, files.size(), kShards);
  std::vector<ShardRun> runs;
  std::set<std::string> seen_files;
  for (int k = 0; k < kShards; ++k) {
    const fs::path list = dir / fmt::format("shard-{}.files", k), report = dir / fmt::format("shard-{}.tap", k);
    std::ofstream out(list);
    bool shard_has_wrong = false;
    for (auto i : tests_of_shard(assignment, k)) {
      out << files[static_cast<std::size_t>(i)] << "\n";
      EXPECT_TRUE(seen_files.insert(files[static_cast<std::size_t>(i)]).second);
      shard_has_wrong = shard_has_wrong || file_has_wrong[static_cast<std::size_t>(i)];
    }
    out.close();
    const int rc = shell(fmt::format("'{}' '{}' '{}'", CORPUS_CHECK, list.string(), report.string()));
    EXPECT_EQ(rc, shard_has_wrong ? 1 : 0) << "shard " << k;
    runs.push_back(
        {k, {}, parse_tap(slurp(report), report.string()), false, rc == 0 ? "" : fmt::format("exit code {}", rc)});
  }
  EXPECT_EQ(seen_files.size(), files.size());
  const Assembled assembled = assemble(std::nullopt, runs);
  const auto summary = results::summarize(assembled.outcomes);
  EXPECT_EQ(summary.total, kFiles * kCasesPerFile);
  EXPECT_EQ(summary.fail, wrong);
  EXPECT_EQ(summary.skip, skipped);
  EXPECT_EQ(summary.pass, kFiles * kCasesPerFile - wrong - skipped);
  const fs::path file = dir / "corpus.h5";
  {
    results::Store store = results::Store::create(file, campaign("corpus"));
    record(store, 0, assembled);
  }
  const auto report = flotilla_tests_json(file, 0);
  EXPECT_EQ(report["summary"]["total"], kFiles * kCasesPerFile);
  EXPECT_EQ(report["summary"]["fail"], wrong);
  EXPECT_EQ(report["failures"][0]["message"], "wrong result");
  EXPECT_EQ(report["failures"][0]["count"], wrong);
}

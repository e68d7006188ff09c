// build_failures_test.cpp — a failed build in the records (docs/build.md): the candidate is
// build_failed and never counts as explored, failures are grouped by kind with each kind's first
// error line, and the new trial kind and status survive a round trip through the HDF5 file.
#include <flotilla/results/Analysis.h>
#include <flotilla/results/Store.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>

namespace flotilla::results {
namespace {

CampaignInfo campaign() {
  return {.name = "b", .objective = "rate", .direction = "maximize", .repeats = 1, .shards = 1};
}

TrialRecord build(std::int64_t candidate, TrialStatus status, std::string tail = {}) {
  return {.candidate = candidate, .kind = TrialKind::build, .status = status, .start = 1, .end = 2,
          .objective = std::nan(""),
          .reason = status == TrialStatus::ok ? "" : "build failed: exit code 1", .output_tail = std::move(tail)};
}

TEST(BuildFailures, AFailedBuildIsItsOwnStatusAndNeverExplored) {
  const std::vector<CandidateRecord> candidates = {{.id = 0, .config = "v=none", .origin = "baseline"},
                                                   {.id = 1, .config = "v=broken", .origin = "grid"}};
  const std::vector<TrialRecord> trials = {
      build(0, TrialStatus::ok),
      {.candidate = 0, .kind = TrialKind::explore, .objective = 2.0},
      {.candidate = 0, .kind = TrialKind::evaluate, .objective = std::nan("")},
      build(1, TrialStatus::build_failed,
            "In file included from k.cpp:1:\nk.cpp:9:5: error: 'undefined_thing' was not declared\n"
            "k.cpp:12:1: error: expected ';'\n"),
      {.candidate = 1, .kind = TrialKind::explore, .status = TrialStatus::timeout, .objective = std::nan(""),
       .reason = "timed out after 1s"}};
  const auto s = summarize(campaign(), candidates, trials);
  EXPECT_EQ(s.candidates[0].status, CandidateStatus::verified);
  EXPECT_EQ(s.candidates[1].status, CandidateStatus::build_failed);  // whatever else is recorded
  EXPECT_EQ(s.candidates[1].reason, "k.cpp:9:5: error: 'undefined_thing' was not declared");
  EXPECT_EQ(s.count(CandidateStatus::build_failed), 1u);
  ASSERT_EQ(s.failures_by_kind.size(), 2u);
  EXPECT_EQ(s.failures_by_kind.at("build").count, 1u);
  EXPECT_EQ(s.failures_by_kind.at("build").first_error, "k.cpp:9:5: error: 'undefined_thing' was not declared");
  EXPECT_EQ(s.failures_by_kind.at("timeout").first_error, "timed out after 1s");
  const auto text = summary_text(s, 5);
  EXPECT_NE(text.find("build failed (never explored)\n      1  v=broken  — k.cpp:9:5: error"), std::string::npos)
      << text;
  EXPECT_NE(text.find("failures by kind (first error)\n      1  build         k.cpp:9:5: error"), std::string::npos)
      << text;
  EXPECT_NE(summary_json(s, 5).find("\"build_failed\":1"), std::string::npos);
}

// A build that fails without the word "error" (cp, patch, a missing tool): the reason is only
// "exit code 1", so the report shows the build's last lines, printable, and where its full log is.
TEST(BuildFailures, TheReportShowsTheBuildsLastLinesAndItsLog) {
  const std::string tail = std::string("ying tree\n") + "copying tree\n\n" + "patching \x1b[31mfile\n" +
                           "cp: cannot stat 'configs/build/src': No such file or directory\n" +
                           build_log_note("/scratch/c.h5.builds/12ab.log");
  const auto output = build_output(tail);
  EXPECT_EQ(output.log, "/scratch/c.h5.builds/12ab.log");
  EXPECT_EQ(output.last_lines, (std::vector<std::string>{"copying tree", "patching \\x1b[31mfile",
                                                          "cp: cannot stat 'configs/build/src': No such file or directory"}));
  EXPECT_EQ(build_output("only line").last_lines, std::vector<std::string>{"only line"});
  EXPECT_EQ(build_output("only line").log, "");  // recorded before flotilla kept build logs

  const std::vector<CandidateRecord> candidates = {{.id = 0, .config = "v=none", .origin = "baseline"}};
  const auto s = summarize(campaign(), candidates, {build(0, TrialStatus::build_failed, tail)});
  EXPECT_EQ(s.candidates[0].reason, "build failed: exit code 1");
  const auto text = summary_text(s, 5);
  EXPECT_NE(text.find("      0  v=none  — build failed: exit code 1\n"
                      "         | copying tree\n"
                      "         | patching \\x1b[31mfile\n"
                      "         | cp: cannot stat 'configs/build/src': No such file or directory\n"
                      "         full log: /scratch/c.h5.builds/12ab.log\n"),
            std::string::npos)
      << text;
  const auto json = summary_json(s, 5);
  EXPECT_NE(json.find("\"build_log\":\"/scratch/c.h5.builds/12ab.log\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"build_output\":[\"copying tree\""), std::string::npos) << json;
}

TEST(BuildFailures, KindsOfFailure) {
  EXPECT_EQ(failure_kind(build(0, TrialStatus::build_failed)), "build");
  EXPECT_EQ(failure_kind({.kind = TrialKind::explore, .status = TrialStatus::timeout}), "timeout");
  EXPECT_EQ(failure_kind({.kind = TrialKind::evaluate, .status = TrialStatus::failed}), "verification");
  EXPECT_EQ(failure_kind({.kind = TrialKind::explore, .status = TrialStatus::failed}), "crash");
  EXPECT_EQ(first_error_line(build(0, TrialStatus::build_failed, "no such line\n")), "build failed: exit code 1");
}

TEST(BuildFailures, TheBuildKindAndStatusAreStored) {
  const auto path = std::filesystem::temp_directory_path() / ("flotilla_build_store." + std::to_string(getpid()) + ".h5");
  std::filesystem::remove(path);
  {
    auto store = Store::create(path, campaign());
    store.add_candidate({.id = 0, .config = "v=broken", .origin = "baseline"});
    EXPECT_TRUE(store.add_trial(build(0, TrialStatus::build_failed, "k.cpp:1: error: x\n")));
    EXPECT_FALSE(store.add_trial(build(0, TrialStatus::build_failed)));  // the same key
  }
  const auto trials = Store::open_read(path).trials();
  ASSERT_EQ(trials.size(), 1u);
  EXPECT_EQ(trials[0].kind, TrialKind::build);
  EXPECT_EQ(trials[0].status, TrialStatus::build_failed);
  EXPECT_EQ(to_string(trials[0].kind), "build");
  EXPECT_EQ(to_string(trials[0].status), "build_failed");
  EXPECT_EQ(trials[0].output_tail, "k.cpp:1: error: x\n");
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace flotilla::results

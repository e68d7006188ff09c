// proposals_test.cpp — the proposer protocol (docs/propose.md): the pure rules (Proposals.h),
// candidates' trees (Trees.h), and the judging of what proposers wrote (ProposeStage), each bad
// input a proposer can give injected and refused with its reason.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "ProposeStage.h"
#include "Trees.h"
#include "flotilla/scheduler/Proposals.h"

namespace flotilla::scheduler {
namespace {

namespace fs = std::filesystem;
using results::CandidateStatus;
using results::ProposalRecord;
using results::ProposalStatus;

const char* kPatch = R"(--- a/src/x.c
+++ b/src/x.c
@@ -1,2 +1,2 @@
-int x = 1;
+int x = 3;
 int y = 2;
)";

TEST(CheckPatch, NamesTheFilesAfterStrippingOneComponent) {
  const auto check = check_patch(kPatch);
  EXPECT_EQ(check.error, "");
  EXPECT_EQ(check.files, std::vector<std::string>{"src/x.c"});
  // A created file (old side /dev/null) and a deleted one (new side /dev/null).
  const auto created = check_patch("--- /dev/null\n+++ b/new.c\n@@ -0,0 +1 @@\n+int z;\n");
  EXPECT_EQ(created.error, "");
  EXPECT_EQ(created.files, std::vector<std::string>{"new.c"});
  const auto deleted = check_patch("--- a/old.c\n+++ /dev/null\n@@ -1 +0,0 @@\n-int z;\n");
  EXPECT_EQ(deleted.files, std::vector<std::string>{"old.c"});
  // diff's timestamps after a tab are not part of the path.
  EXPECT_EQ(check_patch("--- a/x.c\t2026-12-04 10:00\n+++ b/x.c\t2026-12-04 10:01\n@@ -1 +1 @@\n-a\n+b\n").files,
            std::vector<std::string>{"x.c"});
}

TEST(CheckPatch, RefusesWhatLeavesTheTreeOrIsNoPatch) {
  EXPECT_EQ(check_patch("--- a/../etc/passwd\n+++ b/../etc/passwd\n@@ -1 +1 @@\n-a\n+b\n").error,
            "the path 'a/../etc/passwd' leaves the tree ('..')");
  EXPECT_EQ(check_patch("--- /etc/passwd\n+++ /etc/passwd\n@@ -1 +1 @@\n-a\n+b\n").error,
            "the path '/etc/passwd' is absolute: a patch stays inside its tree");
  EXPECT_EQ(check_patch("--- x.c\n+++ x.c\n@@ -1 +1 @@\n-a\n+b\n").error,
            "the path 'x.c' has no a/ or b/ prefix for -p1 to strip");
  EXPECT_EQ(check_patch("--- a/.git/config\n+++ b/.git/config\n@@ -1 +1 @@\n-a\n+b\n").error,
            "the path 'a/.git/config' is inside .git");
  EXPECT_EQ(check_patch("just words\n").error, "the patch has no hunk: it changes nothing");
  EXPECT_EQ(check_patch("").error, "the patch has no hunk: it changes nothing");
  EXPECT_EQ(check_patch(std::string("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\0\n+b\n", 35)).error,
            "the patch holds a NUL byte: binary content is not accepted");
  EXPECT_EQ(check_patch("diff --git a/x.bin b/x.bin\nGIT binary patch\nliteral 4\n").error,
            "the patch changes a binary file: binary content is not accepted");
  EXPECT_EQ(check_patch("Binary files a/x.bin and b/x.bin differ\n").error,
            "the patch changes a binary file: binary content is not accepted");
  EXPECT_NE(check_patch(std::string(kPatch), 10).error.find("bytes, more than the 10 a proposal may have"), std::string::npos);
}

TEST(ProposalMeta, ReadsParentRationaleAndParameters) {
  auto meta = parse_proposal_meta(R"({"parent": 3, "rationale": "why", "parameters": {"block": 64, "mode": "fast"}})");
  EXPECT_EQ(meta.error, "");
  EXPECT_EQ(meta.parent, "3");
  EXPECT_EQ(meta.rationale, "why");
  EXPECT_EQ(meta.parameters.at("block"), "64");
  EXPECT_EQ(meta.parameters.at("mode"), "fast");
  EXPECT_EQ(parse_proposal_meta("{}").parent, "best");
  EXPECT_EQ(parse_proposal_meta("[1]").error, "not a JSON object");
  EXPECT_EQ(parse_proposal_meta(R"({"parnet": "best"})").error,
            "unknown key \"parnet\" (known: parent, rationale, parameters)");
  EXPECT_EQ(parse_proposal_meta(R"({"parent": [1]})").error, "\"parent\" is not \"best\", \"baseline\" or a candidate id");
  EXPECT_EQ(parse_proposal_meta("{").error.rfind("not JSON: ", 0), 0u);
}

results::CampaignSummary summary_of(std::vector<CandidateStatus> statuses, std::optional<std::size_t> best) {
  results::CampaignSummary s;
  s.campaign.shards = 1;
  for (std::size_t i = 0; i < statuses.size(); ++i) {
    results::CandidateSummary c;
    c.record = {.id = static_cast<std::int64_t>(i), .round = static_cast<std::int32_t>(i), .config = "x=1",
                .origin = i == 0 ? "baseline" : "grid"};
    c.status = statuses[i];
    s.candidates.push_back(c);
  }
  s.baseline = 0;
  s.best = best;
  return s;
}

TEST(ResolveParent, NeverARolledBackOrUndecidedCandidate) {
  const auto s = summary_of({CandidateStatus::verified, CandidateStatus::verified, CandidateStatus::rolled_back,
                             CandidateStatus::explored}, 1);
  EXPECT_EQ(resolve_parent("best", s).id, 1);
  EXPECT_EQ(resolve_parent("baseline", s).id, 0);
  EXPECT_EQ(resolve_parent("1", s).id, 1);
  EXPECT_EQ(resolve_parent("2", s).refusal, "parent 2 was rolled back: a rolled-back candidate is never built upon");
  EXPECT_EQ(resolve_parent("3", s).refusal, "parent 3 is not verified (it is explored)");
  EXPECT_EQ(resolve_parent("9", s).refusal, "parent 9 is not a candidate of this campaign");
  EXPECT_EQ(resolve_parent("first", s).refusal, "parent 'first' is not best, baseline or a candidate id");
  // Nothing confirmed: best is the baseline.
  EXPECT_EQ(resolve_parent("best", summary_of({CandidateStatus::verified}, std::nullopt)).id, 0);
}

TEST(ProposerRuns, FollowsWhenAndTakesOverOnceTheDeclaredAreSpent) {
  Settings::Propose p;
  EXPECT_FALSE(proposer_runs(p, true, 0));  // no command
  p.command = "propose {out}";
  EXPECT_TRUE(proposer_runs(p, false, 0));
  p.when = Settings::Propose::When::exhausted;
  EXPECT_FALSE(proposer_runs(p, false, 9));
  EXPECT_TRUE(proposer_runs(p, true, 0));
  p.when = Settings::Propose::When::stall;
  p.stall_rounds = 2;
  EXPECT_FALSE(proposer_runs(p, false, 1));
  EXPECT_TRUE(proposer_runs(p, false, 2));
  EXPECT_TRUE(proposer_runs(p, true, 0));
}

TEST(RoundsWithoutGain, CountsTheRoundsSinceTheWinnerChanged) {
  auto s = summary_of({CandidateStatus::verified, CandidateStatus::verified, CandidateStatus::verified}, 0);
  EXPECT_EQ(rounds_without_gain(s, 1), 0);
  EXPECT_EQ(rounds_without_gain(s, 4), 3);
  s.best = 2;  // candidate 2 is of round 2
  EXPECT_EQ(rounds_without_gain(s, 3), 0);
  EXPECT_EQ(rounds_without_gain(s, 5), 2);
}

std::vector<results::CandidateRecord> records(std::vector<std::string> origins) {
  std::vector<results::CandidateRecord> out;
  for (std::size_t i = 0; i < origins.size(); ++i)
    out.push_back({.id = static_cast<std::int64_t>(i), .config = "x=1", .origin = origins[i]});
  return out;
}

TEST(Chain, FollowsParentsToTheRoot) {
  // baseline 0; proposal 0 (parent 0) -> candidate 1; proposal 1 (parent 1) -> candidate 2;
  // candidate 3 declared.
  const auto candidates = records({"baseline", "proposal 0", "proposal 1", "grid"});
  std::vector<ProposalRecord> proposals = {{.id = 0, .parent = 0, .hash = 11, .status = ProposalStatus::accepted},
                                           {.id = 1, .parent = 1, .hash = 22, .status = ProposalStatus::accepted}};
  EXPECT_EQ(chain_of(2, candidates, proposals), (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(chain_of(1, candidates, proposals), (std::vector<std::int64_t>{0}));
  EXPECT_TRUE(chain_of(3, candidates, proposals).empty());
  EXPECT_EQ(results::lineage_of(2, candidates, proposals), (std::vector<std::int64_t>{0, 1, 2}));
  EXPECT_EQ(chain_key({}, proposals), "plain");
  EXPECT_NE(chain_key({0}, proposals), chain_key({0, 1}, proposals));
  // A damaged file whose parents loop ends the walk instead of hanging it.
  proposals[0].parent = 2;
  EXPECT_LE(chain_of(2, candidates, proposals).size(), 3u);
  EXPECT_EQ(proposal_of({.origin = "proposal 12"}), 12);
  EXPECT_FALSE(proposal_of({.origin = "proposal x"}));
  EXPECT_FALSE(proposal_of({.origin = "grid"}));
}

// --- trees ------------------------------------------------------------------------------------

class TreeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::remove_all(m_dir);
    fs::create_directories(m_dir / "plain" / "src");
    std::ofstream(m_dir / "plain" / "src" / "x.c") << "int x = 1;\nint y = 2;\n";
  }
  void TearDown() override { fs::remove_all(m_dir); }
  const fs::path m_dir = fs::temp_directory_path() / ("flotilla_tree_test." + std::to_string(::getpid()));
};

TEST_F(TreeTest, ChainsAreAppliedOnceIntoFoldersOfTheirOwn) {
  TreeCache trees(m_dir / "plain", m_dir / "trees");
  const std::vector<ProposalRecord> proposals = {
      {.id = 0, .hash = 1, .status = ProposalStatus::accepted, .name = "three", .patch = kPatch},
      {.id = 1, .hash = 2, .status = ProposalStatus::accepted, .name = "four",
       .patch = "--- a/src/x.c\n+++ b/src/x.c\n@@ -1,2 +1,2 @@\n-int x = 3;\n+int x = 4;\n int y = 2;\n"}};
  const auto plain = trees.ensure({}, proposals);
  const auto first = trees.ensure({0}, proposals);
  const auto second = trees.ensure({0, 1}, proposals);
  auto text = [](const fs::path& p) {
    std::ifstream in(p / "src" / "x.c");
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  EXPECT_EQ(text(plain), "int x = 1;\nint y = 2;\n");
  EXPECT_EQ(text(first), "int x = 3;\nint y = 2;\n");
  EXPECT_EQ(text(second), "int x = 4;\nint y = 2;\n");
  EXPECT_EQ(text(m_dir / "plain"), "int x = 1;\nint y = 2;\n");  // the source tree itself is never touched
  EXPECT_EQ(trees.ensure({0, 1}, proposals), second);
  // The second patch does not apply to the plain tree (its context is the first one's result).
  EXPECT_NE(trees.try_apply(plain, proposals[1].patch, {"src/x.c"}).find("does not apply cleanly"), std::string::npos);
  EXPECT_EQ(trees.try_apply(plain, kPatch, {"src/x.c"}), "");
  for (const auto& entry : fs::directory_iterator(m_dir / "trees"))
    EXPECT_FALSE(entry.path().filename().string().starts_with(".tmp-")) << entry.path();
}

// Hostile proposals: a patch through a symlink of the tree, or one that makes a symlink.
TEST_F(TreeTest, APatchNeverGoesThroughOrMakesASymlink) {
  fs::create_directories(m_dir / "outside");
  std::ofstream(m_dir / "outside" / "x.c") << "int x = 1;\nint y = 2;\n";
  fs::create_directory_symlink(m_dir / "outside", m_dir / "plain" / "linked");
  TreeCache trees(m_dir / "plain", m_dir / "trees");
  const auto through = trees.try_apply(m_dir / "plain", std::string(kPatch).replace(0, 0, ""), {"linked/x.c"});
  EXPECT_EQ(through, "'linked/x.c' goes through 'linked', a symbolic link: a patch stays inside its tree");
  const std::string makes_link =
      "diff --git a/evil b/evil\nnew file mode 120000\n--- /dev/null\n+++ b/evil\n@@ -0,0 +1 @@\n+/etc/passwd\n"
      "\\ No newline at end of file\n";
  const auto check = check_patch(makes_link);
  ASSERT_EQ(check.error, "");
  EXPECT_EQ(trees.try_apply(m_dir / "plain", makes_link, check.files),
            "it makes 'evil' a symbolic link: a patch stays inside its tree");
  std::ifstream outside(m_dir / "outside" / "x.c");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(outside), {}), "int x = 1;\nint y = 2;\n");
}

// --- judging what proposers wrote --------------------------------------------------------------

class JudgeTest : public TreeTest {
 protected:
  Settings settings() {
    Settings s;
    s.results = m_dir / "c.h5";
    s.propose.command = "propose {out}";
    s.propose.tree = m_dir / "plain";
    s.propose.budget = 10;
    s.propose.max_per_round = 3;
    s.space.add_parameter(search::parse_parameter("x: int: 1..4"));
    return s;
  }
  static ProposerRun run(std::vector<ProposerRun::File> files) { return {.index = 0, .files = std::move(files)}; }
  const std::vector<results::CandidateRecord> m_candidates = records({"baseline", "grid"});
  const results::CampaignSummary m_summary = summary_of({CandidateStatus::verified, CandidateStatus::rolled_back}, 0);
};

TEST_F(JudgeTest, EveryBadAnswerIsRefusedWithItsReasonAndCounted) {
  auto s = settings();
  s.propose.budget = 100;
  ProposeStage stage(s, {});
  std::vector<ProposerRun> runs;
  runs.push_back({.index = 0, .failure = "exit code 3", .output_tail = "boom\n"});
  runs.push_back({.index = 1});  // wrote nothing
  runs.push_back({.index = 2, .files = {{.name = "a.txt", .content = "?"},
                                        {.name = "evil.patch", .problem = "is a symbolic link: a proposal is a file of its own"},
                                        {.name = "lone.json", .content = "{}"},
                                        {.name = "bad name.patch", .content = kPatch},
                                        {.name = "p1.patch", .content = kPatch},
                                        {.name = "p1.json", .content = R"({"parent": 1})"},
                                        {.name = "p2.patch", .content = "--- a/../x\n+++ b/../x\n@@ -1 +1 @@\n-a\n+b\n"},
                                        {.name = "p3.patch", .content = "--- a/src/x.c\n+++ b/src/x.c\n@@ -1 +1 @@\n-nope\n+b\n"},
                                        {.name = "p4.patch", .content = kPatch},
                                        {.name = "p5.patch", .content = kPatch}}});
  runs.push_back({.index = 3, .files = {{.name = "q.patch", .content = kPatch}}, .tree_changed = "/src"});
  const auto j = stage.judge(1, runs, m_summary, m_candidates, {}, 0);
  std::vector<std::string> reasons;
  for (const auto& r : j.records)
    if (r.status != ProposalStatus::answered) reasons.push_back(r.name + ": " + r.reason);
  ASSERT_EQ(j.accepted.size(), 1u);
  EXPECT_EQ(j.records[j.accepted[0].record].name, "p4");
  const auto has = [&](const std::string& text) {
    return std::any_of(reasons.begin(), reasons.end(), [&](const auto& r) { return r.find(text) != std::string::npos; });
  };
  EXPECT_TRUE(has(": the proposer failed: exit code 3; its output ends: boom")) << testing::PrintToString(reasons);
  EXPECT_TRUE(has(": the proposer wrote no proposal (NAME.patch) into {out}"));
  EXPECT_TRUE(has("a.txt: 'a.txt' is not NAME.patch or NAME.json"));
  EXPECT_TRUE(has("evil.patch: 'evil.patch' is a symbolic link"));
  EXPECT_TRUE(has("lone: 'lone.json' has no lone.patch beside it"));
  EXPECT_TRUE(has("bad name.patch: 'bad name.patch' is not NAME.patch"));
  EXPECT_TRUE(has("p1: parent 1 was rolled back"));
  EXPECT_TRUE(has("p2: the path 'a/../x' leaves the tree"));
  EXPECT_TRUE(has("p3: it does not apply to candidate 0's tree: it does not apply cleanly"));
  EXPECT_TRUE(has("p5: it repeats p4 (round 1, proposer 2)")) << testing::PrintToString(reasons);
  EXPECT_TRUE(has(": the proposer changed /src, which it was given only to read"));
  // Each run is answered once, after its proposals.
  int answered_rows = 0;
  for (const auto& r : j.records) answered_rows += r.status == ProposalStatus::answered;
  EXPECT_EQ(answered_rows, 4);
  EXPECT_EQ(j.records.back().status, ProposalStatus::answered);
}

TEST_F(JudgeTest, BudgetsAndEarlierProposalsAreKept) {
  auto s = settings();
  s.propose.max_per_round = 1;
  ProposeStage stage(s, {});
  const std::string other = "--- a/src/x.c\n+++ b/src/x.c\n@@ -1,2 +1,2 @@\n int x = 1;\n-int y = 2;\n+int y = 5;\n";
  // An earlier round accepted kPatch on the baseline: the same again is a repeat.
  const auto first = stage.judge(1, {run({{.name = "a.patch", .content = kPatch}})}, m_summary, m_candidates, {}, 0);
  ASSERT_EQ(first.accepted.size(), 1u);
  auto recorded = first.records;
  for (std::size_t i = 0; i < recorded.size(); ++i) recorded[i].id = static_cast<std::int64_t>(i);
  const auto again = stage.judge(2, {run({{.name = "b.patch", .content = kPatch}, {.name = "c.patch", .content = other},
                                          {.name = "d.patch", .content = other + " "}})},
                                 m_summary, m_candidates, recorded, 1);
  ASSERT_EQ(again.accepted.size(), 1u);
  EXPECT_EQ(again.records[again.accepted[0].record].name, "c");
  EXPECT_NE(again.records[0].reason.find("it repeats proposal 0 (a, round 1)"), std::string::npos) << again.records[0].reason;
  EXPECT_NE(again.records[2].reason.find("propose.max_per_round (1)"), std::string::npos) << again.records[2].reason;
  // The budget: made counts every proposal so far.
  const auto spent = stage.judge(3, {run({{.name = "e.patch", .content = other}})}, m_summary, m_candidates, recorded,
                                 s.propose.budget);
  EXPECT_TRUE(spent.accepted.empty());
  EXPECT_EQ(spent.records[0].reason, "the proposal budget (10) is spent");
}

TEST_F(JudgeTest, ParametersReplaceTheParentsAndMustBeOnTheGrid) {
  auto s = settings();
  ProposeStage stage(s, {});
  const auto j = stage.judge(1, {run({{.name = "a.patch", .content = kPatch}, {.name = "a.json", .content = R"({"parameters": {"x": 3}})"},
                                      {.name = "b.patch", .content = kPatch}, {.name = "b.json", .content = R"({"parameters": {"x": 9}})"},
                                      {.name = "c.patch", .content = kPatch}, {.name = "c.json", .content = R"({"parameters": {"z": 1}})"}})},
                             m_summary, m_candidates, {}, 0);
  ASSERT_EQ(j.accepted.size(), 1u);
  EXPECT_EQ(j.accepted[0].config, "x=3");
  EXPECT_NE(j.records[1].reason.find("b.json parameters:"), std::string::npos) << j.records[1].reason;
  EXPECT_EQ(j.records[2].reason, "c.json parameters: 'z' is not a parameter of [space]");
}

}  // namespace
}  // namespace flotilla::scheduler

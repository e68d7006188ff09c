// provenance_test.cpp — the `provenance` event of Provenance.h: its JSON fits the 1023-byte
// event detail and reads back; the summary line names the commit and warns when the runs of one
// campaign differ in commit or compiler versions.
#include <flotilla/results/Analysis.h>
#include <flotilla/results/Provenance.h>
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

namespace flotilla::results {
namespace {

RunProvenance run(std::string commit, bool dirty = false, std::string gcc = "g++ (Debian 12.2.0-14) 12.2.0") {
  RunProvenance p;
  p.workdir = "/home/u/dgemm";
  p.git_commit = std::move(commit);
  p.git_dirty = dirty;
  p.tools = {{"g++", std::move(gcc)}};
  p.env = {"OMP_NUM_THREADS={threads}"};
  return p;
}

EventRecord event_of(const RunProvenance& p, double time = 5) { return {time, "provenance", provenance_detail(p)}; }

TEST(Provenance, DetailReadsBack) {
  const RunProvenance p = run("0123456789abcdef0123456789abcdef01234567", true);
  const auto back = parse_provenance(event_of(p, 7));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->time, 7);
  EXPECT_EQ(back->workdir, p.workdir);
  EXPECT_EQ(back->git_commit, p.git_commit);
  EXPECT_TRUE(back->git_dirty);
  EXPECT_EQ(back->tools, p.tools);
  EXPECT_EQ(back->env, p.env);
}

TEST(Provenance, OtherEventsAndForeignDetailsAreNotProvenance) {
  EXPECT_FALSE(parse_provenance({1, "campaign_started", "{}"}));
  EXPECT_FALSE(parse_provenance({1, "provenance", "not json"}));
  EXPECT_FALSE(parse_provenance({1, "provenance", "[1,2]"}));
  // Fields of the wrong type are left out, not thrown on.
  const auto odd = parse_provenance({1, "provenance", R"({"workdir": 3, "git_commit": "abc", "tools": {"g++": 1}})"});
  ASSERT_TRUE(odd);
  EXPECT_EQ(odd->workdir, "");
  EXPECT_EQ(odd->git_commit, "abc");
  EXPECT_TRUE(odd->tools.empty());
}

// Long paths, many tools and many env lines still make a detail the events table can hold,
// and what was left out is counted.
TEST(Provenance, DetailFitsTheEventsTable) {
  RunProvenance p = run("c0ffee");
  p.workdir = std::string(2000, 'w');
  p.tools.clear();
  for (int i = 0; i < 40; ++i) p.tools.emplace_back("tool" + std::to_string(i), std::string(100, 'v'));
  for (int i = 0; i < 40; ++i) p.env.push_back("NAME" + std::to_string(i) + "=" + std::string(60, 'x'));
  const std::string detail = provenance_detail(p);
  EXPECT_LE(detail.size(), 1023u);
  const auto j = nlohmann::json::parse(detail);
  EXPECT_GT(j.at("tools_left_out").get<int>(), 0);
  EXPECT_GE(j.at("tools").size(), 3u);  // tools come before the env lines, which are in the campaign file anyway
  EXPECT_EQ(j.at("tools").size() + j.at("tools_left_out").get<std::size_t>(), 40u);
  EXPECT_TRUE(j.at("workdir").get<std::string>().ends_with("..."));
  // A cut never splits a UTF-8 character.
  RunProvenance utf8 = run("c0ffee");
  utf8.workdir.clear();
  for (int i = 0; i < 400; ++i) utf8.workdir += "\xc3\xa9";  // é
  const auto back = parse_provenance(event_of(utf8));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->workdir.find("\xef\xbf\xbd"), std::string::npos);  // no replacement character
}

TEST(Provenance, LineNamesTheLastRunsCommitAndTools) {
  const std::string line = provenance_line({run("0123456789abcdef0123")});
  EXPECT_NE(line.find("git 0123456789ab in /home/u/dgemm"), std::string::npos) << line;
  EXPECT_NE(line.find("g++: g++ (Debian 12.2.0-14) 12.2.0"), std::string::npos) << line;
  EXPECT_EQ(line.find("warning"), std::string::npos) << line;
  EXPECT_EQ(line.find("(dirty)"), std::string::npos) << line;
  EXPECT_EQ(provenance_line({}), "");
  RunProvenance plain = run("");
  EXPECT_NE(provenance_line({plain}).find("not a git work tree"), std::string::npos);
}

TEST(Provenance, RunsOnDifferentCommitsOrCompilersWarn) {
  const std::string commits = provenance_line({run("aaaaaaaaaaaaaaaa"), run("aaaaaaaaaaaaaaaa"), run("bbbbbbbbbbbbbbbb")});
  EXPECT_NE(commits.find("the 3 runs of this campaign ran on different commits (aaaaaaaaaaaa -> bbbbbbbbbbbb)"),
            std::string::npos)
      << commits;
  EXPECT_EQ(commits.find("compilers"), std::string::npos) << commits;
  const std::string tools = provenance_line({run("aaaa"), run("aaaa", false, "g++ (Debian 13.1.0) 13.1.0")});
  EXPECT_NE(tools.find("the compilers' versions changed between the 2 runs"), std::string::npos) << tools;
  EXPECT_EQ(tools.find("different commits"), std::string::npos) << tools;
  const std::string dirty = provenance_line({run("aaaa", true), run("aaaa")});
  EXPECT_NE(dirty.find("uncommitted changes"), std::string::npos) << dirty;
}

TEST(Provenance, SummaryCarriesItInTextAndJson) {
  CampaignInfo info{.name = "p", .objective = "time_s", .direction = "minimize", .repeats = 1, .shards = 1};
  CampaignSummary s = summarize(info, {}, {});
  s.provenance = {run("aaaa"), run("bbbb", true)};
  EXPECT_NE(summary_text(s, 5).find("provenance git bbbb (dirty)"), std::string::npos);
  const auto j = nlohmann::json::parse(summary_json(s, 5));
  EXPECT_EQ(j.at("provenance").at("git_commit"), "bbbb");
  EXPECT_EQ(j.at("provenance").at("runs"), 2);
  EXPECT_EQ(j.at("provenance").at("commits"), (nlohmann::json{"aaaa", "bbbb"}));
  s.provenance.clear();
  EXPECT_TRUE(nlohmann::json::parse(summary_json(s, 5)).at("provenance").is_null());
}

}  // namespace
}  // namespace flotilla::results

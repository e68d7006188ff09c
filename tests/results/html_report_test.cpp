// The HTML report's content (HtmlReport.h): what a browser test cannot see cheaply, checked on
// the text: bytes from the results file never become markup, the winner and the chart are there.
#include <gtest/gtest.h>

#include "campaign_builder.h"
#include "flotilla/results/HtmlReport.h"

namespace flotilla::results {
namespace {

using testing::CampaignBuilder;
using testing::Verdict;

TEST(HtmlReport, EscapesEverythingFromTheFile) {
  EXPECT_EQ(html_escape("<a href=\"x\">'&'</a>"), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  CampaignBuilder b;
  b.info.name = "<script>alert(1)</script>";
  b.add("x=1", 0, 1.0, Verdict::pass);
  b.add("x=<img src=y onerror=alert(2)>", 1, 2.0, Verdict::fail);
  const auto s = b.summary();
  const auto html = html_report(s, history(s, b.trials), "file\"<b>.h5");
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("file\"<b>"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  // Exactly one script, the page's own, and nothing fetched.
  EXPECT_EQ(html.find("<script>"), html.rfind("<script>"));
  EXPECT_EQ(html.find(" src=\""), std::string::npos);
  EXPECT_EQ(html.find(" href=\""), std::string::npos);
}

TEST(HtmlReport, NamesTheWinnerAndDrawsEveryEvaluation) {
  CampaignBuilder b;
  b.add("x=1", 0, 1.0, Verdict::pass);
  b.add("x=2", 1, 3.0, Verdict::pass);
  b.add("x=3", 1, 5.0, Verdict::fail);  // rolled back
  b.add("x=4", 1, std::nullopt);       // failed
  const auto s = b.summary();
  const auto html = html_report(s, history(s, b.trials), "c.h5");
  ASSERT_TRUE(s.best);
  EXPECT_NE(html.find("<b>Winner:</b> candidate 1: x=2"), std::string::npos);
  EXPECT_NE(html.find("class=\"point verified\" data-candidate=\"1\""), std::string::npos);
  EXPECT_NE(html.find("class=\"point rolled_back\" data-candidate=\"2\""), std::string::npos);
  EXPECT_NE(html.find("class=\"point failed\" data-candidate=\"3\""), std::string::npos);
  EXPECT_NE(html.find("class=\"winner\""), std::string::npos);
  // The rolled-back candidate is listed with its reason; the summary is the CLI's.
  EXPECT_NE(html.find("<b>candidate 2</b> x=3: shard 0/1"), std::string::npos) << html;
  EXPECT_NE(html.find(html_escape(summary_text(s, 10)).substr(0, 40)), std::string::npos);
}

}  // namespace
}  // namespace flotilla::results

namespace flotilla::results {
namespace {

// The final report at 80 columns (issue 34: it wrapped mid-word): prose lines wrapped on words,
// continued under their text; tables left whole.
TEST(WrapReport, ProseLinesWrapUnderTheirTextTablesStay) {
  const std::string prose =
      "tie        candidate 1 and candidate 2 cannot be told apart: 1x [0.989, 1.01] head to head in 11 pairs "
      "(no significant difference); the winner is named by its ratio over the baseline";
  const std::string table = "     1      2       2.003  [1.98, 2.003]            1.2%  explored      faster 2x       v=b "
                            "and a long configuration text";
  const auto out = wrap_report(prose + "\n" + table + "\n", 80);
  std::vector<std::string> lines;
  for (std::size_t b = 0, e; (e = out.find('\n', b)) != std::string::npos; b = e + 1) lines.push_back(out.substr(b, e - b));
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines.back(), table);
  for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
    EXPECT_LE(lines[i].size(), 80u) << lines[i];
    if (i > 0) {
      EXPECT_TRUE(lines[i].starts_with(std::string(11, ' ')) && lines[i][11] != ' ') << lines[i];
    }
  }
  EXPECT_TRUE(lines[0].starts_with("tie        candidate 1 and"));
  // Every word kept, in order.
  std::string joined;
  for (std::size_t i = 0; i + 1 < lines.size(); ++i) joined += (i ? " " : "") + lines[i].substr(i ? 11 : 0);
  EXPECT_EQ(joined, prose);
  EXPECT_EQ(wrap_report(prose, 0), prose);  // not a terminal
  EXPECT_EQ(wrap_report("short      line\n", 80), "short      line\n");
}

}  // namespace
}  // namespace flotilla::results

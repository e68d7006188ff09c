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

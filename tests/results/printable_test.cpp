// printable_test.cpp — untrusted text made safe to show (Printable.h): valid UTF-8 and the
// structural newline and tab kept, every control class and each invalid byte escaped visibly.
#include <flotilla/results/Printable.h>
#include <gtest/gtest.h>

#include <string>

namespace flotilla::results {
namespace {

using namespace std::string_literals;

TEST(Printable, KeepsValidUtf8NewlinesAndTabs) {
  EXPECT_EQ(printable("time 3.2 µs, café\tok\n"), "time 3.2 µs, café\tok\n");
  EXPECT_EQ(printable("日本 🚀 \\x1b C:\\tmp"), "日本 🚀 \\x1b C:\\tmp");  // a backslash stays
  EXPECT_EQ(printable(""), "");
}

TEST(Printable, EscapesC0ControlsAndDel) {
  EXPECT_EQ(printable("\033]0;PWNED\007\033[2J"), "\\x1b]0;PWNED\\x07\\x1b[2J");
  EXPECT_EQ(printable("a\0b"s), "a\\x00b");
  EXPECT_EQ(printable("line\r\x7f\x08\x0b\x0c"), "line\\x0d\\x7f\\x08\\x0b\\x0c");
}

TEST(Printable, EscapesC1Controls) {
  // U+009B (CSI) and U+0085 (NEL), encoded as valid UTF-8; U+00A0 just past them is kept.
  EXPECT_EQ(printable("\xc2\x9b" "2J \xc2\x85 \xc2\xa0"), "\\u009b2J \\u0085 \xc2\xa0");
}

TEST(Printable, EscapesEachByteOfInvalidUtf8) {
  EXPECT_EQ(printable("\xff"), "\\xff");
  EXPECT_EQ(printable("\x9b[2J"), "\\x9b[2J");                     // a lone continuation byte: the 8-bit CSI
  EXPECT_EQ(printable("caf\xe9 ok"), "caf\\xe9 ok");                // Latin-1, not UTF-8
  EXPECT_EQ(printable("\xe2\x82"), "\\xe2\\x82");                   // cut short
  EXPECT_EQ(printable("\xc0\xaf"), "\\xc0\\xaf");                   // overlong '/'
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");          // a surrogate
  EXPECT_EQ(printable("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
}

TEST(Printable, IsIdempotent) {
  const std::string hostile = "\033[31mred\xc2\x9b\xff\0 µs\n"s;
  EXPECT_EQ(printable(printable(hostile)), printable(hostile));
}

}  // namespace
}  // namespace flotilla::results

// CommandTest.cpp — command templates (Command.h): POSIX quoting, substitution that never
// re-splits a value, and the exact error messages.
#include <gtest/gtest.h>

#include "flotilla/jobs/Command.h"

namespace flotilla::jobs {
namespace {

using Words = std::vector<std::string>;
using Values = std::map<std::string, std::string, std::less<>>;

std::string command_error(auto&& call) {
  try {
    call();
  } catch (const CommandError& error) {
    return error.what();
  }
  return "(no error)";
}

TEST(SplitCommand, Whitespace) {
  EXPECT_EQ(split_command("  bench   --n 4\t-v\n"), (Words{"bench", "--n", "4", "-v"}));
  EXPECT_EQ(split_command(""), Words{});
  EXPECT_EQ(split_command(" \t "), Words{});
}

TEST(SplitCommand, Quotes) {
  EXPECT_EQ(split_command("a 'b c' d"), (Words{"a", "b c", "d"}));
  EXPECT_EQ(split_command(R"("it's" 'say "hi"')"), (Words{"it's", R"(say "hi")"}));
  EXPECT_EQ(split_command("x '' \"\" y"), (Words{"x", "", "", "y"}));
  EXPECT_EQ(split_command("pre'quoted'post\"more\""), (Words{"prequotedpostmore"}));
  EXPECT_EQ(split_command("'$HOME' '*' ; |"), (Words{"$HOME", "*", ";", "|"}));  // nothing expands
}

TEST(SplitCommand, Backslashes) {
  EXPECT_EQ(split_command(R"(a\ b c\'d \\)"), (Words{"a b", "c'd", "\\"}));
  EXPECT_EQ(split_command(R"('a\b' 'a\')"), (Words{"a\\b", "a\\"}));  // literal in '...'
  EXPECT_EQ(split_command(R"("a\qb" "\"\\\$\`")"), (Words{"a\\qb", "\"\\$`"}));
  EXPECT_EQ(split_command("a\\\nb \"c\\\nd\""), (Words{"ab", "cd"}));  // line continuations
  EXPECT_EQ(split_command("a \\\n b"), (Words{"a", "b"}));
}

TEST(SplitCommand, Errors) {
  EXPECT_EQ(command_error([] { split_command("echo 'abc"); }), "unterminated quote");
  EXPECT_EQ(command_error([] { split_command("echo \"abc\\\""); }), "unterminated quote");
  EXPECT_EQ(command_error([] { split_command("echo abc\\"); }), "trailing backslash");
}

TEST(RenderArgv, Substitutes) {
  const Values values{{"tile_x", "32"}, {"shard", "0"}, {"shards", "4"}};
  EXPECT_EQ(render_argv("bench --tile={tile_x} -s {shard}/{shards}", values),
            (Words{"bench", "--tile=32", "-s", "0/4"}));
  EXPECT_EQ(render_argv("echo '{tile_x} x'", values), (Words{"echo", "32 x"}));
}

TEST(RenderArgv, ValueStaysOneArgument) {
  const Values values{{"name", "a b; rm -rf / 'q' \"d\" {x} \\"}};
  EXPECT_EQ(render_argv("echo {name}", values), (Words{"echo", "a b; rm -rf / 'q' \"d\" {x} \\"}));
  EXPECT_EQ(render_argv("echo {e}", Values{{"e", ""}}), (Words{"echo", ""}));
}

TEST(RenderArgv, LiteralBraces) {
  EXPECT_EQ(render_argv("awk '{{print $1}}' {f}", Values{{"f", "in"}}),
            (Words{"awk", "{print $1}", "in"}));
}

// A choice's value: no words or quotes, known names replaced once, unknown ones kept as written.
TEST(RenderText, ReplacesWhatItKnowsOnceAndKeepsTheRest) {
  EXPECT_EQ(render_text("{tmpdir}/'a b' {{x}} {n}", {{"n", "{tmpdir}"}}), "{tmpdir}/'a b' {x} {tmpdir}");
  EXPECT_EQ(text_placeholders("{b}/{a} {{c}} {a}"), (std::vector<std::string>{"a", "b"}));
  EXPECT_THROW(render_text("{oops", {}), CommandError);
}

TEST(RenderArgv, Errors) {
  const Values values{{"tile_x", "1"}, {"shards", "2"}, {"shard", "3"}};
  EXPECT_EQ(command_error([&] { render_argv("bench {tile_z}", values); }),
            "unknown placeholder {tile_z} (known: shard, shards, tile_x)");
  EXPECT_EQ(command_error([] { render_argv("bench {x}", Values{}); }),
            "unknown placeholder {x} (known: none)");
  EXPECT_EQ(command_error([&] { render_argv("bench a{tile_x", values); }),
            "unmatched '{' in 'a{tile_x'");
  EXPECT_EQ(command_error([&] { render_argv("bench a}", values); }), "unmatched '}' in 'a}'");
  EXPECT_EQ(command_error([&] { render_argv("bench x{}", values); }),
            "bad placeholder {} in 'x{}'");
  EXPECT_EQ(command_error([&] { render_argv("bench '{a b}'", values); }),
            "bad placeholder {a b} in '{a b}'");
  EXPECT_EQ(command_error([&] { render_argv("  ", values); }), "empty command");
  EXPECT_EQ(command_error([&] { render_argv("bench '", values); }), "unterminated quote");
}

TEST(Placeholders, SortedAndUnique) {
  EXPECT_EQ(placeholders("run {b} --x={a} {b}/{c} '{{literal}}'"), (Words{"a", "b", "c"}));
  EXPECT_EQ(placeholders("run plain"), Words{});
  EXPECT_EQ(command_error([] { placeholders("run {"); }), "unmatched '{' in '{'");
}

}  // namespace
}  // namespace flotilla::jobs

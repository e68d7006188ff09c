// per_file_program_test — flotilla-per-file as a program, on checkers whose output is hostile
// (issue 32): 70 MB before the summary line, 70 MB and no summary, 40,000 progress lines. The
// verdicts must come from the summaries, and the program's memory and report must stay bounded
// whatever the checkers print.
#include <flotilla/suites/PerFile.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace fs = std::filesystem;
using namespace flotilla::suites;
using flotilla::results::TestOutcome;

namespace {

struct Ended {
  int status = -1;
  long max_rss_kib = 0;  // of flotilla-per-file itself, not of its checkers
};

// Runs argv to its end; wait4 gives that one process's peak memory.
Ended run(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawn(&pid, args[0], nullptr, nullptr, args.data(), environ) != 0) return {};
  Ended ended;
  rusage usage{};
  if (wait4(pid, &ended.status, 0, &usage) == pid) ended.max_rss_kib = usage.ru_maxrss;
  return ended;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST(PerFileProgram, HugeOutputKeepsItsTailAndTheReportStaysSmall) {
  const fs::path dir = fs::path(testing::TempDir()) / "per_file_program_huge";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "list") << "a.test\nb.test\nc.test\n";
  // $0 is the file. a: 70 MB of one line, then its summary; b: the same without a summary (its
  // message would hold that line); c: 40,000 progress lines, then its summary.
  const std::string checker = R"(
case "$0" in
  *c.test) seq -f '%g errors out of 9 tests in progress - 0 skipped' 40000 ;;
  *) head -c 70000000 /dev/zero | tr '\0' x; echo ;;
esac
case "$0" in *b.test) exit 1 ;; esac
echo "0 errors out of 5 tests in $0 - 0 skipped.")";
  const auto ended = run({PER_FILE_PROGRAM, "--files", (dir / "list").string(), "--report",
                          (dir / "report.json").string(), "--relative-to", dir.string(), "--parallel", "3", "--summary",
                          R"((?<errors>\d+) errors out of (?<tests>\d+) tests in \S+ - (?<skipped>\d+) skipped)",
                          "--pass-when", "errors == 0", "--", "/bin/sh", "-c", checker, (dir / "{file}").string()});
  ASSERT_TRUE(WIFEXITED(ended.status) && WEXITSTATUS(ended.status) == 0) << ended.status;
  const auto tests = parse_per_file_report(read_file(dir / "report.json"), "report.json");
  ASSERT_EQ(tests.size(), 3u);
  EXPECT_EQ(tests[0].outcome, TestOutcome::pass) << tests[0].message;
  EXPECT_EQ(tests[0].numbers, (Numbers{{"errors", 0}, {"tests", 5}, {"skipped", 0}}));
  EXPECT_EQ(tests[1].outcome, TestOutcome::error);
  EXPECT_EQ(tests[1].message.rfind("b.test: no summary line matches", 0), 0u) << tests[1].message.substr(0, 200);
  EXPECT_LE(tests[1].message.size(), 4096u);
  EXPECT_EQ(tests[2].outcome, TestOutcome::pass) << tests[2].message;
  EXPECT_EQ(tests[2].numbers, (Numbers{{"errors", 0}, {"tests", 5}, {"skipped", 0}}));
  // Bounded: at most 4 KiB of message per file (plus its JSON), and the kept tails of
  // three checkers at once, where the first 64 MiB of each used to be held.
  EXPECT_LT(fs::file_size(dir / "report.json"), 3u * (4096 + 512));
  EXPECT_LT(ended.max_rss_kib, 48 * 1024);
  if (!HasFailure()) fs::remove_all(dir);  // kept to look at when it failed
}

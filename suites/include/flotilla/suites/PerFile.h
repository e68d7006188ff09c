// PerFile.h — the per-file checker protocol (evaluate.suite = per_file; docs/tests.md): one
// checker process per test file, judged by its exit code or by a summary line it prints, e.g.
//
//   summary   = (?<errors>\d+) errors out of (?<tests>\d+) tests
//   pass_when = errors == 0
//
// flotilla-per-file runs a shard's files and writes what these functions decide into a JSON
// report, which the scheduler reads back (parse_per_file_report). Pure: no process, no file.
//
// Rules of judge_file, in order:
//  - a run that timed out is `timeout`; one killed by a signal is `error`;
//  - without a summary pattern, exit code 0 is `pass`, any other `fail`;
//  - with one, the pattern's last match in the output's last kSummaryLines lines (at most
//    kSummaryBytes) decides: no match is `error` ("no summary line"), a named group whose text is
//    not a number is `error`, and so is a match that hits PCRE2's match or depth limit; the groups
//    become the test's numbers; then pass_when decides when given (the exit code is ignored: a
//    checker whose exit code is its error count wraps modulo 256), the exit code otherwise.
// A test's message is at most kMaxMessageBytes.
// Not thread-safe: a PassCondition evaluates through one muparser instance.
#pragma once

#include <flotilla/suites/Reports.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace flotilla::suites {

using Numbers = std::vector<std::pair<std::string, double>>;

// Bounds on what one checker's output costs, whatever it prints (docs/tests.md): flotilla-per-file
// keeps the last kKeptOutputBytes of it (the verdict is at the end), the summary is looked for in
// the last kSummaryLines lines of that and no more than kSummaryBytes, one match attempt may take
// kMatchLimit steps of PCRE2 and backtrack kDepthLimit deep, and the report holds at most
// kMaxMessageBytes of message per file.
inline constexpr std::size_t kKeptOutputBytes = std::size_t{1} << 20;
inline constexpr std::size_t kSummaryLines = 64;
inline constexpr std::size_t kSummaryBytes = std::size_t{64} << 10;
inline constexpr std::uint32_t kMatchLimit = 1'000'000;
inline constexpr std::uint32_t kDepthLimit = 10'000;
inline constexpr std::size_t kMaxMessageBytes = std::size_t{4} << 10;

// A bad summary pattern or pass_when expression; the message names the setting and the place.
class PatternError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// evaluate.summary: a PCRE2 pattern (Perl syntax, multi-line: ^ and $ match at each line) with
// at least one named group, (?<name>...). Names become test numbers and pass_when variables.
class SummaryPattern {
 public:
  explicit SummaryPattern(std::string_view pattern);
  ~SummaryPattern();
  SummaryPattern(SummaryPattern&&) noexcept;
  SummaryPattern& operator=(SummaryPattern&&) noexcept;

  const std::string& pattern() const { return m_pattern; }
  const std::vector<std::string>& names() const { return m_names; }  // in the order of their groups

  struct Match {
    std::string text;   // what matched (the summary line, usually)
    Numbers numbers;    // one per name, in names() order
    std::string error;  // non-empty: a group's text is not a number, or a limit was hit
  };
  // The last match in the last kSummaryLines lines of `output` (within its last kSummaryBytes),
  // or nullopt when nothing matches there.
  std::optional<Match> last_match(std::string_view output) const;

 private:
  struct Compiled;
  std::string m_pattern;
  std::vector<std::string> m_names;
  std::unique_ptr<Compiled> m_compiled;
};

// evaluate.pass_when: a muparser expression over the summary's group names and `exit_code`,
// true (non-zero) when the file passes. A name it uses that is no group is a PatternError.
class PassCondition {
 public:
  PassCondition(std::string_view expression, const std::vector<std::string>& names);
  ~PassCondition();
  PassCondition(PassCondition&&) noexcept;
  PassCondition& operator=(PassCondition&&) noexcept;

  const std::string& expression() const { return m_expression; }
  bool holds(const Numbers& numbers, int exit_code) const;

 private:
  struct Compiled;
  std::string m_expression;
  std::unique_ptr<Compiled> m_compiled;
};

// How one checker run ended, as the process runner saw it.
struct FileRun {
  int exit_code = 0;
  int signal = 0;  // non-zero: killed by this signal
  bool timed_out = false;
  double seconds = -1;
  std::string output;  // stdout and stderr together
  std::string ended;   // the runner's words for it ("timed out after 5s", "killed by signal 9 (SIGKILL)")
};

TestResult judge_file(std::string name, const FileRun& run, const SummaryPattern* summary,
                      const PassCondition* pass_when);

// The report flotilla-per-file writes and the scheduler reads:
//   {"per_file": [{"name": "corpus/a.test", "outcome": "pass", "seconds": 0.012, "message": "",
//                  "numbers": {"errors": 0, "tests": 12}}, ...]}
// A number that is NaN is written as null. Bad input throws ReportError naming the source and
// the field, e.g. "r.json: per_file[2]: no 'outcome' field".
std::string write_per_file_report(const std::vector<TestResult>& tests);
std::vector<TestResult> parse_per_file_report(std::string_view text, std::string_view source);

// {file} in each word of the checker's argv replaced by the file's path.
std::vector<std::string> checker_argv(const std::vector<std::string>& command, const std::string& file);

}  // namespace flotilla::suites

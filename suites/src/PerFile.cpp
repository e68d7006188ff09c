// PerFile.cpp — the per-file checker protocol: summary patterns (PCRE2, for its named groups,
// which std::regex lacks), pass_when (muparser, as space constraints), the verdict on one file,
// and the JSON report between flotilla-per-file and the scheduler (PerFile.h).
//
// A checker's output is hostile input: whatever it prints, judging it takes bounded time (the
// summary is matched in a window at the end, under PCRE2 limits) and its report entry is bounded.
#include <flotilla/suites/PerFile.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <fmt/format.h>
#include <muParser.h>

#include "flotilla/search/Expression.h"
#include <pcre2.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <new>
#include <nlohmann/json.hpp>

namespace flotilla::suites {

using results::TestOutcome;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The last lines of a checker's output, for a failure's message.
std::string tail_lines(std::string_view text, std::size_t lines) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
  std::size_t begin = text.size();
  for (std::size_t seen = 0; begin > 0; --begin)
    if (text[begin - 1] == '\n' && ++seen == lines) break;
  return std::string(text.substr(begin));
}

// Where the summary is looked for: the start of the output's last kSummaryLines lines (a final
// newline ends the last line and starts none), and no earlier than kSummaryBytes before its end.
// Progress lines before that are never matched: 40,000 of them took 42 s to match (issue 32).
std::size_t summary_window_start(std::string_view output) {
  const std::size_t floor = output.size() > kSummaryBytes ? output.size() - kSummaryBytes : 0;
  std::size_t end = output.size();
  if (end > floor && output[end - 1] == '\n') --end;
  std::size_t lines = 0;
  for (std::size_t at = end; at > floor; --at)
    if (output[at - 1] == '\n' && ++lines == kSummaryLines) return at;
  return floor;
}

// A message cut to kMaxMessageBytes: its start (the reason) and its end (the output's last lines)
// are kept, and the cut is said. A report entry stays small whatever the checker printed.
std::string bounded_message(std::string text) {
  if (text.size() <= kMaxMessageBytes) return text;
  const std::size_t head = kMaxMessageBytes / 2, tail = kMaxMessageBytes / 2 - 64;  // 64: room for the note
  const std::string note = fmt::format("\n[flotilla: {} bytes cut]\n", text.size() - head - tail);
  return text.substr(0, head) + note + text.substr(text.size() - tail);
}

// A group's text as a number: the whole text must parse ("12", "-3.5", "1e6"), blanks around it allowed.
std::optional<double> to_number(std::string_view text) {
  const std::string copy(text);
  const char* begin = copy.c_str();
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(begin, &end);
  if (end == begin) return std::nullopt;
  while (*end == ' ' || *end == '\t') ++end;
  if (*end != '\0' || errno == ERANGE) return std::nullopt;
  return value;
}

}  // namespace

struct SummaryPattern::Compiled {
  pcre2_code* code = nullptr;
  pcre2_match_context* context = nullptr;  // kMatchLimit and kDepthLimit
  ~Compiled() {
    pcre2_match_context_free(context);
    pcre2_code_free(code);
  }
  std::vector<std::uint32_t> groups;  // the group number of each name
};

SummaryPattern::SummaryPattern(std::string_view pattern)
    : m_pattern(pattern), m_compiled(std::make_unique<Compiled>()) {
  int error = 0;
  PCRE2_SIZE offset = 0;
  m_compiled->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), PCRE2_MULTILINE,
                                   &error, &offset, nullptr);
  if (!m_compiled->code) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error, message, sizeof message);
    throw PatternError(fmt::format("evaluate.summary: '{}': {} at offset {}", pattern,
                                   reinterpret_cast<const char*>(message), offset));
  }
  // PCRE2's own defaults (10,000,000 steps) let one backtracking pattern run for seconds on each
  // attempt; a summary line needs far fewer.
  m_compiled->context = pcre2_match_context_create(nullptr);
  if (!m_compiled->context) throw std::bad_alloc();
  pcre2_set_match_limit(m_compiled->context, kMatchLimit);
  pcre2_set_depth_limit(m_compiled->context, kDepthLimit);
  std::uint32_t count = 0, entry_size = 0;
  PCRE2_SPTR table = nullptr;
  pcre2_pattern_info(m_compiled->code, PCRE2_INFO_NAMECOUNT, &count);
  pcre2_pattern_info(m_compiled->code, PCRE2_INFO_NAMEENTRYSIZE, &entry_size);
  pcre2_pattern_info(m_compiled->code, PCRE2_INFO_NAMETABLE, &table);
  // Each entry: the group number in two bytes (big-endian), then the name, NUL-ended; sorted by
  // name. Put in group order, which is how the user wrote them.
  std::vector<std::pair<std::uint32_t, std::string>> entries;
  for (std::uint32_t i = 0; i < count; ++i) {
    const PCRE2_SPTR entry = table + static_cast<std::size_t>(i) * entry_size;
    entries.emplace_back((entry[0] << 8) | entry[1], reinterpret_cast<const char*>(entry + 2));
  }
  std::sort(entries.begin(), entries.end());
  for (auto& [group, name] : entries) {
    m_compiled->groups.push_back(group);
    m_names.push_back(std::move(name));
  }
  if (m_names.empty())
    throw PatternError(
        fmt::format("evaluate.summary: '{}' has no named group such as (?<errors>\\d+): the groups "
                    "are the numbers it records",
                    pattern));
}

SummaryPattern::~SummaryPattern() = default;
SummaryPattern::SummaryPattern(SummaryPattern&&) noexcept = default;
SummaryPattern& SummaryPattern::operator=(SummaryPattern&&) noexcept = default;

std::optional<SummaryPattern::Match> SummaryPattern::last_match(std::string_view output) const {
  std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> data(
      pcre2_match_data_create_from_pattern(m_compiled->code, nullptr), &pcre2_match_data_free);
  const auto subject = reinterpret_cast<PCRE2_SPTR>(output.data());
  std::optional<Match> last;
  // The whole output is the subject, so that ^ and lookbehinds see what precedes the window;
  // matching starts at the window.
  for (PCRE2_SIZE start = summary_window_start(output); start <= output.size();) {
    const int rc = pcre2_match(m_compiled->code, subject, output.size(), start, 0, data.get(), m_compiled->context);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) {  // a limit: say so, naming the pattern, rather than pretend there was no summary
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(rc, message, sizeof message);
      return Match{.error = fmt::format("summary pattern '{}' gave up: {} (at most {} steps, depth {})", m_pattern,
                                        reinterpret_cast<const char*>(message), kMatchLimit, kDepthLimit)};
    }
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(data.get());
    Match match{.text = std::string(output.substr(ovector[0], ovector[1] - ovector[0]))};
    for (std::size_t i = 0; i < m_names.size(); ++i) {
      const std::uint32_t group = m_compiled->groups[i];
      double value = kNaN;  // the group took no part in the match
      if (group < static_cast<std::uint32_t>(rc) && ovector[2 * group] != PCRE2_UNSET) {
        const auto text = output.substr(ovector[2 * group], ovector[2 * group + 1] - ovector[2 * group]);
        if (auto number = to_number(text))
          value = *number;
        else if (match.error.empty())
          match.error = fmt::format("summary group '{}' matched '{}', which is not a number", m_names[i], text);
      }
      match.numbers.emplace_back(m_names[i], value);
    }
    last = std::move(match);
    start = ovector[1] > ovector[0] ? ovector[1] : ovector[1] + 1;  // an empty match moves on by one
  }
  return last;
}

struct PassCondition::Compiled {
  mu::Parser parser;
  std::vector<double> values;  // the groups' values, then exit_code: muparser reads them by address
};

PassCondition::PassCondition(std::string_view expression, const std::vector<std::string>& names)
    : m_expression(expression), m_compiled(std::make_unique<Compiled>()) {
  auto& c = *m_compiled;
  c.values.assign(names.size() + 1, 0.0);
  if (const auto at = search::assignment_position(expression))
    throw PatternError(fmt::format("evaluate.pass_when: '{}': '=' at column {} assigns a value; compare with ==",
                                   expression, *at + 1));
  try {
    for (std::size_t i = 0; i < names.size(); ++i) c.parser.DefineVar(names[i], &c.values[i]);
    c.parser.DefineVar("exit_code", &c.values.back());
    c.parser.SetExpr(m_expression);
    c.parser.Eval();  // compiles: syntax errors and unknown names now, not per file
  } catch (const mu::Parser::exception_type& e) {
    if (e.GetCode() == mu::ecUNASSIGNABLE_TOKEN)
      throw PatternError(fmt::format("evaluate.pass_when: '{}': unknown name '{}' (known: {}{}exit_code)", expression,
                                     e.GetToken(), fmt::join(names, ", "), names.empty() ? "" : ", "));
    throw PatternError(fmt::format("evaluate.pass_when: '{}': {}", expression, e.GetMsg()));
  }
}

PassCondition::~PassCondition() = default;
PassCondition::PassCondition(PassCondition&&) noexcept = default;
PassCondition& PassCondition::operator=(PassCondition&&) noexcept = default;

bool PassCondition::holds(const Numbers& numbers, int exit_code) const {
  auto& c = *m_compiled;
  for (std::size_t i = 0; i < numbers.size() && i + 1 < c.values.size(); ++i) c.values[i] = numbers[i].second;
  c.values.back() = exit_code;
  const double result = c.parser.Eval();
  // A comparison with a missing (NaN) group is false; so is an infinite result (1/0 passed every file).
  return std::isfinite(result) && result != 0;
}

namespace {

TestResult judge(std::string name, const FileRun& run, const SummaryPattern* summary, const PassCondition* pass_when) {
  TestResult t{.name = std::move(name), .outcome = TestOutcome::pass, .seconds = run.seconds};
  const auto fail = [&](TestOutcome outcome, std::string why) {
    t.outcome = outcome;
    const std::string tail = tail_lines(run.output, 2);
    t.message = tail.empty() ? std::move(why) : why + "\n" + tail;
  };
  if (run.timed_out) return fail(TestOutcome::timeout, run.ended), t;
  if (run.signal != 0) return fail(TestOutcome::error, run.ended), t;
  const std::string exit_text = fmt::format("exit code {}", run.exit_code);
  if (!summary) {
    if (run.exit_code != 0) fail(TestOutcome::fail, exit_text);
    return t;
  }
  const auto match = summary->last_match(run.output);
  if (!match)
    return fail(TestOutcome::error,
                fmt::format("{}: no summary line matches '{}' ({})", t.name, summary->pattern(), exit_text)),
           t;
  t.numbers = match->numbers;
  if (!match->error.empty()) return fail(TestOutcome::error, fmt::format("{}: {}", t.name, match->error)), t;
  const bool passed = pass_when ? pass_when->holds(match->numbers, run.exit_code) : run.exit_code == 0;
  if (passed) return t;
  // The summary, then the line the checker printed before it (usually the last failing check),
  // not the summary a second time.
  t.outcome = TestOutcome::fail;
  t.message = pass_when ? fmt::format("'{}' is false for: {}", pass_when->expression(), match->text)
                        : fmt::format("{}: {}", exit_text, match->text);
  const std::string before = tail_lines(std::string_view(run.output).substr(0, run.output.rfind(match->text)), 1);
  if (!before.empty()) t.message += "\n" + before;
  return t;
}

}  // namespace

TestResult judge_file(std::string name, const FileRun& run, const SummaryPattern* summary,
                      const PassCondition* pass_when) {
  TestResult t = judge(std::move(name), run, summary, pass_when);
  t.message = bounded_message(std::move(t.message));
  return t;
}

std::string write_per_file_report(const std::vector<TestResult>& tests) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& t : tests) {
    nlohmann::ordered_json numbers = nlohmann::ordered_json::object();
    for (const auto& [name, value] : t.numbers)
      numbers[name] = std::isfinite(value) ? nlohmann::ordered_json(value) : nullptr;
    list.push_back({{"name", t.name},
                    {"outcome", results::to_string(t.outcome)},
                    {"seconds", t.seconds},
                    {"message", t.message},
                    {"numbers", std::move(numbers)}});
  }
  // Invalid UTF-8 in a checker's output must not make the report unwritable: replaced.
  return nlohmann::ordered_json{{"per_file", std::move(list)}}.dump(1, ' ', false,
                                                                    nlohmann::json::error_handler_t::replace) +
         "\n";
}

std::vector<TestResult> parse_per_file_report(std::string_view text, std::string_view source) {
  nlohmann::ordered_json doc;  // ordered: the numbers keep the pattern's order
  try {
    doc = nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::ordered_json::exception& e) {  // parse_error, and out_of_range for a number beyond a double
    throw ReportError(fmt::format("{}: not JSON: {}", source, e.what()));
  }
  if (!doc.is_object() || !doc.contains("per_file") || !doc["per_file"].is_array())
    throw ReportError(fmt::format("{}: no 'per_file' list", source));
  std::vector<TestResult> tests;
  const auto& list = doc["per_file"];
  for (std::size_t i = 0; i < list.size(); ++i) {
    const auto& entry = list[i];
    const auto where = fmt::format("{}: per_file[{}]", source, i);
    const auto field = [&](const char* key, auto check) -> const nlohmann::ordered_json& {
      if (!entry.is_object() || !entry.contains(key) || !check(entry[key]))
        throw ReportError(fmt::format("{}: no '{}' field", where, key));
      return entry[key];
    };
    TestResult t;
    t.name = field("name", [](const auto& v) {
               return v.is_string() && !v.empty() && !v.template get<std::string>().empty();
             }).get<std::string>();
    const auto outcome = field("outcome", [](const auto& v) { return v.is_string(); }).get<std::string>();
    const auto parsed = results::test_outcome_from_string(outcome);
    if (!parsed) throw ReportError(fmt::format("{}: outcome '{}' is not a test outcome", where, outcome));
    t.outcome = *parsed;
    if (entry.contains("seconds") && entry["seconds"].is_number()) t.seconds = entry["seconds"].get<double>();
    if (entry.contains("message") && entry["message"].is_string()) t.message = entry["message"].get<std::string>();
    if (entry.contains("numbers")) {
      if (!entry["numbers"].is_object()) throw ReportError(fmt::format("{}: 'numbers' is not an object", where));
      for (const auto& [name, value] : entry["numbers"].items()) {
        if (!value.is_null() && !value.is_number())
          throw ReportError(fmt::format("{}: numbers.{} is not a number", where, name));
        t.numbers.emplace_back(name, value.is_null() ? kNaN : value.get<double>());
      }
    }
    tests.push_back(std::move(t));
  }
  return tests;
}

std::vector<std::string> checker_argv(const std::vector<std::string>& command, const std::string& file) {
  std::vector<std::string> argv;
  for (std::string word : command) {
    for (std::size_t at = word.find("{file}"); at != std::string::npos; at = word.find("{file}", at + file.size()))
      word.replace(at, 6, file);
    argv.push_back(std::move(word));
  }
  return argv;
}

}  // namespace flotilla::suites

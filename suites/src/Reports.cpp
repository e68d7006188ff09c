// Reports.cpp — gtest listings and JSON, ctest listings, JUnit XML (libxml2) and TAP, parsed
// into per-test results. Errors name the file, the line and the field (see Reports.h).
#include <flotilla/suites/Reports.h>
#include <fmt/format.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include <charconv>
#include <cstdlib>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

namespace flotilla::suites {

using results::TestOutcome;

namespace {

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

// Splits into lines without their '\n' (and '\r'); calls visit(line, line_number from 1).
template <class Visit>
void for_each_line(std::string_view text, Visit&& visit) {
  std::size_t number = 0;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    visit(line, ++number);
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
}

std::size_t line_of_byte(std::string_view text, std::size_t byte) {
  std::size_t line = 1;
  for (std::size_t i = 0; i < std::min(byte, text.size()); ++i) line += text[i] == '\n';
  return line;
}

// A whole JSON document; a syntax error is named by its line. A number beyond a double (1e999)
// is nlohmann's out_of_range, not a parse_error: refused the same way.
nlohmann::json parse_json_document(std::string_view text, std::string_view source) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& error) {
    throw ReportError(fmt::format("{}:{}: not JSON: {}", source, line_of_byte(text, error.byte), error.what()));
  } catch (const nlohmann::json::exception& error) {
    throw ReportError(fmt::format("{}: not JSON: {}", source, error.what()));
  }
}

// "0.25s" (gtest JSON) or "0.25" (JUnit); nullopt when it is not a non-negative number.
std::optional<double> parse_seconds(std::string_view text) {
  text = trim(text);
  if (!text.empty() && text.back() == 's') text.remove_suffix(1);
  if (text.empty()) return std::nullopt;
  const std::string copy(text);
  char* end = nullptr;
  const double value = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || !(value >= 0)) return std::nullopt;
  return value;
}

// --- gtest JSON -----------------------------------------------------------------------------

const nlohmann::json& member(const nlohmann::json& object, const char* key, std::string_view source,
                             const std::string& where) {
  if (!object.is_object() || !object.contains(key)) {
    throw ReportError(fmt::format("{}: {}: no '{}' field", source, where, key));
  }
  return object.at(key);
}

std::string string_member(const nlohmann::json& object, const char* key, std::string_view source,
                          const std::string& where) {
  const auto& value = member(object, key, source, where);
  if (!value.is_string()) throw ReportError(fmt::format("{}: {}.{}: not a string", source, where, key));
  return value.get<std::string>();
}

TestResult gtest_json_case(const nlohmann::json& test, const std::string& suite, std::string_view source,
                           const std::string& where) {
  TestResult result;
  result.name = suite + "." + string_member(test, "name", source, where);
  const std::string status = test.contains("status") ? string_member(test, "status", source, where) : "RUN";
  const std::string outcome = test.contains("result") ? string_member(test, "result", source, where) : "COMPLETED";
  if (test.contains("time")) {
    const auto seconds = parse_seconds(string_member(test, "time", source, where));
    if (!seconds) throw ReportError(fmt::format("{}: {}.time: not a duration", source, where));
    result.seconds = *seconds;
  }
  if (status == "NOTRUN" || outcome == "SKIPPED" || outcome == "SUPPRESSED") {
    result.outcome = TestOutcome::skip;
  } else if (test.contains("failures") && !test.at("failures").empty()) {
    if (!test.at("failures").is_array()) throw ReportError(fmt::format("{}: {}.failures: not an array", source, where));
    result.outcome = TestOutcome::fail;
    const auto& failure = test.at("failures").at(0);
    if (failure.is_object() && failure.contains("failure") && failure.at("failure").is_string()) {
      result.message = short_message(failure.at("failure").get<std::string>());
    }
  } else if (status != "RUN") {
    throw ReportError(fmt::format("{}: {}.status: unknown status '{}'", source, where, status));
  }
  return result;
}

// --- JUnit XML ------------------------------------------------------------------------------

struct XmlDocFree {
  void operator()(xmlDoc* doc) const { xmlFreeDoc(doc); }
};

std::optional<std::string> attribute(xmlNode* node, const char* name) {
  xmlChar* value = xmlGetProp(node, reinterpret_cast<const xmlChar*>(name));
  if (value == nullptr) return std::nullopt;
  std::string text(reinterpret_cast<const char*>(value));
  xmlFree(value);
  return text;
}

std::string content(xmlNode* node) {
  xmlChar* value = xmlNodeGetContent(node);
  if (value == nullptr) return {};
  std::string text(reinterpret_cast<const char*>(value));
  xmlFree(value);
  return text;
}

bool named(xmlNode* node, const char* name) {
  return node->type == XML_ELEMENT_NODE && xmlStrcmp(node->name, reinterpret_cast<const xmlChar*>(name)) == 0;
}

TestResult junit_case(xmlNode* node, std::string_view source) {
  const long line = xmlGetLineNo(node);
  const auto name = attribute(node, "name");
  if (!name || name->empty()) throw ReportError(fmt::format("{}:{}: <testcase> has no 'name' attribute", source, line));
  TestResult result;
  const auto classname = attribute(node, "classname");
  // ctest --output-junit writes classname = name: the test's name alone, as ctest lists it.
  result.name = classname && !classname->empty() && *classname != *name ? *classname + "." + *name : *name;
  if (const auto time = attribute(node, "time")) {
    const auto seconds = parse_seconds(*time);
    if (!seconds)
      throw ReportError(fmt::format("{}:{}: <testcase> 'time' is not a duration: '{}'", source, line, *time));
    result.seconds = *seconds;
  }
  // gtest writes disabled tests as status="notrun", and skipped ones as result="skipped".
  if (attribute(node, "status") == "notrun" || attribute(node, "result") == "skipped")
    result.outcome = TestOutcome::skip;
  for (xmlNode* child = node->children; child != nullptr; child = child->next) {
    const bool failure = named(child, "failure"), error = named(child, "error");
    if (named(child, "skipped")) {
      // pytest writes an expected failure (xfail) as <skipped type="pytest.xfail">: the test did
      // what it should, as lit's XFAIL does (docs/tests.md).
      result.outcome = attribute(child, "type") == "pytest.xfail" ? TestOutcome::pass : TestOutcome::skip;
    } else if (failure || error) {
      result.outcome = failure ? TestOutcome::fail : TestOutcome::error;
      const auto message = attribute(child, "message");
      result.message = short_message(message && !message->empty() ? *message : content(child));
      break;
    }
  }
  return result;
}

void collect_junit(xmlNode* node, std::string_view source, std::vector<TestResult>& out) {
  for (; node != nullptr; node = node->next) {
    if (named(node, "testcase")) {
      out.push_back(junit_case(node, source));
    } else if (node->type == XML_ELEMENT_NODE) {
      collect_junit(node->children, source, out);
    }
  }
}

// --- TAP ------------------------------------------------------------------------------------

struct TapState {
  std::vector<TestResult> results;
  std::map<std::string, std::size_t, std::less<>> line_of_name;
  std::optional<long> plan;
  bool in_yaml = false;
  std::string bail_out;
};

// `line` starts with `word` followed by the end or a blank ("okay" is not "ok").
bool is_word(std::string_view line, std::string_view word) {
  return line.starts_with(word) &&
         (line.size() == word.size() || line[word.size()] == ' ' || line[word.size()] == '\t');
}

void tap_test_line(TapState& state, std::string_view line, std::size_t number, std::string_view source) {
  const bool ok = line.starts_with("ok");
  std::string_view rest = trim(line.substr(ok ? 2 : 6));
  long test_number = static_cast<long>(state.results.size()) + 1;
  if (!rest.empty() && std::isdigit(static_cast<unsigned char>(rest.front()))) {
    long given = 0;
    const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), given);
    if (ec != std::errc() || given != test_number) {
      throw ReportError(fmt::format("{}:{}: test number {} out of sequence (expected {})", source, number,
                                    std::string(rest.substr(0, static_cast<std::size_t>(end - rest.data()))),
                                    test_number));
    }
    rest = trim(rest.substr(static_cast<std::size_t>(end - rest.data())));
  }
  std::string_view directive;
  if (const auto hash = rest.find(" #"); hash != std::string_view::npos || rest.starts_with("#")) {
    const std::size_t at = rest.starts_with("#") ? 0 : hash + 1;
    directive = trim(rest.substr(at + 1));
    rest = trim(rest.substr(0, at));
  }
  if (rest.starts_with("-")) rest = trim(rest.substr(1));
  TestResult result;
  result.name = rest.empty() ? fmt::format("test {}", test_number) : std::string(rest);
  const auto upper_starts = [&](std::string_view word) {
    if (directive.size() < word.size()) return false;
    for (std::size_t i = 0; i < word.size(); ++i) {
      if (std::toupper(static_cast<unsigned char>(directive[i])) != word[i]) return false;
    }
    return true;
  };
  // TODO tests are expected to fail: TAP does not count them, so neither does the gate.
  if (upper_starts("SKIP") || (!ok && upper_starts("TODO")))
    result.outcome = TestOutcome::skip;
  else
    result.outcome = ok ? TestOutcome::pass : TestOutcome::fail;
  if (const auto [it, fresh] = state.line_of_name.emplace(result.name, number); !fresh) {
    throw ReportError(fmt::format("{}:{}: test name '{}' repeats (line {}); flotilla matches tests by name", source,
                                  number, result.name, it->second));
  }
  state.results.push_back(std::move(result));
}

void tap_line(TapState& state, std::string_view line, std::size_t number, std::string_view source) {
  const std::string_view stripped = trim(line);
  if (state.in_yaml) {
    if (stripped == "...")
      state.in_yaml = false;
    else if (stripped.starts_with("message:") && !state.results.empty() && state.results.back().message.empty()) {
      std::string_view message = trim(stripped.substr(8));
      if (message.size() >= 2 && (message.front() == '\'' || message.front() == '"'))
        message = message.substr(1, message.size() - 2);
      state.results.back().message = short_message(message);
    }
    return;
  }
  if (stripped == "---" && line.starts_with(" ")) {
    state.in_yaml = true;
  } else if (is_word(line, "ok") || is_word(line, "not ok")) {
    tap_test_line(state, line, number, source);
  } else if (line.starts_with("1..")) {
    long count = 0;
    const std::string_view digits = line.substr(3);
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), count);
    if (ec != std::errc() || count < 0)
      throw ReportError(fmt::format("{}:{}: plan: '{}' is not '1..N'", source, number, line));
    if (state.plan) throw ReportError(fmt::format("{}:{}: plan: a second plan", source, number));
    state.plan = count;
  } else if (line.starts_with("Bail out!")) {
    state.bail_out = std::string(trim(line.substr(9)));
  }
  // Anything else (comments, "TAP version 13", the tests' own output) is not TAP's business.
}

}  // namespace

std::string short_message(std::string_view text, std::size_t max_lines) {
  std::string out;
  std::size_t kept = 0;
  for_each_line(text, [&](std::string_view line, std::size_t) {
    line = trim(line);
    if (line.empty() || kept == max_lines) return;
    if (!out.empty()) out += " | ";
    out += line;
    ++kept;
  });
  return out;
}

std::vector<std::string> parse_gtest_list(std::string_view text, std::string_view source) {
  std::vector<std::string> names;
  std::string suite;
  for_each_line(text, [&](std::string_view line, std::size_t number) {
    const std::string_view word = trim(line.substr(0, line.find('#')));
    if (word.empty()) return;
    if (!line.starts_with(" ")) {
      // Before the first suite, a line is the program's own output (gtest_main prints
      // "Running main() from ..."); after it, the listing is broken.
      if (!word.ends_with(".") && suite.empty()) return;
      if (!word.ends_with(".")) {
        throw ReportError(fmt::format("{}:{}: test suite: '{}' does not end with '.'", source, number, word));
      }
      suite = std::string(word);
    } else if (suite.empty()) {
      throw ReportError(fmt::format("{}:{}: test '{}' comes before any test suite", source, number, word));
    } else {
      names.push_back(suite + std::string(word));
    }
  });
  return names;
}

std::vector<std::string> parse_ctest_list(std::string_view text, std::string_view source) {
  const nlohmann::json doc = parse_json_document(text, source);
  const auto& tests = member(doc, "tests", source, "document");
  if (!tests.is_array()) throw ReportError(fmt::format("{}: tests: not an array", source));
  std::vector<std::string> names;
  for (std::size_t i = 0; i < tests.size(); ++i) {
    names.push_back(string_member(tests[i], "name", source, fmt::format("tests[{}]", i)));
  }
  return names;
}

std::vector<TestResult> parse_gtest_json(std::string_view text, std::string_view source) {
  const nlohmann::json doc = parse_json_document(text, source);
  const auto& suites = member(doc, "testsuites", source, "document");
  if (!suites.is_array()) throw ReportError(fmt::format("{}: testsuites: not an array", source));
  std::vector<TestResult> results;
  for (std::size_t s = 0; s < suites.size(); ++s) {
    const std::string where = fmt::format("testsuites[{}]", s);
    const std::string suite = string_member(suites[s], "name", source, where);
    const auto& tests = member(suites[s], "testsuite", source, where);
    if (!tests.is_array()) throw ReportError(fmt::format("{}: {}.testsuite: not an array", source, where));
    for (std::size_t t = 0; t < tests.size(); ++t) {
      results.push_back(gtest_json_case(tests[t], suite, source, fmt::format("{}.testsuite[{}]", where, t)));
    }
  }
  return results;
}

std::vector<TestResult> parse_junit_xml(std::string_view text, std::string_view source) {
  const std::string url(source);
  std::unique_ptr<xmlDoc, XmlDocFree> doc(
      xmlReadMemory(text.data(), static_cast<int>(text.size()), url.c_str(), nullptr,
                    XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_HUGE));
  if (!doc) {
    const xmlError* error = xmlGetLastError();
    throw ReportError(fmt::format("{}:{}: not XML: {}", source, error ? error->line : 0,
                                  error && error->message ? trim(error->message) : "unreadable"));
  }
  xmlNode* root = xmlDocGetRootElement(doc.get());
  if (root == nullptr || !(named(root, "testsuites") || named(root, "testsuite"))) {
    throw ReportError(fmt::format("{}:{}: root element: expected <testsuites> or <testsuite>", source,
                                  root ? xmlGetLineNo(root) : 1));
  }
  std::vector<TestResult> results;
  collect_junit(root, source, results);
  return results;
}

// How many planned but unreported tests a TAP report may stand in for (parse_tap).
constexpr long kMaxMissingPlanned = 1'000'000;

std::vector<TestResult> parse_tap(std::string_view text, std::string_view source) {
  TapState state;
  for_each_line(text, [&](std::string_view line, std::size_t number) { tap_line(state, line, number, source); });
  const long reported = static_cast<long>(state.results.size());
  if (state.plan && *state.plan < reported) {
    throw ReportError(fmt::format("{}: plan: 1..{} but {} tests reported", source, *state.plan, reported));
  }
  // A plan is the report's own claim: one far beyond what was reported (1..999999999999) is a
  // broken report, not a million tests to stand in for, and must not take the memory to do it.
  if (state.plan && *state.plan - reported > kMaxMissingPlanned) {
    throw ReportError(fmt::format("{}: plan: 1..{} announces {} more tests than the {} reported; a report missing "
                                  "more than {} planned tests is not read",
                                  source, *state.plan, *state.plan - reported, reported, kMaxMissingPlanned));
  }
  // Planned tests that never reported (a crash, a bail-out) count as errors, never as passes.
  const std::string why =
      state.bail_out.empty() ? "did not report (the run ended early)" : "Bail out! " + state.bail_out;
  for (long n = reported + 1; state.plan && n <= *state.plan; ++n) {
    state.results.push_back({fmt::format("test {}", n), TestOutcome::error, -1, why});
  }
  return state.results;
}

}  // namespace flotilla::suites

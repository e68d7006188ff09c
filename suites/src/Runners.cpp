// Runners.cpp — lit's and pytest's listings and reports (Runners.h).
#include <flotilla/suites/Runners.h>
#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>
#include <optional>

namespace flotilla::suites {

using results::TestOutcome;

namespace {

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

struct LitTest {
  std::string name, path;
};

// lit prints, for --show-suites, "  NAME - N tests" and below it "    Exec Root  : DIR", and for
// --show-tests, after "-- Available Tests --", "  NAME :: PATH" per test.
std::vector<LitTest> parse_lit_listing(std::string_view text, std::string_view source) {
  std::map<std::string, std::string, std::less<>> exec_roots;
  std::string suite;  // the suite whose block is being read
  std::vector<LitTest> tests;
  bool in_tests = false, seen_header = false;
  const auto lines = lines_of(text);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    const std::size_t number = i + 1;
    if (line.starts_with("-- ")) {
      in_tests = line == "-- Available Tests --";
      seen_header = seen_header || in_tests;
      continue;
    }
    if (!in_tests) {
      if (line.starts_with("  ") && !line.starts_with("   ")) {
        const auto dash = line.rfind(" - ");
        suite = std::string(line.substr(2, dash == std::string_view::npos ? std::string_view::npos : dash - 2));
      } else if (const auto at = line.find("Exec Root  : "); at != std::string_view::npos && line.starts_with("    ")) {
        const std::string root(line.substr(at + 13));
        if (auto [it, fresh] = exec_roots.emplace(suite, root); !fresh && it->second != root)
          throw ReportError(fmt::format("{}:{}: two test suites are named '{}' ({} and {}): their tests' names "
                                        "would be the same",
                                        source, number, suite, it->second, root));
      }
      continue;
    }
    if (line.empty()) continue;
    const auto sep = line.find(" :: ");
    if (!line.starts_with("  ") || sep == std::string_view::npos)
      throw ReportError(fmt::format("{}:{}: expected a test as '  SUITE :: PATH', got '{}'", source, number, line));
    const std::string_view name = line.substr(2, sep - 2), path = line.substr(sep + 4);
    const auto root = exec_roots.find(name);
    if (root == exec_roots.end())
      throw ReportError(fmt::format("{}:{}: test suite '{}' has no 'Exec Root' above (run lit with --show-suites "
                                    "--show-tests)",
                                    source, number, name));
    tests.push_back({std::string(line.substr(2)), root->second + "/" + std::string(path)});
  }
  if (!seen_header && !text.empty())
    throw ReportError(fmt::format("{}: no '-- Available Tests --' line: not lit --show-tests output", source));
  return tests;
}

// The part of lit's output that says why a test failed: its command's stderr (FileCheck's
// error), else its stdout, else all of it.
std::string lit_message(std::string_view output) {
  for (const std::string_view header : {"Command Output (stderr):\n--\n", "Command Output (stdout):\n--\n"})
    if (const auto at = output.find(header); at != std::string_view::npos) return short_message(output.substr(at + header.size()));
  return short_message(output);
}

std::optional<TestOutcome> lit_outcome(std::string_view code) {
  if (code == "PASS" || code == "FLAKYPASS" || code == "XFAIL") return TestOutcome::pass;
  if (code == "FAIL" || code == "XPASS") return TestOutcome::fail;
  if (code == "UNRESOLVED") return TestOutcome::error;
  if (code == "TIMEOUT") return TestOutcome::timeout;
  if (code == "UNSUPPORTED" || code == "EXCLUDED" || code == "SKIPPED") return TestOutcome::skip;
  return std::nullopt;
}

}  // namespace

std::vector<std::string> parse_lit_list(std::string_view text, std::string_view source) {
  std::vector<std::string> names;
  for (auto& t : parse_lit_listing(text, source)) names.push_back(std::move(t.name));
  return names;
}

std::vector<std::string> lit_test_paths(std::string_view text, std::string_view source) {
  std::vector<std::string> paths;
  for (auto& t : parse_lit_listing(text, source)) paths.push_back(std::move(t.path));
  return paths;
}

std::vector<TestResult> parse_lit_json(std::string_view text, std::string_view source) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw ReportError(fmt::format("{}: not JSON: {}", source, e.what()));
  }
  if (!doc.is_object() || !doc.contains("tests") || !doc.at("tests").is_array())
    throw ReportError(fmt::format("{}: no 'tests' array: not a lit JSON report (lit -o FILE)", source));
  std::vector<TestResult> results;
  const auto& tests = doc.at("tests");
  for (std::size_t i = 0; i < tests.size(); ++i) {
    const auto& t = tests[i];
    const auto field = [&](const char* key) -> const nlohmann::json& {
      if (!t.is_object() || !t.contains(key) || !t.at(key).is_string())
        throw ReportError(fmt::format("{}: tests[{}]: no '{}' field", source, i, key));
      return t.at(key);
    };
    TestResult r;
    r.name = field("name").get<std::string>();
    const std::string code = field("code").get<std::string>();
    const auto outcome = lit_outcome(code);
    if (!outcome) throw ReportError(fmt::format("{}: tests[{}].code: unknown result code '{}'", source, i, code));
    r.outcome = *outcome;
    if (t.contains("elapsed") && t.at("elapsed").is_number()) r.seconds = t.at("elapsed").get<double>();
    if (r.outcome != TestOutcome::pass && t.contains("output") && t.at("output").is_string())
      r.message = lit_message(t.at("output").get<std::string>());
    results.push_back(std::move(r));
  }
  return results;
}

std::vector<std::string> parse_pytest_list(std::string_view text, std::string_view source) {
  std::vector<std::string> ids;
  const auto lines = lines_of(text);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    if (line.empty()) break;  // the summary follows
    if (line.find("::") == std::string_view::npos)
      throw ReportError(fmt::format("{}:{}: '{}' is not a pytest node id (FILE::TEST); a -q in evaluate.command "
                                    "makes --collect-only list files instead of tests",
                                    source, i + 1, line));
    ids.emplace_back(line);
  }
  return ids;
}

std::string pytest_junit_name(std::string_view node_id) {
  const std::size_t bracket = node_id.find('[');
  std::string path(node_id.substr(0, bracket));
  const std::string_view params = bracket == std::string_view::npos ? std::string_view() : node_id.substr(bracket);
  std::string file = path.substr(0, path.find("::"));
  const std::string rest = file.size() < path.size() ? path.substr(file.size() + 2) : std::string();
  if (file.ends_with(".py")) file.resize(file.size() - 3);
  for (char& c : file)
    if (c == '/') c = '.';
  std::string name = file;
  for (std::size_t begin = 0; !rest.empty();) {  // TestClass::test_a -> .TestClass.test_a
    const std::size_t end = rest.find("::", begin);
    name += "." + rest.substr(begin, end - begin);
    if (end == std::string::npos) break;
    begin = end + 2;
  }
  return name + std::string(params);
}

void rename_reported(std::vector<TestResult>& reported, const std::vector<std::string>& discovered,
                     std::string (*report_name)(std::string_view), std::string_view source) {
  std::map<std::string, std::size_t> by_key;  // derived name -> discovered index; npos: two derive it
  for (std::size_t i = 0; i < discovered.size(); ++i) {
    auto [it, fresh] = by_key.emplace(report_name(discovered[i]), i);
    if (!fresh && it->second != i) it->second = std::string::npos;
  }
  for (auto& r : reported) {
    const auto it = by_key.find(r.name);
    if (it == by_key.end()) continue;
    if (it->second == std::string::npos) {
      std::vector<std::string> both;
      for (const auto& name : discovered)
        if (report_name(name) == r.name) both.push_back(name);
      throw ReportError(fmt::format("{}: test '{}' stands for more than one discovered test ({}): the report cannot "
                                    "tell them apart",
                                    source, r.name, fmt::join(both, ", ")));
    }
    r.name = discovered[it->second];
  }
}

}  // namespace flotilla::suites

// Protocols.cpp — the registry of suite protocols (Protocols.h): one row per kind, explicit, so
// nothing depends on static initialisers a linker may drop from a static library.
#include <flotilla/suites/PerFile.h>
#include <flotilla/suites/Protocols.h>

#include <stdexcept>
#include <string>

namespace flotilla::suites {

namespace {

const ReportFormat kGtestJson{"json", &parse_gtest_json};
const ReportFormat kJunitXml{"xml", &parse_junit_xml, "<testsuite tests=\"0\"/>\n"};
const ReportFormat kTap{"tap", &parse_tap};
const ReportFormat kPerFileJson{"json", &parse_per_file_report};
const ReportFormat kLitJson{"json", &parse_lit_json, "{\"tests\": []}\n"};

constexpr RequiredPlaceholder kReport{"report", "must write its report to {report} (evaluate.suite)"};

// Selection texts (Selection::Text).
// ctest -I: "start,end,stride,n1,n2,..." with start 0 (no range), then the tests' numbers from 1.
std::string ctest_selection(const std::vector<std::string>&, const std::vector<std::int64_t>& chosen) {
  std::string text = "0,0,0";
  for (auto i : chosen) text += "," + std::to_string(i + 1);
  return text + "\n";
}

// A gtest flag file: a filter of thousands of names would pass the kernel's limit on one
// argument, so gtest reads it from a file (--gtest_flagfile).
std::string gtest_filter_flags(const std::vector<std::string>& names, const std::vector<std::int64_t>& chosen) {
  std::string filter = "--gtest_filter=";
  for (std::size_t i = 0; i < chosen.size(); ++i)
    filter += (i ? ":" : "") + names[static_cast<std::size_t>(chosen[i])];
  return filter + "\n";
}

// One selector a line (lit reads them as @FILE; pytest's become arguments).
std::string one_a_line(const std::vector<std::string>& selectors, const std::vector<std::int64_t>& chosen) {
  std::string text;
  for (auto i : chosen) text += selectors[static_cast<std::size_t>(i)] + "\n";
  return text;
}

std::vector<SuiteProtocol> make_registry() {
  return {
      {.kind = SuiteKind::exit, .name = "exit"},
      // gtest divides its tests itself (GTEST_SHARD_INDEX); the re-run gets its failures as a
      // filter in a flag file. Reports: --gtest_output=json:REPORT.
      {.kind = SuiteKind::gtest,
       .name = "gtest",
       .report = kGtestJson,
       .discovery = {{"--gtest_list_tests"}, &parse_gtest_list},
       .selection = {.sharding = Selection::Sharding::runner,
                     .total_env = "GTEST_TOTAL_SHARDS",
                     .index_env = "GTEST_SHARD_INDEX",
                     .runner_assignment = &assign_gtest_shards,
                     .rerun_text = &gtest_filter_flags,
                     .rerun_extension = "flags",
                     .shard_arguments = {"--gtest_output=json:{report}"},
                     .rerun_arguments = {"--gtest_flagfile={selection}", "--gtest_output=json:{report}"}},
       .reruns = true},
      // flotilla divides the tests and gives a shard (and the re-run) their numbers with -I FILE,
      // and --output-junit REPORT.
      {.kind = SuiteKind::ctest,
       .name = "ctest",
       .report = kJunitXml,
       .discovery = {{"--show-only=json-v1"}, &parse_ctest_list},
       .selection = {.sharding = Selection::Sharding::flotilla,
                     .shard_text = &ctest_selection,
                     .rerun_text = &ctest_selection,
                     .shard_extension = "ctest",
                     .rerun_extension = "ctest",
                     .shard_arguments = {"-I", "{selection}", "--output-junit", "{report}"},
                     .rerun_arguments = {"-I", "{selection}", "--output-junit", "{report}"}},
       .reruns = true},
      // flotilla lists the tests (--show-suites --show-tests PATHS), divides them, and gives each
      // shard its tests' paths in a file lit reads as @FILE, and -o REPORT (lit's JSON: exact
      // names and result codes, where its xunit output rewrites '.' and folds result codes).
      {.kind = SuiteKind::lit,
       .name = "lit",
       .report = kLitJson,
       .discovery = {.arguments = {"--show-suites", "--show-tests"},
                     .parse = &parse_lit_list,
                     .paths = true,
                     .selectors = &lit_test_paths},
       .selection = {.sharding = Selection::Sharding::flotilla,
                     .shard_text = &one_a_line,
                     .rerun_text = &one_a_line,
                     .shard_extension = "args",
                     .rerun_extension = "args",
                     .shard_arguments = {"--output={report}", "@{selection}"},
                     .rerun_arguments = {"--output={report}", "@{selection}"}},
       .reruns = true},
      // pytest: --collect-only -q PATHS lists node ids; each shard gets its node ids as arguments
      // and --junitxml=REPORT, whose classname.name is mapped back to the node ids.
      {.kind = SuiteKind::pytest,
       .name = "pytest",
       .report = kJunitXml,
       .discovery = {.arguments = {"--collect-only", "-q"},
                     .parse = &parse_pytest_list,
                     .paths = true,
                     .report_name = &pytest_junit_name},
       .selection = {.sharding = Selection::Sharding::flotilla,
                     .shard_text = &one_a_line,
                     .rerun_text = &one_a_line,
                     .shard_extension = "args",
                     .rerun_extension = "args",
                     .shard_arguments = {"--junitxml={report}", "{selectors}"},
                     .rerun_arguments = {"--junitxml={report}", "{selectors}"}},
       .reruns = true},
      {.kind = SuiteKind::files,
       .name = "files",
       .placeholders = {"report", "files"},
       .required = {kReport, {"files", "must read its list of test files from {files}"}},
       .file_list = true,
       .report_chosen = true},
      // flotilla-per-file runs the command once per file and writes the report itself.
      {.kind = SuiteKind::per_file,
       .name = "per_file",
       .placeholders = {"file", "tmpdir"},
       .required = {{"file", "must name the file it checks as {file} (suite = per_file)"}},
       .file_list = true,
       .report = kPerFileJson,
       .per_file_checker = true},
      {.kind = SuiteKind::junit,
       .name = "junit",
       .placeholders = {"report"},
       .required = {kReport},
       .self_sharded = true,
       .report = kJunitXml,
       .files_report = true},
      {.kind = SuiteKind::tap,
       .name = "tap",
       .placeholders = {"report"},
       .required = {kReport},
       .self_sharded = true,
       .report = kTap,
       .files_report = true},
  };
}

}  // namespace

const std::vector<SuiteProtocol>& suite_protocols() {
  static const std::vector<SuiteProtocol> registry = make_registry();
  return registry;
}

const SuiteProtocol& suite_protocol(SuiteKind kind) {
  for (const auto& p : suite_protocols())
    if (p.kind == kind) return p;
  throw std::logic_error("suite kind without a protocol");  // every enumerator has a row
}

const SuiteProtocol* find_suite_protocol(std::string_view name) {
  for (const auto& p : suite_protocols())
    if (p.name == name) return &p;
  return nullptr;
}

std::string suite_protocol_names() {
  std::string names;
  for (const auto& p : suite_protocols()) names += (names.empty() ? "" : ", ") + std::string(p.name);
  return names;
}

std::string files_report_names() {
  std::string names;
  for (const auto& p : suite_protocols())
    if (p.files_report) names += (names.empty() ? "" : ", ") + std::string(p.name);
  return names;
}

std::vector<std::string> selection_arguments(const std::vector<std::string_view>& arguments, std::string_view report,
                                             std::string_view selection_file, std::string_view selection_text) {
  const auto replace = [](std::string word, std::string_view name, std::string_view value) {
    for (auto at = word.find(name); at != std::string::npos; at = word.find(name, at + value.size()))
      word.replace(at, name.size(), value);
    return word;
  };
  std::vector<std::string> words;
  for (const auto argument : arguments) {
    if (argument == "{selectors}") {
      std::size_t start = 0;
      while (start < selection_text.size()) {
        auto end = selection_text.find('\n', start);
        if (end == std::string_view::npos) end = selection_text.size();
        if (end > start) words.emplace_back(selection_text.substr(start, end - start));
        start = end + 1;
      }
      continue;
    }
    words.push_back(replace(replace(std::string(argument), "{report}", report), "{selection}", selection_file));
  }
  return words;
}

std::string_view to_string(SuiteKind kind) { return suite_protocol(kind).name; }

std::optional<SuiteKind> suite_kind_from_string(std::string_view text) {
  if (const auto* p = find_suite_protocol(text)) return p->kind;
  return std::nullopt;
}

}  // namespace flotilla::suites

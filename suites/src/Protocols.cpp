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

std::vector<SuiteProtocol> make_registry() {
  return {
      {.kind = SuiteKind::exit, .name = "exit"},
      // flotilla adds GTEST_SHARD_INDEX and --gtest_output=json:REPORT itself.
      {.kind = SuiteKind::gtest,
       .name = "gtest",
       .report = kGtestJson,
       .discovery = {{"--gtest_list_tests"}, &parse_gtest_list},
       .reruns = true},
      // flotilla adds -I with the shard's test numbers and --output-junit REPORT itself.
      {.kind = SuiteKind::ctest,
       .name = "ctest",
       .report = kJunitXml,
       .discovery = {{"--show-only=json-v1"}, &parse_ctest_list},
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
       .selection = {.by_arguments = true, .from_file = "@", .report_option = "--output="},
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
       .selection = {.by_arguments = true, .report_option = "--junitxml="},
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
       .report = kPerFileJson},
      {.kind = SuiteKind::junit,
       .name = "junit",
       .placeholders = {"report"},
       .required = {kReport},
       .self_sharded = true,
       .report = kJunitXml},
      {.kind = SuiteKind::tap,
       .name = "tap",
       .placeholders = {"report"},
       .required = {kReport},
       .self_sharded = true,
       .report = kTap},
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

std::string_view to_string(SuiteKind kind) { return suite_protocol(kind).name; }

std::optional<SuiteKind> suite_kind_from_string(std::string_view text) {
  if (const auto* p = find_suite_protocol(text)) return p->kind;
  return std::nullopt;
}

}  // namespace flotilla::suites

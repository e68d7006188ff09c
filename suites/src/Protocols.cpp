// Protocols.cpp — the registry of suite protocols (Protocols.h): one row per kind, explicit, so
// nothing depends on static initialisers a linker may drop from a static library.
#include <flotilla/suites/PerFile.h>
#include <flotilla/suites/Protocols.h>

#include <stdexcept>
#include <string>

namespace flotilla::suites {

namespace {

const ReportFormat kGtestJson{"json", &parse_gtest_json};
const ReportFormat kJunitXml{"xml", &parse_junit_xml};
const ReportFormat kTap{"tap", &parse_tap};
const ReportFormat kPerFileJson{"json", &parse_per_file_report};

constexpr RequiredPlaceholder kReport{"report", "must write its report to {report} (evaluate.suite)"};

std::vector<SuiteProtocol> make_registry() {
  return {
      {.kind = SuiteKind::exit, .name = "exit"},
      // flotilla adds GTEST_SHARD_INDEX and --gtest_output=json:REPORT itself.
      {.kind = SuiteKind::gtest,
       .name = "gtest",
       .report = kGtestJson,
       .discovery = {"--gtest_list_tests", &parse_gtest_list},
       .reruns = true},
      // flotilla adds -I with the shard's test numbers and --output-junit REPORT itself.
      {.kind = SuiteKind::ctest,
       .name = "ctest",
       .report = kJunitXml,
       .discovery = {"--show-only=json-v1", &parse_ctest_list},
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

// Runners.h — the listings and reports of two test runners that flotilla shards itself, LLVM lit
// and pytest (evaluate.suite = lit | pytest; docs/tests.md). Pure: functions over text.
//
// Names are the ones each runner lists, so discovery, reports and re-runs agree:
//   lit     "SUITE :: PATH/IN/SUITE.txt" (lit --show-tests; its JSON report, -o, writes the same)
//   pytest  the node id, "tests/test_x.py::TestClass::test_a[1-2]" (pytest --collect-only -q)
// Each test also has a selector, the argument that makes the runner run it alone: lit, the
// test's path (the suite's exec root, then its path in the suite); pytest, the node id itself.
// Errors throw ReportError naming the file and the line, like Reports.h.
#pragma once

#include <flotilla/suites/Reports.h>

#include <string>
#include <string_view>
#include <vector>

namespace flotilla::suites {

// `lit --show-suites --show-tests PATH...`: the tests' names, in lit's order.
std::vector<std::string> parse_lit_list(std::string_view text, std::string_view source);
// The same listing: each test's path, for passing it back to lit (same order as the names).
std::vector<std::string> lit_test_paths(std::string_view text, std::string_view source);
// lit's JSON report (`-o FILE`). Codes: PASS, FLAKYPASS, XFAIL -> pass; FAIL, XPASS -> fail;
// UNRESOLVED -> error; TIMEOUT -> timeout; UNSUPPORTED -> skip. The message is the output from
// its command's stderr (FileCheck's error), else its stdout, else the whole output.
std::vector<TestResult> parse_lit_json(std::string_view text, std::string_view source);

// `pytest --collect-only -q PATH...`: node ids, one a line, up to the first blank line (the
// summary "N tests collected in 0.1s" after it is not a test).
std::vector<std::string> parse_pytest_list(std::string_view text, std::string_view source);
// The name flotilla's JUnit parser gives the test pytest --junitxml writes for `node_id`:
// "classname.name", as pytest derives them (junitxml.py, mangle_test_address): the file's path
// without ".py" with '/' as '.', then the classes, then the function with its parameters.
std::string pytest_junit_name(std::string_view node_id);

// Renames reported tests to the discovered names they stand for, where a report writes names
// its runner derives from them (pytest: pytest_junit_name). A reported name that two discovered
// names derive throws, naming both; a name none derives is kept (assembly then rejects it).
void rename_reported(std::vector<TestResult>& reported, const std::vector<std::string>& discovered,
                     std::string (*report_name)(std::string_view), std::string_view source);

}  // namespace flotilla::suites

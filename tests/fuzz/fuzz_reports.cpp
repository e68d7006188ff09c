// fuzz_reports — test listings and reports (suites/include/flotilla/suites/Reports.h): JUnit XML
// (libxml2), TAP, GoogleTest JSON and listings, CTest JSON, flotilla-per-file's JSON
// (PerFile.h). The first byte picks the parser: 'j' junit, 't' tap, 'g' gtest json, 'l' gtest
// list, 'c' ctest list, 'p' per-file report (any other byte: itself modulo 6, so every input
// reaches one); the rest is the text.
// Normal results: tests or names, or ReportError naming the source ("fuzz: ...").
#include "FuzzUtil.h"
#include "flotilla/suites/PerFile.h"
#include "flotilla/suites/Reports.h"

using namespace flotilla;

namespace {

void check(const std::vector<suites::TestResult>& results) {
  for (const auto& r : results) FUZZ_CHECK(!r.name.empty(), "a test without a name");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text = fuzz::as_text(data + 1, size - 1);
  const std::string_view source = "fuzz";
  static constexpr char kinds[] = {'j', 't', 'g', 'l', 'c', 'p'};
  char kind = static_cast<char>(data[0]);
  if (std::string_view(kinds, 6).find(kind) == std::string_view::npos) kind = kinds[data[0] % 6];
  try {
    switch (kind) {
      case 'j': check(suites::parse_junit_xml(text, source)); break;
      case 't': check(suites::parse_tap(text, source)); break;
      case 'g': check(suites::parse_gtest_json(text, source)); break;
      case 'l': (void)suites::parse_gtest_list(text, source); break;
      case 'p': check(suites::parse_per_file_report(text, source)); break;
      default: (void)suites::parse_ctest_list(text, source); break;
    }
    (void)suites::short_message(text);
  } catch (const suites::ReportError& error) {
    FUZZ_CHECK(fuzz::starts_with(error.what(), "fuzz"), "a ReportError that does not name the source");
  }
  return 0;
}

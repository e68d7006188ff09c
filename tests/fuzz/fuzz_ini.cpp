// fuzz_ini — the campaign file's syntax (scheduler/src/Ini.h): parse_ini over any bytes.
// Normal results: entries, or ConfigError naming the file and line ("fuzz.ini:N: ...").
#include "FuzzUtil.h"
#include "Ini.h"
#include "flotilla/scheduler/Settings.h"

using namespace flotilla;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  try {
    const auto entries = scheduler::parse_ini(text, "fuzz.ini");
    FUZZ_CHECK(scheduler::is_utf8(text), "a file that is not UTF-8 was accepted");
    int line = 0;
    for (const auto& entry : entries) {
      FUZZ_CHECK(entry.line > line, "entries out of line order");
      line = entry.line;
      FUZZ_CHECK(!entry.key.empty() && entry.key.find_first_of(" \t") == std::string::npos, "a key with a blank");
      FUZZ_CHECK(entry.value.empty() || (entry.value.front() != ' ' && entry.value.back() != ' '), "an untrimmed value");
    }
  } catch (const scheduler::ConfigError& error) {
    FUZZ_CHECK(fuzz::starts_with(error.what(), "fuzz.ini:"), "a ConfigError that does not name the file and line");
  }
  return 0;
}

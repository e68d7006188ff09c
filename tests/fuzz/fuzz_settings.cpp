// fuzz_settings — the whole load_settings path (scheduler/include/flotilla/scheduler/Settings.h):
// a campaign file plus command-line overrides, read, merged and validated.
// Input: the file's text, then NUL-separated override arguments ("--search.budget=64"), so a
// corpus file is a campaign file as it is, and arguments follow it after a NUL byte.
// The text is written to a scratch file in /dev/shm (load_settings reads a path).
// Normal results: Settings, or ConfigError.
// Fixed finding (regressions/ambiguous_override_placeholder): an ambiguous override holding a
// message placeholder of Boost.Program_options ("--resou=%canonical_option%") hung
// po::error::what(); read_overrides no longer guesses abbreviated keys.
#include <vector>

#include "FuzzUtil.h"
#include "flotilla/scheduler/Settings.h"

using namespace flotilla;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const fuzz::ScratchFile file("fuzz.ini");
  std::string_view input = fuzz::as_text(data, size);
  const std::size_t nul = input.find('\0');
  const std::string_view text = input.substr(0, nul);
  std::vector<std::string> overrides;
  if (nul != std::string_view::npos) {
    std::string_view rest = input.substr(nul + 1);
    while (overrides.size() < 16) {
      const std::size_t next = rest.find('\0');
      overrides.emplace_back(rest.substr(0, next));
      if (next == std::string_view::npos) break;
      rest.remove_prefix(next + 1);
    }
  }
  file.write(text);
  try {
    const scheduler::Settings settings = scheduler::load_settings(file.path(), overrides);
    FUZZ_CHECK(!settings.name.empty() && !settings.results.empty(), "settings without a name or results file");
    FUZZ_CHECK(settings.batch > 0 && settings.repeats > 0, "a zero batch or repeats accepted");
    (void)settings.fingerprint();
  } catch (const scheduler::ConfigError&) {
  }
  return 0;
}

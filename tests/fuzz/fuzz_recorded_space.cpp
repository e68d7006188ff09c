// fuzz_recorded_space — recorded tuning spaces for `flotilla replay`
// (search/include/flotilla/search/Replay.h, search/src/RecordedSpace.cpp): replay CSV tables and
// Kernel Tuner caches. The first byte picks the reader: 'c' parse_csv_space, 'k'
// parse_kernel_tuner_cache, 'f' load_recorded_space on a scratch file holding the rest (content
// sniffing and gzip through zlib); any other byte: itself modulo 3.
// Normal results: a RecordedSpace, or ReplayError naming the source.
// Invariant: the optimum is a recorded configuration whose value is the optimum.
#include "FuzzUtil.h"
#include "flotilla/search/Replay.h"

using namespace flotilla;

namespace {

void check(const search::RecordedSpace& recorded) {
  FUZZ_CHECK(recorded.size() > recorded.failures(), "a recorded space where every configuration failed");
  const auto value = recorded.objective(recorded.optimum_config());
  FUZZ_CHECK(value && *value == recorded.optimum(), "the optimum is not the optimum configuration's value");
  FUZZ_CHECK(recorded.space().feasible(recorded.optimum_config()), "the optimum is not in the space");
  (void)recorded.space().fingerprint();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const fuzz::ScratchFile file("space.csv");
  if (size == 0) return 0;
  const std::string_view text = fuzz::as_text(data + 1, size - 1);
  static constexpr char kinds[] = {'c', 'k', 'f'};
  char kind = static_cast<char>(data[0]);
  if (std::string_view(kinds, 3).find(kind) == std::string_view::npos) kind = kinds[data[0] % 3];
  try {
    switch (kind) {
      case 'c': check(search::parse_csv_space(text, "fuzz.csv")); break;
      case 'k': check(search::parse_kernel_tuner_cache(text, "fuzz.json")); break;
      default: check(search::load_recorded_space(file.write(text))); break;
    }
  } catch (const search::ReplayError&) {
  }
  return 0;
}

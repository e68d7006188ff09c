// fuzz_manifest — worker job manifests (jobs/include/flotilla/jobs/Manifest.h):
// manifest_from_json over any text.
// Normal results: a Manifest, or ManifestError naming the source ("fuzz.json: ...").
// Invariant: an accepted manifest, written back by manifest_to_json, reads back the same.
#include "FuzzUtil.h"
#include "flotilla/jobs/Manifest.h"

using namespace flotilla;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  jobs::Manifest manifest;
  try {
    manifest = jobs::manifest_from_json(text, "fuzz.json");
  } catch (const jobs::ManifestError& error) {
    FUZZ_CHECK(fuzz::starts_with(error.what(), "fuzz.json"), "a ManifestError that does not name the source");
    return 0;
  }
  const std::string written = jobs::manifest_to_json(manifest);
  try {
    const jobs::Manifest again = jobs::manifest_from_json(written, "written.json");
    FUZZ_CHECK(jobs::manifest_to_json(again) == written, "a manifest changes when written and read back");
  } catch (const jobs::ManifestError&) {
    FUZZ_CHECK(false, "a manifest that was read cannot be read back once written");
  }
  return 0;
}

// fuzz_store — damaged campaign files opened by the reader (results/include/flotilla/results/
// Store.h): the bytes are written to a scratch file in /dev/shm (the Store opens a path), then
// Store::open_read, every table (candidates, trials, events, estimates, confirmations, the test
// outcomes of every tested candidate and their suites) and results::summarize.
// Normal results: the records, or StoreError naming the file.
// Invariant: no HDF5 object is left open once the Store is gone (H5Fget_obj_count), so a damaged
// file never leaks handles into the next open of the same path.
#include <hdf5.h>

#include "FuzzUtil.h"
#include "flotilla/results/Analysis.h"
#include "flotilla/results/Store.h"

using namespace flotilla;

namespace {

void read_everything(const std::filesystem::path& path) {
  const results::Store store = results::Store::open_read(path);
  (void)store.candidates();
  (void)store.trials();
  (void)store.events();
  (void)store.estimates();
  (void)store.confirmations();
  std::size_t tested = 0;
  for (const auto candidate : store.tested_candidates()) {
    if (++tested > 16) break;
    if (const auto tests = store.test_results(candidate)) (void)store.test_suite(tests->suite);
    (void)store.test_outcomes(candidate);
  }
  (void)results::summary_text(results::summarize(store), 5);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const fuzz::ScratchFile file("campaign.h5");
  const auto& path = file.write(fuzz::as_text(data, size));
  try {
    read_everything(path);
  } catch (const results::StoreError& error) {
    FUZZ_CHECK(fuzz::starts_with(error.what(), path.string()), "a StoreError that does not name the file");
  }
  FUZZ_CHECK(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL) == 0, "HDF5 objects left open after the Store is gone");
  return 0;
}

// fuzz_job_file — damaged worker job files (results/include/flotilla/results/JobFile.h reader):
// the bytes are written to a scratch file in /dev/shm, then JobFileReader::open, info, ranks,
// read_new twice (the second sees nothing new), and read_job_file.
// Normal results: the records, or StoreError naming the file.
// Invariants: read_new never returns a record twice; no HDF5 object is left open afterwards.
#include <hdf5.h>

#include "FuzzUtil.h"
#include "flotilla/results/JobFile.h"

using namespace flotilla;

namespace {

void read_everything(const std::filesystem::path& path) {
  {
    results::JobFileReader reader = results::JobFileReader::open(path);
    (void)reader.info();
    (void)reader.ranks();
    const auto first = reader.read_new();
    FUZZ_CHECK(reader.read_new().empty(), "read_new returned records a second time");
  }
  (void)results::read_job_file(path);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const fuzz::ScratchFile file("job.h5");
  const auto& path = file.write(fuzz::as_text(data, size));
  try {
    read_everything(path);
  } catch (const results::StoreError& error) {
    FUZZ_CHECK(fuzz::starts_with(error.what(), path.string()), "a StoreError that does not name the file");
  }
  FUZZ_CHECK(H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL) == 0, "HDF5 objects left open after the reader is gone");
  return 0;
}

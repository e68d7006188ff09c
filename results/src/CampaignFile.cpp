// CampaignFile.cpp — file-level operations: create, open (with crash recovery), validate.
//
// What HDF5 1.10.8 does with a file whose SWMR writer was SIGKILLed (tested, see
// tests/results/swmr_test.cpp):
//  - The superblock (version 3) still carries the "open for write / SWMR write" status flags,
//    and its end-of-allocation (EOA) is the one written when SWMR mode began: the writer never
//    rewrites the superblock afterwards, so the EOA lies far below the real end of the file.
//  - H5Fopen with H5F_ACC_RDONLY|H5F_ACC_SWMR_READ works and sees every flushed row.
//  - H5Fopen with H5F_ACC_RDONLY, H5F_ACC_RDWR or H5F_ACC_RDWR|H5F_ACC_SWMR_WRITE all fail:
//    "file is already open for write/SWMR write (may use <h5clear file> to clear file
//    consistency flags)". HDF5_USE_FILE_LOCKING=FALSE does not help: it only concerns flock().
//  - In-library fix, the same two steps as `h5clear -s --increment=0`: open read-write with the
//    file-access property "clear_status_flags" set (registered by the library for h5clear and
//    reachable through the generic H5Pset), then H5Fincrement_filesize(file, 0) to move the EOA
//    up to the real end of file. Without the second step new data would be allocated at the
//    stale EOA, on top of rows the dead writer had flushed.
//  - That open succeeds even while a live SWMR writer holds the file (the writer released its
//    flock() when SWMR mode began), hence WriterLock: open_write is only called under it.
#include "CampaignFile.h"
#include "WriterLock.h"

#include "flotilla/results/Objectives.h"

#include <chrono>
#include <string>
#include <thread>

#ifndef FLOTILLA_VERSION
#error "FLOTILLA_VERSION must be defined by the build (results/CMakeLists.txt)"
#endif

namespace flotilla::results::file {

namespace {

constexpr unsigned kSwmrReadAttempts = 4;

h5::Handle latest_format_access(bool clear_status_flags) {
  h5::Handle fapl(FLOTILLA_H5(H5Pcreate(H5P_FILE_ACCESS)));
  // SWMR needs the latest format: checksummed metadata and the v3 superblock's status flags.
  FLOTILLA_H5(H5Pset_libver_bounds(fapl.id(), H5F_LIBVER_LATEST, H5F_LIBVER_LATEST));
  if (clear_status_flags) {
    hbool_t clear = true;
    FLOTILLA_H5(H5Pset(fapl.id(), "clear_status_flags", &clear));
  }
  return fapl;
}

}  // namespace

void require_hdf5_file(const std::filesystem::path& path) {
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (!std::filesystem::exists(status)) throw StoreError(path.string() + ": no such file");
  // A FIFO or a device would block the open, or be read forever.
  if (!std::filesystem::is_regular_file(status))
    throw StoreError(path.string() + ": not a regular file (" +
                     (std::filesystem::is_directory(status) ? std::string("a directory") : std::string("a FIFO, socket or device")) +
                     ")");
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    throw StoreError(path.string() + ": not an HDF5 file");
  }
}

h5::Handle create(const std::filesystem::path& path) {
  std::error_code error;
  if (std::filesystem::exists(path, error)) throw StoreError(path.string() + ": already exists");
  h5::Handle fapl = latest_format_access(false);
  return h5::Handle(FLOTILLA_H5(H5Fcreate(path.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, fapl.id())));
}

namespace {

// SWMR read, else plain read-only; an invalid handle when neither opens (HDF5's error cleared).
// `held`: the plain open failed because a writer holds the file without SWMR: its superblock says
// so ("file is already open for write", a live writer or a dead one's marks) or HDF5's own lock is
// taken ("unable to lock file", a live one): the one failure a reader waits for or repairs.
h5::Handle try_open_read(const std::filesystem::path& path, bool& swmr, bool& held) {
  held = false;
  // SWMR read first: it is the only mode that opens a file a writer holds, or one whose writer
  // died. Files not written in the latest format refuse it, so fall back to plain read-only.
  swmr = true;
  // A SWMR reader retries metadata whose checksum fails (a writer may be half-way through it),
  // by default 100 times with a growing sleep: a damaged file then hangs the reader for tens of
  // minutes. A few attempts cover a live writer's flush; damage is then reported at once.
  h5::Handle fapl(FLOTILLA_H5(H5Pcreate(H5P_FILE_ACCESS)));
  FLOTILLA_H5(H5Pset_metadata_read_attempts(fapl.id(), kSwmrReadAttempts));
  hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, fapl.id());
  if (id < 0) {
    H5Eclear2(H5E_DEFAULT);
    swmr = false;
    id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (id < 0) {
      const auto error = h5::error_stack_text();
      held = error.find("already open for write") != std::string::npos || error.find("unable to lock file") != std::string::npos;
    }
  }
  return id >= 0 ? h5::Handle(id) : h5::Handle();
}

}  // namespace

h5::Handle open_read(const std::filesystem::path& path, bool& swmr) {
  // Neither mode opens a file whose superblock says "open for write" without SWMR: what a writer
  // leaves between opening the file and its switch to SWMR mode (a resume reads every table in
  // between: seconds at 10^6 trials). A live writer there is waited for (up to 10 s); a dead one's
  // marks are cleared as the next run would clear them (open_write under the writer lock, then
  // closed). A writer starting in that millisecond finds the lock taken and says the file is busy.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  // Any other failure (damage, a foreign file) is reported as it is: a reader never writes to a
  // file it cannot tell is a campaign's.
  for (bool repaired = false, held = false;;) {
    if (auto file = try_open_read(path, swmr, held); file.valid()) return file;
    if (!held) break;
    if (!repaired && !WriterLock::is_held(path)) {
      repaired = true;
      try {
        const auto lock = WriterLock::acquire(path);
        (void)open_write(path);  // closed at once: the superblock is written back unmarked
      } catch (const StoreError&) {
        // Not a dead writer's marks (damage, no permission to write): the error below says why.
      }
      continue;
    }
    if (repaired || std::chrono::steady_clock::now() > deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return h5::Handle(FLOTILLA_H5(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT)));  // its error, with HDF5's reason
}

h5::Handle open_write(const std::filesystem::path& path) {
  h5::Handle fapl = latest_format_access(false);
  const hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl.id());
  if (id >= 0) return h5::Handle(id);
  H5Eclear2(H5E_DEFAULT);
  // We hold the WriterLock, so a superblock still marked as open for writing was left by a
  // writer that died: clear the marks and repair the EOA (see the top of this file).
  h5::Handle recovery = latest_format_access(true);
  h5::Handle file(FLOTILLA_H5(H5Fopen(path.c_str(), H5F_ACC_RDWR, recovery.id())));
  FLOTILLA_H5(H5Fincrement_filesize(file.id(), 0));
  return file;
}

int check_schema(hid_t file, const std::filesystem::path& path) {
  if (!h5::has_attribute(file, "flotilla_schema")) {
    throw StoreError(path.string() +
                     ": not a flotilla campaign file (no 'flotilla_schema' attribute on /)");
  }
  const long long version = h5::read_int_attribute(file, "flotilla_schema");
  if (version < kOldestReadableSchema || version > kSchemaVersion) {
    throw StoreError(path.string() + ": schema version " + std::to_string(version) +
                     " is not supported by flotilla " FLOTILLA_VERSION " (supports " +
                     std::to_string(kOldestReadableSchema) + " to " + std::to_string(kSchemaVersion) + ")");
  }
  return static_cast<int>(version);
}

void write_header(hid_t file, const CampaignInfo& info) {
  h5::write_attribute(file, "flotilla_schema", std::int32_t{kSchemaVersion});
  h5::write_attribute(file, "flotilla_version", std::string(FLOTILLA_VERSION));
  h5::Handle group(FLOTILLA_H5(H5Gcreate2(file, "campaign", H5P_DEFAULT, H5P_DEFAULT,
                                          H5P_DEFAULT)));
  const hid_t id = group.id();
  h5::write_attribute(id, "name", info.name);
  h5::write_attribute(id, "config_text", info.config_text);
  h5::write_attribute(id, "fingerprint", info.fingerprint);
  h5::write_attribute(id, "objective", info.objective);
  h5::write_attribute(id, "direction", info.direction);
  h5::write_attribute(id, "repeats", info.repeats);
  h5::write_attribute(id, "shards", info.shards);
  if (!info.test_gate.empty()) h5::write_attribute(id, "test_gate", info.test_gate);
  h5::write_attribute(id, "seed", std::uint64_t{info.seed});
  h5::write_attribute(id, "flotilla_version", info.flotilla_version);
  h5::write_attribute(id, "host", info.host);
  h5::write_attribute(id, "created", info.created);
  h5::write_attribute(id, "confirm_confidence", info.confirm_confidence);
  h5::write_attribute(id, "confirm_min_effect", info.confirm_min_effect);
  h5::write_attribute(id, "confirm_max_pairs", info.confirm_max_pairs);
  if (!info.fidelity.empty()) h5::write_attribute(id, "fidelity", info.fidelity);
  if (!info.objectives.empty()) {
    h5::write_attribute(id, "objectives", info.objectives);
    h5::write_attribute(id, "pick", info.pick);
  }
}

CampaignInfo read_campaign(hid_t file, int schema) {
  h5::Handle group(FLOTILLA_H5(H5Gopen2(file, "campaign", H5P_DEFAULT)));
  const hid_t id = group.id();
  CampaignInfo info;
  info.name = h5::read_string_attribute(id, "name");
  info.config_text = h5::read_string_attribute(id, "config_text");
  info.fingerprint = h5::read_string_attribute(id, "fingerprint");
  info.objective = h5::read_string_attribute(id, "objective");
  info.direction = h5::read_string_attribute(id, "direction");
  info.repeats = static_cast<std::int32_t>(h5::read_int_attribute(id, "repeats"));
  info.shards = static_cast<std::int32_t>(h5::read_int_attribute(id, "shards"));
  if (h5::has_attribute(id, "test_gate")) info.test_gate = h5::read_string_attribute(id, "test_gate");
  info.seed = h5::read_uint_attribute(id, "seed");
  info.flotilla_version = h5::read_string_attribute(id, "flotilla_version");
  info.host = h5::read_string_attribute(id, "host");
  info.created = h5::read_double_attribute(id, "created");
  info.schema = schema;
  // Schema 1 files predate confirmation: they read as campaigns without it.
  info.confirm_max_pairs = 0;
  if (h5::has_attribute(id, "confirm_max_pairs")) {
    info.confirm_confidence = h5::read_double_attribute(id, "confirm_confidence");
    info.confirm_min_effect = h5::read_double_attribute(id, "confirm_min_effect");
    info.confirm_max_pairs = static_cast<std::int32_t>(h5::read_int_attribute(id, "confirm_max_pairs"));
  }
  if (h5::has_attribute(id, "fidelity")) {
    info.fidelity = h5::read_string_attribute(id, "fidelity");
    const auto eq = info.fidelity.find('=');
    if (eq == 0 || eq == std::string::npos || eq + 1 == info.fidelity.size())
      throw h5::Error("/campaign attribute 'fidelity': '" + info.fidelity + "' is not PARAMETER=FULL_VALUE");
  }
  // Several objectives: checked here, so a summary of a damaged or foreign file names the
  // attribute instead of failing later on a goal it cannot read.
  if (h5::has_attribute(id, "objectives")) {
    info.objectives = h5::read_string_attribute(id, "objectives");
    info.pick = h5::has_attribute(id, "pick") ? h5::read_string_attribute(id, "pick") : std::string("knee");
    std::string problem = objectives_problem(info.objectives);
    if (problem.empty()) problem = pick_problem(info.pick, parse_objectives(info.objectives).size());
    if (!problem.empty()) throw h5::Error("/campaign attribute 'objectives' or 'pick': " + problem);
  }
  return info;
}

}  // namespace flotilla::results::file

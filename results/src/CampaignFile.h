// CampaignFile.h — creating, opening and validating campaign files: everything about a file
// that happens before its tables are read or appended to.
//
// Invariants:
//  - Every StoreError raised here starts with the file's path.
//  - A file handed out by open_write is open read-write with the latest format, not yet in
//    SWMR mode (so the caller may still repair it), and its superblock flags and end-of-
//    allocation are sane even if the previous writer was SIGKILLed.
#pragma once

#include "Hdf5.h"

#include <flotilla/results/Store.h>

#include <filesystem>

namespace flotilla::results::file {

// "<path>: no such file" / "<path>: not an HDF5 file".
void require_hdf5_file(const std::filesystem::path& path);

// New empty file in the latest format; "<path>: already exists" if there is one.
h5::Handle create(const std::filesystem::path& path);

// Read-only, in SWMR-read mode when the file allows it (sets `swmr`), plain otherwise.
h5::Handle open_read(const std::filesystem::path& path, bool& swmr);

// Read-write for appending. The caller must hold the file's WriterLock: that is what makes it
// safe to treat a superblock still marked "open for writing" as left by a dead writer.
h5::Handle open_write(const std::filesystem::path& path);

// "not a flotilla campaign file" / "schema version N is not supported" checks on the root;
// returns the file's schema version (kOldestReadableSchema .. kSchemaVersion).
int check_schema(hid_t file, const std::filesystem::path& path);

// Root attributes flotilla_schema and flotilla_version, and group /campaign with `info`.
void write_header(hid_t file, const CampaignInfo& info);
CampaignInfo read_campaign(hid_t file, int schema);

}  // namespace flotilla::results::file

// Hdf5.h — the one thin checked wrapper over the HDF5 C API that results/ uses.
//
// Invariants:
//  - Every HDF5 call whose failure matters goes through FLOTILLA_H5(call): a negative return
//    becomes an h5::Error (a StoreError) naming the call, HDF5's own error text and
//    __FILE__:__LINE__.
//  - Handle owns one hid_t; its destructor never throws (it drops the reference and ignores
//    the result, since there is nobody to report to).
//  - HDF5's automatic error printing to stderr is switched off (init()); errors reach the user
//    once, through the exception.
// Private to results/: nothing here may appear in a public header.
#pragma once

#include <flotilla/results/Store.h>
#include <hdf5.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace flotilla::results::h5 {

// Switches off HDF5's stderr error printing; idempotent, called by every Store factory.
void init();

// Thrown by FLOTILLA_H5; Store catches it and prefixes the file's path, so that every message
// the user sees starts with the file it is about.
class Error : public StoreError {
 public:
  using StoreError::StoreError;
};

[[noreturn]] void throw_error(const char* call, const char* file, int line);

template <class T>
T check(T rc, const char* call, const char* file, int line) {
  if (rc < 0) throw_error(call, file, line);
  return rc;
}

#define FLOTILLA_H5(call) ::flotilla::results::h5::check((call), #call, __FILE__, __LINE__)

// HDF5's error stack as one line, innermost (most specific) message first; clears the stack.
std::string error_stack_text();

class Handle {
 public:
  Handle() = default;
  explicit Handle(hid_t id) : m_id(id) {}
  Handle(Handle&& other) noexcept : m_id(std::exchange(other.m_id, H5I_INVALID_HID)) {}
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      reset();
      m_id = std::exchange(other.m_id, H5I_INVALID_HID);
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { reset(); }

  hid_t id() const { return m_id; }
  bool valid() const { return m_id >= 0; }
  void reset() noexcept;

 private:
  hid_t m_id = H5I_INVALID_HID;
};

// Fixed-length string type of `size` bytes (NUL-terminated, UTF-8), for attributes and fields.
Handle string_type(std::size_t size);

// Scalar attributes on an object; strings are stored fixed-length, sized to fit.
void write_attribute(hid_t object, const char* name, const std::string& value);
void write_attribute(hid_t object, const char* name, std::int32_t value);
void write_attribute(hid_t object, const char* name, std::uint64_t value);
void write_attribute(hid_t object, const char* name, double value);
bool has_attribute(hid_t object, const char* name);
std::string read_string_attribute(hid_t object, const char* name);
long long read_int_attribute(hid_t object, const char* name);
unsigned long long read_uint_attribute(hid_t object, const char* name);
double read_double_attribute(hid_t object, const char* name);

// One-dimensional extendible dataset of compound rows; deflate_level 0: not compressed.
Handle create_table(hid_t file, const char* name, hid_t file_type, hsize_t chunk_rows, int deflate_level = 1);
hsize_t row_count(hid_t dataset);
// Appends `count` rows laid out as `mem_type` and flushes the dataset (SWMR durability point).
void append_rows(hid_t dataset, hid_t mem_type, const void* rows, hsize_t count);
// HDF5 1.10.8 copies a whole chunk's worth of rows out of whatever its filters produced, so a
// damaged deflate stream that inflates to fewer bytes than a chunk holds makes H5Dread read
// past a heap buffer of its own (found by fuzz_store, docs/verification.md). For every chunk
// that rows [start, start + count) of a chunked dataset lie in and that HDF5 will not first
// check against its fletcher32 checksum, this reads the chunk raw, undoes its filters (deflate)
// and throws an Error naming the dataset and the chunk when it does not come back to exactly its
// size. A filter flotilla never writes is an error too. Chunks flotilla wrote carry the checksum,
// so on its own files this costs one lookup per chunk (bench/tests.cpp).
void check_chunks(hid_t dataset, hsize_t start, hsize_t count);
// Reads `count` rows from row `start` as `mem_type` (which may name a subset of the fields).
// From a file opened read-only, flotilla undoes the chunks' filters itself (H5Dread_chunk,
// Fletcher-32 verified, inflated without zlib's redundant Adler-32, H5Tconvert): HDF5's deflate
// filter spent a fifth of `results summary` at 10^6 trials on that Adler-32 and cannot be
// replaced. Otherwise (a writer, fewer rows than a chunk, a chunk never written, a filter
// flotilla never writes) HDF5 reads them, after check_chunks. The rows are the same either way (store_test).
void read_rows(hid_t dataset, hid_t mem_type, void* out, hsize_t count, hsize_t start = 0);
// Reads the rows at `rows` (ascending) as `mem_type` into out[0..rows.size()), after
// check_chunks over the range they span.
void read_points(hid_t dataset, hid_t mem_type, void* out, const std::vector<hsize_t>& rows);
// Shrinks the dataset to `rows` rows (only outside SWMR mode).
void truncate_rows(hid_t dataset, hsize_t rows);

template <class Row>
std::vector<Row> read_table(hid_t dataset, hid_t mem_type) {
  std::vector<Row> rows(row_count(dataset));
  if (!rows.empty()) read_rows(dataset, mem_type, rows.data(), rows.size());
  return rows;
}

// Runs `action`, giving HDF5 failures the file's path as their first word ("PATH: H5Dread
// failed: ..."): the one rule for the campaign store (Store.cpp) and job files (JobFile*.cpp).
template <class Action>
auto with_path(const std::filesystem::path& path, Action&& action) {
  try {
    return action();
  } catch (const Error& error) {
    throw StoreError(path.string() + ": " + error.what());
  }
}

}  // namespace flotilla::results::h5

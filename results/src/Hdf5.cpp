// Hdf5.cpp — checked HDF5 calls, attribute helpers and the extendible-table primitives.
//
// append_rows ends with H5Dflush: under SWMR that is the point after which a reader (or a
// reopen after SIGKILL) is guaranteed to see the rows.
#include "Hdf5.h"

#include <cstdlib>
#include <cstring>
#include <mutex>

namespace flotilla::results::h5 {

void init() {
  static std::once_flag once;
  // Without this, every expected failure (probing a foreign file, the SWMR open fallback)
  // would print HDF5's multi-line error dump to stderr.
  std::call_once(once, [] {
    // No clean-up at exit: after a write failed (a full disk), HDF5's own exit handler closes
    // the datasets left half-flushed and crashes (H5D_close, HDF5 1.10.8). Every record is
    // flushed when written, so there is nothing left for it to save.
    H5dont_atexit();
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  });
}

namespace {

herr_t collect_description(unsigned n, const H5E_error2_t* error, void* data) {
  auto& parts = *static_cast<std::vector<std::string>*>(data);
  // The three innermost messages say what went wrong; the outer ones repeat "unable to open".
  if (n < 3 && error->desc != nullptr && error->desc[0] != '\0') parts.emplace_back(error->desc);
  return 0;
}

}  // namespace

std::string error_stack_text() {
  std::vector<std::string> parts;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, collect_description, &parts);
  H5Eclear2(H5E_DEFAULT);
  std::string text;
  for (const auto& part : parts) text += (text.empty() ? "" : ": ") + part;
  // Some descriptions end in a newline (ctime() output); messages are one line.
  for (char& c : text) c = c == '\n' ? ' ' : c;
  return text.empty() ? "no HDF5 error message" : text;
}

void throw_error(const char* call, const char* file, int line) {
  std::string name(call, std::strcspn(call, "("));
  const char* base = std::strrchr(file, '/');
  std::string text = error_stack_text();
  // A failed write or read of the file itself: HDF5's message is a dump of the driver's state
  // (buffer address, offsets); the cause is the errno in it.
  const bool io = text.find("write failed") != std::string::npos || text.find("read failed") != std::string::npos;
  if (auto at = text.find("errno = "); io && at != std::string::npos) {
    const int error = std::atoi(text.c_str() + at + 8);
    if (error > 0)
      text = std::string(text.find("read failed") != std::string::npos ? "cannot read the file: " : "cannot write the file: ") +
             std::strerror(error) + " (errno " + std::to_string(error) + ")";
  }
  throw Error(name + " failed: " + text + " (" + (base ? base + 1 : file) + ":" + std::to_string(line) + ")");
}

void Handle::reset() noexcept {
  // H5Idec_ref closes any kind of identifier (file, dataset, type, ...) when the count reaches
  // zero; a failure here has nowhere to go, so it is dropped.
  if (m_id >= 0 && H5Idec_ref(m_id) < 0) H5Eclear2(H5E_DEFAULT);
  m_id = H5I_INVALID_HID;
}

Handle string_type(std::size_t size) {
  Handle type(FLOTILLA_H5(H5Tcopy(H5T_C_S1)));
  FLOTILLA_H5(H5Tset_size(type.id(), size));
  FLOTILLA_H5(H5Tset_strpad(type.id(), H5T_STR_NULLTERM));
  FLOTILLA_H5(H5Tset_cset(type.id(), H5T_CSET_UTF8));
  return type;
}

namespace {

void write_scalar(hid_t object, const char* name, hid_t file_type, hid_t mem_type,
                  const void* value) {
  Handle space(FLOTILLA_H5(H5Screate(H5S_SCALAR)));
  Handle attr(FLOTILLA_H5(H5Acreate2(object, name, file_type, space.id(), H5P_DEFAULT,
                                     H5P_DEFAULT)));
  FLOTILLA_H5(H5Awrite(attr.id(), mem_type, value));
}

void read_scalar(hid_t object, const char* name, hid_t mem_type, void* value) {
  Handle attr(FLOTILLA_H5(H5Aopen(object, name, H5P_DEFAULT)));
  FLOTILLA_H5(H5Aread(attr.id(), mem_type, value));
}

}  // namespace

void write_attribute(hid_t object, const char* name, const std::string& value) {
  Handle type = string_type(value.size() + 1);   // +1: room for the terminating NUL
  write_scalar(object, name, type.id(), type.id(), value.c_str());
}

void write_attribute(hid_t object, const char* name, std::int32_t value) {
  write_scalar(object, name, H5T_STD_I32LE, H5T_NATIVE_INT32, &value);
}

void write_attribute(hid_t object, const char* name, std::uint64_t value) {
  write_scalar(object, name, H5T_STD_U64LE, H5T_NATIVE_UINT64, &value);
}

void write_attribute(hid_t object, const char* name, double value) {
  write_scalar(object, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value);
}

bool has_attribute(hid_t object, const char* name) {
  return FLOTILLA_H5(H5Aexists(object, name)) > 0;
}

std::string read_string_attribute(hid_t object, const char* name) {
  Handle attr(FLOTILLA_H5(H5Aopen(object, name, H5P_DEFAULT)));
  Handle file_type(FLOTILLA_H5(H5Aget_type(attr.id())));
  const std::size_t size = H5Tget_size(file_type.id());
  if (size == 0) h5::throw_error("H5Tget_size", __FILE__, __LINE__);
  Handle mem_type = string_type(size);
  std::string buffer(size, '\0');
  FLOTILLA_H5(H5Aread(attr.id(), mem_type.id(), buffer.data()));
  buffer.resize(std::strlen(buffer.c_str()));
  return buffer;
}

long long read_int_attribute(hid_t object, const char* name) {
  long long value = 0;
  read_scalar(object, name, H5T_NATIVE_LLONG, &value);
  return value;
}

unsigned long long read_uint_attribute(hid_t object, const char* name) {
  unsigned long long value = 0;
  read_scalar(object, name, H5T_NATIVE_ULLONG, &value);
  return value;
}

double read_double_attribute(hid_t object, const char* name) {
  double value = 0;
  read_scalar(object, name, H5T_NATIVE_DOUBLE, &value);
  return value;
}

Handle create_table(hid_t file, const char* name, hid_t file_type, hsize_t chunk_rows, int deflate_level) {
  const hsize_t initial = 0;
  const hsize_t unlimited = H5S_UNLIMITED;
  Handle space(FLOTILLA_H5(H5Screate_simple(1, &initial, &unlimited)));
  Handle dcpl(FLOTILLA_H5(H5Pcreate(H5P_DATASET_CREATE)));
  FLOTILLA_H5(H5Pset_chunk(dcpl.id(), 1, &chunk_rows));
  if (deflate_level > 0) FLOTILLA_H5(H5Pset_deflate(dcpl.id(), static_cast<unsigned>(deflate_level)));
  // A checksum per chunk: damaged rows are an error when read, never other values (HDF5
  // checksums its metadata already; this covers the data).
  FLOTILLA_H5(H5Pset_fletcher32(dcpl.id()));
  return Handle(FLOTILLA_H5(H5Dcreate2(file, name, file_type, space.id(), H5P_DEFAULT,
                                       dcpl.id(), H5P_DEFAULT)));
}

hsize_t row_count(hid_t dataset) {
  Handle space(FLOTILLA_H5(H5Dget_space(dataset)));
  hsize_t rows = 0;
  FLOTILLA_H5(H5Sget_simple_extent_dims(space.id(), &rows, nullptr));
  return rows;
}

void append_rows(hid_t dataset, hid_t mem_type, const void* rows, hsize_t count) {
  const hsize_t start = row_count(dataset);
  const hsize_t new_size = start + count;
  FLOTILLA_H5(H5Dset_extent(dataset, &new_size));
  Handle file_space(FLOTILLA_H5(H5Dget_space(dataset)));
  FLOTILLA_H5(H5Sselect_hyperslab(file_space.id(), H5S_SELECT_SET, &start, nullptr, &count,
                                  nullptr));
  Handle mem_space(FLOTILLA_H5(H5Screate_simple(1, &count, nullptr)));
  FLOTILLA_H5(H5Dwrite(dataset, mem_type, mem_space.id(), file_space.id(), H5P_DEFAULT, rows));
  FLOTILLA_H5(H5Dflush(dataset));
}

void read_rows(hid_t dataset, hid_t mem_type, void* out, hsize_t count, hsize_t start) {
  Handle file_space(FLOTILLA_H5(H5Dget_space(dataset)));
  FLOTILLA_H5(H5Sselect_hyperslab(file_space.id(), H5S_SELECT_SET, &start, nullptr, &count,
                                  nullptr));
  Handle mem_space(FLOTILLA_H5(H5Screate_simple(1, &count, nullptr)));
  FLOTILLA_H5(H5Dread(dataset, mem_type, mem_space.id(), file_space.id(), H5P_DEFAULT, out));
}

void truncate_rows(hid_t dataset, hsize_t rows) {
  FLOTILLA_H5(H5Dset_extent(dataset, &rows));
}

}  // namespace flotilla::results::h5

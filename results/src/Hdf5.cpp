// Hdf5.cpp — checked HDF5 calls, attribute helpers and the extendible-table primitives.
//
// append_rows ends with H5Dflush: under SWMR that is the point after which a reader (or a
// reopen after SIGKILL) is guaranteed to see the rows.
#include "Hdf5.h"

#include <zlib.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>

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

namespace {

// The size a chunk's stored bytes have once its filters are undone in reverse order, as HDF5
// will undo them; nullopt when a filter cannot be undone (a deflate stream that is damaged or
// inflates past `limit`). Fletcher32's checksum is only stripped here: HDF5 verifies it.
std::optional<std::size_t> unfiltered_size(std::vector<unsigned char> bytes, const std::vector<H5Z_filter_t>& filters,
                                           unsigned filter_mask, std::size_t limit) {
  for (std::size_t i = filters.size(); i-- > 0;) {
    if ((filter_mask & (1u << i)) != 0) continue;  // skipped when the chunk was written
    if (filters[i] == H5Z_FILTER_FLETCHER32) {
      if (bytes.size() < 4) return std::nullopt;
      bytes.resize(bytes.size() - 4);
    } else if (filters[i] == H5Z_FILTER_DEFLATE) {
      std::vector<unsigned char> inflated(limit + 1);
      z_stream stream{};
      stream.next_in = bytes.data();
      stream.avail_in = static_cast<uInt>(bytes.size());
      stream.next_out = inflated.data();
      stream.avail_out = static_cast<uInt>(inflated.size());
      if (inflateInit(&stream) != Z_OK) return std::nullopt;
      const int rc = inflate(&stream, Z_FINISH);
      const std::size_t produced = stream.total_out;
      inflateEnd(&stream);
      if (rc != Z_STREAM_END || produced > limit) return std::nullopt;
      inflated.resize(produced);
      bytes = std::move(inflated);
    }  // shuffle keeps the size
  }
  return bytes.size();
}

// The filter HDF5 applies first when it reads a chunk: the last one of the pipeline that was
// not skipped when the chunk was written.
H5Z_filter_t first_undone(const std::vector<H5Z_filter_t>& filters, unsigned filter_mask) {
  for (std::size_t i = filters.size(); i-- > 0;)
    if ((filter_mask & (1u << i)) == 0) return filters[i];
  return H5Z_FILTER_NONE;
}

}  // namespace

void check_chunks(hid_t dataset, hsize_t start, hsize_t count) {
  Handle dcpl(FLOTILLA_H5(H5Dget_create_plist(dataset)));
  if (H5Pget_layout(dcpl.id()) != H5D_CHUNKED) return;
  hsize_t chunk_rows = 0;
  if (H5Pget_chunk(dcpl.id(), 1, &chunk_rows) != 1 || chunk_rows == 0)
    throw Error("the chunk layout of a table is damaged (not one dimension)");
  const int filter_count = FLOTILLA_H5(H5Pget_nfilters(dcpl.id()));
  const auto name = [dataset] {
    char text[256] = "";
    return H5Iget_name(dataset, text, sizeof text) > 0 ? std::string(text) : std::string("the table");
  };
  std::vector<H5Z_filter_t> filters;
  for (int i = 0; i < filter_count; ++i) {
    unsigned flags = 0;
    std::size_t values = 0;
    char filter_name[64] = "";
    const H5Z_filter_t filter = FLOTILLA_H5(H5Pget_filter2(dcpl.id(), static_cast<unsigned>(i), &flags, &values,
                                                           nullptr, sizeof filter_name, filter_name, nullptr));
    // Only what flotilla writes can be undone here; any other filter is a foreign or damaged
    // file, and its chunks cannot be checked before HDF5 reads them.
    if (filter != H5Z_FILTER_DEFLATE && filter != H5Z_FILTER_FLETCHER32 && filter != H5Z_FILTER_SHUFFLE)
      throw Error(name() + " uses HDF5 filter " + std::to_string(filter) + " ('" + filter_name +
                  "'), which flotilla never writes: not a flotilla table, or a damaged one");
    filters.push_back(filter);
  }
  if (filters.empty()) return;
  Handle type(FLOTILLA_H5(H5Dget_type(dataset)));
  const std::size_t row_size = H5Tget_size(type.id());
  const std::size_t expected = static_cast<std::size_t>(chunk_rows) * row_size;
  for (hsize_t chunk = start / chunk_rows; chunk * chunk_rows < start + count; ++chunk) {
    const hsize_t offset = chunk * chunk_rows;
    // By coordinate through the chunk index's lookup: H5Dget_chunk_info_by_coord walks every
    // chunk up to this one in HDF5 1.10, which made reading a table quadratic in its chunks
    // (40 s of CPU for the 10^6 trials of bench/scale). A chunk never written stores 0 bytes.
    hsize_t stored = 0;
    FLOTILLA_H5(H5Dget_chunk_storage_size(dataset, &offset, &stored));
    if (stored == 0) continue;  // never written: HDF5 fills it
    // A stored size far beyond what the filters could make of a chunk is damage, and is not
    // worth allocating.
    if (stored > expected + 64 + expected / 2 && stored > (1u << 20))
      throw Error("chunk " + std::to_string(chunk) + " of " + name() + " is damaged: " + std::to_string(stored) +
                  " bytes stored for " + std::to_string(expected));
    std::vector<unsigned char> bytes(static_cast<std::size_t>(stored));
    std::uint32_t filter_mask = 0;  // the filters skipped when it was written
    FLOTILLA_H5(H5Dread_chunk(dataset, H5P_DEFAULT, &offset, &filter_mask, bytes.data()));
    // When the first filter HDF5 undoes is fletcher32, it checks the stored bytes against their
    // checksum before inflating anything: damage is an error there already (every chunk
    // flotilla writes; the finding's chunk had lost it).
    if (first_undone(filters, filter_mask) == H5Z_FILTER_FLETCHER32) continue;
    const auto size = unfiltered_size(std::move(bytes), filters, filter_mask, expected);
    if (size != expected)
      throw Error("chunk " + std::to_string(chunk) + " of " + name() + " is damaged: its " + std::to_string(stored) +
                  " stored bytes do not unpack to the " + std::to_string(expected) + " bytes of " +
                  std::to_string(chunk_rows) + " rows");
  }
}

void read_rows(hid_t dataset, hid_t mem_type, void* out, hsize_t count, hsize_t start) {
  check_chunks(dataset, start, count);
  Handle file_space(FLOTILLA_H5(H5Dget_space(dataset)));
  FLOTILLA_H5(H5Sselect_hyperslab(file_space.id(), H5S_SELECT_SET, &start, nullptr, &count,
                                  nullptr));
  Handle mem_space(FLOTILLA_H5(H5Screate_simple(1, &count, nullptr)));
  FLOTILLA_H5(H5Dread(dataset, mem_type, mem_space.id(), file_space.id(), H5P_DEFAULT, out));
}

void read_points(hid_t dataset, hid_t mem_type, void* out, const std::vector<hsize_t>& rows) {
  if (rows.empty()) return;
  check_chunks(dataset, rows.front(), rows.back() - rows.front() + 1);
  Handle file_space(FLOTILLA_H5(H5Dget_space(dataset)));
  FLOTILLA_H5(H5Sselect_elements(file_space.id(), H5S_SELECT_SET, rows.size(), rows.data()));
  const hsize_t count = rows.size();
  Handle mem_space(FLOTILLA_H5(H5Screate_simple(1, &count, nullptr)));
  FLOTILLA_H5(H5Dread(dataset, mem_type, mem_space.id(), file_space.id(), H5P_DEFAULT, out));
}

void truncate_rows(hid_t dataset, hsize_t rows) {
  FLOTILLA_H5(H5Dset_extent(dataset, &rows));
}

}  // namespace flotilla::results::h5

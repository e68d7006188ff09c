// Hdf5.cpp — checked HDF5 calls, attribute helpers and the extendible-table primitives.
//
// append_rows ends with H5Dflush: under SWMR that is the point after which a reader (or a
// reopen after SIGKILL) is guaranteed to see the rows.
#include "Hdf5.h"

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
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

// HDF5's Fletcher-32 (H5_checksum_fletcher32): big-endian 16-bit words, the sums folded every 360
// words, an odd last byte as the high half of a word.
std::uint32_t fletcher32(const unsigned char* data, std::size_t size) {
  std::uint32_t sum1 = 0, sum2 = 0;
  for (std::size_t words = size / 2; words > 0;) {
    std::size_t block = std::min<std::size_t>(words, 360);
    words -= block;
    for (; block > 0; --block, data += 2) {
      sum1 += static_cast<std::uint32_t>(data[0]) << 8 | data[1];
      sum2 += sum1;
    }
    sum1 = (sum1 & 0xffff) + (sum1 >> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >> 16);
  }
  if (size % 2 != 0) {
    sum1 += static_cast<std::uint32_t>(*data) << 8;
    sum2 += sum1;
    sum1 = (sum1 & 0xffff) + (sum1 >> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >> 16);
  }
  sum1 = (sum1 & 0xffff) + (sum1 >> 16);
  sum2 = (sum2 & 0xffff) + (sum2 >> 16);
  return sum2 << 16 | sum1;
}

// Whether a chunk's stored bytes (checksum last, little-endian) match their Fletcher-32; HDF5
// also takes the byte-reversed sum that releases before 1.6.3 wrote.
bool fletcher32_matches(const unsigned char* bytes, std::size_t size) {
  if (size < 4) return false;
  const unsigned char* stored_at = bytes + size - 4;
  std::uint32_t stored = 0;
  for (int byte = 3; byte >= 0; --byte) stored = stored << 8 | stored_at[byte];
  const std::uint32_t sum = fletcher32(bytes, size - 4);
  const std::uint32_t reversed = (sum & 0xff) << 24 | (sum & 0xff00) << 8 | (sum >> 8 & 0xff00) | sum >> 24;
  return stored == sum || stored == reversed;
}

// What undoing a chunk's filters came to: its size, or none when a filter could not be undone
// (a deflate stream that is damaged or inflates past the limit), or a checksum that does not match.
struct Unpacked {
  std::optional<std::size_t> size;
  bool checksum_mismatch = false;
};

// A chunk's stored bytes with their filters undone in reverse order, as HDF5 undoes them,
// written to `out` (room for `limit` bytes; none: only the size is wanted). `verify_checksum`
// false only strips Fletcher-32's checksum (check_chunks, when HDF5 verifies it itself). Zlib's
// own Adler-32 is checked only when the chunk has no verified Fletcher-32 over its stored bytes:
// with one, every damaged byte is caught before inflating, and the Adler-32 over every inflated
// byte was a fifth of `results summary` at 10^6 trials.
Unpacked unpack(const unsigned char* data, std::size_t size, const std::vector<H5Z_filter_t>& filters,
                unsigned filter_mask, bool verify_checksum, unsigned char* out, std::size_t limit) {
  bool checksummed = false;
  std::vector<unsigned char> inflated;  // a deflate undone before another filter
  for (std::size_t i = filters.size(); i-- > 0;) {
    if ((filter_mask & (1u << i)) != 0) continue;  // skipped when the chunk was written
    if (filters[i] == H5Z_FILTER_FLETCHER32) {
      if (size < 4) return {};
      if (verify_checksum && !fletcher32_matches(data, size)) return {std::nullopt, true};
      size -= 4;
      checksummed = verify_checksum;
    } else if (filters[i] == H5Z_FILTER_DEFLATE) {
      // The last filter to undo inflates straight into `out`: no copy of every row.
      bool last = true;
      for (std::size_t j = 0; j < i; ++j) last = last && (filter_mask & (1u << j)) != 0;
      std::vector<unsigned char> scratch;
      unsigned char* into = out;
      if (out == nullptr || !last) {
        scratch.resize(limit);
        into = scratch.data();
      }
      z_stream stream{};
      stream.next_in = const_cast<unsigned char*>(data);  // zlib's API is not const
      stream.avail_in = static_cast<uInt>(size);
      stream.next_out = into;
      stream.avail_out = static_cast<uInt>(limit);
      if (inflateInit(&stream) != Z_OK) return {};
      if (checksummed) inflateValidate(&stream, 0);
      const int rc = inflate(&stream, Z_FINISH);  // not Z_STREAM_END: damaged, or longer than `limit`
      const std::size_t produced = stream.total_out;
      inflateEnd(&stream);
      if (rc != Z_STREAM_END) return {};
      if (into == out) return {produced};
      inflated = std::move(scratch);
      data = inflated.data(), size = produced;
    } else if (filters[i] == H5Z_FILTER_SHUFFLE) {
      return {};  // never written by flotilla; read_rows leaves such tables to HDF5
    }
  }
  if (size > limit) return {};
  if (out != nullptr) std::memcpy(out, data, size);
  return {size};
}

// The filter HDF5 applies first when it reads a chunk: the last one of the pipeline that was
// not skipped when the chunk was written.
H5Z_filter_t first_undone(const std::vector<H5Z_filter_t>& filters, unsigned filter_mask) {
  for (std::size_t i = filters.size(); i-- > 0;)
    if ((filter_mask & (1u << i)) == 0) return filters[i];
  return H5Z_FILTER_NONE;
}

// What reading a chunked table's chunks needs: rows per chunk, its filters (only those flotilla
// writes: any other is an Error), the bytes of a whole chunk, and the table's name for errors.
struct TableChunks {
  hid_t dataset = -1;
  hsize_t rows = 0;
  std::vector<H5Z_filter_t> filters;
  std::size_t bytes = 0;
  // Only for errors: reads see it once per call, job files a few rows at a time.
  std::string name() const {
    char text[256] = "";
    return H5Iget_name(dataset, text, sizeof text) > 0 ? std::string(text) : std::string("the table");
  }
};

std::optional<TableChunks> table_chunks(hid_t dataset) {
  Handle dcpl(FLOTILLA_H5(H5Dget_create_plist(dataset)));
  if (H5Pget_layout(dcpl.id()) != H5D_CHUNKED) return std::nullopt;
  TableChunks table;
  table.dataset = dataset;
  if (H5Pget_chunk(dcpl.id(), 1, &table.rows) != 1 || table.rows == 0)
    throw Error("the chunk layout of a table is damaged (not one dimension)");
  const int filter_count = FLOTILLA_H5(H5Pget_nfilters(dcpl.id()));
  for (int i = 0; i < filter_count; ++i) {
    unsigned flags = 0;
    std::size_t values = 0;
    char filter_name[64] = "";
    const H5Z_filter_t filter = FLOTILLA_H5(H5Pget_filter2(dcpl.id(), static_cast<unsigned>(i), &flags, &values,
                                                           nullptr, sizeof filter_name, filter_name, nullptr));
    // Only what flotilla writes can be undone here; any other filter is a foreign or damaged
    // file, and its chunks cannot be checked before HDF5 reads them.
    if (filter != H5Z_FILTER_DEFLATE && filter != H5Z_FILTER_FLETCHER32 && filter != H5Z_FILTER_SHUFFLE)
      throw Error(table.name() + " uses HDF5 filter " + std::to_string(filter) + " ('" + filter_name +
                  "'), which flotilla never writes: not a flotilla table, or a damaged one");
    table.filters.push_back(filter);
  }
  Handle type(FLOTILLA_H5(H5Dget_type(dataset)));
  table.bytes = static_cast<std::size_t>(table.rows) * H5Tget_size(type.id());
  return table;
}

// The stored size of the chunk that starts at row `offset` (0: never written, HDF5 fills it);
// an Error when it is far beyond what the filters could make of a chunk (damage, and not worth
// allocating).
hsize_t stored_size(const TableChunks& table, hsize_t chunk) {
  const hsize_t offset = chunk * table.rows;
  // By coordinate through the chunk index's lookup: H5Dget_chunk_info_by_coord walks every
  // chunk up to this one in HDF5 1.10, which made reading a table quadratic in its chunks
  // (40 s of CPU for the 10^6 trials of bench/scale).
  hsize_t stored = 0;
  FLOTILLA_H5(H5Dget_chunk_storage_size(table.dataset, &offset, &stored));
  if (stored > table.bytes + 64 + table.bytes / 2 && stored > (1u << 20))
    throw Error("chunk " + std::to_string(chunk) + " of " + table.name() + " is damaged: " + std::to_string(stored) +
                " bytes stored for " + std::to_string(table.bytes));
  return stored;
}

Error unpack_error(const TableChunks& table, hsize_t chunk, hsize_t stored, const Unpacked& unpacked) {
  const auto where =
      "chunk " + std::to_string(chunk) + " of " + table.name() + " is damaged: its " + std::to_string(stored);
  if (unpacked.checksum_mismatch) return Error(where + " stored bytes do not match their checksum (Fletcher-32)");
  return Error(where + " stored bytes do not unpack to the " + std::to_string(table.bytes) + " bytes of " +
               std::to_string(table.rows) + " rows");
}

// Whether the dataset's file was opened read-only: only then are its chunks on disk all there is
// (a writer's chunk cache may hold rows H5Dread_chunk would not see).
bool opened_read_only(hid_t dataset) {
  Handle file(FLOTILLA_H5(H5Iget_file_id(dataset)));
  unsigned intent = 0;
  FLOTILLA_H5(H5Fget_intent(file.id(), &intent));
  return (intent & H5F_ACC_RDWR) == 0;
}

// Rows [start, start + count) of a chunked table read chunk by chunk with H5Dread_chunk, their
// filters undone by `unpack` and the rows converted by H5Tconvert, as H5Dread would: the same
// rows and the same checks (Fletcher-32, the unpacked size), without zlib's Adler-32 over every
// unpacked byte, which HDF5's deflate filter always computes and cannot be replaced (HDF5 1.10.8
// refuses to re-register a predefined filter). false for what HDF5 reads better, and read_rows
// then reads the whole range through HDF5: a file open for writing, fewer rows than a chunk, a
// table with the shuffle filter, a chunk never written (HDF5's fill value), a chunk a writer
// keeps storing anew while it is read.
bool read_rows_unpacked(const TableChunks& table, hid_t mem_type, void* out, hsize_t count, hsize_t start) {
  // Fewer rows than a chunk (a job file read as its rows arrive) are left to HDF5, whose chunk
  // cache keeps the inflated chunk for the next few rows; unpacked here, each such read inflated
  // the whole chunk again, and flotilla's CPU per task on the mpi backend grew (bench/scale).
  if (count < table.rows || table.filters.empty()) return false;
  for (const auto filter : table.filters)
    if (filter == H5Z_FILTER_SHUFFLE) return false;
  if (!opened_read_only(table.dataset)) return false;
  const hsize_t first = start / table.rows, last = (start + count - 1) / table.rows;
  std::vector<hsize_t> stored(static_cast<std::size_t>(last - first + 1));
  for (hsize_t chunk = first; chunk <= last; ++chunk) {
    stored[chunk - first] = stored_size(table, chunk);
    if (stored[chunk - first] == 0) return false;
  }
  Handle file_type(FLOTILLA_H5(H5Dget_type(table.dataset)));
  const std::size_t file_row = H5Tget_size(file_type.id()), mem_row = H5Tget_size(mem_type);
  // One chunk at a time, converted in place (H5Tconvert needs room for the larger of the rows):
  // two small buffers for any table length, where one for all the rows asked for went through
  // malloc's mmap at each call (a page fault per 4 KB of 1.6 GB at 10^6 trials).
  // Neither is zeroed: every byte used is written first.
  const auto rows = std::make_unique_for_overwrite<unsigned char[]>(static_cast<std::size_t>(table.rows) *
                                                                     std::max(file_row, mem_row));
  std::vector<unsigned char> background;
  // Deflate's worst case (stored blocks) and the checksum: no chunk a writer stores is larger
  // (a damaged one may claim more: stored_size bounds what it is given).
  std::size_t capacity = compressBound(static_cast<uLong>(table.bytes)) + 64;
  for (const auto size : stored) capacity = std::max<std::size_t>(capacity, size);
  const auto chunk_bytes = std::make_unique_for_overwrite<unsigned char[]>(capacity);
  auto* const into = static_cast<unsigned char*>(out);
  for (hsize_t chunk = first; chunk <= last; ++chunk) {
    const hsize_t chunk_start = chunk * table.rows;
    const hsize_t from = std::max(start, chunk_start), to = std::min(start + count, chunk_start + table.rows);
    const auto n = static_cast<std::size_t>(to - from);
    hsize_t size = stored[chunk - first];
    std::uint32_t filter_mask = 0;
    for (int lookup = 1;; ++lookup) {
      // H5Dread_chunk takes no buffer size and looks the chunk up again itself: under SWMR a
      // writer may have stored it anew, at another size, since `size` was read. The buffer holds
      // the largest chunk deflate and Fletcher-32 can make of a chunk, so that cannot overrun it,
      // and a size that changed meanwhile is read again (a few times; then HDF5 reads it all).
      FLOTILLA_H5(H5Dread_chunk(table.dataset, H5P_DEFAULT, &chunk_start, &filter_mask, chunk_bytes.get()));
      const hsize_t now = stored_size(table, chunk);
      if (now == size) break;
      if (now == 0 || now > capacity || lookup == 4) return false;
      size = now;
    }
    const auto unpacked = unpack(chunk_bytes.get(), static_cast<std::size_t>(size), table.filters, filter_mask, true,
                                 rows.get(), table.bytes);
    if (unpacked.size != table.bytes) throw unpack_error(table, chunk, size, unpacked);
    if (from != chunk_start) std::memmove(rows.get(), rows.get() + (from - chunk_start) * file_row, n * file_row);
    // The background is the caller's rows, as for H5Dread: fields of `mem_type` the file lacks
    // (a file older than a field) keep what the caller had there.
    unsigned char* const target = into + (from - start) * mem_row;
    background.assign(target, target + n * mem_row);
    FLOTILLA_H5(H5Tconvert(file_type.id(), mem_type, n, rows.get(), background.data(), H5P_DEFAULT));
    std::memcpy(target, rows.get(), n * mem_row);
  }
  return true;
}

// check_chunks for a table already described.
void check_table_chunks(const TableChunks& table, hsize_t start, hsize_t count) {
  if (table.filters.empty()) return;
  for (hsize_t chunk = start / table.rows; chunk * table.rows < start + count; ++chunk) {
    const hsize_t stored = stored_size(table, chunk);
    if (stored == 0) continue;  // never written: HDF5 fills it
    const hsize_t offset = chunk * table.rows;
    std::vector<unsigned char> bytes(static_cast<std::size_t>(stored));
    std::uint32_t filter_mask = 0;  // the filters skipped when it was written
    FLOTILLA_H5(H5Dread_chunk(table.dataset, H5P_DEFAULT, &offset, &filter_mask, bytes.data()));
    // When the first filter HDF5 undoes is fletcher32, it checks the stored bytes against their
    // checksum before inflating anything: damage is an error there already (every chunk
    // flotilla writes; the finding's chunk had lost it).
    if (first_undone(table.filters, filter_mask) == H5Z_FILTER_FLETCHER32) continue;
    const auto unpacked = unpack(bytes.data(), bytes.size(), table.filters, filter_mask, false, nullptr, table.bytes);
    if (unpacked.size != table.bytes) throw unpack_error(table, chunk, stored, unpacked);
  }
}

}  // namespace

void check_chunks(hid_t dataset, hsize_t start, hsize_t count) {
  if (const auto table = table_chunks(dataset)) check_table_chunks(*table, start, count);
}

void read_rows(hid_t dataset, hid_t mem_type, void* out, hsize_t count, hsize_t start) {
  const auto table = table_chunks(dataset);
  if (table) {
    if (read_rows_unpacked(*table, mem_type, out, count, start)) return;
    check_table_chunks(*table, start, count);
  }
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

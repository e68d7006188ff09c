// Exact messages for files that are not campaign files: messages are API.
// The foreign files are made with the HDF5 C API directly, as another tool would make them.
#include "test_records.h"
#include "WriterLock.h"  // results/src: a writer lock the test holds

#include <flotilla/results/Analysis.h>

#include <gtest/gtest.h>
#include <hdf5.h>

#include <fstream>
#include <functional>

using namespace flotilla::results;
using namespace flotilla::results::testing;

namespace {

// Both ways of opening must reject the file with the same message.
void expect_open_error(const std::filesystem::path& path, const std::string& message) {
  EXPECT_EQ(error_of([&] { Store::open_read(path); }), path.string() + ": " + message);
  EXPECT_EQ(error_of([&] { Store::open_for_append(path); }), path.string() + ": " + message);
}

// An HDF5 file with one dataset and, if schema >= 0, a flotilla_schema attribute on /.
void write_foreign_hdf5(const std::filesystem::path& path, int schema) {
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  const hsize_t rows = 3;
  const hid_t space = H5Screate_simple(1, &rows, nullptr);
  const hid_t dataset = H5Dcreate2(file, "temperature", H5T_IEEE_F64LE, space, H5P_DEFAULT,
                                   H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(dataset, 0);
  if (schema >= 0) {
    const hid_t scalar = H5Screate(H5S_SCALAR);
    const hid_t attr = H5Acreate2(file, "flotilla_schema", H5T_STD_I32LE, scalar, H5P_DEFAULT,
                                  H5P_DEFAULT);
    ASSERT_GE(H5Awrite(attr, H5T_NATIVE_INT, &schema), 0);
    H5Aclose(attr);
    H5Sclose(scalar);
  }
  H5Dclose(dataset);
  H5Sclose(space);
  ASSERT_GE(H5Fclose(file), 0);
}

}  // namespace

TEST(StoreErrors, MissingFile) {
  ScratchDir dir;
  expect_open_error(dir / "results.h5", "no such file");
}

TEST(StoreErrors, NotHdf5) {
  ScratchDir dir;
  const auto path = dir / "x.h5";
  std::ofstream(path) << "[campaign]\nname = not hdf5\n";
  expect_open_error(path, "not an HDF5 file");
  std::ofstream(dir / "empty.h5").flush();
  expect_open_error(dir / "empty.h5", "not an HDF5 file");
}

TEST(StoreErrors, Hdf5ButNotFlotilla) {
  ScratchDir dir;
  const auto path = dir / "x.h5";
  write_foreign_hdf5(path, -1);
  expect_open_error(path, "not a flotilla campaign file (no 'flotilla_schema' attribute on /)");
}

TEST(StoreErrors, UnsupportedSchemaVersion) {
  ScratchDir dir;
  const auto path = dir / "x.h5";
  write_foreign_hdf5(path, 7);
  expect_open_error(path, "schema version 7 is not supported by flotilla 0.1.0 (supports 1 to 2)");
}

TEST(StoreErrors, CreateRefusesExistingPath) {
  ScratchDir dir;
  const auto path = dir / "x.h5";
  std::ofstream(path) << "precious";
  EXPECT_EQ(error_of([&] { Store::create(path, sample_campaign()); }),
            path.string() + ": already exists");
  std::ifstream in(path);
  std::string content;
  in >> content;
  EXPECT_EQ(content, "precious");
}

TEST(StoreErrors, HdfFailuresNameTheFileAndTheCall) {
  ScratchDir dir;
  const auto path = dir / "no-such-dir" / "x.h5";
  const std::string message = error_of([&] { Store::create(path, sample_campaign()); });
  EXPECT_EQ(message.rfind(path.string() + ": H5Fcreate failed: ", 0), 0u) << message;
  EXPECT_NE(message.find("unable to"), std::string::npos) << message;   // HDF5's own text
  EXPECT_NE(message.find("(CampaignFile.cpp:"), std::string::npos) << message;
}

// A file of the previous schema (written by flotilla 0.1.0) reads: its candidates, trials and
// per-test outcomes, with no estimates or confirmations; appending to it is refused, naming why.
TEST(StoreErrors, ReadsSchemaOneFilesAndRefusesToAppend) {
  const std::filesystem::path fixture = std::filesystem::path(FLOTILLA_TEST_DATA) / "schema1.h5";
  const Store store = Store::open_read(fixture);
  EXPECT_EQ(store.campaign().schema, 1);
  EXPECT_EQ(store.campaign().confirm_max_pairs, 0);
  EXPECT_EQ(store.candidates().size(), 4u);
  EXPECT_EQ(store.candidates()[0].config, "tile_x=16 tile_y=16 unroll=1 precision=double");
  EXPECT_EQ(store.trials().size(), 24u);
  EXPECT_TRUE(store.estimates().empty());
  EXPECT_TRUE(store.confirmations().empty());
  EXPECT_EQ(store.trials()[0].cores, "");
  const auto summary = summarize(store);
  ASSERT_TRUE(summary.best);
  EXPECT_EQ(summary.candidates[*summary.best].record.id, 3);  // as flotilla 0.1.0 reported it
  EXPECT_FALSE(summary.confirming);
  ScratchDir dir;
  const auto copy = dir / "old.h5";
  std::filesystem::copy_file(fixture, copy);
  EXPECT_EQ(error_of([&] { Store::open_for_append(copy); }),
            copy.string() + ": written by flotilla 0.1.0 in schema 1; this flotilla reads it (flotilla results) but "
                            "appends only to schema 2 files: finish it with that flotilla, or start a new results file");
}

// Several objectives: the attributes are checked when the file opens, so a damaged or foreign
// file names them instead of failing later in a summary; a good one reads back as written.
TEST(StoreErrors, BadObjectivesOrPickAttributesAreNamed) {
  ScratchDir dir;
  auto info = sample_campaign();
  info.objectives = "time_s:min,residual:min";
  info.pick = "weighted 2,1";
  { auto store = Store::create(dir / "good.h5", info); }
  const auto read = Store::open_read(dir / "good.h5").campaign();
  EXPECT_EQ(read.objectives, "time_s:min,residual:min");
  EXPECT_EQ(read.pick, "weighted 2,1");
  info.objectives = "time_s:min,residual";
  { auto store = Store::create(dir / "objectives.h5", info); }
  expect_open_error(dir / "objectives.h5",
                    "/campaign attribute 'objectives' or 'pick': 'residual' has no direction: write residual:min or "
                    "residual:max");
  info.objectives = "time_s:min,residual:min";
  info.pick = "weighted 1";
  { auto store = Store::create(dir / "pick.h5", info); }
  expect_open_error(dir / "pick.h5",
                    "/campaign attribute 'objectives' or 'pick': gives 1 weights for 2 objectives (e.g. weighted 1,1)");
}

namespace {

// The bytes of a whole campaign file of 20 trials (written as DIR/whole.h5), to damage.
std::string whole_campaign_bytes(const ScratchDir& dir) {
  const auto whole = dir / "whole.h5";
  {
    auto store = Store::create(whole, sample_campaign());
    append_samples(store, 0, 20);
  }
  std::ifstream in(whole, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

// A reader repairs only what a writer killed before its switch to SWMR leaves (swmr_test); a
// file it cannot open for any other reason is never written to, even when it may write there.
// (A guard: HDF5 also refused the write-open the reader used to try on such a file.)
TEST(StoreErrors, AReaderNeverWritesToAFileItCannotOpen) {
  ScratchDir dir;
  const auto bytes = whole_campaign_bytes(dir);
  const auto truncated = dir / "truncated.h5";
  std::ofstream(truncated, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  const auto before = std::filesystem::last_write_time(truncated);
  EXPECT_NE(error_of([&] { Store::open_read(truncated); }), "no error");
  std::ifstream after_in(truncated, std::ios::binary);
  const std::string after((std::istreambuf_iterator<char>(after_in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(after, bytes.substr(0, bytes.size() / 2)) << "the damaged file is left as it was";
  EXPECT_EQ(std::filesystem::last_write_time(truncated), before);
}

// What that rule changed, where the test above cannot tell: a damaged file whose writer lock
// another process holds was taken for a live writer's file and waited for, up to 10 s, before
// its error. It is refused at once now: only HDF5's "already open for write" or its own lock
// makes a reader wait.
TEST(StoreErrors, ADamagedFileIsRefusedAtOnceWhileItsWriterLockIsHeld) {
  ScratchDir dir;
  const auto bytes = whole_campaign_bytes(dir);
  const auto truncated = dir / "truncated.h5";
  std::ofstream(truncated, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  const auto lock = flotilla::results::WriterLock::acquire(truncated);
  ASSERT_TRUE(flotilla::results::WriterLock::is_held(truncated));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_NE(error_of([&] { Store::open_read(truncated); }), "no error");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5)) << "waited for a writer that is not there";
}

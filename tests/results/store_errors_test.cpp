// Exact messages for files that are not campaign files: messages are API.
// The foreign files are made with the HDF5 C API directly, as another tool would make them.
#include "test_records.h"

#include <gtest/gtest.h>
#include <hdf5.h>

#include <fstream>
#include <functional>

using namespace flotilla::results;
using namespace flotilla::results::testing;

namespace {

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const StoreError& error) {
    return error.what();
  }
  return "no error";
}

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
  expect_open_error(path, "schema version 7 is not supported by flotilla 0.1.0 (supports 1)");
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

// ProgramsTest.cpp — the one program-lookup rule and the install folder (jobs/include/flotilla/jobs/Programs.h),
// on folders of real files: order, executable bits, regular files, relative folders, the errno
// exec would give.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

#include "flotilla/jobs/Programs.h"

namespace flotilla::jobs {
namespace {

namespace fs = std::filesystem;

class ProgramsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    m_root = fs::temp_directory_path() / ("flotilla-programs-" + std::to_string(::getpid()));
    fs::remove_all(m_root);
    for (const char* dir : {"a", "b", "c", "work/rel"}) fs::create_directories(m_root / dir);
  }
  void TearDown() override { fs::remove_all(m_root); }
  fs::path file(const std::string& relative, bool executable) {
    const auto path = m_root / relative;
    std::ofstream(path) << "#!/bin/sh\n";
    fs::permissions(path, executable ? fs::perms::owner_all : fs::perms::owner_read | fs::perms::owner_write);
    return path;
  }
  std::string dir(const char* name) const { return (m_root / name).string(); }
  fs::path m_root;
};

TEST_F(ProgramsTest, TheFirstFolderWithAnExecutableFileWins) {
  file("b/tool", true);
  file("c/tool", true);
  const auto list = dir("a") + ":" + dir("b") + ":" + dir("c");
  EXPECT_EQ(std::get<std::string>(find_program("tool", list)), dir("b") + "/tool");
  EXPECT_EQ(find_program_path("tool", list), m_root / "b" / "tool");
}

TEST_F(ProgramsTest, ANonExecutableFileIsSkippedAndMakesTheErrorEacces) {
  file("a/tool", false);
  EXPECT_EQ(std::get<int>(find_program("tool", dir("a"))), EACCES);
  file("b/tool", true);
  EXPECT_EQ(std::get<std::string>(find_program("tool", dir("a") + ":" + dir("b"))), dir("b") + "/tool");
  EXPECT_EQ(std::get<int>(find_program("none", dir("a"))), ENOENT);
  EXPECT_EQ(std::get<int>(find_program("", dir("a"))), ENOENT);
  EXPECT_TRUE(find_program_path("none", dir("a")).empty());
}

TEST_F(ProgramsTest, AFolderOfThatNameIsNoProgram) {
  fs::create_directories(m_root / "a" / "tool");
  EXPECT_EQ(std::get<int>(find_program("tool", dir("a"))), ENOENT);
}

TEST_F(ProgramsTest, ANameWithASlashIsUsedAsItIs) {
  EXPECT_EQ(std::get<std::string>(find_program("./x/none", dir("a"))), "./x/none");  // exec reports the error
}

TEST_F(ProgramsTest, RelativeFoldersAndEmptyEntriesAreTheChildsWorkdir) {
  file("work/rel/tool", true);
  file("work/here", true);
  EXPECT_EQ(std::get<std::string>(find_program("tool", "rel", m_root / "work")), "rel/tool");
  EXPECT_EQ(std::get<std::string>(find_program("here", dir("a") + "::" + dir("b"), m_root / "work")), "./here");
  EXPECT_EQ(std::get<int>(find_program("tool", "rel", m_root / "a")), ENOENT);
}

TEST(Programs, SearchPathPutsThePrependedFoldersFirst) {
  EXPECT_EQ(search_path({"/x", "/y"}, "/usr/bin:/bin"), "/x:/y:/usr/bin:/bin");
  EXPECT_EQ(search_path({}, "/usr/bin"), "/usr/bin");
  EXPECT_EQ(search_path({"/x"}, ""), "/x");  // the prepended folders alone
  EXPECT_FALSE(inherited_path().empty());
}

TEST(Programs, InstallDirIsTheRunningExecutablesFolder) {
  const auto dir = install_dir();
  ASSERT_FALSE(dir.empty());
  EXPECT_TRUE(fs::exists(dir / "jobs_test"));
}

}  // namespace
}  // namespace flotilla::jobs

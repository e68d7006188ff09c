// PrivateDirTest.cpp — the folders a backend keeps its manifests in cannot be predicted, pre-made
// or swapped by another user (hostile input: the mpi backend reused /tmp/flotilla-mpi-PID-0, so
// a folder another user pre-made mode 777 let them swap a job's manifest and run commands as us).
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "mpi/MpiBackend.h"
#include "process/PrivateDir.h"

namespace fs = std::filesystem;
using namespace flotilla::jobs;

namespace {

fs::path fresh_parent(const std::string& name) {
  auto dir = fs::temp_directory_path() / ("flotilla-test-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms::owner_all);
  return dir;
}

unsigned mode_of(const fs::path& path) {
  struct stat info {};
  EXPECT_EQ(::lstat(path.c_str(), &info), 0) << path;
  return info.st_mode & 07777;
}

pid_t dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  return child;
}

}  // namespace

TEST(PrivateDir, FreshModeSevenHundredAndNeverTheSameName) {
  const auto parent = fresh_parent("fresh");
  const auto old_umask = ::umask(0);  // a careless umask must not open the folder
  const auto a = make_private_dir(parent, "flotilla-mpi");
  const auto b = make_private_dir(parent, "flotilla-mpi");
  ::umask(old_umask);
  EXPECT_NE(a, b);
  EXPECT_EQ(a.parent_path(), parent);
  EXPECT_TRUE(a.filename().string().starts_with("flotilla-mpi-" + std::to_string(::getpid()) + "-"));
  EXPECT_EQ(mode_of(a), 0700u);
  EXPECT_EQ(mode_of(b), 0700u);
  fs::remove_all(parent);
}

TEST(PrivateDir, MissingParentIsCreatedPrivate) {
  const auto parent = fresh_parent("missing") / "campaign.jobs";
  const auto dir = make_private_dir(parent, "flotilla-mpi");
  EXPECT_EQ(mode_of(parent), 0700u);
  EXPECT_EQ(dir.parent_path(), parent);
  fs::remove_all(parent.parent_path());
}

TEST(PrivateDir, RefusesAParentOthersMayRenameIn) {
  const auto parent = fresh_parent("open");
  ::chmod(parent.c_str(), 0777);
  try {
    make_private_dir(parent, "flotilla-mpi");
    FAIL() << "a folder writable by everyone without the sticky bit was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(parent.string()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("sticky"), std::string::npos) << e.what();
  }
  ::chmod(parent.c_str(), 01777);  // as /tmp: others cannot rename what is ours
  EXPECT_NO_THROW(make_private_dir(parent, "flotilla-mpi"));
  fs::remove_all(parent);
}

TEST(PrivateDir, ParentRefusalRules) {
  EXPECT_EQ(parent_refusal(S_IFDIR | 0755, 1000, 1000), "");
  EXPECT_EQ(parent_refusal(S_IFDIR | 01777, 0, 1000), "");     // /tmp
  EXPECT_NE(parent_refusal(S_IFDIR | 0777, 1000, 1000), "");   // ours, but anyone may swap entries
  EXPECT_NE(parent_refusal(S_IFDIR | 0775, 1000, 1000), "");   // the group too
  EXPECT_NE(parent_refusal(S_IFDIR | 0755, 1001, 1000), "");   // someone else's
  EXPECT_NE(parent_refusal(S_IFREG | 0700, 1000, 1000), "");
}

TEST(PrivateDir, StaleFoldersOfDeadRunsGoLiveOnesAndSymlinksStay) {
  const auto parent = fresh_parent("stale");
  const auto dead = parent / ("flotilla-mpi-" + std::to_string(dead_pid()) + "-abcdef");
  fs::create_directories(dead);
  std::ofstream(dead / "job-0.json") << "{}";
  const auto live = make_private_dir(parent, "flotilla-mpi");
  // A symlink with a dead run's name must not lead the removal elsewhere.
  const auto target = fresh_parent("stale-target");
  std::ofstream(target / "keep") << "keep";
  fs::create_directory_symlink(target, parent / ("flotilla-mpi-" + std::to_string(dead_pid()) + "-link00"));
  const auto other = parent / "unrelated-1-x";
  fs::create_directories(other);

  EXPECT_EQ(remove_stale_private_dirs(parent, "flotilla-mpi"), 1u);
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::is_directory(live));
  EXPECT_TRUE(fs::exists(target / "keep"));
  EXPECT_TRUE(fs::is_directory(other));
  fs::remove_all(parent);
  fs::remove_all(target);
}

// The attack as it was made: the folder the backend used to take (/tmp/flotilla-mpi-PID-0) is
// pre-made, open to all, with a manifest in it. The backend never uses it.
TEST(PrivateDir, MpiBackendNeverUsesAPreMadeFolder) {
  const auto predictable = fs::temp_directory_path() / ("flotilla-mpi-" + std::to_string(::getpid()) + "-0");
  fs::remove_all(predictable);
  fs::create_directories(predictable);
  ::chmod(predictable.c_str(), 0777);
  std::ofstream(predictable / "job-0.json") << "planted";
  const auto jobs_dir = fresh_parent("mpi-jobs");
  fs::path used;
  {
    MpiBackend backend({.name = "mpi", .slots = 1, .jobs_dir = jobs_dir});
    used = backend.folder();
    EXPECT_NE(used, predictable);
    EXPECT_EQ(used.parent_path(), jobs_dir);
    EXPECT_EQ(mode_of(used), 0700u);
  }
  EXPECT_FALSE(fs::exists(used));  // removed with the backend
  {
    MpiBackend backend({.name = "mpi", .slots = 1});  // no campaign folder: $TMPDIR, still private
    EXPECT_NE(backend.folder(), predictable);
    EXPECT_EQ(mode_of(backend.folder()), 0700u);
  }
  std::ifstream planted(predictable / "job-0.json");
  std::string text;
  planted >> text;
  EXPECT_EQ(text, "planted");
  fs::remove_all(predictable);
  fs::remove_all(jobs_dir);
}

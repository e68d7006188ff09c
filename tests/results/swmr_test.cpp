// SWMR behaviour against a real second process (tests/results/results_writer.cpp): reading
// while it writes, and recovering after it is SIGKILLed with the file open.
#include "test_records.h"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <thread>

extern char** environ;

using namespace flotilla::results;
using namespace flotilla::results::testing;

namespace {

// The writer helper, spawned (fork+exec: an HDF5 state merely forked is unusable) with pipes
// on its stdin and stdout.
class WriterProcess {
 public:
  WriterProcess(const std::string& mode, const std::filesystem::path& path, int trials) {
    int to_child[2];
    int from_child[2];
    if (::pipe(to_child) != 0 || ::pipe(from_child) != 0) throw std::runtime_error("pipe");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, to_child[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, from_child[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, to_child[1]);
    posix_spawn_file_actions_addclose(&actions, from_child[0]);
    const std::string count = std::to_string(trials);
    const char* argv[] = {FLOTILLA_RESULTS_WRITER, mode.c_str(), path.c_str(), count.c_str(),
                          nullptr};
    const int rc =
        posix_spawn(&m_pid, argv[0], &actions, nullptr, const_cast<char**>(argv), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(to_child[0]);
    ::close(from_child[1]);
    m_stdin = to_child[1];
    m_stdout = from_child[0];
    if (rc != 0) throw std::runtime_error(std::string("posix_spawn: ") + std::strerror(rc));
  }
  WriterProcess(const WriterProcess&) = delete;
  WriterProcess& operator=(const WriterProcess&) = delete;
  ~WriterProcess() {
    if (m_pid > 0) kill_now();
    ::close(m_stdin);
    ::close(m_stdout);
  }

  // The next line the writer prints ("open", "ready N"), or "" after 30 s or at its exit.
  std::string read_line() {
    std::string line;
    char c = 0;
    pollfd fd{m_stdout, POLLIN, 0};
    while (::poll(&fd, 1, 30000) == 1 && ::read(m_stdout, &c, 1) == 1 && c != '\n') line += c;
    return line;
  }
  void send(const std::string& line) {
    const std::string text = line + "\n";
    ASSERT_EQ(::write(m_stdin, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  }
  // Kills with SIGKILL and returns the wait status.
  int kill_now() {
    ::kill(m_pid, SIGKILL);
    return wait();
  }
  // Closes its stdin, which makes it close the file and exit; returns the wait status.
  int finish() {
    ::close(m_stdin);
    m_stdin = -1;
    return wait();
  }

 private:
  int wait() {
    int status = 0;
    ::waitpid(m_pid, &status, 0);
    m_pid = -1;
    return status;
  }
  pid_t m_pid = -1;
  int m_stdin = -1;
  int m_stdout = -1;
};

void expect_trials_read_back(const Store& store, std::size_t count) {
  const auto trials = store.trials();
  ASSERT_EQ(trials.size(), count);
  for (std::size_t i = 0; i < count; ++i) {
    const TrialRecord expected = sample_trial(static_cast<std::int64_t>(i));
    EXPECT_TRUE(trials[i].same_key(expected)) << "trial " << i;
    EXPECT_EQ(trials[i].objective, expected.objective) << "trial " << i;
    EXPECT_EQ(trials[i].output_tail, expected.output_tail) << "trial " << i;
    ASSERT_EQ(trials[i].metrics.size(), 2u) << "trial " << i;
    EXPECT_EQ(trials[i].metrics[1].value, expected.metrics[1].value) << "trial " << i;
  }
}

}  // namespace

TEST(Swmr, ReadsWhileAnotherProcessWrites) {
  ScratchDir dir;
  const auto path = dir / "campaign.h5";
  WriterProcess writer("create", path, 5);
  ASSERT_EQ(writer.read_line(), "open");
  ASSERT_EQ(writer.read_line(), "ready 5");

  const Store reader = Store::open_read(path);
  EXPECT_EQ(reader.campaign().name, "stencil-tuning");
  expect_trials_read_back(reader, 5);
  writer.send("more 4");
  ASSERT_EQ(writer.read_line(), "ready 9");
  expect_trials_read_back(reader, 9);                     // the same open Store sees the new rows
  EXPECT_EQ(reader.events().size(), 9u);
  EXPECT_EQ(reader.candidates().size(), 5u);
  try {
    Store::open_for_append(path);
    ADD_FAILURE() << "a second writer was let in";
  } catch (const StoreError& error) {
    EXPECT_EQ(std::string(error.what()),
              path.string() + ": is open for writing by another process (another `flotilla run` of this campaign?): "
                            "wait for it to finish, or stop it, then run the same command again");
  }
  const int status = writer.finish();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  expect_trials_read_back(Store::open_read(path), 9);
}

TEST(Swmr, RecoversAfterWriterIsKilled) {
  ScratchDir dir;
  const auto path = dir / "campaign.h5";
  {
    WriterProcess writer("create", path, 20);
    ASSERT_EQ(writer.read_line(), "open");
    ASSERT_EQ(writer.read_line(), "ready 20");
    const int status = writer.kill_now();
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  }
  expect_trials_read_back(Store::open_read(path), 20);
  {
    Store store = Store::open_for_append(path);
    EXPECT_FALSE(store.add_trial(sample_trial(19)));   // keys survived the crash
    append_samples(store, 20, 5);
  }
  expect_trials_read_back(Store::open_read(path), 25);

  // A second crash on the repaired file, this time by a writer that reopened it.
  {
    WriterProcess writer("append", path, 10);
    ASSERT_EQ(writer.read_line(), "open");
    ASSERT_EQ(writer.read_line(), "ready 35");
    writer.kill_now();
  }
  { Store store = Store::open_for_append(path); append_samples(store, 35, 1); }
  const Store store = Store::open_read(path);
  expect_trials_read_back(store, 36);
  EXPECT_EQ(store.events().size(), 36u);
  EXPECT_EQ(store.candidates().size(), 18u);
}

// A writer process in `mode` killed 300 ms into a long stream of writes: the file reopens, every
// trial in it is whole (metrics included), and the campaign continues from there.
static void kill_writer_then_continue(const char* mode) {
  ScratchDir dir;
  const auto path = dir / "campaign.h5";
  {
    WriterProcess writer(mode, path, 1000000);
    ASSERT_EQ(writer.read_line(), "open");
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    writer.kill_now();
  }
  std::size_t recorded = 0;
  {
    const Store reader = Store::open_read(path);
    recorded = reader.trials().size();
    ASSERT_GT(recorded, 0u);
    expect_trials_read_back(reader, recorded);
  }
  Store store = Store::open_for_append(path);
  EXPECT_EQ(store.trials().size(), recorded);
  append_samples(store, static_cast<std::int64_t>(recorded), 3);
  expect_trials_read_back(store, recorded + 3);
}

TEST(Swmr, KillMidWriteLosesAtMostTheRecordInProgress) { kill_writer_then_continue("create"); }

// Store::Group: its records reach the file together at the commit, and a writer killed inside a
// group loses that group and nothing recorded before it.
TEST(Swmr, GroupIsWrittenAtCommitAndLostWholeByAKill) {
  ScratchDir dir;
  const auto path = dir / "campaign.h5";
  {
    WriterProcess writer("create", path, 4);
    ASSERT_EQ(writer.read_line(), "open");
    ASSERT_EQ(writer.read_line(), "ready 4");
    const Store reader = Store::open_read(path);
    writer.send("group 6");
    ASSERT_EQ(writer.read_line(), "grouped 10");
    expect_trials_read_back(reader, 4);                  // held in the writer's memory, not in the file
    EXPECT_EQ(reader.candidates().size(), 2u);
    EXPECT_EQ(reader.events().size(), 4u);
    writer.send("commit");
    ASSERT_EQ(writer.read_line(), "ready 10");
    expect_trials_read_back(reader, 10);
    EXPECT_EQ(reader.candidates().size(), 5u);
    EXPECT_EQ(reader.events().size(), 10u);
    writer.send("group 5");
    ASSERT_EQ(writer.read_line(), "grouped 15");
    writer.kill_now();
  }
  expect_trials_read_back(Store::open_read(path), 10);
  Store store = Store::open_for_append(path);
  EXPECT_EQ(store.candidates().size(), 5u);
  EXPECT_EQ(store.events().size(), 10u);
  append_samples(store, 10, 2);
  expect_trials_read_back(store, 12);
}

// Killed at a random point of a stream of committed groups (possibly inside a commit): the file
// reopens, every trial in it is whole, and the campaign continues from there.
TEST(Swmr, KillDuringGroupedWritesLeavesAReadableFile) { kill_writer_then_continue("grouped"); }

// A writer in `mode` that appends `trials` and closes the file cleanly, leaving `total` recorded.
static void write_and_close(const std::string& mode, const std::filesystem::path& path, int trials, int total) {
  WriterProcess writer(mode, path, trials);
  ASSERT_EQ(writer.read_line(), "open");
  ASSERT_EQ(writer.read_line(), "ready " + std::to_string(total));
  writer.finish();
}

// A writer killed between opening the file and switching it to SWMR mode (a resume's first
// moments, which take seconds at 10^6 trials) left its superblock marked "open for write", which
// neither a SWMR reader nor a plain one may open: `results summary` failed until the next run
// repaired it (early_kill_never_strands_the_file hit it under load). A reader now repairs it as
// that run would, when no writer holds the file, and reads every row.
TEST(Swmr, AWriterKilledBeforeItsSwitchToSwmrLeavesAReadableFile) {
  ScratchDir dir;
  const auto path = dir / "campaign.h5";
  write_and_close("create", path, 30, 30);
  {
    WriterProcess opened("opened", path, 0);
    ASSERT_EQ(opened.read_line(), "open");
    opened.kill_now();
  }
  ASSERT_FALSE(has_live_writer(path));
  expect_trials_read_back(Store::open_read(path), 30);
  // And the next writer appends after every row.
  write_and_close("append", path, 5, 35);
  expect_trials_read_back(Store::open_read(path), 35);
}

// A reader that comes while a live writer is in that window waits for it (it never clears the
// marks of a writer that holds the file) and reads the file once the writer has moved on.
TEST(Swmr, AReaderWaitsForALiveWriterToLeaveItsNonSwmrOpen) {
  ScratchDir dir;
  const auto path = dir / "campaign.h5";
  write_and_close("create", path, 10, 10);
  WriterProcess opened("opened", path, 0);
  ASSERT_EQ(opened.read_line(), "open");
  ASSERT_TRUE(has_live_writer(path));
  std::thread finisher([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    opened.finish();  // closes the file: its marks go with it
  });
  const auto start = std::chrono::steady_clock::now();
  std::size_t read = 0;
  EXPECT_NO_THROW(read = Store::open_read(path).trials().size());
  finisher.join();
  EXPECT_EQ(read, 10u);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(250));  // it waited
}

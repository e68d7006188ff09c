// ResultSinkTest.cpp — the job-file writer thread of rank 0 (jobs/src/worker/Dispatcher.h,
// ResultSink): records handed over one at a time and in batches, while its thread commits them
// in groups (by count and by delay), all reach the file once, in order, with their ranks. Run
// under ThreadSanitizer (FLOTILLA_SANITIZE=thread, docs/verification.md) this is the unit test
// of the hand-over between the dispatch loop and the writer thread.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "BackendTestUtil.h"
#include "flotilla/results/JobFile.h"
#include "worker/Dispatcher.h"

namespace flotilla::jobs::worker {
namespace {

results::JobRecord record(std::uint64_t id, std::int32_t rank) {
  results::JobRecord r;
  r.id = id;
  r.status = results::TrialStatus::ok;
  r.start = static_cast<double>(id);
  r.end = r.start + 0.5;
  r.objective = static_cast<double>(id % 7);
  r.metrics = {{"gflops", r.objective}};
  r.output_tail = id % 1000 == 0 ? "flotilla-metric: gflops=1\n" : "";
  r.rank = rank;
  return r;
}

TEST(ResultSink, EveryRecordReachesTheFileOnceInOrderWhileItsThreadCommits) {
  test::ScratchDir dir;
  const auto path = dir.path() / "job.h5";
  constexpr std::uint64_t kSingles = 300;
  constexpr std::uint64_t kBatches = 3;
  constexpr std::uint64_t kBatch = ResultSink::kCommitRows + 100;  // each fills a group at once
  std::size_t commits = 0;
  {
    results::JobFileWriter out = results::JobFileWriter::create(path, {"job-sink", kSingles + kBatches * kBatch, "head", 1.0, ""});
    ResultSink sink(out);
    sink.add_rank({1, "node1", "cpu", "0"});
    std::uint64_t id = 0;
    for (; id < kSingles; ++id) {
      sink.add(record(id, 1));
      // Now and then longer than the commit delay: the thread commits what it has by time.
      if (id % 100 == 99) std::this_thread::sleep_for(ResultSink::kCommitDelay * 2);
    }
    sink.add_rank({2, "node2", "cpu", "1"});
    for (std::uint64_t b = 0; b < kBatches; ++b) {
      std::vector<results::JobRecord> batch;
      for (std::uint64_t i = 0; i < kBatch; ++i) batch.push_back(record(id++, 2));
      sink.add(batch);
      EXPECT_TRUE(batch.empty());  // moved from
    }
    sink.finish();
    commits = sink.commits();
    sink.finish();  // a second finish does nothing
  }
  const results::JobFileContents contents = results::read_job_file(path);
  ASSERT_EQ(contents.ranks.size(), 2u);
  ASSERT_EQ(contents.records.size(), kSingles + kBatches * kBatch);
  for (std::uint64_t i = 0; i < contents.records.size(); ++i) {
    ASSERT_EQ(contents.records[i].id, i);
    ASSERT_EQ(contents.records[i].rank, i < kSingles ? 1 : 2);
  }
  EXPECT_EQ(contents.records[1000].output_tail, "flotilla-metric: gflops=1\n");
  // At least one commit per pause of the singles and one per batch; far fewer than the records.
  EXPECT_GE(commits, kSingles / 100 + 1);
  EXPECT_LT(commits, 100u);
}

TEST(ResultSink, DestroyedWithoutFinishStillWritesWhatItWasGiven) {
  test::ScratchDir dir;
  const auto path = dir.path() / "job.h5";
  {
    results::JobFileWriter out = results::JobFileWriter::create(path, {"job-sink", 3, "head", 1.0, ""});
    ResultSink sink(out);
    sink.add_rank({1, "node1", "cpu", "0"});
    for (std::uint64_t id = 0; id < 3; ++id) sink.add(record(id, 1));
  }  // ~ResultSink finishes before the writer closes
  EXPECT_EQ(results::read_job_file(path).records.size(), 3u);
}

}  // namespace
}  // namespace flotilla::jobs::worker

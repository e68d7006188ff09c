// JobFileTest.cpp — the worker's job file: written by one writer, read back whole or while it
// grows, reopened after a rerun; and read as jobs::TaskResult values.
#include <gtest/gtest.h>

#include <cmath>

#include "BackendTestUtil.h"
#include "flotilla/jobs/JobResults.h"
#include "flotilla/results/JobFile.h"

namespace flotilla::results {
namespace {

JobRecord record(std::uint64_t id, std::int32_t rank, std::string tail = "", std::vector<Metric> metrics = {}) {
  JobRecord r;
  r.id = id;
  r.status = TrialStatus::ok;
  r.start = 100.0 + static_cast<double>(id);
  r.end = r.start + 0.5;
  r.objective = metrics.empty() ? std::nan("") : metrics.front().value;
  r.output_tail = std::move(tail);
  r.metrics = std::move(metrics);
  r.rank = rank;
  return r;
}

TEST(JobFile, WrittenRecordsReadBackWithTheirRanksPlacement) {
  jobs::test::ScratchDir dir;
  const auto path = dir.path() / "job.h5";
  {
    JobFileWriter out = JobFileWriter::create(path, {"job-1", 3, "head", 12.5, ""});
    out.add_rank({1, "node1", "cpu"});
    out.add_rank({2, "node2", "GPU-1"});
    JobRecord failed = record(8, 2, "partial output\n");
    failed.status = TrialStatus::failed;
    failed.exit_code = 3;
    failed.reason = "exit code 3";
    const std::vector<JobRecord> batch{record(7, 1, "hello\n", {{"gflops", 2.5}, {"time_s", 0.25}}), failed};
    out.append(batch);
    out.append(std::vector<JobRecord>{record(9, 1)});
  }
  const JobFileContents contents = read_job_file(path);
  EXPECT_EQ(contents.info.name, "job-1");
  EXPECT_EQ(contents.info.tasks, 3u);
  EXPECT_EQ(contents.info.host, "head");
  EXPECT_EQ(contents.ranks.size(), 2u);
  ASSERT_EQ(contents.records.size(), 3u);
  const JobRecord& first = contents.records[0];
  EXPECT_EQ(first.id, 7u);
  EXPECT_EQ(first.output_tail, "hello\n");
  ASSERT_EQ(first.metrics.size(), 2u);
  EXPECT_EQ(first.metrics[1].name, "time_s");
  EXPECT_EQ(first.metrics[1].value, 0.25);
  EXPECT_EQ(first.objective, 2.5);
  EXPECT_EQ(first.host, "node1");
  const JobRecord& second = contents.records[1];
  EXPECT_EQ(second.status, TrialStatus::failed);
  EXPECT_EQ(second.reason, "exit code 3");
  EXPECT_EQ(second.output_tail, "partial output\n");
  EXPECT_EQ(second.exit_code, 3);
  EXPECT_EQ(second.host, "node2");
  EXPECT_EQ(second.device, "GPU-1");
  EXPECT_TRUE(std::isnan(contents.records[2].objective));
}

TEST(JobFile, ReaderSeesRecordsAsTheyAreAppended) {
  jobs::test::ScratchDir dir;
  const auto path = dir.path() / "job.h5";
  JobFileWriter out = JobFileWriter::create(path, {"job", 4, "h", 0, ""});
  JobFileReader reader = JobFileReader::open(path);
  EXPECT_TRUE(reader.read_new().empty());
  out.append(std::vector<JobRecord>{record(1, 1, "one\n")});
  auto first = reader.read_new();
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].output_tail, "one\n");
  out.append(std::vector<JobRecord>{record(2, 1, "two\n", {{"m", 1}}), record(3, 1, "three\n")});
  auto next = reader.read_new();
  ASSERT_EQ(next.size(), 2u);
  EXPECT_EQ(next[0].output_tail, "two\n");
  EXPECT_EQ(next[0].metrics.size(), 1u);
  EXPECT_EQ(next[1].output_tail, "three\n");
  EXPECT_TRUE(reader.read_new().empty());
}

TEST(JobFile, ReopenedForARerunKnowsWhatIsRecorded) {
  jobs::test::ScratchDir dir;
  const auto path = dir.path() / "job.h5";
  {
    JobFileWriter out = JobFileWriter::create(path, {"job", 2, "h", 0, ""});
    JobRecord retried = record(5, 1, "x");
    retried.attempt = 1;
    out.append(std::vector<JobRecord>{retried});
  }
  JobFileWriter again = JobFileWriter::open_for_append(path);
  EXPECT_EQ(again.recorded(), (std::vector<std::pair<std::uint64_t, std::int32_t>>{{5, 1}}));
  again.append(std::vector<JobRecord>{record(6, 1, "y")});
  EXPECT_EQ(read_job_file(path).records.size(), 2u);
  EXPECT_THROW(JobFileWriter::create(path, {"job", 2, "h", 0, ""}), StoreError);
}

TEST(JobFile, ForeignFilesAreRefusedByName) {
  jobs::test::ScratchDir dir;
  try {
    (void)read_job_file(dir.path() / "none.h5");
    FAIL() << "no error";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()), (dir.path() / "none.h5").string() + ": no such file");
  }
  const auto campaign = dir.path() / "campaign.h5";
  (void)Store::create(campaign, CampaignInfo{.name = "c"});
  try {
    (void)read_job_file(campaign);
    FAIL() << "no error";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()),
              campaign.string() + ": not a flotilla job file (no 'flotilla_job_schema' attribute on /)");
  }
}

TEST(JobResults, TaskResultsSurviveTheJobFile) {
  jobs::test::ScratchDir dir;
  const auto path = dir.path() / "job.h5";
  jobs::TaskResult sent;
  sent.id = 99;
  sent.status = jobs::TaskStatus::timeout;
  sent.start = 1;
  sent.end = 3;
  sent.exit_code = 137;
  sent.reason = "timed out after 2s";
  sent.output_tail = "tail";
  sent.metrics = {{"n", 1}};
  sent.attempt = 2;
  sent.rank = 3;
  {
    JobFileWriter out = JobFileWriter::create(path, {"job", 1, "h", 0, ""});
    out.add_rank({3, "node3", "0"});
    out.append(std::vector<JobRecord>{jobs::to_job_record(sent)});
  }
  const auto results = jobs::read_job_results(path);
  ASSERT_EQ(results.size(), 1u);
  const jobs::TaskResult& got = results[0];
  EXPECT_EQ(got.id, 99u);
  EXPECT_EQ(got.status, jobs::TaskStatus::timeout);
  EXPECT_EQ(got.exit_code, 137);
  EXPECT_EQ(got.reason, sent.reason);
  EXPECT_EQ(got.output_tail, "tail");
  EXPECT_EQ(got.metrics, sent.metrics);
  EXPECT_EQ(got.objective, std::nullopt);
  EXPECT_EQ(got.attempt, 2);
  EXPECT_EQ(got.rank, 3);
  EXPECT_EQ(got.host, "node3");
  EXPECT_EQ(got.device, "0");
}

}  // namespace
}  // namespace flotilla::results

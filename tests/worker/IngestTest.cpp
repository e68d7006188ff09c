// IngestTest.cpp — a worker job file into the campaign file: every trial once, however often.
#include <gtest/gtest.h>

#include "BackendTestUtil.h"
#include "flotilla/jobs/JobResults.h"
#include "flotilla/results/JobFile.h"
#include "flotilla/scheduler/Ingest.h"
#include "flotilla/scheduler/Planning.h"

namespace flotilla::scheduler {
namespace {

jobs::TaskResult result(TaskKey key, jobs::TaskStatus status, int attempt = 0) {
  jobs::TaskResult r;
  r.id = encode_task_id(key);
  r.status = status;
  r.start = 10;
  r.end = 11;
  r.reason = status == jobs::TaskStatus::ok ? "" : "exit code 1";
  r.exit_code = status == jobs::TaskStatus::ok ? 0 : 1;
  if (status == jobs::TaskStatus::ok) {
    r.metrics = {{"gflops", 2.0}};
    r.objective = 2.0;
  }
  r.attempt = attempt;
  r.rank = 2;
  return r;
}

TEST(Ingest, TrialRecordCarriesKeyAttemptAndPlacement) {
  jobs::TaskResult r = result({5, results::TrialKind::evaluate, 3}, jobs::TaskStatus::ok, 1);
  r.host = "node7";
  r.device = "1";
  const auto trial = to_trial_record(r);
  ASSERT_TRUE(trial);
  EXPECT_EQ(trial->candidate, 5);
  EXPECT_EQ(trial->kind, results::TrialKind::evaluate);
  EXPECT_EQ(trial->index, 3);
  EXPECT_EQ(trial->attempt, 1);
  EXPECT_EQ(trial->objective, 2.0);
  EXPECT_EQ(trial->rank, 2);
  EXPECT_EQ(trial->host, "node7");
  EXPECT_EQ(trial->device, "1");
  EXPECT_FALSE(to_trial_record(result({5, results::TrialKind::explore, 0}, jobs::TaskStatus::cancelled)));
  const auto lost = to_trial_record(result({5, results::TrialKind::explore, 0}, jobs::TaskStatus::lost));
  ASSERT_TRUE(lost);
  EXPECT_EQ(lost->status, results::TrialStatus::failed);  // recorded only once attempts are spent
}

TEST(Ingest, LostTasksAreRequeuedWhileAttemptsRemain) {
  const TaskKey key{1, results::TrialKind::explore, 0};
  EXPECT_TRUE(should_requeue(result(key, jobs::TaskStatus::lost, 0), 3));
  EXPECT_TRUE(should_requeue(result(key, jobs::TaskStatus::lost, 1), 3));
  EXPECT_FALSE(should_requeue(result(key, jobs::TaskStatus::lost, 2), 3));
  EXPECT_FALSE(should_requeue(result(key, jobs::TaskStatus::failed, 0), 3));
}

TEST(Ingest, IngestingAJobFileTwiceAddsNothing) {
  jobs::test::ScratchDir dir;
  const auto job = dir.path() / "job.h5";
  {
    auto out = results::JobFileWriter::create(job, {"job", 4, "h", 0, ""});
    out.add_rank({2, "node2", "cpu"});
    std::vector<results::JobRecord> records;
    for (auto r : {result({0, results::TrialKind::explore, 0}, jobs::TaskStatus::ok),
                   result({0, results::TrialKind::explore, 1}, jobs::TaskStatus::failed),
                   result({1, results::TrialKind::evaluate, 0}, jobs::TaskStatus::ok, 1),
                   result({1, results::TrialKind::evaluate, 1}, jobs::TaskStatus::cancelled)})
      records.push_back(jobs::to_job_record(r));
    out.append(records);
  }
  auto store = results::Store::create(dir.path() / "campaign.h5", results::CampaignInfo{.name = "c"});
  store.add_candidate({0, 0, "x=1", "baseline"});
  store.add_candidate({1, 1, "x=2", "random"});
  const IngestReport first = ingest_job_file(store, job);
  EXPECT_EQ(first.added.size(), 3u);
  EXPECT_EQ(first.already_recorded, 0u);
  EXPECT_EQ(first.not_trials, 1u);
  const IngestReport second = ingest_job_file(store, job);
  EXPECT_TRUE(second.added.empty());
  EXPECT_EQ(second.already_recorded, 3u);
  const auto trials = store.trials();
  ASSERT_EQ(trials.size(), 3u);
  EXPECT_EQ(trials[2].attempt, 1);
  EXPECT_EQ(trials[2].host, "node2");
  EXPECT_EQ(trials[0].metrics.size(), 1u);
  EXPECT_THROW(ingest_job_file(store, dir.path() / "missing.h5"), results::StoreError);
}

}  // namespace
}  // namespace flotilla::scheduler

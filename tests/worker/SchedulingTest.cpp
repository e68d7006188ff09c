// SchedulingTest.cpp — batch sizes and prefetch of the dispatcher (Scheduling.h).
#include <gtest/gtest.h>

#include "Scheduling.h"

namespace flotilla::jobs::worker {
namespace {

const BatchPolicy kPolicy{};  // 2 ms batches, at most 1024 tasks, prefetch below 50 ms

TEST(Scheduling, FirstBatchIsOneTask) { EXPECT_EQ(batch_size(kPolicy, std::nullopt, 1'000'000, 4), 1u); }

TEST(Scheduling, ShortTasksAreBatchedToAboutTwoMilliseconds) {
  EXPECT_EQ(batch_size(kPolicy, 1e-5, 1'000'000, 4), 200u);   // 2 ms / 10 us
  EXPECT_EQ(batch_size(kPolicy, 1e-7, 1'000'000, 4), 1024u);  // capped
  EXPECT_EQ(batch_size(kPolicy, 0.0, 1'000'000, 4), 1024u);   // a zero measurement is not a division by zero
}

TEST(Scheduling, ThousandsOfWorkersGetLongerBatches) {
  // 4,000 workers: 80 ms batches, so rank 0 sees about 50,000 messages a second, not 2 million.
  EXPECT_EQ(batch_size(kPolicy, 1e-3, 100'000'000, 4000), 80u);
  EXPECT_EQ(batch_size(kPolicy, 1e-3, 100'000'000, 50), 2u);  // 50 workers: the 2 ms floor
}

TEST(Scheduling, LongTasksGoOneAtATime) { EXPECT_EQ(batch_size(kPolicy, 3.0, 1'000'000, 4), 1u); }

TEST(Scheduling, BatchesShrinkTowardsTheEnd) {
  EXPECT_EQ(batch_size(kPolicy, 1e-7, 800, 4), 100u);  // remaining / (2 * workers)
  EXPECT_EQ(batch_size(kPolicy, 1e-7, 3, 4), 1u);
  EXPECT_EQ(batch_size(kPolicy, 1e-7, 0, 4), 0u);
}

TEST(Scheduling, PrefetchOnlyShortTasksWhileThereIsWorkForEveryone) {
  EXPECT_EQ(batches_in_hand(kPolicy, std::nullopt, 100, 4), 2u);
  EXPECT_EQ(batches_in_hand(kPolicy, 1e-3, 100, 4), 2u);
  EXPECT_EQ(batches_in_hand(kPolicy, 1.0, 100, 4), 1u);
  EXPECT_EQ(batches_in_hand(kPolicy, 1e-3, 3, 4), 1u);
}

}  // namespace
}  // namespace flotilla::jobs::worker

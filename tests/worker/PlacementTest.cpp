// PlacementTest.cpp — how a rank picks its device from the launcher's environment.
#include <gtest/gtest.h>

#include <set>

#include "flotilla/jobs/Placement.h"

namespace flotilla::jobs {
namespace {

DeviceChoice choose(std::optional<std::string> slurm, std::optional<std::string> ompi,
                    std::optional<std::string> visible, unsigned gpus = 0) {
  return choose_device(DeviceEnv{std::move(slurm), std::move(ompi), std::move(visible), gpus});
}

TEST(Placement, NoGpuMeansCpu) {
  const DeviceChoice choice = choose(std::nullopt, std::nullopt, std::nullopt);
  EXPECT_EQ(choice.device, "cpu");
  EXPECT_EQ(choice.visible, std::nullopt);
  EXPECT_EQ(choose("3", std::nullopt, "").device, "cpu");    // set but empty: no GPU at all
  EXPECT_EQ(choose("3", std::nullopt, "-1").device, "cpu");  // the usual way to hide them
}

TEST(Placement, LocalRankPicksAnEntryRoundRobin) {
  EXPECT_EQ(choose("0", std::nullopt, "0,1,2,3").device, "0");
  EXPECT_EQ(choose("2", std::nullopt, "0,1,2,3").device, "2");
  EXPECT_EQ(choose("5", std::nullopt, "4,5,6,7").device, "5");  // 5 % 4 = 1: the second entry
  EXPECT_EQ(choose(std::nullopt, "3", "0, 1").device, "1");
  const DeviceChoice uuid = choose("1", std::nullopt, "GPU-aaaa,GPU-bbbb");
  EXPECT_EQ(uuid.device, "GPU-bbbb");
  EXPECT_EQ(uuid.visible, "GPU-bbbb");
  EXPECT_EQ(uuid.local_rank, 1);
}

TEST(Placement, SlurmLocalIdWinsOverOpenMpis) {
  EXPECT_EQ(choose("1", "0", "0,1").device, "1");
  EXPECT_EQ(choose("x", "0", "0,1").device, "0");  // not a number: the next source
  EXPECT_EQ(choose("-2", std::nullopt, "0,1").local_rank, 0);
}

TEST(Placement, ABoundSingleGpuIsKeptByEveryRank) {
  EXPECT_EQ(choose("3", std::nullopt, "2").device, "2");  // srun --gpus-per-task=1 already chose
}

TEST(Placement, InvalidEntryEndsTheListAsInCuda) {
  EXPECT_EQ(choose("1", std::nullopt, "0,-1,2").device, "0");  // only "0" is visible
}

TEST(Placement, GpusPresentWithoutCudaVisibleDevices) {
  const DeviceChoice choice = choose(std::nullopt, "5", std::nullopt, 4);
  EXPECT_EQ(choice.device, "1");
  EXPECT_EQ(choice.visible, "1");
}

TEST(Placement, LocalPlacementIsRankZeroOnThisHost) {
  const Placement placement = local_placement();
  EXPECT_EQ(placement.rank, 0);
  EXPECT_EQ(placement.host, host_name());
  EXPECT_FALSE(placement.device.empty());
}

DeviceChoice choose_ranked(int local, int global, int size, std::string visible) {
  return choose_device(DeviceEnv{std::to_string(local), std::nullopt, std::move(visible), 0, std::to_string(global),
                                 std::to_string(size)});
}

// ranks_per_node = 4 with gpus_per_node = 4: the first node runs the dispatcher and four task
// ranks, and each of the four GPUs has one rank (before, GPU 0 sat idle behind the dispatcher).
TEST(Placement, TheDispatcherHoldsNoGpuAndEachGpuGetsATaskRank) {
  const DeviceChoice dispatcher = choose_ranked(0, 0, 9, "0,1,2,3");
  EXPECT_TRUE(dispatcher.dispatcher);
  EXPECT_EQ(dispatcher.device, "cpu");
  EXPECT_EQ(dispatcher.visible, "");  // hidden from CUDA, so it makes no context on a GPU
  std::set<std::string> first_node, second_node;
  for (int local = 1; local <= 4; ++local) first_node.insert(choose_ranked(local, local, 9, "0,1,2,3").device);
  for (int local = 0; local < 4; ++local) second_node.insert(choose_ranked(local, 5 + local, 9, "0,1,2,3").device);
  EXPECT_EQ(first_node, (std::set<std::string>{"0", "1", "2", "3"}));
  EXPECT_EQ(second_node, (std::set<std::string>{"0", "1", "2", "3"}));
  // A rank alone runs its tasks itself: it keeps its GPU.
  EXPECT_EQ(choose_ranked(0, 0, 1, "0,1").device, "0");
  // No GPU: nothing changes for the dispatcher either.
  EXPECT_EQ(choose_ranked(0, 0, 4, "").visible, std::nullopt);
}


// The id users see in squeue and sacct: an array element is ARRAYJOB_TASK, not its own job id.
TEST(Placement, SlurmJobTextNamesArrayElementsAsSqueueDoes) {
  EXPECT_EQ(slurm_job_text("812", std::nullopt, std::nullopt), "812");
  EXPECT_EQ(slurm_job_text("817", std::string("812"), std::string("4")), "812_4");
  EXPECT_EQ(slurm_job_text(std::nullopt, std::nullopt, std::nullopt), "");
  EXPECT_EQ(slurm_job_text(std::string(""), std::nullopt, std::nullopt), "");
  // Half an array description (a task id without its array job) falls back to the job id.
  EXPECT_EQ(slurm_job_text("817", std::nullopt, std::string("4")), "817");
}

}  // namespace
}  // namespace flotilla::jobs

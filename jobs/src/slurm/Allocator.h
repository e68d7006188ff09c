// Allocator.h — resources.slurm_start = allocate: a job that depends on no other and is not an
// array is first allocated at once (as `salloc --immediate`) when its nodes are free, and its
// script runs from a launcher on this host (`flotilla run-allocation`, SlurmAllocation.cpp) that
// outlives flotilla, as a batch job would. Otherwise the job goes as a batch job.
//
// Why: Slurm 22.05 starts a batch job only at its next once-a-second scheduling tick, while an
// allocation is made inside its RPC (docs/slurm.md).
//
// Invariants:
//  - The allocation's id is journalled (`launching`) before its launcher starts, so a restarted
//    scheduler that finds no launcher cancels it instead of waiting for it to its time limit.
//  - An allocation whose launcher could not start is cancelled at once (nothing runs in it).
//  - After a refusal that was not the campaign's own allocations ending, no allocation is tried
//    for kAllocatePause: each refused request leaves a FAILED job record in Slurm.
#pragma once

#include <filesystem>

#include "Job.h"
#include "JobJournal.h"

namespace flotilla::jobs::slurm {

// How long a job may wait for the campaign's own allocations that are ending (every task
// reported, the launcher releasing) to free their nodes, after one refusal; and how long no
// allocation is tried after a refusal that was not ours.
constexpr auto kOwnAllocationWait = std::chrono::seconds(2);
constexpr auto kAllocatePause = std::chrono::seconds(10);

class Allocator {
 public:
  Allocator(SlurmClient& client, JobJournal& journal, Notice notice, std::filesystem::path flotilla)
      : m_client(client), m_journal(journal), m_notice(std::move(notice)), m_flotilla(std::move(flotilla)) {}

  enum class Outcome {
    allocated,  // allocated and its launcher started: the job runs
    wait,       // the campaign's own allocations are ending: try again in a moment
    batch,      // submit it as a batch job
  };
  // `own_ending`: the campaign's retired allocations are still being released.
  Outcome try_allocate(Job& job, const JobRequest& request, bool own_ending);

 private:
  bool launch(Job& job, JobRequest request, std::uint32_t id);

  SlurmClient& m_client;
  JobJournal& m_journal;
  Notice m_notice;
  std::filesystem::path m_flotilla;  // runs allocated jobs' scripts (`flotilla run-allocation`)
  Clock::time_point m_pause{};       // no allocation tried before this
};

}  // namespace flotilla::jobs::slurm

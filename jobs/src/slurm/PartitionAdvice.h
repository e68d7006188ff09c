// PartitionAdvice.h — why Slurm will not run a job, in the user's terms: which partition limit the
// job breaks (MaxNodes, its node count, MaxTime), or that the partition does not exist or is not
// up, and which flotilla setting to change. Pure functions over a job's request, its stage and
// slurmctld's partitions (SlurmClient::partitions); the Submitter says it when Slurm refuses a
// submission, the Poller when Slurm holds a job PENDING for a reason that never passes.
//
// Invariants: a message names the partition, the limit with its value, and the setting
// (`resources.KEY`, and `resources.STAGE.KEY` for a stage's jobs); nothing here calls Slurm.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flotilla/jobs/Slurm.h"

namespace flotilla::jobs::slurm {

// `scontrol show partition -o` (one partition a line, KEY=VALUE words) as limits.
std::vector<PartitionLimits> parse_partitions(std::string_view text);

// The partition a request goes to: its own, else the cluster's default; nullptr when unknown.
const PartitionLimits* find_partition(const std::vector<PartitionLimits>& partitions, const JobRequest& request);

// The limit of `partition` the request breaks, as a sentence with the setting to change
// ("partition small allows at most 1 node a job (MaxNodes); the job asks for 2: lower
// resources.nodes (resources.evaluate.nodes for evaluate jobs), or choose another partition
// with resources.partition (...)"); nullopt when it breaks none of them.
std::optional<std::string> broken_limit(const PartitionLimits& partition, const JobRequest& request,
                                        std::string_view stage);

// Slurm's pending reasons that no amount of waiting clears: the job breaks a limit of its
// partition (Slurm 22.05 queues such a job unless EnforcePartLimits is set).
bool is_partition_limit_reason(std::string_view reason);

// What to change after Slurm refused a submission with `slurm_message` (either client's text):
// the broken limit when the partitions show one, else what Slurm's error means in settings;
// empty when there is nothing to add to Slurm's message.
std::string refusal_advice(std::string_view slurm_message, const std::vector<PartitionLimits>& partitions,
                           const JobRequest& request, std::string_view stage);

}  // namespace flotilla::jobs::slurm

// Placement.h — where a task ran (rank, host, device), and how an MPI rank picks its GPU.
//
// A rank binds one device from the launcher's node-local rank and the GPUs it may use:
//   local rank: SLURM_LOCALID, else OMPI_COMM_WORLD_LOCAL_RANK, else 0;
//   devices:    the entries of CUDA_VISIBLE_DEVICES; when it is unset, the GPUs present
//               (/dev/nvidia0, /dev/nvidia1, ...) as 0, 1, ...; none: the rank runs on the CPU;
//   choice:     devices[slot % devices], so ranks share GPUs round-robin when there are more
//               ranks than GPUs on a node (and a launcher that bound one GPU per task leaves one
//               entry, which every rank then keeps). The slot is the local rank, except beside
//               the dispatcher: in a job of more than one rank, global rank 0 (OMPI_COMM_WORLD_RANK,
//               else SLURM_PROCID) dispatches and runs no task, so it holds no GPU
//               (CUDA_VISIBLE_DEVICES="") and the ranks of its node (global rank == local rank,
//               as block distribution places them) take slots local rank - 1: with N GPUs and
//               N + 1 ranks on the first node, each GPU has one rank that runs tasks.
// The rank sets CUDA_VISIBLE_DEVICES to its one entry before Kokkos or CUDA start, so in-process
// kernels and the commands it forks see only that device. choose_device is a pure function of
// the environment's strings, so every rule above is tested without a launcher or a GPU.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace flotilla::jobs {

struct Placement {
  int rank = 0;
  std::string host;
  std::string device;  // "cpu", or the CUDA_VISIBLE_DEVICES value the task ran with
  std::string cores;   // the CPUs the task may run on ("0-3"); empty: not known
  std::string slurm_job;  // the Slurm job it ran in ("812", "813_4" for an array element); empty: none
};

// "JOB" or "ARRAYJOB_TASK" from SLURM_JOB_ID, SLURM_ARRAY_JOB_ID and SLURM_ARRAY_TASK_ID, as
// squeue and sacct name the job; "" outside Slurm. Pure.
std::string slurm_job_text(const std::optional<std::string>& job_id, const std::optional<std::string>& array_job_id,
                           const std::optional<std::string>& array_task_id);
// slurm_job_text of this process's environment.
std::string current_slurm_job();

// The environment variables (unset: nullopt) and GPU count that choose_device reads.
struct DeviceEnv {
  std::optional<std::string> slurm_localid;
  std::optional<std::string> ompi_local_rank;
  std::optional<std::string> cuda_visible_devices;
  unsigned gpus_present = 0;  // /dev/nvidiaN files; used only when CUDA_VISIBLE_DEVICES is unset
  std::optional<std::string> global_rank;  // OMPI_COMM_WORLD_RANK, else SLURM_PROCID
  std::optional<std::string> world_size;   // OMPI_COMM_WORLD_SIZE, else SLURM_STEP_NUM_TASKS, SLURM_NTASKS
};

struct DeviceChoice {
  int local_rank = 0;
  bool dispatcher = false;             // global rank 0 of several: runs no task, holds no GPU
  std::string device;                  // "cpu" or the chosen entry, e.g. "1" or "GPU-8f3c..."
  std::optional<std::string> visible;  // what to set CUDA_VISIBLE_DEVICES to; nullopt: leave it
};

DeviceChoice choose_device(const DeviceEnv& env);

// This process's environment and /dev, as choose_device reads them.
DeviceEnv current_device_env();

// The CPUs this process may run on (sched_getaffinity), in order.
std::vector<int> allowed_cpus();
// "0-3,8,10-11": a CPU list as Linux writes it (cpuset, taskset -c).
std::string cpu_list_text(const std::vector<int>& cpus);
// The CPUs of slot `slot` of `slots` over `cpus`: equal contiguous blocks when there are at least
// as many CPUs as slots (the first blocks one CPU larger when they do not divide), else one CPU,
// round-robin. Pure.
std::vector<int> slot_cpus(const std::vector<int>& cpus, unsigned slot, unsigned slots);

// gethostname(), or "unknown".
std::string host_name();

// Where the local backend's tasks run: rank 0, this host, and "cpu" or the GPUs they see
// (CUDA_VISIBLE_DEVICES, or every GPU present when it is unset).
Placement local_placement();

}  // namespace flotilla::jobs

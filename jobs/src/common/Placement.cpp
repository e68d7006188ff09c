// Placement.cpp — device choice (pure), and reading it from this process's environment.
#include "flotilla/jobs/Placement.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>

#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <string_view>
#include <vector>

namespace flotilla::jobs {
namespace {

std::optional<int> local_rank_of(const std::optional<std::string>& text) {
  if (!text || text->empty()) return std::nullopt;
  int value = -1;
  const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (error != std::errc() || end != text->data() + text->size() || value < 0) return std::nullopt;
  return value;
}

std::string trimmed(std::string_view text) {
  const auto begin = text.find_first_not_of(" \t");
  if (begin == std::string_view::npos) return {};
  return std::string(text.substr(begin, text.find_last_not_of(" \t") - begin + 1));
}

// CUDA's reading of CUDA_VISIBLE_DEVICES: comma-separated entries, and an invalid one (such as
// the "-1" used to hide every GPU) ends the list.
std::vector<std::string> visible_entries(const std::string& value) {
  std::vector<std::string> entries;
  for (std::size_t begin = 0; begin <= value.size();) {
    std::size_t end = value.find(',', begin);
    if (end == std::string::npos) end = value.size();
    const std::string entry = trimmed(std::string_view(value).substr(begin, end - begin));
    if (entry.empty() || entry.front() == '-') break;
    entries.push_back(entry);
    begin = end + 1;
  }
  return entries;
}

std::optional<std::string> env(const char* name) {
  const char* value = std::getenv(name);
  return value ? std::optional<std::string>(value) : std::nullopt;
}

unsigned count_gpu_device_files() {
  unsigned count = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/dev", error)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > 6 && name.starts_with("nvidia") && name.find_first_not_of("0123456789", 6) == std::string::npos)
      ++count;
  }
  return count;
}

}  // namespace

DeviceChoice choose_device(const DeviceEnv& env) {
  DeviceChoice choice;
  choice.local_rank = local_rank_of(env.slurm_localid).value_or(local_rank_of(env.ompi_local_rank).value_or(0));
  std::vector<std::string> devices;
  if (env.cuda_visible_devices) {
    devices = visible_entries(*env.cuda_visible_devices);
  } else {
    for (unsigned gpu = 0; gpu < env.gpus_present; ++gpu) devices.push_back(std::to_string(gpu));
  }
  const auto global = local_rank_of(env.global_rank), size = local_rank_of(env.world_size);
  const bool several = size && *size > 1;
  if (devices.empty() || (several && global == 0)) {
    choice.device = "cpu";
    if (!devices.empty()) {  // the dispatcher: no CUDA context of its own on a GPU a rank needs
      choice.dispatcher = true;
      choice.visible = "";
    }
    return choice;
  }
  int slot = choice.local_rank;
  if (several && global && *global == choice.local_rank && slot > 0) --slot;  // beside the dispatcher
  choice.device = devices[static_cast<std::size_t>(slot) % devices.size()];
  choice.visible = choice.device;
  return choice;
}

DeviceEnv current_device_env() {
  // mpirun's own variables first: a worker started by mpirun inside a Slurm allocation inherits
  // the batch step's SLURM_PROCID, which says nothing of its rank.
  DeviceEnv result{env("SLURM_LOCALID"), env("OMPI_COMM_WORLD_LOCAL_RANK"), env("CUDA_VISIBLE_DEVICES"), 0,
                   env("OMPI_COMM_WORLD_RANK"), env("OMPI_COMM_WORLD_SIZE")};
  if (!result.global_rank) result.global_rank = env("SLURM_PROCID");
  if (!result.world_size) result.world_size = env("SLURM_STEP_NUM_TASKS");
  if (!result.world_size) result.world_size = env("SLURM_NTASKS");
  if (!result.cuda_visible_devices) result.gpus_present = count_gpu_device_files();
  return result;
}

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (::sched_getaffinity(0, sizeof set, &set) == 0)
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  return cpus;
}

std::string cpu_list_text(const std::vector<int>& cpus) {
  std::string text;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!text.empty()) text += ",";
    text += j == i ? std::to_string(cpus[i]) : std::to_string(cpus[i]) + "-" + std::to_string(cpus[j]);
    i = j + 1;
  }
  return text;
}

std::vector<int> slot_cpus(const std::vector<int>& cpus, unsigned slot, unsigned slots) {
  if (cpus.empty() || slots == 0) return {};
  if (cpus.size() < slots) return {cpus[slot % cpus.size()]};
  const std::size_t base = cpus.size() / slots, extra = cpus.size() % slots;
  const std::size_t begin = slot * base + std::min<std::size_t>(slot, extra);
  const std::size_t size = base + (slot < extra ? 1 : 0);
  return std::vector<int>(cpus.begin() + static_cast<long>(begin), cpus.begin() + static_cast<long>(begin + size));
}

std::string host_name() {
  char buffer[256] = {};
  return ::gethostname(buffer, sizeof buffer - 1) == 0 ? std::string(buffer) : "unknown";
}

Placement local_placement() {
  const DeviceEnv device_env = current_device_env();
  std::string device = "cpu";
  if (device_env.cuda_visible_devices) {
    const auto entries = visible_entries(*device_env.cuda_visible_devices);
    if (!entries.empty()) device = *device_env.cuda_visible_devices;
  } else if (device_env.gpus_present > 0) {
    device.clear();
    for (unsigned gpu = 0; gpu < device_env.gpus_present; ++gpu) device += (gpu ? "," : "") + std::to_string(gpu);
  }
  return Placement{0, host_name(), device, "", current_slurm_job()};
}

std::string slurm_job_text(const std::optional<std::string>& job_id, const std::optional<std::string>& array_job_id,
                           const std::optional<std::string>& array_task_id) {
  const auto given = [](const std::optional<std::string>& v) { return v && !v->empty(); };
  // An array element's SLURM_JOB_ID is its own id; users and sacct know it as ARRAY_TASK.
  if (given(array_job_id) && given(array_task_id)) return *array_job_id + "_" + *array_task_id;
  return given(job_id) ? *job_id : std::string();
}

std::string current_slurm_job() {
  const auto read = [](const char* name) -> std::optional<std::string> {
    const char* value = std::getenv(name);
    return value ? std::optional<std::string>(value) : std::nullopt;
  };
  return slurm_job_text(read("SLURM_JOB_ID"), read("SLURM_ARRAY_JOB_ID"), read("SLURM_ARRAY_TASK_ID"));
}

}  // namespace flotilla::jobs

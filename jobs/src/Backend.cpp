// Backend.cpp — the one explicit list of backends. A new backend (Slurm, the MPI worker) adds a
// line here; there is deliberately no static-initialiser self-registration, which the linker
// drops from static libraries. A row says how to make the backend, which settings it declares,
// how it reads them (null: it has none beyond BackendOptions' plain fields) and what it can do.
#include "flotilla/jobs/Backend.h"

#include <array>
#include <stdexcept>

#include "flotilla/jobs/SlurmSettings.h"
#include "local/LocalBackend.h"
#include "mpi/MpiBackend.h"
#include "slurm/SlurmBackend.h"

namespace flotilla::jobs {
namespace {

struct BackendEntry {
  std::string_view name;
  std::unique_ptr<Backend> (*make)(const BackendOptions&);
  const std::vector<BackendSetting>& (*settings)();  // declared next to the backend
  std::shared_ptr<const BackendConfig> (*read)(SettingsSource&);  // its own settings; null: none
  BackendCapabilities capabilities;
};

// local and mpi run on this host; their settings (slots, pin, ranks) are BackendOptions' plain fields.
constexpr std::array kBackends{
    BackendEntry{"local", &make_local_backend, &local_backend_settings, nullptr, {}},
    BackendEntry{"mpi", &make_mpi_backend, &mpi_backend_settings, nullptr, {}},
    BackendEntry{"slurm", &make_slurm_backend, &slurm_backend_settings, &read_slurm_settings, kSlurmCapabilities},
};

// The backend that runs tasks as processes on this host.
constexpr std::string_view kHostBackend = "local";

const BackendEntry* find_entry(std::string_view name) {
  for (const auto& entry : kBackends)
    if (entry.name == name) return &entry;
  return nullptr;
}

}  // namespace

std::unique_ptr<Backend> make_backend(const BackendOptions& options) {
  for (const auto& entry : kBackends)
    if (entry.name == options.name) return entry.make(options);
  std::string known;
  for (const auto& entry : kBackends)
    known += (known.empty() ? "" : ", ") + std::string(entry.name);
  throw std::invalid_argument("unknown backend '" + options.name + "' (known: " + known + ")");
}

std::vector<BackendSetting> backend_settings() {
  std::vector<BackendSetting> all;
  for (const auto& entry : kBackends) all.insert(all.end(), entry.settings().begin(), entry.settings().end());
  return all;
}

BackendConfigs read_backend_configs(SettingsSource& source) {
  BackendConfigs configs;
  for (const auto& entry : kBackends)
    if (entry.read) configs.add(entry.name, entry.read(source));
  return configs;
}

BackendCapabilities backend_capabilities(std::string_view name) {
  const auto* entry = find_entry(name);
  return entry ? entry->capabilities : BackendCapabilities{};
}

std::vector<std::string_view> backends_with(bool BackendCapabilities::*capability) {
  std::vector<std::string_view> names;
  for (const auto& entry : kBackends)
    if (entry.capabilities.*capability) names.push_back(entry.name);
  return names;
}

bool backend_renders_job_scripts(std::string_view name) { return backend_capabilities(name).job_scripts; }

std::unique_ptr<Backend> make_host_backend(BackendOptions options) {
  options.name = kHostBackend;
  options.config = nullptr;
  return make_backend(options);
}

std::vector<std::string_view> backend_names() {
  std::vector<std::string_view> names;
  for (const auto& entry : kBackends) names.push_back(entry.name);
  return names;
}

}  // namespace flotilla::jobs

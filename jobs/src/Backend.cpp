// Backend.cpp — the one explicit list of backends. A new backend (Slurm, the MPI worker) adds a
// line here; there is deliberately no static-initialiser self-registration, which the linker
// drops from static libraries.
#include "flotilla/jobs/Backend.h"

#include <array>
#include <stdexcept>

#include "local/LocalBackend.h"
#include "mpi/MpiBackend.h"
#include "slurm/SlurmBackend.h"

namespace flotilla::jobs {
namespace {

struct BackendEntry {
  std::string_view name;
  std::unique_ptr<Backend> (*make)(const BackendOptions&);
  const std::vector<BackendSetting>& (*settings)();  // declared next to the backend
  bool renders_job_scripts;
};

constexpr std::array kBackends{
    BackendEntry{"local", &make_local_backend, &local_backend_settings, false},
    BackendEntry{"mpi", &make_mpi_backend, &mpi_backend_settings, false},
    BackendEntry{"slurm", &make_slurm_backend, &slurm_backend_settings, true},
};

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

bool backend_renders_job_scripts(std::string_view name) {
  for (const auto& entry : kBackends)
    if (entry.name == name) return entry.renders_job_scripts;
  return false;
}

std::vector<std::string_view> backend_names() {
  std::vector<std::string_view> names;
  for (const auto& entry : kBackends) names.push_back(entry.name);
  return names;
}

}  // namespace flotilla::jobs

// SlurmClients.h — the two SlurmClient implementations (internal to jobs).
#pragma once

#include <memory>

#include "flotilla/jobs/Slurm.h"

namespace flotilla::jobs {

std::unique_ptr<SlurmClient> make_api_client();      // libslurm
std::unique_ptr<SlurmClient> make_command_client();  // sbatch / squeue --json / scancel

}  // namespace flotilla::jobs

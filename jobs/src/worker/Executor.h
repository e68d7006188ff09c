// Executor.h — runs one manifest task on this rank and returns its result, whatever happens.
//
// Kernel tasks run in-process through kernels::run_variant, the very function behind the
// flotilla-kernel executable, and their text goes through the same metrics parser and status
// rules (Outcome.h) as a process's output: so a variant gives the same trial result either way.
// A kernel task the registry cannot run as given (unknown family or parameter name) runs its
// argv as a process instead, when it has one. Command tasks run through the local backend with
// one slot (fork/exec, process-group timeouts, output capture): the rank is the unit of
// parallelism. An in-process kernel cannot be interrupted: its timeout is checked when it
// returns (reported as a timeout, as if the process had been killed at the deadline).
// Needs a live kernels::Runtime for Kokkos families. Every result carries this rank's placement.
#pragma once

#include <memory>

#include "flotilla/jobs/Backend.h"
#include "flotilla/jobs/Manifest.h"
#include "flotilla/jobs/Placement.h"

namespace flotilla::jobs::worker {

class Executor {
 public:
  explicit Executor(Placement placement);
  TaskResult run(const ManifestTask& task);

 private:
  TaskResult run_kernel(const KernelTask& kernel);
  TaskResult run_command(const ManifestTask& task, const CommandTask& command);

  Placement m_placement;
  std::unique_ptr<Backend> m_processes;
};

}  // namespace flotilla::jobs::worker

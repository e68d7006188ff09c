// Mpi.h — the kernels' one checked wrapper over the MPI C API (allreduce_norm across ranks).
//
// Invariants:
//  - Every MPI call of the kernels goes through FLOTILLA_KERNELS_MPI(call), MPI_Init and the
//    queries of MPI's state included: a return code other than MPI_SUCCESS becomes an
//    MpiFailure naming the call, MPI's message and file:line, as the worker's wrapper does
//    (jobs/src/worker/Mpi.h), which a family turns into a failed result, never an abort.
//  - The communicator a family runs on returns errors to those checks (MPI_ERRORS_RETURN)
//    instead of aborting the job: MPI_COMM_WORLD when this process initialised MPI itself
//    (flotilla-kernel under mpirun), MPI_COMM_SELF when its host had (in-process in
//    flotilla-worker, whose ranks run unrelated tasks and must not meet in a collective).
//  - The only unchecked call is MPI_Finalize at exit, where nothing may throw.
#pragma once

// The MPI C API only: keep the deprecated C++ bindings (and their library) out.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <stdexcept>

namespace flotilla::kernels::mpi {

class MpiFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] void throw_failure(int code, const char* call, const char* file, int line);

inline void check(int code, const char* call, const char* file, int line) {
  if (code != MPI_SUCCESS) throw_failure(code, call, file, line);
}

#define FLOTILLA_KERNELS_MPI(call) ::flotilla::kernels::mpi::check((call), #call, __FILE__, __LINE__)

// The communicator a family runs on (see above), MPI initialised on first use and finalised at
// exit when this process initialised it. Throws MpiFailure when MPI cannot be initialised.
MPI_Comm communicator();

}  // namespace flotilla::kernels::mpi

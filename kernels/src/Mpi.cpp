// Mpi.cpp — the kernels' checked MPI wrapper (Mpi.h).
#include "Mpi.h"

#include <cstdlib>
#include <cstring>
#include <string>

namespace flotilla::kernels::mpi {

void throw_failure(int code, const char* call, const char* file, int line) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) std::strcpy(text, "unknown MPI error");
  const std::string name(call, std::strcspn(call, "("));  // the call's name, without its arguments
  const char* base = std::strrchr(file, '/');
  throw MpiFailure(name + " failed: " + text + " (" + (base ? base + 1 : file) + ":" + std::to_string(line) + ")");
}

namespace {

// Whether this process initialised MPI (and so owns MPI_COMM_WORLD); initialises it if nobody had.
bool initialise_once() {
  int initialised = 0;
  FLOTILLA_KERNELS_MPI(MPI_Initialized(&initialised));
  if (initialised) return false;
  FLOTILLA_KERNELS_MPI(MPI_Init(nullptr, nullptr));
  std::atexit([] {
    int finalised = 0;
    if (MPI_Finalized(&finalised) == MPI_SUCCESS && !finalised) MPI_Finalize();  // at exit: nothing may throw
  });
  return true;
}

}  // namespace

MPI_Comm communicator() {
  static const MPI_Comm comm = [] {
    const MPI_Comm c = initialise_once() ? MPI_COMM_WORLD : MPI_COMM_SELF;
    FLOTILLA_KERNELS_MPI(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
    return c;
  }();
  return comm;
}

}  // namespace flotilla::kernels::mpi

// MpiTest.cpp — the kernels' checked MPI wrapper (kernels/src/Mpi.h), on this process's own
// MPI (a singleton MPI_COMM_WORLD: kernels_test runs without mpirun).
#include <gtest/gtest.h>

#include <string>

#include "Mpi.h"

namespace fm = flotilla::kernels::mpi;

namespace {

TEST(KernelsMpi, TheCommunicatorIsInitialisedOnceAndReturnsErrors) {
  const MPI_Comm comm = fm::communicator();
  EXPECT_EQ(comm, MPI_COMM_WORLD);  // nobody had initialised MPI: this process owns the world
  EXPECT_EQ(fm::communicator(), comm);
  int initialised = 0;
  FLOTILLA_KERNELS_MPI(MPI_Initialized(&initialised));
  EXPECT_TRUE(initialised);
  MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
  FLOTILLA_KERNELS_MPI(MPI_Comm_get_errhandler(comm, &handler));
  EXPECT_EQ(handler, MPI_ERRORS_RETURN);  // a failed call comes back to the check, the job is not aborted
  MPI_Errhandler_free(&handler);
}

TEST(KernelsMpi, AFailedCallNamesTheCallMpisMessageAndTheLine) {
  const MPI_Comm comm = fm::communicator();
  int line = 0;
  try {
    line = __LINE__ + 1;
    FLOTILLA_KERNELS_MPI(MPI_Bcast(&line, 1, MPI_INT, /*root=*/7, comm));  // no rank 7 in a world of one
    FAIL() << "MPI_Bcast to a root that does not exist succeeded";
  } catch (const fm::MpiFailure& e) {
    char text[MPI_MAX_ERROR_STRING] = {};
    int length = 0;
    MPI_Error_string(MPI_ERR_ROOT, text, &length);
    EXPECT_EQ(std::string(e.what()), "MPI_Bcast failed: " + std::string(text) + " (MpiTest.cpp:" + std::to_string(line) + ")");
  }
}

}  // namespace

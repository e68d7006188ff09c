// AllreduceNcclRun.h — internal: the NCCL twin of `allreduce_norm` (allreduce_nccl.cu, built only
// with FLOTILLA_HAVE_CUDA), behind a signature free of CUDA, NCCL and MPI types. The caller
// (AllreduceFamily.cpp) exchanges the NCCL unique id over MPI and reduces times and errors.
// Kept C++17: nvcc includes it.
#pragma once

#include <string>
#include <vector>

#include "flotilla/kernels/Family.h"

namespace flotilla::kernels::nccl_allreduce {

inline constexpr int id_bytes = 128;  // NCCL_UNIQUE_ID_BYTES

// Why this rank cannot use a GPU, or "" when it can.
std::string unavailable();
// Rank 0: a fresh NCCL unique id, as bytes. Throws std::runtime_error naming the NCCL call.
std::string unique_id();

struct Run {
  Outcome outcome = Outcome::ok;  // failed: a CUDA or NCCL error, named
  std::string message;
  double time_s = 0;     // `iters` steps after a warm-up (CUDA events, this rank)
  std::vector<float> x;  // keep: the residual after one step
  std::vector<float> y;  // keep: the normalised output after one step
};

// One GPU per rank (device rank % count). separate: ncclAllReduce, then residual+RMSNorm on every
// row; fused: ncclReduceScatter, the epilogue on this rank's rows/ranks rows, in-place ncclAllGather.
Run run(const std::string& id, int rank, int ranks, bool fused, bool norm_fused, int vec, const float* x,
        const float* partial, const float* gamma, int rows, int d, int iters, bool keep);

}  // namespace flotilla::kernels::nccl_allreduce

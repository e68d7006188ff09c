// DecodeCudaRun.h — internal: the native CUDA twins of the rmsnorm, gemv and attention families
// (decode_cuda.cu, built only with FLOTILLA_HAVE_CUDA), behind signatures free of CUDA and
// Kokkos types. Inputs and outputs are host arrays, row-major, as in DecodeKernels.h; the
// families verify the outputs against the same double references as the Kokkos versions.
// Kept C++17: nvcc includes it, and CMake 3.25 drives nvcc in C++17 mode only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "flotilla/kernels/Family.h"

namespace flotilla::kernels::decode_cuda {

struct Run {
  Outcome outcome = Outcome::ok;  // skipped: no usable GPU; failed: a CUDA error (named)
  std::string message;
  double time_s = 0;        // `iters` calls after one warm-up, CUDA events
  std::vector<float> out;   // keep: y (norm, gemv) or the attention output
  std::vector<float> out2;  // keep, norm: the updated residual x
};

// x, delta: rows x d; warps of 32 lanes, one per row, `rows_per_block` (<= 32) rows per block.
Run norm(const float* x, const float* delta, const float* gamma, int rows, int d, bool fused, int vec,
         int rows_per_block, int iters, bool keep);
// w32 (or w16 when bf16): rows x cols; x: batch x cols; one warp per output row.
Run gemv(const float* w32, const std::uint16_t* w16, bool bf16, const float* x, int rows, int cols, int batch,
         int rows_per_block, int unroll, int split_k, int iters, bool keep);
// q: batch x (heads*head_dim); k, v: seq_len x (heads*head_dim); one warp per (token, head, split).
Run attention(const float* q, const float* k, const float* v, int seq_len, int heads, int head_dim, int batch,
              int splits, int iters, bool keep);

// For other CUDA files: enqueue residual+RMSNorm on device pointers (default stream), no checks.
void launch_residual_rmsnorm(float* x, const float* delta, const float* gamma, float* y, int rows, int d, bool fused,
                             int vec, int rows_per_block);

}  // namespace flotilla::kernels::decode_cuda

// StencilRun.h — internal: the two implementations of one stencil variant (Kokkos, native CUDA)
// behind one signature, so StencilFamily.cpp owns parameters, timing rules and verification.
//
// Kept C++17 and free of Kokkos and CUDA types: stencil_cuda.cu includes it through nvcc, which
// CMake 3.25 can only drive in C++17 mode.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "flotilla/kernels/Family.h"

namespace flotilla::kernels::stencil {

// One variant, already validated (StencilFamily.cpp): n % unroll == 0, tiles >= 1.
struct Variant {
  int n = 0;            // interior extent
  int iters = 0;        // sweeps
  int tile_x = 0;       // work items per tile along j (CUDA: blockDim.x)
  int tile_y = 0;       // rows per tile along i (CUDA: blockDim.y)
  int unroll = 1;       // consecutive j points per work item: 1, 2 or 4
  bool single = false;  // float instead of double
  std::uint64_t seed = 0;
  bool cuda = false;  // run the native CUDA twin instead of Kokkos
};

// benchmark: one untimed warm-up sweep, then `iters` timed sweeps, no grid copied back.
// verify: exactly `iters` sweeps from the initial grid, final grid copied back as doubles.
enum class Mode { benchmark, verify };

struct Sweeps {
  Outcome outcome = Outcome::ok;  // skipped/failed only from the CUDA twin
  std::string message;
  double time_s = 0;         // benchmark mode
  std::vector<double> grid;  // verify mode: (n+2)^2 values, row-major
};

Sweeps run_kokkos(const Variant& variant, Mode mode);  // stencil_kokkos.cpp
Sweeps run_cuda(const Variant& variant, Mode mode);    // stencil_cuda.cu (FLOTILLA_HAVE_CUDA)

}  // namespace flotilla::kernels::stencil

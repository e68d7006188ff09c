// MetadataRun.h — internal: the native CUDA implementation of the `h2d_metadata` family behind
// a signature free of CUDA types (metadata_cuda.cu; built only with FLOTILLA_HAVE_CUDA).
// Kept C++17: nvcc includes it, and CMake 3.25 drives nvcc in C++17 mode only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "flotilla/kernels/Family.h"

namespace flotilla::kernels::metadata {

// Every decode step, the host produces `arrays` small int32 arrays of `ints` values each (token
// ids, positions, sequence lengths, block-table rows...) that a kernel of that step consumes.
struct Variant {
  bool packed = false;  // one packed pinned buffer and one copy, instead of one copy per array
  int arrays = 8;
  int ints = 32;
  int steps = 200;
  std::uint64_t seed = 1;
};

// The value of element i of array a at step s: both the host and the check use it.
inline std::int32_t value(std::uint64_t seed, int step, int array, int i) {
  std::uint64_t x = seed * 0x9e3779b97f4a7c15ULL + (std::uint64_t(step) << 32) + (std::uint64_t(array) << 20) + i;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return static_cast<std::int32_t>((x ^ (x >> 31)) & 0x7fffffff);
}

struct Result {
  Outcome outcome = Outcome::ok;
  std::string message;
  double time_s = 0;                  // all steps: host fill, copies, kernel, synchronisation
  std::vector<std::int64_t> sums;     // verify: the consuming kernel's sum of each (step, array)
};

Result run_cuda(const Variant& variant, bool keep_sums);  // metadata_cuda.cu

}  // namespace flotilla::kernels::metadata

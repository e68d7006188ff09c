// CudaCheck.h — the one checked wrapper of CUDA runtime calls, and the probe that says why no GPU
// can be used. Shared by every .cu file of kernels/ (host code only).
//
// A failed call throws CudaFailure naming the call, CUDA's message and file:line; the family's
// entry point turns it into a `failed` result. No usable device (cudaGetDeviceCount returns 35,
// cudaErrorInsufficientDriver, on machines without a driver) is not an error: it is `skipped`.
#pragma once

#include <cuda_runtime.h>

#include <optional>
#include <string>

namespace flotilla::kernels::cuda {

struct CudaFailure {
  std::string message;
};

inline void check(cudaError_t err, const char* call, const char* file, int line) {
  if (err != cudaSuccess) {
    throw CudaFailure{std::string(call) + " failed: " + cudaGetErrorString(err) + " (" + cudaGetErrorName(err) + ", " +
                      file + ":" + std::to_string(line) + ")"};
  }
}

// Why the GPU cannot be used, or nothing when it can.
inline std::optional<std::string> unavailable() {
  int count = 0;  // left unchanged when cudaGetDeviceCount fails (error 35 without a driver)
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    return "no usable CUDA device: cudaGetDeviceCount failed: " + std::string(cudaGetErrorString(err)) + " (" +
           cudaGetErrorName(err) + " = " + std::to_string(static_cast<int>(err)) + ")";
  }
  if (count == 0) return std::string("no usable CUDA device: cudaGetDeviceCount found 0 devices");
  return std::nullopt;
}

}  // namespace flotilla::kernels::cuda

#define FLOTILLA_CUDA_CHECK(call) ::flotilla::kernels::cuda::check((call), #call, __FILE__, __LINE__)

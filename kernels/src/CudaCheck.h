// CudaCheck.h — the one checked wrapper of CUDA runtime calls, the probe that says why no GPU
// can be used, and the RAII owners of device memory and events. Shared by every .cu file of
// kernels/ (host code only).
//
// A failed call throws CudaFailure naming the call, CUDA's message and file:line; the family's
// entry point turns it into a `failed` result. No usable device (cudaGetDeviceCount returns 35,
// cudaErrorInsufficientDriver, on machines without a driver) is not an error: it is `skipped`.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

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

namespace flotilla::kernels::cuda {

// Owns one device allocation of n elements (at least one, so n = 0 is a valid buffer); the
// destructor never throws (a failed cudaFree is ignored).
template <class T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t n) : m_n(n) { FLOTILLA_CUDA_CHECK(cudaMalloc(&m_p, (n ? n : 1) * sizeof(T))); }
  DeviceBuffer(const T* host, std::size_t n) : DeviceBuffer(n) {
    FLOTILLA_CUDA_CHECK(cudaMemcpy(m_p, host, n * sizeof(T), cudaMemcpyHostToDevice));
  }
  ~DeviceBuffer() { cudaFree(m_p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  T* get() const { return m_p; }
  std::vector<T> to_host() const {
    std::vector<T> h(m_n);
    FLOTILLA_CUDA_CHECK(cudaMemcpy(h.data(), m_p, m_n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
  }

 private:
  T* m_p = nullptr;
  std::size_t m_n = 0;
};

class Event {
 public:
  Event() { FLOTILLA_CUDA_CHECK(cudaEventCreate(&m_e)); }
  ~Event() { cudaEventDestroy(m_e); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return m_e; }

 private:
  cudaEvent_t m_e = nullptr;
};

}  // namespace flotilla::kernels::cuda

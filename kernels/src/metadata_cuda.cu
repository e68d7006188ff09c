// metadata_cuda.cu — the `h2d_metadata` family on a GPU: many small per-step host-to-device
// copies versus one packed copy (built when FLOTILLA_HAVE_CUDA).
//
// Each step: the host writes the step's arrays into pinned memory, copies them to the device
// (one cudaMemcpyAsync per array, or one for a packed buffer), a kernel consumes them (sums each
// array into the step's slot), and the host synchronises, as a decode step does before it reads
// the sampled token. Without a usable GPU the run is `skipped` with CUDA's reason; a CUDA error
// after that is `failed`, naming the call, CUDA's message and file:line.
#include <cuda_runtime.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "CudaCheck.h"
#include "MetadataRun.h"

namespace flotilla::kernels::metadata {

namespace {

using cuda::CudaFailure;
using cuda::unavailable;

// RAII owners of pinned host memory and a stream (device memory: cuda::DeviceBuffer); destructors never throw.
template <class T>
struct Pinned {
  T* p = nullptr;
  explicit Pinned(std::size_t n) { FLOTILLA_CUDA_CHECK(cudaMallocHost(&p, n * sizeof(T))); }
  ~Pinned() { cudaFreeHost(p); }
  Pinned(const Pinned&) = delete;
  Pinned& operator=(const Pinned&) = delete;
};
struct Stream {
  cudaStream_t s = nullptr;
  Stream() { FLOTILLA_CUDA_CHECK(cudaStreamCreate(&s)); }
  ~Stream() { cudaStreamDestroy(s); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
};

// One block per array: sums its ints into sums[slot + array]. `data` holds the arrays back to
// back (`ints` apart), in one device buffer in both variants; only the copies differ.
__global__ void consume(const int* data, int ints, long long* sums, long slot) {
  __shared__ long long partial[256];
  long long sum = 0;
  for (int i = threadIdx.x; i < ints; i += blockDim.x) sum += data[blockIdx.x * static_cast<long>(ints) + i];
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) sums[slot + blockIdx.x] = partial[0];
}

Result run(const Variant& v, bool keep_sums) {
  const std::size_t per = static_cast<std::size_t>(v.ints), total = per * v.arrays;
  std::vector<std::unique_ptr<Pinned<int>>> separate;  // one pinned buffer per array, as separate allocations are
  for (int a = 0; a < (v.packed ? 0 : v.arrays); ++a) separate.push_back(std::make_unique<Pinned<int>>(per));
  Pinned<int> packed(v.packed ? total : 1);
  cuda::DeviceBuffer<int> data(total);
  cuda::DeviceBuffer<long long> sums(static_cast<std::size_t>(v.steps) * v.arrays);
  Stream stream;
  const auto start = std::chrono::steady_clock::now();
  for (int step = 0; step < v.steps; ++step) {
    for (int a = 0; a < v.arrays; ++a) {
      int* host = v.packed ? packed.p + a * per : separate[static_cast<std::size_t>(a)]->p;
      for (int i = 0; i < v.ints; ++i) host[i] = value(v.seed, step, a, i);
      if (!v.packed) {
        FLOTILLA_CUDA_CHECK(cudaMemcpyAsync(data.get() + a * per, host, per * sizeof(int), cudaMemcpyHostToDevice, stream.s));
      }
    }
    if (v.packed) {
      FLOTILLA_CUDA_CHECK(cudaMemcpyAsync(data.get(), packed.p, total * sizeof(int), cudaMemcpyHostToDevice, stream.s));
    }
    consume<<<v.arrays, 256, 0, stream.s>>>(data.get(), v.ints, sums.get(), static_cast<long>(step) * v.arrays);
    FLOTILLA_CUDA_CHECK(cudaGetLastError());
    FLOTILLA_CUDA_CHECK(cudaStreamSynchronize(stream.s));  // the step ends: the host reads its result
  }
  Result result;
  result.time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (keep_sums) {
    std::vector<long long> host(static_cast<std::size_t>(v.steps) * v.arrays);
    FLOTILLA_CUDA_CHECK(cudaMemcpy(host.data(), sums.get(), host.size() * sizeof(long long), cudaMemcpyDeviceToHost));
    result.sums.assign(host.begin(), host.end());
  }
  return result;
}

}  // namespace

Result run_cuda(const Variant& variant, bool keep_sums) {
  Result result;
  if (auto why = unavailable()) {
    result.outcome = Outcome::skipped;
    result.message = *why;
    return result;
  }
  try {
    return run(variant, keep_sums);
  } catch (const CudaFailure& failure) {
    result.outcome = Outcome::failed;
    result.message = failure.message;
    return result;
  }
}

}  // namespace flotilla::kernels::metadata

// allreduce_nccl.cu — the NCCL twin of the allreduce_norm family (AllreduceNcclRun.h): the
// tensor-parallel all-reduce and its residual+RMSNorm epilogue on GPUs, one per rank.
// CUDA and NCCL calls go through checked wrappers naming the call, the library's message and
// file:line; device memory, events and the communicator are RAII. Built with FLOTILLA_HAVE_CUDA.
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstring>
#include <stdexcept>
#include <string>

#include "AllreduceNcclRun.h"
#include "CudaCheck.h"
#include "DecodeCudaRun.h"

namespace flotilla::kernels::nccl_allreduce {

namespace {

struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void nccl_check(ncclResult_t rc, const char* call, const char* file, int line) {
  if (rc != ncclSuccess)
    throw Failure(std::string(call) + " failed: " + ncclGetErrorString(rc) + " (" + file + ":" + std::to_string(line) + ")");
}
#define FLOTILLA_NCCL_CHECK(call) nccl_check((call), #call, __FILE__, __LINE__)

using Buffer = cuda::DeviceBuffer<float>;
using cuda::Event;

class Comm {
 public:
  Comm(const std::string& id, int rank, int ranks) {
    ncclUniqueId unique;
    std::memcpy(&unique, id.data(), sizeof unique);
    FLOTILLA_NCCL_CHECK(ncclCommInitRank(&m_comm, ranks, unique, rank));
  }
  ~Comm() { ncclCommDestroy(m_comm); }
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;
  ncclComm_t get() const { return m_comm; }

 private:
  ncclComm_t m_comm = nullptr;
};


}  // namespace

std::string unavailable() { return cuda::unavailable().value_or(""); }

std::string unique_id() {
  static_assert(sizeof(ncclUniqueId) == id_bytes, "NCCL_UNIQUE_ID_BYTES changed");
  ncclUniqueId id;
  FLOTILLA_NCCL_CHECK(ncclGetUniqueId(&id));
  return std::string(reinterpret_cast<const char*>(&id), sizeof id);
}

Run run(const std::string& id, int rank, int ranks, bool fused, bool norm_fused, int vec, const float* x,
        const float* partial, const float* gamma, int rows, int d, int iters, bool keep) {
  Run result;
  try {
    int count = 0;
    FLOTILLA_CUDA_CHECK(cudaGetDeviceCount(&count));
    FLOTILLA_CUDA_CHECK(cudaSetDevice(rank % count));
    const std::size_t n = static_cast<std::size_t>(rows) * d;
    Buffer dx(x, n), dpartial(partial, n), dreduced(n), dy(n), dgamma(gamma, static_cast<std::size_t>(d));
    Comm comm(id, rank, ranks);
    const cudaStream_t stream = 0;  // the legacy default stream: the norm kernels run there too
    const std::size_t mine = n / ranks, offset = mine * rank;
    auto step = [&] {
      if (!fused) {
        FLOTILLA_NCCL_CHECK(ncclAllReduce(dpartial.get(), dreduced.get(), n, ncclFloat, ncclSum, comm.get(), stream));
        decode_cuda::launch_residual_rmsnorm(dx.get(), dreduced.get(), dgamma.get(), dy.get(), rows, d, norm_fused, vec, 4);
        return;
      }
      FLOTILLA_NCCL_CHECK(
          ncclReduceScatter(dpartial.get(), dreduced.get() + offset, mine, ncclFloat, ncclSum, comm.get(), stream));
      decode_cuda::launch_residual_rmsnorm(dx.get() + offset, dreduced.get() + offset, dgamma.get(), dy.get() + offset,
                                           rows / ranks, d, norm_fused, vec, 4);
      FLOTILLA_NCCL_CHECK(ncclAllGather(dy.get() + offset, dy.get(), mine, ncclFloat, comm.get(), stream));  // in place
    };
    if (keep) {
      step();
      FLOTILLA_CUDA_CHECK(cudaGetLastError());
      result.x = dx.to_host();
      result.y = dy.to_host();
      return result;
    }
    step();  // warm-up: NCCL connections, module load
    FLOTILLA_CUDA_CHECK(cudaDeviceSynchronize());
    Event start, stop;
    FLOTILLA_CUDA_CHECK(cudaEventRecord(start.get(), stream));
    for (int i = 0; i < iters; ++i) step();
    FLOTILLA_CUDA_CHECK(cudaEventRecord(stop.get(), stream));
    FLOTILLA_CUDA_CHECK(cudaGetLastError());
    FLOTILLA_CUDA_CHECK(cudaEventSynchronize(stop.get()));
    float ms = 0;
    FLOTILLA_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    result.time_s = ms / 1e3;
  } catch (const Failure& e) {
    result.outcome = Outcome::failed;
    result.message = e.what();
  } catch (const cuda::CudaFailure& e) {
    result.outcome = Outcome::failed;
    result.message = e.message;
  }
  return result;
}

}  // namespace flotilla::kernels::nccl_allreduce

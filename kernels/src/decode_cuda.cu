// decode_cuda.cu — native CUDA twins of the decode-step kernels (DecodeCudaRun.h): fused or
// separate residual+RMSNorm, GEMV over fp32/bf16 weights with unroll and split-K, and split-K
// (flash-decoding) attention. Built when FLOTILLA_HAVE_CUDA; C++17.
//
// One warp per row (norm), per output row (gemv) or per (token, head, split) (attention); warp
// sums use __shfl_xor_sync, so every lane ends with the same total. Without a usable GPU a run is
// `skipped` with CUDA's reason; a CUDA error after that is `failed`, naming the call and file:line.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "CudaCheck.h"
#include "DecodeCudaRun.h"

namespace flotilla::kernels::decode_cuda {

namespace {

using cuda::CudaFailure;
using cuda::unavailable;

template <class T>
using Buffer = cuda::DeviceBuffer<T>;
using cuda::Event;

// One warm-up call, then `iters` calls between two events.
template <class F>
double time_calls(int iters, F&& call) {
  call();
  FLOTILLA_CUDA_CHECK(cudaGetLastError());
  FLOTILLA_CUDA_CHECK(cudaDeviceSynchronize());
  Event start, stop;
  FLOTILLA_CUDA_CHECK(cudaEventRecord(start.get()));
  for (int i = 0; i < iters; ++i) call();
  FLOTILLA_CUDA_CHECK(cudaEventRecord(stop.get()));
  FLOTILLA_CUDA_CHECK(cudaGetLastError());
  FLOTILLA_CUDA_CHECK(cudaEventSynchronize(stop.get()));
  float ms = 0;
  FLOTILLA_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  return ms / 1e3;
}

template <class F>
Run guarded(F&& body) {
  Run run;
  if (auto why = unavailable()) {
    run.outcome = Outcome::skipped;
    run.message = *why;
    return run;
  }
  try {
    return body();
  } catch (const CudaFailure& failure) {
    run.outcome = Outcome::failed;
    run.message = failure.message;
    return run;
  }
}

__device__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// ---- residual + RMSNorm

__global__ void residual_add(float* x, const float* delta, long n) {
  for (long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; i < n; i += static_cast<long>(gridDim.x) * blockDim.x)
    x[i] += delta[i];
}

template <int V, bool Fused>
__global__ void rmsnorm_rows(float* x, const float* delta, const float* gamma, float* y, int rows, int d, float eps) {
  const int r = blockIdx.x * blockDim.y + threadIdx.y;
  if (r >= rows) return;  // whole warps leave together: r is uniform across a warp
  float* xr = x + static_cast<long>(r) * d;
  const float* dr = delta + static_cast<long>(r) * d;
  float sum = 0;
  for (int c0 = threadIdx.x * V; c0 < d; c0 += 32 * V) {
#pragma unroll
    for (int u = 0; u < V; ++u) {
      const int c = c0 + u;
      if (c < d) {
        float value = xr[c];
        if (Fused) {
          value += dr[c];
          xr[c] = value;
        }
        sum += value * value;
      }
    }
  }
  const float scale = rsqrtf(warp_sum(sum) / d + eps);
  for (int c = threadIdx.x; c < d; c += 32) y[static_cast<long>(r) * d + c] = xr[c] * scale * gamma[c];
}

template <int V>
void launch_norm(float* x, const float* delta, const float* gamma, float* y, int rows, int d, bool fused, int rpb) {
  const dim3 block(32, rpb);
  const int blocks = (rows + rpb - 1) / rpb;
  if (fused) {
    rmsnorm_rows<V, true><<<blocks, block>>>(x, delta, gamma, y, rows, d, 1e-6f);
    return;
  }
  residual_add<<<1024, 256>>>(x, delta, static_cast<long>(rows) * d);
  rmsnorm_rows<V, false><<<blocks, block>>>(x, delta, gamma, y, rows, d, 1e-6f);
}

// ---- GEMV

__device__ float load_weight(const float* w, long i) { return w[i]; }
__device__ float load_weight(const std::uint16_t* w, long i) { return __uint_as_float(static_cast<unsigned>(w[i]) << 16); }

template <class W, int U>
__global__ void gemv_rows(const W* w, const float* x, float* y, float* partial, int rows, int cols, int batch,
                          int split_k) {
  const int r = blockIdx.x * blockDim.y + threadIdx.y;
  if (r >= rows) return;
  const int s = blockIdx.y;
  const int c0 = static_cast<int>(static_cast<long>(s) * cols / split_k);
  const int c1 = static_cast<int>(static_cast<long>(s + 1) * cols / split_k);
  const W* wr = w + static_cast<long>(r) * cols;
  for (int t = 0; t < batch; ++t) {
    const float* xt = x + static_cast<long>(t) * cols;
    float sum = 0;
    for (int c = c0 + threadIdx.x * U; c < c1; c += 32 * U) {
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (c + u < c1) sum += load_weight(wr, c + u) * xt[c + u];
    }
    sum = warp_sum(sum);
    if (threadIdx.x == 0) {
      if (split_k == 1) {
        y[static_cast<long>(t) * rows + r] = sum;
      } else {
        partial[(static_cast<long>(s) * batch + t) * rows + r] = sum;
      }
    }
  }
}

__global__ void splitk_sum(const float* partial, float* y, int rows, int batch, int split_k) {
  const long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (i >= static_cast<long>(rows) * batch) return;
  float sum = 0;
  for (int s = 0; s < split_k; ++s) sum += partial[s * static_cast<long>(rows) * batch + i];
  y[i] = sum;
}

template <class W>
void launch_gemv(const W* w, const float* x, float* y, float* partial, int rows, int cols, int batch, int rpb,
                 int unroll, int split_k) {
  const dim3 block(32, rpb), grid((rows + rpb - 1) / rpb, split_k);
  switch (unroll) {
    case 8: gemv_rows<W, 8><<<grid, block>>>(w, x, y, partial, rows, cols, batch, split_k); break;
    case 4: gemv_rows<W, 4><<<grid, block>>>(w, x, y, partial, rows, cols, batch, split_k); break;
    case 2: gemv_rows<W, 2><<<grid, block>>>(w, x, y, partial, rows, cols, batch, split_k); break;
    default: gemv_rows<W, 1><<<grid, block>>>(w, x, y, partial, rows, cols, batch, split_k); break;
  }
  if (split_k > 1) {
    const long n = static_cast<long>(rows) * batch;
    splitk_sum<<<static_cast<unsigned>((n + 255) / 256), 256>>>(partial, y, rows, batch, split_k);
  }
}

// ---- attention: ws per (t, h, s): max, sum, then head_dim accumulators

constexpr int max_per_lane = 8;  // head_dim <= 256

__global__ void attention_chunks(const float* q, const float* k, const float* v, float* ws, int len0, int heads,
                                 int hd, int splits, float scale) {
  const int id = blockIdx.x;
  const int s = id % splits, h = (id / splits) % heads, t = id / (splits * heads);
  const int len = len0 + t + 1;
  const int j0 = static_cast<int>(static_cast<long>(s) * len / splits);
  const int j1 = static_cast<int>(static_cast<long>(s + 1) * len / splits);
  const int d = heads * hd, col = h * hd, lane = threadIdx.x;
  float qr[max_per_lane], acc[max_per_lane];
  for (int k8 = 0; k8 < max_per_lane; ++k8) {
    const int i = lane + 32 * k8;
    qr[k8] = i < hd ? q[static_cast<long>(t) * d + col + i] : 0.0f;
    acc[k8] = 0;
  }
  float m = -INFINITY, l = 0;
  for (int j = j0; j < j1; ++j) {
    float dot = 0;
    for (int k8 = 0; k8 < max_per_lane; ++k8) {
      const int i = lane + 32 * k8;
      if (i < hd) dot += qr[k8] * k[static_cast<long>(j) * d + col + i];
    }
    const float score = warp_sum(dot) * scale;
    if (score > m) {
      const float shrink = __expf(m - score);
      l *= shrink;
      for (int k8 = 0; k8 < max_per_lane; ++k8) acc[k8] *= shrink;
      m = score;
    }
    const float p = __expf(score - m);
    l += p;
    for (int k8 = 0; k8 < max_per_lane; ++k8) {
      const int i = lane + 32 * k8;
      if (i < hd) acc[k8] += p * v[static_cast<long>(j) * d + col + i];
    }
  }
  float* out = ws + static_cast<long>(id) * (hd + 2);
  if (lane == 0) {
    out[0] = m;
    out[1] = l;
  }
  for (int k8 = 0; k8 < max_per_lane; ++k8) {
    const int i = lane + 32 * k8;
    if (i < hd) out[2 + i] = acc[k8];
  }
}

__global__ void attention_merge(const float* ws, float* out, int batch, int heads, int hd, int splits) {
  const long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (i >= static_cast<long>(batch) * heads * hd) return;
  const int e = static_cast<int>(i % hd);
  const long th = i / hd;  // t * heads + h
  const float* first = ws + th * splits * (hd + 2);
  float m = -INFINITY;
  for (int s = 0; s < splits; ++s) m = fmaxf(m, first[s * (hd + 2)]);
  float l = 0, sum = 0;
  for (int s = 0; s < splits; ++s) {
    const float* c = first + s * (hd + 2);
    if (c[1] > 0) {
      const float w = __expf(c[0] - m);
      l += c[1] * w;
      sum += c[2 + e] * w;
    }
  }
  out[i] = sum / l;
}

}  // namespace

void launch_residual_rmsnorm(float* x, const float* delta, const float* gamma, float* y, int rows, int d, bool fused,
                             int vec, int rows_per_block) {
  switch (vec) {
    case 8: return launch_norm<8>(x, delta, gamma, y, rows, d, fused, rows_per_block);
    case 4: return launch_norm<4>(x, delta, gamma, y, rows, d, fused, rows_per_block);
    case 2: return launch_norm<2>(x, delta, gamma, y, rows, d, fused, rows_per_block);
    default: return launch_norm<1>(x, delta, gamma, y, rows, d, fused, rows_per_block);
  }
}

Run norm(const float* x, const float* delta, const float* gamma, int rows, int d, bool fused, int vec,
         int rows_per_block, int iters, bool keep) {
  return guarded([&] {
    const std::size_t n = static_cast<std::size_t>(rows) * d;
    Buffer<float> dx(x, n), dd(delta, n), dg(gamma, static_cast<std::size_t>(d)), dy(n);
    auto call = [&] {
      switch (vec) {
        case 8: return launch_norm<8>(dx.get(), dd.get(), dg.get(), dy.get(), rows, d, fused, rows_per_block);
        case 4: return launch_norm<4>(dx.get(), dd.get(), dg.get(), dy.get(), rows, d, fused, rows_per_block);
        case 2: return launch_norm<2>(dx.get(), dd.get(), dg.get(), dy.get(), rows, d, fused, rows_per_block);
        default: return launch_norm<1>(dx.get(), dd.get(), dg.get(), dy.get(), rows, d, fused, rows_per_block);
      }
    };
    Run run;
    if (!keep) {
      run.time_s = time_calls(iters, call);
      return run;
    }
    call();  // verify: exactly one step from the initial data
    FLOTILLA_CUDA_CHECK(cudaGetLastError());
    run.out = dy.to_host();
    run.out2 = dx.to_host();
    return run;
  });
}

Run gemv(const float* w32, const std::uint16_t* w16, bool bf16, const float* x, int rows, int cols, int batch,
         int rows_per_block, int unroll, int split_k, int iters, bool keep) {
  return guarded([&] {
    const std::size_t nw = static_cast<std::size_t>(rows) * cols;
    std::unique_ptr<Buffer<float>> dw32;
    std::unique_ptr<Buffer<std::uint16_t>> dw16;
    if (bf16) {
      dw16 = std::make_unique<Buffer<std::uint16_t>>(w16, nw);
    } else {
      dw32 = std::make_unique<Buffer<float>>(w32, nw);
    }
    Buffer<float> dx(x, static_cast<std::size_t>(batch) * cols), dy(static_cast<std::size_t>(batch) * rows);
    Buffer<float> partial(split_k > 1 ? static_cast<std::size_t>(split_k) * batch * rows : 1);
    auto call = [&] {
      if (bf16) {
        launch_gemv(dw16->get(), dx.get(), dy.get(), partial.get(), rows, cols, batch, rows_per_block, unroll, split_k);
      } else {
        launch_gemv(dw32->get(), dx.get(), dy.get(), partial.get(), rows, cols, batch, rows_per_block, unroll, split_k);
      }
    };
    Run run;
    run.time_s = time_calls(keep ? 1 : iters, call);
    if (keep) run.out = dy.to_host();
    return run;
  });
}

Run attention(const float* q, const float* k, const float* v, int seq_len, int heads, int head_dim, int batch,
              int splits, int iters, bool keep) {
  return guarded([&] {
    const std::size_t d = static_cast<std::size_t>(heads) * head_dim;
    Buffer<float> dq(q, batch * d), dk(k, seq_len * d), dv(v, seq_len * d), dout(batch * d);
    Buffer<float> ws(static_cast<std::size_t>(batch) * heads * splits * (head_dim + 2));
    const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
    auto call = [&] {
      attention_chunks<<<batch * heads * splits, 32>>>(dq.get(), dk.get(), dv.get(), ws.get(), seq_len - batch, heads,
                                                       head_dim, splits, scale);
      const long n = static_cast<long>(batch) * d;
      attention_merge<<<static_cast<unsigned>((n + 255) / 256), 256>>>(ws.get(), dout.get(), batch, heads, head_dim,
                                                                       splits);
    };
    Run run;
    run.time_s = time_calls(keep ? 1 : iters, call);
    if (keep) run.out = dout.to_host();
    return run;
  });
}

}  // namespace flotilla::kernels::decode_cuda

// DecodeKernels.h — internal: the Kokkos kernels of one LLM decode step, shared by the `rmsnorm`,
// `gemv` and `attention` families and by the decode engine (DecodeEngine.cpp).
//
// Invariants every caller relies on:
// * Each output element's summation order depends only on the variant and on that element's own
//   inputs, never on how many tokens are in the batch: a batched forward of m tokens gives the
//   very same bits as m single-token forwards. Speculative decoding's "identical to greedy"
//   rests on this.
// * Matrices are LayoutRight (row-major: one token, or one weight row, is contiguous).
// * bf16 is stored as the upper 16 bits of an IEEE float (round to nearest even); decoding it is
//   exact, so a bf16 variant is checked against a reference over the same decoded weights.
#pragma once

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <cstring>

namespace flotilla::kernels::decode {

using Vec = Kokkos::View<float*>;
using Mat = Kokkos::View<float**, Kokkos::LayoutRight>;
using Mat16 = Kokkos::View<std::uint16_t**, Kokkos::LayoutRight>;

// Largest batch a GEMV or attention call takes (speculative verify: 1 + draft length).
inline constexpr int max_batch = 16;
// Largest head dimension of the attention kernel (its per-head accumulator lives on the stack).
inline constexpr int max_head_dim = 256;

KOKKOS_INLINE_FUNCTION float bf16_to_float(std::uint16_t h) {
  const std::uint32_t bits = static_cast<std::uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline std::uint16_t float_to_bf16(float f) {  // round to nearest even; finite inputs only
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>(bits >> 16);
}

// ---- residual add + RMSNorm:  x += delta;  y = x / sqrt(mean(x^2) + eps) * gamma, per row.
struct NormVariant {
  bool fused = false;     // one pass (add, square-sum, scale) instead of an add kernel + a norm kernel
  int vec = 1;            // columns per step, each with its own partial square-sum: 1, 2, 4, 8
  int rows_per_team = 1;  // rows one team (CUDA: block) handles
};
void residual_rmsnorm(const NormVariant& v, Mat x, Mat delta, Vec gamma, Mat y, float eps);

// ---- GEMV / skinny GEMM: y(t, r) = sum_c W(r, c) * x(t, c) for every token t of the batch.
struct GemvVariant {
  int rows_per_team = 8;  // output rows per team (CUDA: block)
  int unroll = 1;         // columns per step, each with its own partial sum: 1, 2, 4, 8
  int split_k = 1;        // the column range split into this many partial sums, added in a 2nd kernel
  int interleave = 1;     // rows whose dot products run in one loop (1, 2, 4): more memory streams at once
};
// Workspace for split_k > 1: split_k * batch * rows floats (gemv_workspace_size).
std::size_t gemv_workspace_size(const GemvVariant& v, int batch, int rows);
void gemv(const GemvVariant& v, Mat w, Mat x, Mat y, Vec workspace);
void gemv(const GemvVariant& v, Mat16 w, Mat x, Mat y, Vec workspace);

// ---- decode attention (flash-decoding split-K) over a KV cache.
// q(t, h*hd + i) for the `batch` tokens at positions pos0 .. pos0+batch-1; token t attends to
// cache rows 0 .. pos0+t. The keys of each (token, head) are cut into `splits` chunks, each
// reduced with an online softmax; a second kernel merges the chunks. One work item takes one
// chunk of `heads_per_team` consecutive heads: with 1 it walks one head's head_dim-wide slice of
// every cache row (a short piece every heads*head_dim floats, which defeats a CPU's prefetchers);
// with all the heads it reads each K and V row whole and in order. A head's result does not
// depend on heads_per_team: every head is reduced in the same order either way.
struct AttnVariant {
  int splits = 1;
  int unroll = 1;          // head-dim columns per step of the q.k dot and of the V update: 1, 2, 4, 8
  int heads_per_team = 1;  // heads one work item walks together (the last one takes the remainder)
  int prefetch = 0;        // cache rows ahead to prefetch (a CPU hint; 0: none, left to the hardware)
};
// A work item keeps heads_per_team * head_dim accumulators on its stack: at most this many, and
// at most this many heads (heads_per_team larger than the heads is taken as all the heads).
inline constexpr int max_attn_team_floats = 4096;
inline constexpr int max_attn_team_heads = 128;
// The merge kernel keeps one weight per chunk on its stack.
inline constexpr int max_attn_splits = 64;
std::size_t attention_workspace_size(const AttnVariant& v, int batch, int heads, int head_dim);
void decode_attention(const AttnVariant& v, Mat q, int q_offset, Mat kcache, Mat vcache, int pos0, int heads,
                      Mat out, Vec workspace);

}  // namespace flotilla::kernels::decode

// decode_kernels_kokkos.cpp — the Kokkos implementations of the decode-step kernels
// (DecodeKernels.h): residual+RMSNorm (separate or fused), GEMV with tiling/unroll/split-K over
// fp32 or bf16 weights, and split-K decode attention.
//
// Unroll and vector widths are template parameters: a constant trip count over independent
// partial sums is what lets the compiler keep them in SIMD registers (GCC vectorises at -O2 only
// loops that need no scalar epilogue, so every loop over head_dim or a row steps U at a time).
// Every reduction adds its partial sums in a fixed order (u = 0, 1, ... in norm and gemv,
// pairwise in attention's dot; split 0, 1, ...), so results are deterministic. Memory order is
// a parameter too: attention's heads_per_team and prefetch, gemv's interleave.
#include <cmath>
#include <stdexcept>
#include <string>

#include "DecodeKernels.h"

namespace flotilla::kernels::decode {

namespace {

using Team = Kokkos::TeamPolicy<>::member_type;

int ceil_div(int a, int b) { return (a + b - 1) / b; }

// part[0] = the sum of part[0..W), pairwise: the upper half added to the lower half, repeated.
// Constant trip counts, so each step is one SIMD add and the chain is log2(W) adds long.
template <int W>
KOKKOS_INLINE_FUNCTION void fold(float* part) {
  if constexpr (W > 1) {
    for (int u = 0; u < W / 2; ++u) part[u] += part[u + W / 2];
    fold<W / 2>(part);
  }
}

// A hint to fetch the cache line holding p (a no-op on GPUs and with compilers without it).
constexpr int floats_per_line = 16;  // 64-byte lines
KOKKOS_INLINE_FUNCTION void prefetch(const float* p) {
#if defined(__GNUC__) && !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
  __builtin_prefetch(p);
#else
  (void)p;
#endif
}

// ---- residual + RMSNorm -------------------------------------------------------------------

template <int V, bool Fused>
struct NormRows {
  Mat x, delta, y;
  Vec gamma;
  float eps;
  int rows, rows_per_team;

  KOKKOS_INLINE_FUNCTION void operator()(const Team& team) const {
    const int r0 = team.league_rank() * rows_per_team;
    const int r1 = r0 + rows_per_team < rows ? r0 + rows_per_team : rows;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, r0, r1), [&](const int r) { row(r); });
  }

  KOKKOS_INLINE_FUNCTION void row(const int r) const {
    const int d = static_cast<int>(x.extent(1));
    const int body = d - d % V;
    float part[V] = {};
    for (int c = 0; c < body; c += V) {
      for (int u = 0; u < V; ++u) {
        float value = x(r, c + u);
        if (Fused) {
          value += delta(r, c + u);
          x(r, c + u) = value;
        }
        part[u] += value * value;
      }
    }
    for (int c = body; c < d; ++c) {
      float value = x(r, c);
      if (Fused) {
        value += delta(r, c);
        x(r, c) = value;
      }
      part[0] += value * value;
    }
    float sum = 0;
    for (int u = 0; u < V; ++u) sum += part[u];
    const float scale = 1.0f / std::sqrt(sum / static_cast<float>(d) + eps);
    for (int c = 0; c < d; ++c) y(r, c) = x(r, c) * scale * gamma(c);
  }
};

template <int V>
void norm_width(const NormVariant& v, Mat x, Mat delta, Vec gamma, Mat y, float eps) {
  const int rows = static_cast<int>(x.extent(0));
  const int d = static_cast<int>(x.extent(1));
  const Kokkos::TeamPolicy<> teams(ceil_div(rows, v.rows_per_team), Kokkos::AUTO);
  if (v.fused) {
    Kokkos::parallel_for("flotilla_norm_fused", teams, NormRows<V, true>{x, delta, y, gamma, eps, rows, v.rows_per_team});
    return;
  }
  Kokkos::parallel_for(
      "flotilla_residual_add", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {rows, d}),
      KOKKOS_LAMBDA(const int r, const int c) { x(r, c) += delta(r, c); });
  Kokkos::parallel_for("flotilla_rmsnorm", teams, NormRows<V, false>{x, delta, y, gamma, eps, rows, v.rows_per_team});
}

// ---- GEMV ---------------------------------------------------------------------------------

KOKKOS_INLINE_FUNCTION float weight(const float* row, int c) { return row[c]; }
KOKKOS_INLINE_FUNCTION float weight(const std::uint16_t* row, int c) { return bf16_to_float(row[c]); }

// One team: rows_per_team rows (of one K split), taken R at a time. The R rows' dot products run
// in one loop: R independent memory streams in flight instead of one (a single core's bandwidth
// is bound by the misses it keeps outstanding), and each x element loaded once for all R. A
// row's sum is the same whatever R: its U partial sums see the same terms in the same order.
template <class W, int U, int R>
struct GemvRows {
  W w;
  Mat x, y;
  Vec partial;  // split_k > 1: partial(s, t, r) at (s * batch + t) * rows + r
  int rows, batch, rows_per_team, split_k;

  KOKKOS_INLINE_FUNCTION void operator()(const Team& team) const {
    const int block = team.league_rank() / split_k;
    const int s = team.league_rank() % split_k;
    const int k = static_cast<int>(w.extent(1));
    const int c0 = static_cast<int>(static_cast<long>(s) * k / split_k);
    const int c1 = static_cast<int>(static_cast<long>(s + 1) * k / split_k);
    const int r0 = block * rows_per_team;
    const int r1 = r0 + rows_per_team < rows ? r0 + rows_per_team : rows;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, 0, ceil_div(r1 - r0, R)), [&](const int g) {
      const int r = r0 + g * R;
      for (int t = 0; t < batch; ++t) {
        float sum[R];
        if (r + R <= r1) {
          dots<R>(r, t, c0, c1, sum);
          for (int i = 0; i < R; ++i) store(s, t, r + i, sum[i]);
        } else {
          for (int i = r; i < r1; ++i) {  // the team's last rows, fewer than R
            dots<1>(i, t, c0, c1, sum);
            store(s, t, i, sum[0]);
          }
        }
      }
    });
  }

  KOKKOS_INLINE_FUNCTION void store(int s, int t, int r, float sum) const {
    if (split_k == 1) {
      y(t, r) = sum;
    } else {
      partial((static_cast<long>(s) * batch + t) * rows + r) = sum;
    }
  }

  // The same order for every token and batch size: U strided partial sums, then the tail.
  // Raw row pointers (LayoutRight rows are contiguous) keep the View's index arithmetic out of
  // the inner loop.
  template <int N>
  KOKKOS_INLINE_FUNCTION void dots(int r, int t, int c0, int c1, float* sum) const {
    decltype(&w(0, 0)) wr[N];
    for (int i = 0; i < N; ++i) wr[i] = &w(r + i, 0);
    const float* xr = &x(t, 0);
    float part[N][U] = {};
    const int body = c0 + (c1 - c0) - (c1 - c0) % U;
    for (int c = c0; c < body; c += U) {
      for (int i = 0; i < N; ++i)
        for (int u = 0; u < U; ++u) part[i][u] += weight(wr[i], c + u) * xr[c + u];
    }
    for (int i = 0; i < N; ++i) {
      for (int c = body; c < c1; ++c) part[i][0] += weight(wr[i], c) * xr[c];
      sum[i] = 0;
      for (int u = 0; u < U; ++u) sum[i] += part[i][u];
    }
  }
};

template <class W, int U, int R>
void gemv_rows(const GemvVariant& v, W w, Mat x, Mat y, Vec workspace) {
  const int rows = static_cast<int>(w.extent(0));
  const int batch = static_cast<int>(x.extent(0));
  const Kokkos::TeamPolicy<> teams(ceil_div(rows, v.rows_per_team) * v.split_k, Kokkos::AUTO);
  Kokkos::parallel_for("flotilla_gemv", teams,
                       GemvRows<W, U, R>{w, x, y, workspace, rows, batch, v.rows_per_team, v.split_k});
  if (v.split_k == 1) return;
  const int splits = v.split_k;
  Kokkos::parallel_for(
      "flotilla_gemv_splitk_sum", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {batch, rows}),
      KOKKOS_LAMBDA(const int t, const int r) {
        float sum = 0;
        for (int s = 0; s < splits; ++s) sum += workspace((static_cast<long>(s) * batch + t) * rows + r);
        y(t, r) = sum;
      });
}

template <class W, int U>
void gemv_unroll(const GemvVariant& v, W w, Mat x, Mat y, Vec workspace) {
  switch (v.interleave) {
    case 1: return gemv_rows<W, U, 1>(v, w, x, y, workspace);
    case 2: return gemv_rows<W, U, 2>(v, w, x, y, workspace);
    case 4: return gemv_rows<W, U, 4>(v, w, x, y, workspace);
  }
  throw std::logic_error("gemv: interleave " + std::to_string(v.interleave) + " was not validated");
}

template <class W>
void gemv_any(const GemvVariant& v, W w, Mat x, Mat y, Vec workspace) {
  if (x.extent(0) > static_cast<std::size_t>(max_batch) || x.extent(1) != w.extent(1) ||
      y.extent(1) != w.extent(0) || y.extent(0) != x.extent(0)) {
    throw std::logic_error("gemv: shapes do not match");
  }
  switch (v.unroll) {
    case 1: return gemv_unroll<W, 1>(v, w, x, y, workspace);
    case 2: return gemv_unroll<W, 2>(v, w, x, y, workspace);
    case 4: return gemv_unroll<W, 4>(v, w, x, y, workspace);
    case 8: return gemv_unroll<W, 8>(v, w, x, y, workspace);
  }
  throw std::logic_error("gemv: unroll " + std::to_string(v.unroll) + " was not validated");
}

// ---- attention ----------------------------------------------------------------------------

// Workspace of one (token, head, split): running max, running sum, then head_dim accumulators.
// A work item is one (token, group of heads_per_team heads, split); per key row it takes every
// head of its group, so with a group of all heads it streams K and V rows in order. Each head's
// steps (U partial sums of the dot, then the online softmax, then the V update) are the same
// whatever the group, so heads_per_team changes the memory order, not the arithmetic.
template <int U>
struct AttnChunks {
  Mat q, kc, vc;
  Vec ws;
  int q_offset, pos0, heads, head_dim, splits, group, ahead;
  float scale;

  KOKKOS_INLINE_FUNCTION void operator()(const Team& team) const {
    const int id = team.league_rank();
    const int groups = (heads + group - 1) / group;
    const int s = id % splits;
    const int g = (id / splits) % groups;
    const int t = id / (splits * groups);
    const int len = pos0 + t + 1;
    const int j0 = static_cast<int>(static_cast<long>(s) * len / splits);
    const int j1 = static_cast<int>(static_cast<long>(s + 1) * len / splits);
    const int h0 = g * group;
    const int h1 = h0 + group < heads ? h0 + group : heads;
    Kokkos::single(Kokkos::PerTeam(team), [&]() { chunk(t, s, h0, h1, j0, j1); });
  }

  // acc(i) *= by, or acc(i) += by * row(i), over head_dim columns, U at a time (a constant trip
  // count: what the compiler turns into SIMD).
  KOKKOS_INLINE_FUNCTION void scale_acc(float* acc, float by) const {
    const int body = head_dim - head_dim % U;
    for (int i = 0; i < body; i += U)
      for (int u = 0; u < U; ++u) acc[i + u] *= by;
    for (int i = body; i < head_dim; ++i) acc[i] *= by;
  }
  KOKKOS_INLINE_FUNCTION void add_row(float* acc, float by, const float* row) const {
    const int body = head_dim - head_dim % U;
    for (int i = 0; i < body; i += U)
      for (int u = 0; u < U; ++u) acc[i + u] += by * row[i + u];
    for (int i = body; i < head_dim; ++i) acc[i] += by * row[i];
  }
  KOKKOS_INLINE_FUNCTION float dot(const float* a, const float* b) const {
    float part[U] = {};
    const int body = head_dim - head_dim % U;
    for (int i = 0; i < body; i += U)
      for (int u = 0; u < U; ++u) part[u] += a[i + u] * b[i + u];
    for (int i = body; i < head_dim; ++i) part[0] += a[i] * b[i];
    fold<U>(part);
    return part[0];
  }

  // Per key row: the scores of every head of the group, then their online-softmax steps, then
  // their V updates. The heads' dots and exps are independent, so they overlap in the core
  // instead of forming one long dependency chain per head (dot -> exp -> update).
  KOKKOS_INLINE_FUNCTION void chunk(int t, int s, int h0, int h1, int j0, int j1) const {
    const long kstride = static_cast<long>(kc.stride(0)), vstride = static_cast<long>(vc.stride(0));
    float acc[max_attn_team_floats];
    float m[max_attn_team_heads], l[max_attn_team_heads], p[max_attn_team_heads];
    const int n = h1 - h0;
    for (int i = 0; i < n * head_dim; ++i) acc[i] = 0;
    for (int h = 0; h < n; ++h) m[h] = -INFINITY, l[h] = 0;
    const float* qrow = &q(t, q_offset + h0 * head_dim);
    for (int j = j0; j < j1; ++j) {
      const float* krow = &kc(j, h0 * head_dim);  // LayoutRight: a row's heads are contiguous
      const float* vrow = &vc(j, h0 * head_dim);
      if (ahead > 0 && j + ahead < j1) {
        for (int i = 0; i < n * head_dim; i += floats_per_line) {
          prefetch(krow + ahead * kstride + i);
          prefetch(vrow + ahead * vstride + i);
        }
      }
      for (int h = 0; h < n; ++h) p[h] = dot(qrow + h * head_dim, krow + h * head_dim) * scale;
      for (int h = 0; h < n; ++h) {
        const float score = p[h];
        if (score > m[h]) {  // online softmax: rescale what was summed under the old maximum
          const float shrink = std::exp(m[h] - score);
          l[h] *= shrink;
          scale_acc(acc + h * head_dim, shrink);
          m[h] = score;
        }
        p[h] = std::exp(score - m[h]);
        l[h] += p[h];
      }
      for (int h = 0; h < n; ++h) add_row(acc + h * head_dim, p[h], vrow + h * head_dim);
    }
    for (int h = 0; h < n; ++h) {
      const long base = ((static_cast<long>(t) * heads + h0 + h) * splits + s) * (head_dim + 2);
      ws(base) = m[h];
      ws(base + 1) = l[h];
      for (int i = 0; i < head_dim; ++i) ws(base + 2 + i) = acc[h * head_dim + i];
    }
  }
};

template <int U>
void attention_chunks(const AttnVariant& v, int group, Mat q, int q_offset, Mat kcache, Mat vcache, int pos0,
                      int heads, Mat out, Vec ws, float scale) {
  const int batch = static_cast<int>(out.extent(0));
  const int head_dim = static_cast<int>(out.extent(1)) / heads;
  const int splits = v.splits;
  const Kokkos::TeamPolicy<> teams(batch * ceil_div(heads, group) * splits, Kokkos::AUTO);
  Kokkos::parallel_for(
      "flotilla_attention_chunks", teams,
      AttnChunks<U>{q, kcache, vcache, ws, q_offset, pos0, heads, head_dim, splits, group, v.prefetch, scale});
  Kokkos::parallel_for(
      "flotilla_attention_merge", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {batch, heads}),
      KOKKOS_LAMBDA(const int t, const int h) {
        const long first = (static_cast<long>(t) * heads + h) * splits;
        float m = -INFINITY;
        for (int s = 0; s < splits; ++s) m = ws((first + s) * (head_dim + 2)) > m ? ws((first + s) * (head_dim + 2)) : m;
        float weight[max_attn_splits];  // exp(chunk max - overall max), 0 for an empty chunk
        float l = 0;
        for (int s = 0; s < splits; ++s) {
          const long base = (first + s) * (head_dim + 2);
          weight[s] = ws(base + 1) > 0 ? std::exp(ws(base) - m) : 0.0f;  // empty chunks add nothing
          l += ws(base + 1) * weight[s];
        }
        for (int i = 0; i < head_dim; ++i) {
          float sum = 0;
          for (int s = 0; s < splits; ++s) sum += ws((first + s) * (head_dim + 2) + 2 + i) * weight[s];
          out(t, h * head_dim + i) = sum / l;
        }
      });
}

}  // namespace

void residual_rmsnorm(const NormVariant& v, Mat x, Mat delta, Vec gamma, Mat y, float eps) {
  switch (v.vec) {
    case 1: return norm_width<1>(v, x, delta, gamma, y, eps);
    case 2: return norm_width<2>(v, x, delta, gamma, y, eps);
    case 4: return norm_width<4>(v, x, delta, gamma, y, eps);
    case 8: return norm_width<8>(v, x, delta, gamma, y, eps);
  }
  throw std::logic_error("residual_rmsnorm: vec " + std::to_string(v.vec) + " was not validated");
}

std::size_t gemv_workspace_size(const GemvVariant& v, int batch, int rows) {
  return v.split_k > 1 ? static_cast<std::size_t>(v.split_k) * batch * rows : 1;
}

void gemv(const GemvVariant& v, Mat w, Mat x, Mat y, Vec workspace) { gemv_any(v, w, x, y, workspace); }
void gemv(const GemvVariant& v, Mat16 w, Mat x, Mat y, Vec workspace) { gemv_any(v, w, x, y, workspace); }

std::size_t attention_workspace_size(const AttnVariant& v, int batch, int heads, int head_dim) {
  return static_cast<std::size_t>(batch) * heads * v.splits * (head_dim + 2);
}

void decode_attention(const AttnVariant& v, Mat q, int q_offset, Mat kcache, Mat vcache, int pos0, int heads,
                      Mat out, Vec ws) {
  const int batch = static_cast<int>(out.extent(0));
  const int head_dim = static_cast<int>(out.extent(1)) / heads;
  const int group = v.heads_per_team < heads ? v.heads_per_team : heads;
  if (head_dim > max_head_dim || batch > max_batch) throw std::logic_error("decode_attention: shape too large");
  if (v.splits < 1 || v.splits > max_attn_splits)
    throw std::logic_error("decode_attention: splits " + std::to_string(v.splits) + " was not validated");
  if (group < 1 || group > max_attn_team_heads || group * head_dim > max_attn_team_floats)
    throw std::logic_error("decode_attention: heads_per_team " + std::to_string(v.heads_per_team) +
                           " was not validated");
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  switch (v.unroll) {
    case 1: return attention_chunks<1>(v, group, q, q_offset, kcache, vcache, pos0, heads, out, ws, scale);
    case 2: return attention_chunks<2>(v, group, q, q_offset, kcache, vcache, pos0, heads, out, ws, scale);
    case 4: return attention_chunks<4>(v, group, q, q_offset, kcache, vcache, pos0, heads, out, ws, scale);
    case 8: return attention_chunks<8>(v, group, q, q_offset, kcache, vcache, pos0, heads, out, ws, scale);
  }
  throw std::logic_error("decode_attention: unroll " + std::to_string(v.unroll) + " was not validated");
}

}  // namespace flotilla::kernels::decode

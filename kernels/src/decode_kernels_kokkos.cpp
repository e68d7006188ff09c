// decode_kernels_kokkos.cpp — the Kokkos implementations of the decode-step kernels
// (DecodeKernels.h): residual+RMSNorm (separate or fused), GEMV with tiling/unroll/split-K over
// fp32 or bf16 weights, and split-K decode attention.
//
// Unroll and vector widths are template parameters: a constant trip count over independent
// partial sums is what lets the compiler keep them in SIMD registers. Every reduction adds its
// partial sums in a fixed order (u = 0, 1, ...; split 0, 1, ...), so results are deterministic.
#include <cmath>
#include <stdexcept>
#include <string>

#include "DecodeKernels.h"

namespace flotilla::kernels::decode {

namespace {

using Team = Kokkos::TeamPolicy<>::member_type;

int ceil_div(int a, int b) { return (a + b - 1) / b; }

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

KOKKOS_INLINE_FUNCTION float weight(const Mat& w, int r, int c) { return w(r, c); }
KOKKOS_INLINE_FUNCTION float weight(const Mat16& w, int r, int c) { return bf16_to_float(w(r, c)); }

template <class W, int U>
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
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, r0, r1), [&](const int r) {
      for (int t = 0; t < batch; ++t) {
        const float sum = dot(r, t, c0, c1);
        if (split_k == 1) {
          y(t, r) = sum;
        } else {
          partial((static_cast<long>(s) * batch + t) * rows + r) = sum;
        }
      }
    });
  }

  // The same order for every token and batch size: U strided partial sums, then the tail.
  KOKKOS_INLINE_FUNCTION float dot(int r, int t, int c0, int c1) const {
    float part[U] = {};
    const int body = c0 + (c1 - c0) - (c1 - c0) % U;
    for (int c = c0; c < body; c += U) {
      for (int u = 0; u < U; ++u) part[u] += weight(w, r, c + u) * x(t, c + u);
    }
    for (int c = body; c < c1; ++c) part[0] += weight(w, r, c) * x(t, c);
    float sum = 0;
    for (int u = 0; u < U; ++u) sum += part[u];
    return sum;
  }
};

template <class W, int U>
void gemv_unroll(const GemvVariant& v, W w, Mat x, Mat y, Vec workspace) {
  const int rows = static_cast<int>(w.extent(0));
  const int batch = static_cast<int>(x.extent(0));
  const Kokkos::TeamPolicy<> teams(ceil_div(rows, v.rows_per_team) * v.split_k, Kokkos::AUTO);
  Kokkos::parallel_for("flotilla_gemv", teams, GemvRows<W, U>{w, x, y, workspace, rows, batch, v.rows_per_team, v.split_k});
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
template <int U>
struct AttnChunks {
  Mat q, kc, vc;
  Vec ws;
  int q_offset, pos0, heads, head_dim, splits;
  float scale;

  KOKKOS_INLINE_FUNCTION void operator()(const Team& team) const {
    const int id = team.league_rank();
    const int s = id % splits;
    const int h = (id / splits) % heads;
    const int t = id / (splits * heads);
    const int len = pos0 + t + 1;
    const int j0 = static_cast<int>(static_cast<long>(s) * len / splits);
    const int j1 = static_cast<int>(static_cast<long>(s + 1) * len / splits);
    Kokkos::single(Kokkos::PerTeam(team), [&]() { chunk(id, t, h, j0, j1); });
  }

  KOKKOS_INLINE_FUNCTION void chunk(int id, int t, int h, int j0, int j1) const {
    float acc[max_head_dim];
    for (int i = 0; i < head_dim; ++i) acc[i] = 0;
    float m = -INFINITY;
    float l = 0;
    const int col = h * head_dim;
    for (int j = j0; j < j1; ++j) {
      float part[U] = {};
      const int body = head_dim - head_dim % U;
      for (int i = 0; i < body; i += U)
        for (int u = 0; u < U; ++u) part[u] += q(t, q_offset + col + i + u) * kc(j, col + i + u);
      for (int i = body; i < head_dim; ++i) part[0] += q(t, q_offset + col + i) * kc(j, col + i);
      float score = 0;
      for (int u = 0; u < U; ++u) score += part[u];
      score *= scale;
      if (score > m) {  // online softmax: rescale what was summed under the old maximum
        const float shrink = std::exp(m - score);
        l *= shrink;
        for (int i = 0; i < head_dim; ++i) acc[i] *= shrink;
        m = score;
      }
      const float p = std::exp(score - m);
      l += p;
      for (int i = 0; i < head_dim; ++i) acc[i] += p * vc(j, col + i);
    }
    const long base = static_cast<long>(id) * (head_dim + 2);
    ws(base) = m;
    ws(base + 1) = l;
    for (int i = 0; i < head_dim; ++i) ws(base + 2 + i) = acc[i];
  }
};

template <int U>
void attention_chunks(const Kokkos::TeamPolicy<>& teams, Mat q, int q_offset, Mat kcache, Mat vcache, int pos0,
                      int heads, Mat out, Vec ws, int splits, float scale) {
  const int batch = static_cast<int>(out.extent(0));
  const int head_dim = static_cast<int>(out.extent(1)) / heads;
  Kokkos::parallel_for("flotilla_attention_chunks", teams,
                       AttnChunks<U>{q, kcache, vcache, ws, q_offset, pos0, heads, head_dim, splits, scale});
  Kokkos::parallel_for(
      "flotilla_attention_merge", Kokkos::MDRangePolicy<Kokkos::Rank<2>>({0, 0}, {batch, heads}),
      KOKKOS_LAMBDA(const int t, const int h) {
        const long first = (static_cast<long>(t) * heads + h) * splits;
        float m = -INFINITY;
        for (int s = 0; s < splits; ++s) m = ws((first + s) * (head_dim + 2)) > m ? ws((first + s) * (head_dim + 2)) : m;
        float l = 0;
        for (int s = 0; s < splits; ++s) {
          const long base = (first + s) * (head_dim + 2);
          if (ws(base + 1) > 0) l += ws(base + 1) * std::exp(ws(base) - m);  // empty chunks add nothing
        }
        for (int i = 0; i < head_dim; ++i) {
          float sum = 0;
          for (int s = 0; s < splits; ++s) {
            const long base = (first + s) * (head_dim + 2);
            if (ws(base + 1) > 0) sum += ws(base + 2 + i) * std::exp(ws(base) - m);
          }
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
  if (head_dim > max_head_dim || batch > max_batch) throw std::logic_error("decode_attention: shape too large");
  const int splits = v.splits;
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  const Kokkos::TeamPolicy<> teams(batch * heads * splits, Kokkos::AUTO);
  switch (v.unroll) {
    case 1: return attention_chunks<1>(teams, q, q_offset, kcache, vcache, pos0, heads, out, ws, splits, scale);
    case 2: return attention_chunks<2>(teams, q, q_offset, kcache, vcache, pos0, heads, out, ws, splits, scale);
    case 4: return attention_chunks<4>(teams, q, q_offset, kcache, vcache, pos0, heads, out, ws, splits, scale);
    case 8: return attention_chunks<8>(teams, q, q_offset, kcache, vcache, pos0, heads, out, ws, splits, scale);
  }
  throw std::logic_error("decode_attention: unroll " + std::to_string(v.unroll) + " was not validated");
}

}  // namespace flotilla::kernels::decode

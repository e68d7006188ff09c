// DecodeFamilies.cpp — the `rmsnorm`, `gemv` and `attention` families: the kernels of one LLM
// decode step (DecodeKernels.h), each benchmarked on seeded data and verified against a plain
// double-precision loop over the same inputs.
//
// Tolerances (stated once, here, and in docs/kernels.md):
//   rmsnorm    max |variant - reference| over x (updated residual) and y   <= 1e-4
//   gemv       max |y - ref| / sum_c |W(r,c) x(c)|   (relative to the dot's magnitude) <= 1e-5
//   attention  max |out - ref|  (outputs are convex combinations of V in [-1, 1]) <= 1e-5
// device=cuda runs the native CUDA twin (decode_cuda.cu) on the same inputs, checked the same way;
// without CUDA built in, or without a usable GPU, it is `skipped` with the reason.
// bf16 weights are checked against the reference over the same decoded bf16 values: the family
// verifies the kernel; whether bf16 changes a model's output is the decode engine's question.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "DecodeCommon.h"
#include "DecodeCudaRun.h"
#include "DecodeKernels.h"
#include "Families.h"

namespace flotilla::kernels {

namespace {

using namespace decode;
using Clock = std::chrono::steady_clock;

constexpr int max_cuda_rows_per_block = 32;  // 32 warps of 32 lanes: a 1024-thread block

// Runs a CUDA twin, or answers `skipped` in a build without CUDA.
template <class F>
decode_cuda::Run on_cuda(F&& run) {
#if FLOTILLA_HAVE_CUDA
  return run();
#else
  (void)run;
  decode_cuda::Run skipped;
  skipped.outcome = Outcome::skipped;
  skipped.message = "this flotilla-kernel was built without CUDA (FLOTILLA_WITH_CUDA=OFF)";
  return skipped;
#endif
}

bool on_cuda_device(const Params& p, const char* rows_param) {
  const bool cuda = p.at("device") == "cuda";
  if (cuda && int_param(p, rows_param) > max_cuda_rows_per_block) {
    throw InvalidParameter(rows_param, "parameter '" + std::string(rows_param) + "' must be <= " +
                                           std::to_string(max_cuda_rows_per_block) + " with device 'cuda' (one warp per row)");
  }
  return cuda;
}

template <class V>
auto host_copy(const V& view) { return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), view); }

const ParamDecl device_decl{"device", "kokkos (this build's Kokkos backend) or cuda (the native CUDA twin)", "kokkos",
                            {"kokkos", "cuda"}, 0, 0};

void require_kokkos(const char* family) {
  if (!Kokkos::is_initialized()) {
    throw std::logic_error(std::string(family) + ": Kokkos is not initialised; create a flotilla::kernels::Runtime first");
  }
}

Mat seeded_mat(const char* label, int rows, int cols, std::uint64_t seed, std::uint64_t stream, float scale) {
  Mat m(std::string(label), rows, cols);
  auto host = Kokkos::create_mirror_view(m);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      host(r, c) = seeded_uniform(seed, stream, static_cast<std::uint64_t>(r) * cols + c, scale);
  Kokkos::deep_copy(m, host);
  return m;
}

// Times `iters` calls after one warm-up call, with fences around the timed loop.
template <class F>
double time_iters(int iters, F&& call) {
  call();
  Kokkos::fence();
  const auto start = Clock::now();
  for (int it = 0; it < iters; ++it) call();
  Kokkos::fence();
  return std::max(seconds_since(start), 1e-9);
}

VerifyResult verdict(const std::string& where, const std::string& what, double error, double tolerance,
                     const std::string& at) {
  const std::string e = fmt_g("%.2g", error);
  const std::string tol = fmt_g("%g", tolerance);
  if (error <= tolerance) return VerifyResult{Outcome::ok, where + what + " " + e + " <= tolerance " + tol, error, tolerance};
  return VerifyResult{Outcome::failed, where + what + " " + e + " > tolerance " + tol + " at " + at, error, tolerance};
}

std::string shard_prefix(int shard, int shards, const char* unit, Band band) {
  return "shard " + std::to_string(shard) + "/" + std::to_string(shards) + " " + unit + " " +
         std::to_string(band.begin) + ".." + std::to_string(band.end - 1) + ": ";
}

// ---- rmsnorm --------------------------------------------------------------------------------

constexpr double norm_tolerance = 1e-4;
constexpr float norm_eps = 1e-6f;

NormVariant norm_variant(const Params& p) {
  return NormVariant{p.at("impl") == "fused", iparam(p, "vec"), iparam(p, "rows_per_team")};
}

class NormFamily final : public KernelFamily {
 public:
  std::string_view name() const override { return "rmsnorm"; }
  std::string_view description() const override {
    return "residual add + RMSNorm over rows x d: separate kernels or fused, vector width, rows per team (Kokkos)";
  }
  const std::vector<ParamDecl>& params() const override { return m_params; }

  BenchmarkResult benchmark(const Params& given) const override {
    const Params p = resolve_params(*this, given);
    require_kokkos("rmsnorm");
    const int rows = iparam(p, "rows"), d = iparam(p, "d");
    const auto seed = static_cast<std::uint64_t>(int_param(p, "seed"));
    Mat x = seeded_mat("x", rows, d, seed, 1, 1.0f), delta = seeded_mat("delta", rows, d, seed, 2, 1e-3f);
    Mat y("y", rows, d);
    Vec gamma("gamma", d);
    Kokkos::deep_copy(gamma, 1.0f);
    const NormVariant v = norm_variant(p);
    const int iters = iparam(p, "iters");
    double t = 0;
    if (on_cuda_device(p, "rows_per_team")) {
      const decode_cuda::Run run = on_cuda([&] {
        return decode_cuda::norm(host_copy(x).data(), host_copy(delta).data(), host_copy(gamma).data(), rows, d, v.fused,
                                 v.vec, v.rows_per_team, iters, false);
      });
      if (run.outcome != Outcome::ok) return BenchmarkResult{run.outcome, run.message, {}};
      t = std::max(run.time_s, 1e-9);
    } else {
      t = time_iters(iters, [&] { residual_rmsnorm(v, x, delta, gamma, y, norm_eps); });
    }
    // Useful bytes: read x and delta, write x and y (what the fused kernel moves), so that
    // both implementations are compared at the same work; the separate one moves 6 arrays.
    const double bytes = 4.0 * rows * d * sizeof(float) * iters;
    return BenchmarkResult{Outcome::ok, "", {{"gbps", bytes / t / 1e9}, {"time_s", t}, {"rows_per_s", rows * iters / t}}};
  }

  VerifyResult verify(const Params& given, int shard, int shards) const override {
    const Params p = resolve_params(*this, given);
    require_kokkos("rmsnorm");
    const int rows = iparam(p, "rows"), d = iparam(p, "d");
    check_shard(shard, shards, rows, "rows");
    const auto seed = static_cast<std::uint64_t>(int_param(p, "seed"));
    Mat x = seeded_mat("x", rows, d, seed, 1, 1.0f), delta = seeded_mat("delta", rows, d, seed, 2, 1e-3f);
    Mat y("y", rows, d);
    Vec gamma("gamma", d);
    auto gamma_host = Kokkos::create_mirror_view(gamma);
    for (int c = 0; c < d; ++c) gamma_host(c) = 1.0f + seeded_uniform(seed, 3, c, 0.5f);
    Kokkos::deep_copy(gamma, gamma_host);
    const Band band = shard_band(rows, shard, shards);
    const NormVariant v = norm_variant(p);
    if (on_cuda_device(p, "rows_per_team")) {
      const decode_cuda::Run run = on_cuda([&] {
        return decode_cuda::norm(host_copy(x).data(), host_copy(delta).data(), gamma_host.data(), rows, d, v.fused, v.vec,
                                 v.rows_per_team, 1, true);
      });
      if (run.outcome != Outcome::ok) return VerifyResult{run.outcome, shard_prefix(shard, shards, "rows", band) + run.message, 0, norm_tolerance};
      Kokkos::deep_copy(y, Kokkos::View<const float**, Kokkos::LayoutRight, Kokkos::HostSpace>(run.out.data(), rows, d));
      Kokkos::deep_copy(x, Kokkos::View<const float**, Kokkos::LayoutRight, Kokkos::HostSpace>(run.out2.data(), rows, d));
    } else {
      residual_rmsnorm(v, x, delta, gamma, y, norm_eps);
      Kokkos::fence();
    }
    auto xh = host_copy(x);
    auto yh = host_copy(y);
    double worst = 0;
    int worst_row = -1, worst_col = -1;
    std::vector<double> ref(d);
    for (int r = band.begin; r < band.end; ++r) {
      double sum = 0;
      for (int c = 0; c < d; ++c) {
        ref[c] = double(seeded_uniform(seed, 1, std::uint64_t(r) * d + c, 1.0f)) +
                 double(seeded_uniform(seed, 2, std::uint64_t(r) * d + c, 1e-3f));
        sum += ref[c] * ref[c];
      }
      const double scale = 1.0 / std::sqrt(sum / d + double(norm_eps));
      for (int c = 0; c < d; ++c) {
        const double ex = std::fabs(xh(r, c) - ref[c]);
        const double ey = std::fabs(yh(r, c) - ref[c] * scale * double(gamma_host(c)));
        const double e = std::max(ex, ey);
        if (e > worst || std::isnan(e)) {
          worst = std::isnan(e) ? INFINITY : e;
          worst_row = r;
          worst_col = c;
        }
      }
    }
    // Appended piece by piece: "(" + std::string makes GCC 12 at -O3 warn falsely (-Wrestrict,
    // GCC bug 105651).
    std::string at = "(";
    at += std::to_string(worst_row);
    at += ", ";
    at += std::to_string(worst_col);
    at += ")";
    return verdict(shard_prefix(shard, shards, "rows", band), "max abs error", worst, norm_tolerance, at);
  }

 private:
  // clang-format off
  std::vector<ParamDecl> m_params = {
      {"impl", "separate (add kernel + norm kernel) or fused (one pass)", "separate", {"separate", "fused"}, 0, 0},
      {"vec", "columns per step, each with its own partial square-sum", "1", {"1", "2", "4", "8"}, 0, 0},
      {"rows_per_team", "rows one team (CUDA: block) handles", "1", {}, 1, 1024},
      {"rows", "rows (tokens) per call", "64", {}, 1, 65536},
      {"d", "row width (model dimension)", "4096", {}, 1, 65536},
      {"iters", "timed calls", "50", {}, 1, 100000},
      {"seed", "seed of the inputs", "1", {}, 0, 2147483647},
      device_decl,
  };
  // clang-format on
};

// ---- gemv -----------------------------------------------------------------------------------

constexpr double gemv_tolerance = 1e-5;

struct GemvData {
  Mat w32;
  Mat16 w16;
  Mat x, y;
  Vec ws;
  std::vector<double> w_decoded;  // what the kernel multiplies, row-major (for the reference)
};

GemvVariant gemv_variant(const Params& p) {
  return GemvVariant{iparam(p, "rows_per_team"), iparam(p, "unroll"), iparam(p, "split_k"), iparam(p, "interleave")};
}

GemvData make_gemv(const Params& p, bool keep_decoded) {
  const int rows = iparam(p, "rows"), cols = iparam(p, "cols"), batch = iparam(p, "batch");
  const auto seed = static_cast<std::uint64_t>(int_param(p, "seed"));
  const bool bf16 = p.at("weights") == "bf16";
  const float scale = 1.0f / std::sqrt(static_cast<float>(cols));
  GemvData g;
  g.x = seeded_mat("x", batch, cols, seed, 2, 1.0f);
  g.y = Mat("y", batch, rows);
  if (keep_decoded) g.w_decoded.resize(static_cast<std::size_t>(rows) * cols);
  if (bf16) {
    g.w16 = Mat16("w16", rows, cols);
    auto host = Kokkos::create_mirror_view(g.w16);
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) {
        const std::size_t k = std::size_t(r) * cols + c;
        host(r, c) = float_to_bf16(seeded_uniform(seed, 1, k, scale));
        if (keep_decoded) g.w_decoded[k] = bf16_to_float(host(r, c));
      }
    Kokkos::deep_copy(g.w16, host);
  } else {
    g.w32 = seeded_mat("w", rows, cols, seed, 1, scale);
    if (keep_decoded)
      for (std::size_t k = 0; k < g.w_decoded.size(); ++k) g.w_decoded[k] = seeded_uniform(seed, 1, k, scale);
  }
  g.ws = Vec("ws", gemv_workspace_size(gemv_variant(p), batch, rows));
  return g;
}

decode_cuda::Run run_gemv_cuda(const Params& p, const GemvData& g, bool keep) {
  const GemvVariant v = gemv_variant(p);
  const bool bf16 = g.w16.extent(0) > 0;
  return on_cuda([&] {
    const auto w32 = host_copy(g.w32);
    const auto w16 = host_copy(g.w16);
    return decode_cuda::gemv(w32.data(), w16.data(), bf16, host_copy(g.x).data(), iparam(p, "rows"), iparam(p, "cols"),
                             iparam(p, "batch"), v.rows_per_team, v.unroll, v.split_k, iparam(p, "iters"), keep);
  });
}

void run_gemv(const GemvVariant& v, const GemvData& g) {
  if (g.w16.extent(0) > 0) {
    gemv(v, g.w16, g.x, g.y, g.ws);
  } else {
    gemv(v, g.w32, g.x, g.y, g.ws);
  }
}

class GemvFamily final : public KernelFamily {
 public:
  std::string_view name() const override { return "gemv"; }
  std::string_view description() const override {
    return "decode GEMV / skinny GEMM y = W x over fp32 or bf16 weights: tiling, unrolling, split-K (Kokkos)";
  }
  const std::vector<ParamDecl>& params() const override { return m_params; }

  BenchmarkResult benchmark(const Params& given) const override {
    const Params p = resolve_params(*this, given);
    require_kokkos("gemv");
    const GemvData g = make_gemv(p, false);
    const GemvVariant v = gemv_variant(p);
    const int iters = iparam(p, "iters");
    double t = 0;
    if (on_cuda_device(p, "rows_per_team")) {
      const decode_cuda::Run run = run_gemv_cuda(p, g, false);
      if (run.outcome != Outcome::ok) return BenchmarkResult{run.outcome, run.message, {}};
      t = std::max(run.time_s, 1e-9);
    } else {
      t = time_iters(iters, [&] { run_gemv(v, g); });
    }
    const double rows = iparam(p, "rows"), cols = iparam(p, "cols"), batch = iparam(p, "batch");
    const double wbytes = p.at("weights") == "bf16" ? 2.0 : 4.0;
    const double bytes = (rows * cols * wbytes + batch * (rows + cols) * 4.0) * iters;
    return BenchmarkResult{Outcome::ok,
                           "",
                           {{"gbps", bytes / t / 1e9}, {"time_s", t}, {"gflops", 2.0 * rows * cols * batch * iters / t / 1e9}}};
  }

  VerifyResult verify(const Params& given, int shard, int shards) const override {
    const Params p = resolve_params(*this, given);
    require_kokkos("gemv");
    const int rows = iparam(p, "rows"), cols = iparam(p, "cols"), batch = iparam(p, "batch");
    check_shard(shard, shards, rows, "rows");
    const GemvData g = make_gemv(p, true);
    const Band band = shard_band(rows, shard, shards);
    if (on_cuda_device(p, "rows_per_team")) {
      const decode_cuda::Run run = run_gemv_cuda(p, g, true);
      if (run.outcome != Outcome::ok) return VerifyResult{run.outcome, shard_prefix(shard, shards, "rows", band) + run.message, 0, gemv_tolerance};
      Kokkos::deep_copy(g.y, Kokkos::View<const float**, Kokkos::LayoutRight, Kokkos::HostSpace>(run.out.data(), batch, rows));
    } else {
      run_gemv(gemv_variant(p), g);
      Kokkos::fence();
    }
    auto yh = host_copy(g.y);
    auto xh = host_copy(g.x);
    double worst = 0;
    std::string at = "?";
    for (int t = 0; t < batch; ++t) {
      for (int r = band.begin; r < band.end; ++r) {
        double ref = 0, magnitude = 0;
        for (int c = 0; c < cols; ++c) {
          const double term = g.w_decoded[std::size_t(r) * cols + c] * double(xh(t, c));
          ref += term;
          magnitude += std::fabs(term);
        }
        double e = std::fabs(yh(t, r) - ref) / std::max(magnitude, 1e-30);
        if (std::isnan(e)) e = INFINITY;
        if (e > worst) {
          worst = e;
          at = "token " + std::to_string(t) + " row " + std::to_string(r);
        }
      }
    }
    return verdict(shard_prefix(shard, shards, "rows", band), "max error |y-ref|/sum|w*x|", worst, gemv_tolerance, at);
  }

 private:
  // clang-format off
  std::vector<ParamDecl> m_params = {
      {"weights", "weight storage: fp32, or bf16 (half the bytes, fp32 accumulation)", "fp32", {"fp32", "bf16"}, 0, 0},
      {"rows_per_team", "output rows per team (CUDA: block)", "8", {}, 1, 4096},
      {"unroll", "columns per step, each with its own partial sum", "1", {"1", "2", "4", "8"}, 0, 0},
      {"split_k", "the K range split into partial sums added by a second kernel", "1", {"1", "2", "4", "8", "16"}, 0, 0},
      {"interleave", "rows whose dot products run in one loop: more memory streams in flight (ignored by the CUDA twin)",
       "1", {"1", "2", "4"}, 0, 0},
      {"rows", "output rows (N)", "4096", {}, 1, 65536},
      {"cols", "input columns (K)", "4096", {}, 1, 65536},
      {"batch", "tokens multiplied per weight pass (1: GEMV; >1: skinny GEMM)", "1", {}, 1, max_batch},
      {"iters", "timed calls", "20", {}, 1, 100000},
      {"seed", "seed of the weights and inputs", "1", {}, 0, 2147483647},
      device_decl,
  };
  // clang-format on
};

// ---- attention ------------------------------------------------------------------------------

constexpr double attention_tolerance = 1e-5;

struct AttnData {
  Mat q, k, v, out;
  Vec ws;
};

AttnVariant attn_variant(const Params& p) {
  return AttnVariant{iparam(p, "splits"), iparam(p, "unroll"), iparam(p, "heads_per_team"), iparam(p, "prefetch")};
}

AttnData make_attention(const Params& p) {
  const int len = iparam(p, "seq_len"), heads = iparam(p, "heads"), hd = iparam(p, "head_dim"),
            batch = iparam(p, "batch");
  const auto seed = static_cast<std::uint64_t>(int_param(p, "seed"));
  const int d = heads * hd;
  AttnData a{seeded_mat("q", batch, d, seed, 1, 1.0f), seeded_mat("k", len, d, seed, 2, 1.0f),
             seeded_mat("v", len, d, seed, 3, 1.0f), Mat("out", batch, d), Vec()};
  a.ws = Vec("ws", attention_workspace_size(attn_variant(p), batch, heads, hd));
  return a;
}

void check_attention(const Params& p) {
  if (iparam(p, "batch") > iparam(p, "seq_len"))
    throw InvalidParameter("batch", "parameter 'batch' (" + p.at("batch") + ") must be <= seq_len (" + p.at("seq_len") + ")");
  // A team's accumulators live on its stack (heads_per_team beyond the heads means all of them).
  const long floats = long(std::min(iparam(p, "heads_per_team"), iparam(p, "heads"))) * iparam(p, "head_dim");
  if (floats > max_attn_team_floats)
    throw InvalidParameter("heads_per_team", "parameters 'heads_per_team' * 'head_dim' (" + std::to_string(floats) +
                                                 ") must be <= " + std::to_string(max_attn_team_floats) +
                                                 " accumulators per team");
}

class AttentionFamily final : public KernelFamily {
 public:
  std::string_view name() const override { return "attention"; }
  std::string_view description() const override {
    return "decode attention over a KV cache, split-K (flash-decoding) partitioning with online softmax (Kokkos)";
  }
  const std::vector<ParamDecl>& params() const override { return m_params; }

  BenchmarkResult benchmark(const Params& given) const override {
    const Params p = resolve_params(*this, given);
    check_attention(p);
    require_kokkos("attention");
    const AttnData a = make_attention(p);
    const int len = iparam(p, "seq_len"), heads = iparam(p, "heads"), batch = iparam(p, "batch");
    const AttnVariant v = attn_variant(p);
    const int iters = iparam(p, "iters");
    double t = 0;
    if (p.at("device") == "cuda") {
      const decode_cuda::Run run = on_cuda([&] {
        return decode_cuda::attention(host_copy(a.q).data(), host_copy(a.k).data(), host_copy(a.v).data(), len, heads,
                                      iparam(p, "head_dim"), batch, v.splits, iters, false);
      });
      if (run.outcome != Outcome::ok) return BenchmarkResult{run.outcome, run.message, {}};
      t = std::max(run.time_s, 1e-9);
    } else {
      t = time_iters(iters, [&] { decode_attention(v, a.q, 0, a.k, a.v, len - batch, heads, a.out, a.ws); });
    }
    // The K and V cache read once per call (a batch shares it; its later tokens see one row more).
    const double bytes = 2.0 * len * heads * iparam(p, "head_dim") * sizeof(float) * iters;
    return BenchmarkResult{Outcome::ok, "", {{"gbps", bytes / t / 1e9}, {"time_s", t}, {"tokens_per_s", batch * iters / t}}};
  }

  VerifyResult verify(const Params& given, int shard, int shards) const override {
    const Params p = resolve_params(*this, given);
    check_attention(p);
    require_kokkos("attention");
    const int len = iparam(p, "seq_len"), heads = iparam(p, "heads"), hd = iparam(p, "head_dim"),
              batch = iparam(p, "batch");
    check_shard(shard, shards, heads, "heads");
    const AttnData a = make_attention(p);
    if (p.at("device") == "cuda") {
      const decode_cuda::Run run = on_cuda([&] {
        return decode_cuda::attention(host_copy(a.q).data(), host_copy(a.k).data(), host_copy(a.v).data(), len, heads, hd,
                                      batch, iparam(p, "splits"), 1, true);
      });
      if (run.outcome != Outcome::ok) {
        return VerifyResult{run.outcome, shard_prefix(shard, shards, "heads", shard_band(heads, shard, shards)) + run.message,
                            0, attention_tolerance};
      }
      Kokkos::deep_copy(a.out, Kokkos::View<const float**, Kokkos::LayoutRight, Kokkos::HostSpace>(run.out.data(), batch, heads * hd));
    } else {
      decode_attention(attn_variant(p), a.q, 0, a.k, a.v, len - batch, heads, a.out, a.ws);
      Kokkos::fence();
    }
    auto q = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.q);
    auto k = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.k);
    auto v = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.v);
    auto out = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), a.out);
    const Band band = shard_band(heads, shard, shards);
    double worst = 0;
    std::string at = "?";
    for (int t = 0; t < batch; ++t) {
      const int n = len - batch + t + 1;
      for (int h = band.begin; h < band.end; ++h) {
        std::vector<double> score(n);
        double m = -INFINITY;
        for (int j = 0; j < n; ++j) {
          double s = 0;
          for (int i = 0; i < hd; ++i) s += double(q(t, h * hd + i)) * k(j, h * hd + i);
          score[j] = s / std::sqrt(double(hd));
          m = std::max(m, score[j]);
        }
        double l = 0;
        for (double& s : score) l += (s = std::exp(s - m));
        for (int i = 0; i < hd; ++i) {
          double ref = 0;
          for (int j = 0; j < n; ++j) ref += score[j] * v(j, h * hd + i);
          double e = std::fabs(out(t, h * hd + i) - ref / l);
          if (std::isnan(e)) e = INFINITY;
          if (e > worst) {
            worst = e;
            at = "token " + std::to_string(t) + " head " + std::to_string(h) + " dim " + std::to_string(i);
          }
        }
      }
    }
    return verdict(shard_prefix(shard, shards, "heads", band), "max abs error", worst, attention_tolerance, at);
  }

 private:
  // clang-format off
  std::vector<ParamDecl> m_params = {
      {"splits", "chunks the keys of one (token, head) are cut into, merged by a second kernel", "1",
       {"1", "2", "4", "8", "16", "32", "64"}, 0, 0},
      {"unroll", "head-dim columns per step of the q.k dot (each with its own partial sum) and of the V update", "1",
       {"1", "2", "4", "8"}, 0, 0},
      {"heads_per_team", "heads one team walks together; all of them: each K and V row is read whole, in order", "1",
       {}, 1, max_attn_team_heads},
      {"prefetch", "K and V rows ahead to prefetch (0: none; a CPU hint, ignored by the CUDA twin)", "0", {}, 0, 64},
      {"seq_len", "tokens in the KV cache", "4096", {}, 1, 262144},
      {"heads", "attention heads", "8", {}, 1, 128},
      {"head_dim", "dimension of one head", "64", {}, 1, max_head_dim},
      {"batch", "query tokens at the end of the cache (1: plain decode; >1: speculative verify)", "1", {}, 1, max_batch},
      {"iters", "timed calls", "20", {}, 1, 100000},
      {"seed", "seed of q, K and V", "1", {}, 0, 2147483647},
      device_decl,
  };
  // clang-format on
};

}  // namespace

const KernelFamily& rmsnorm_family() {
  static const NormFamily family;
  return family;
}
const KernelFamily& gemv_family() {
  static const GemvFamily family;
  return family;
}
const KernelFamily& attention_family() {
  static const AttentionFamily family;
  return family;
}

}  // namespace flotilla::kernels

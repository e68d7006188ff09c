// StencilFamily.cpp — the `stencil` family: parameters, validation, benchmark and verification.
//
// Parameter rules live here once; both implementations (Kokkos, CUDA twin) receive a validated
// Variant. Verification always compares against the double reference loop in Stencil.cpp, so a
// float variant - faster, and wrong by ~1e-8 - fails and must be rolled back by flotilla.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "DecodeCommon.h"
#include "Families.h"
#include "StencilRun.h"
#include "flotilla/kernels/Stencil.h"

namespace flotilla::kernels {

namespace {

using stencil::Mode;
using stencil::Sweeps;
using stencil::Variant;

// Largest CUDA thread block on every architecture flotilla targets.
constexpr int max_cuda_block = 1024;

std::vector<ParamDecl> stencil_params() {
  // One declaration per line reads as the table it is.
  // clang-format off
  return {
      {"tile_x", "work items per tile along the contiguous j axis (CUDA: blockDim.x)", "32", {}, 1, 1024},
      {"tile_y", "rows per tile along i (CUDA: blockDim.y)", "8", {}, 1, 1024},
      {"unroll", "consecutive j points computed by one work item", "1", {"1", "2", "4"}, 0, 0},
      {"precision", "scalar type; float is faster but fails verification", "double",
       {"double", "float"}, 0, 0},
      {"n", "interior extent of the benchmark grid ((n+2)^2 points)", "1024", {}, 1, 16384},
      {"iters", "Jacobi sweeps (timed in benchmark, also used by verify)", "50", {}, 1, 100000},
      {"n_verify", "interior extent of the verification grid", "256", {}, 1, 4096},
      {"seed", "seed of the initial grid", "1", {}, 0, 2147483647},
      {"device", "kokkos (this build's Kokkos backend) or cuda (the native CUDA twin)", "kokkos",
       {"kokkos", "cuda"}, 0, 0},
  };
  // clang-format on
}

void require_multiple(const Params& p, const std::string& name, int unroll) {
  const auto value = int_param(p, name);
  if (value % unroll != 0) {
    throw InvalidParameter(name, "parameter '" + name + "' (" + std::to_string(value) +
                                     ") must be a multiple of unroll (" + std::to_string(unroll) + ")");
  }
}

// Resolved, cross-checked parameters; `n_key` picks the grid: "n" to benchmark, "n_verify" to verify.
Variant make_variant(const KernelFamily& family, const Params& given, const std::string& n_key) {
  const Params p = resolve_params(family, given);
  Variant v;
  v.unroll = static_cast<int>(int_param(p, "unroll"));
  require_multiple(p, "n", v.unroll);
  require_multiple(p, "n_verify", v.unroll);
  v.n = static_cast<int>(int_param(p, n_key));
  v.iters = static_cast<int>(int_param(p, "iters"));
  v.tile_x = static_cast<int>(int_param(p, "tile_x"));
  v.tile_y = static_cast<int>(int_param(p, "tile_y"));
  v.single = p.at("precision") == "float";
  v.seed = static_cast<std::uint64_t>(int_param(p, "seed"));
  v.cuda = p.at("device") == "cuda";
  if (v.cuda && v.tile_x * v.tile_y > max_cuda_block) {
    throw InvalidParameter(
        "tile_x", "parameters 'tile_x' * 'tile_y' (" + std::to_string(v.tile_x * v.tile_y) + ") must be <= " +
                      std::to_string(max_cuda_block) + " threads per CUDA block with device 'cuda'");
  }
  return v;
}

Sweeps run_on_device(const Variant& v, Mode mode) {
  if (!v.cuda) return stencil::run_kokkos(v, mode);
#if FLOTILLA_HAVE_CUDA
  return stencil::run_cuda(v, mode);
#else
  Sweeps skipped;
  skipped.outcome = Outcome::skipped;
  skipped.message = "this flotilla-kernel was built without CUDA (FLOTILLA_WITH_CUDA=OFF)";
  return skipped;
#endif
}

std::string format_g(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

struct Worst {
  double error = 0;
  int row = -1;  // interior coordinates
  int col = -1;
};

// Largest |got - ref| over interior rows [band.begin, band.end); NaN counts as the worst.
Worst compare_band(const std::vector<double>& got, const std::vector<double>& ref, int n,
                   stencil::RowBand band) {
  const std::size_t w = static_cast<std::size_t>(n) + 2;
  Worst worst;
  for (int r = band.begin; r < band.end; ++r) {
    for (int c = 0; c < n; ++c) {
      const std::size_t k = (static_cast<std::size_t>(r) + 1) * w + static_cast<std::size_t>(c) + 1;
      const double error = std::fabs(got[k] - ref[k]);
      if (error > worst.error || (std::isnan(error) && !std::isnan(worst.error))) {
        worst = Worst{error, r, c};
      }
    }
  }
  return worst;
}

class StencilFamily final : public KernelFamily {
 public:
  std::string_view name() const override { return "stencil"; }
  std::string_view description() const override {
    return "2D 5-point Jacobi sweeps on an (n+2)^2 grid with fixed boundary (Kokkos MDRange; CUDA twin)";
  }
  const std::vector<ParamDecl>& params() const override { return m_params; }

  BenchmarkResult benchmark(const Params& given) const override {
    const Variant v = make_variant(*this, given, "n");
    Sweeps run = run_on_device(v, Mode::benchmark);
    if (run.outcome != Outcome::ok) return BenchmarkResult{run.outcome, run.message, {}};
    const double points = static_cast<double>(v.n) * v.n * v.iters;
    const double bytes_per_point = 2.0 * (v.single ? sizeof(float) : sizeof(double));
    // A zero duration (a clock too coarse for a tiny grid) would make the rates infinite.
    const double t = std::max(run.time_s, 1e-9);
    // The accuracy `iters` sweeps buy: the residual of the reference loop on the verification
    // grid (every variant that verifies computes that grid), untimed; a few ms at the defaults.
    const Variant check = make_variant(*this, given, "n_verify");
    const double residual = stencil::residual(stencil::reference_grid(check.n, check.iters, check.seed), check.n);
    return BenchmarkResult{Outcome::ok,
                           "",
                           {{"gflops", 4.0 * points / t / 1e9},
                            {"time_s", run.time_s},
                            {"gbps", bytes_per_point * points / t / 1e9},
                            {"residual", residual}}};
  }

  VerifyResult verify(const Params& given, int shard, int shards) const override {
    const Variant v = make_variant(*this, given, "n_verify");
    decode::check_shard(shard, shards, v.n, "n_verify");
    const stencil::RowBand band = stencil::shard_rows(v.n, shard, shards);
    const std::string where = "shard " + std::to_string(shard) + "/" + std::to_string(shards) + " rows " +
                              std::to_string(band.begin) + ".." + std::to_string(band.end - 1) + ": ";
    Sweeps run = run_on_device(v, Mode::verify);
    if (run.outcome != Outcome::ok) {
      return VerifyResult{run.outcome, where + run.message, 0, stencil::tolerance};
    }
    const Worst worst = compare_band(run.grid, stencil::reference_grid(v.n, v.iters, v.seed), v.n, band);
    const std::string tol = format_g("%g", stencil::tolerance);
    const std::string error = format_g("%.2g", worst.error);
    if (worst.error <= stencil::tolerance) {  // false for NaN
      return VerifyResult{Outcome::ok, where + "max abs error " + error + " <= tolerance " + tol, worst.error,
                          stencil::tolerance};
    }
    return VerifyResult{Outcome::failed,
                        where + "max abs error " + error + " > tolerance " + tol + " at (" +
                            std::to_string(worst.row) + ", " + std::to_string(worst.col) + ")",
                        worst.error, stencil::tolerance};
  }

 private:
  std::vector<ParamDecl> m_params = stencil_params();
};

}  // namespace

const KernelFamily& stencil_family() {
  static const StencilFamily family;
  return family;
}

}  // namespace flotilla::kernels

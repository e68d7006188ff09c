// AllreduceFamily.cpp — the `allreduce_norm` family: the tensor-parallel all-reduce of a
// row-parallel projection's partial sums, followed by the residual + RMSNorm epilogue, across
// MPI ranks.
//
//   separate: MPI_Allreduce of the whole rows x d partial sums, then the residual+RMSNorm kernel
//             on every row, on every rank (the residual stream stays replicated);
//   fused:    MPI_Reduce_scatter_block (each rank receives rows/P reduced rows), the epilogue on
//             that shard only, then one in-place MPI_Allgather of the normalised rows. The
//             residual stream stays sharded by rows, as in sequence parallelism: each rank holds
//             the updated residual of its own rows.
// Both give every rank the full normalised output y. Verification compares y (every row of the
// shard's band) and the residual (the rows the rank holds) with the double reference, tolerance
// 1e-4, and reduces the error over the ranks so that every rank reaches the same verdict.
//
// The communicator and every MPI call go through the kernels' checked wrapper (Mpi.h):
// MPI_COMM_WORLD when this process initialised MPI itself (flotilla-kernel launched by mpirun),
// MPI_COMM_SELF when the host had (in-process in flotilla-worker). Only rank 0 prints (result.quiet).
// device=nccl runs the NCCL twin (allreduce_nccl.cu) on one GPU per rank, with the NCCL unique id
// broadcast over MPI; it is skipped on every rank when any rank lacks a usable GPU.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include "AllreduceNcclRun.h"
#include "DecodeCommon.h"
#include "DecodeKernels.h"
#include "Families.h"
#include "Mpi.h"

namespace flotilla::kernels {

namespace {

using namespace decode;

using mpi::communicator;
using mpi::MpiFailure;

constexpr double tolerance = 1e-4;
constexpr float eps = 1e-6f;

struct Setup {
  int rows = 0, d = 0, ranks = 1, rank = 0;
  bool fused = false;
  bool nccl = false;
  NormVariant norm;
  std::uint64_t seed = 0;
  MPI_Comm comm = MPI_COMM_SELF;
};

// partial(p) is rank p's share of the projection output; the true output is their sum.
float partial_value(const Setup& s, int p, int r, int c) {
  return seeded_uniform(s.seed, 100 + std::uint64_t(p), std::uint64_t(r) * s.d + c, 1.0f);
}

struct Buffers {
  Mat x, partial, reduced, y;
  Vec gamma;
};

Buffers make_buffers(const Setup& s) {
  Buffers b{Mat("x", s.rows, s.d), Mat("partial", s.rows, s.d), Mat("reduced", s.rows, s.d), Mat("y", s.rows, s.d),
            Vec("gamma", s.d)};
  auto x = Kokkos::create_mirror_view(b.x);
  auto part = Kokkos::create_mirror_view(b.partial);
  auto g = Kokkos::create_mirror_view(b.gamma);
  for (int r = 0; r < s.rows; ++r)
    for (int c = 0; c < s.d; ++c) {
      x(r, c) = seeded_uniform(s.seed, 1, std::uint64_t(r) * s.d + c, 1.0f);
      part(r, c) = partial_value(s, s.rank, r, c);
    }
  for (int c = 0; c < s.d; ++c) g(c) = 1.0f + seeded_uniform(s.seed, 3, c, 0.25f);
  Kokkos::deep_copy(b.x, x);
  Kokkos::deep_copy(b.partial, part);
  Kokkos::deep_copy(b.gamma, g);
  return b;
}

// One all-reduce + epilogue. Views are host-accessible (this build's Kokkos is Serial); a device
// backend would need CUDA-aware MPI or the NCCL twin.
void step(const Setup& s, Buffers& b) {
  const int n = s.rows * s.d;
  if (!s.fused) {
    FLOTILLA_KERNELS_MPI(MPI_Allreduce(b.partial.data(), b.reduced.data(), n, MPI_FLOAT, MPI_SUM, s.comm));
    residual_rmsnorm(s.norm, b.x, b.reduced, b.gamma, b.y, eps);
    Kokkos::fence();
    return;
  }
  const int mine = s.rows / s.ranks;
  const auto own = std::make_pair(s.rank * mine, (s.rank + 1) * mine);
  Mat reduced = Kokkos::subview(b.reduced, own, Kokkos::ALL);
  FLOTILLA_KERNELS_MPI(MPI_Reduce_scatter_block(b.partial.data(), reduced.data(), mine * s.d, MPI_FLOAT, MPI_SUM, s.comm));
  residual_rmsnorm(s.norm, Kokkos::subview(b.x, own, Kokkos::ALL), reduced, b.gamma, Kokkos::subview(b.y, own, Kokkos::ALL),
                   eps);
  Kokkos::fence();
  FLOTILLA_KERNELS_MPI(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b.y.data(), mine * s.d, MPI_FLOAT, s.comm));
}

// The NCCL twin: skipped (on every rank alike) without CUDA or a GPU on some rank.
nccl_allreduce::Run run_nccl(const Setup& s, Buffers& b, int iters, bool keep) {
  nccl_allreduce::Run run;
#if FLOTILLA_HAVE_CUDA
  const std::string why = nccl_allreduce::unavailable();
  int usable = why.empty() ? 1 : 0;
  FLOTILLA_KERNELS_MPI(MPI_Allreduce(MPI_IN_PLACE, &usable, 1, MPI_INT, MPI_MIN, s.comm));
  if (!usable) {
    run.outcome = Outcome::skipped;
    run.message = why.empty() ? "another rank has no usable CUDA device" : why;
    return run;
  }
  std::string id(nccl_allreduce::id_bytes, '\0');
  if (s.rank == 0) id = nccl_allreduce::unique_id();
  FLOTILLA_KERNELS_MPI(MPI_Bcast(id.data(), nccl_allreduce::id_bytes, MPI_CHAR, 0, s.comm));
  const auto x = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b.x);
  const auto partial = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b.partial);
  const auto gamma = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b.gamma);
  return nccl_allreduce::run(id, s.rank, s.ranks, s.fused, s.norm.fused, s.norm.vec, x.data(), partial.data(),
                             gamma.data(), s.rows, s.d, iters, keep);
#else
  (void)s, (void)b, (void)iters, (void)keep;
  run.outcome = Outcome::skipped;
  run.message = "this flotilla-kernel was built without CUDA (FLOTILLA_WITH_CUDA=OFF)";
  return run;
#endif
}

class AllreduceNormFamily final : public KernelFamily {
 public:
  std::string_view name() const override { return "allreduce_norm"; }
  std::string_view description() const override {
    return "tensor-parallel all-reduce + residual/RMSNorm over MPI ranks: MPI_Allreduce then kernel, or fused "
           "reduce-scatter/epilogue/all-gather";
  }
  const std::vector<ParamDecl>& params() const override { return m_params; }

  BenchmarkResult benchmark(const Params& given) const override {
    const Setup s = setup(given);
    Buffers b = make_buffers(s);
    const int iters = iparam(resolve_params(*this, given), "iters");
    try {
      double t = 0;
      if (s.nccl) {
        const nccl_allreduce::Run run = run_nccl(s, b, iters, false);
        if (run.outcome != Outcome::ok) return BenchmarkResult{run.outcome, run.message, {}};
        t = std::max(run.time_s, 1e-9);
      } else {
        step(s, b);  // warm-up: connections, first touch
        FLOTILLA_KERNELS_MPI(MPI_Barrier(s.comm));
        const auto start = std::chrono::steady_clock::now();
        for (int it = 0; it < iters; ++it) step(s, b);
        t = std::max(seconds_since(start), 1e-9);
      }
      FLOTILLA_KERNELS_MPI(MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, s.comm));  // the slowest rank
      const double bytes = double(s.rows) * s.d * sizeof(float) * iters;
      BenchmarkResult result{Outcome::ok, "", {{"gbps", bytes / t / 1e9}, {"time_s", t}, {"ranks", double(s.ranks)}}};
      result.quiet = s.rank != 0;
      return result;
    } catch (const MpiFailure& e) {
      return BenchmarkResult{Outcome::failed, e.what(), {}};
    }
  }

  VerifyResult verify(const Params& given, int shard, int shards) const override {
    const Setup s = setup(given);
    check_shard(shard, shards, s.rows, "rows");
    Buffers b = make_buffers(s);
    const Band band = shard_band(s.rows, shard, shards);
    const std::string where = "shard " + std::to_string(shard) + "/" + std::to_string(shards) + " rows " +
                              std::to_string(band.begin) + ".." + std::to_string(band.end - 1) + " on " +
                              std::to_string(s.ranks) + " ranks: ";
    double worst = 0;
    try {
      if (s.nccl) {
        const nccl_allreduce::Run run = run_nccl(s, b, 1, true);
        if (run.outcome != Outcome::ok) return VerifyResult{run.outcome, where + run.message, 0, tolerance};
        using HostMat = Kokkos::View<const float**, Kokkos::LayoutRight, Kokkos::HostSpace>;
        Kokkos::deep_copy(b.x, HostMat(run.x.data(), s.rows, s.d));
        Kokkos::deep_copy(b.y, HostMat(run.y.data(), s.rows, s.d));
      } else {
        step(s, b);
      }
      auto x = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b.x);
      auto y = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b.y);
      auto g = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), b.gamma);
      const int mine = s.fused ? s.rows / s.ranks : s.rows;
      const int own0 = s.fused ? s.rank * mine : 0;
      std::vector<double> ref(std::size_t(s.d));
      for (int r = band.begin; r < band.end; ++r) {
        double sum = 0;
        for (int c = 0; c < s.d; ++c) {
          double o = 0;
          for (int p = 0; p < s.ranks; ++p) o += partial_value(s, p, r, c);
          ref[std::size_t(c)] = double(seeded_uniform(s.seed, 1, std::uint64_t(r) * s.d + c, 1.0f)) + o;
          sum += ref[std::size_t(c)] * ref[std::size_t(c)];
        }
        const double scale = 1.0 / std::sqrt(sum / s.d + double(eps));
        const bool owned = r >= own0 && r < own0 + mine;
        for (int c = 0; c < s.d; ++c) {
          double e = std::fabs(y(r, c) - ref[std::size_t(c)] * scale * g(c));
          if (owned) e = std::max(e, std::fabs(x(r, c) - ref[std::size_t(c)]));
          worst = std::isnan(e) ? INFINITY : std::max(worst, e);
        }
      }
      FLOTILLA_KERNELS_MPI(MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_DOUBLE, MPI_MAX, s.comm));
    } catch (const MpiFailure& e) {
      return VerifyResult{Outcome::failed, where + e.what(), 0, tolerance};
    }
    const std::string error = fmt_g("%.2g", worst);
    VerifyResult result{worst <= tolerance ? Outcome::ok : Outcome::failed,
                        where + "max abs error " + error + (worst <= tolerance ? " <= " : " > ") + "tolerance " +
                            fmt_g("%g", tolerance),
                        worst, tolerance};
    result.quiet = s.rank != 0;
    return result;
  }

 private:
  Setup setup(const Params& given) const {
    const Params p = resolve_params(*this, given);
    if (!Kokkos::is_initialized()) {
      throw std::logic_error("allreduce_norm: Kokkos is not initialised; create a flotilla::kernels::Runtime first");
    }
    Setup s;
    s.rows = iparam(p, "rows");
    s.d = iparam(p, "d");
    s.fused = p.at("impl") == "fused";
    s.nccl = p.at("device") == "nccl";
    s.norm = NormVariant{p.at("norm") == "fused", iparam(p, "vec"), 1};
    s.seed = static_cast<std::uint64_t>(int_param(p, "seed"));
    s.comm = communicator();
    FLOTILLA_KERNELS_MPI(MPI_Comm_size(s.comm, &s.ranks));
    FLOTILLA_KERNELS_MPI(MPI_Comm_rank(s.comm, &s.rank));
    if (s.fused && s.rows % s.ranks != 0) {
      throw InvalidParameter("rows", "parameter 'rows' (" + p.at("rows") + ") must be a multiple of the ranks (" +
                                         std::to_string(s.ranks) + ") with impl 'fused'");
    }
    return s;
  }

  // clang-format off
  std::vector<ParamDecl> m_params = {
      {"impl", "separate (MPI_Allreduce, then the epilogue on every row) or fused (reduce-scatter, epilogue on the shard, all-gather)",
       "separate", {"separate", "fused"}, 0, 0},
      {"norm", "the residual+RMSNorm kernel: separate or fused", "fused", {"separate", "fused"}, 0, 0},
      {"vec", "RMSNorm columns per step", "4", {"1", "2", "4", "8"}, 0, 0},
      {"rows", "tokens (rows) in the step", "64", {}, 1, 65536},
      {"d", "model width", "4096", {}, 1, 65536},
      {"iters", "timed steps", "20", {}, 1, 100000},
      {"seed", "seed of the residual and the partial sums", "1", {}, 0, 2147483647},
      {"device", "kokkos (MPI and this build's Kokkos) or nccl (NCCL and CUDA, one GPU per rank)", "kokkos",
       {"kokkos", "nccl"}, 0, 0},
  };
  // clang-format on
};

}  // namespace

const KernelFamily& allreduce_norm_family() {
  static const AllreduceNormFamily family;
  return family;
}

}  // namespace flotilla::kernels

// MetadataFamily.cpp — the `h2d_metadata` family: a decode step's small host-to-device metadata
// copies, one per array versus one packed copy. It exists only on GPUs: a build without CUDA
// answers `skipped` ("not applicable"), and a CUDA build without a usable GPU is skipped with
// CUDA's reason (metadata_cuda.cu). Verification: the consuming kernel's per-array sums must
// equal the host's exactly (integers; tolerance 0), over the shard's band of steps.
#include "DecodeCommon.h"
#include "Families.h"
#include "MetadataRun.h"

namespace flotilla::kernels {

namespace {

metadata::Result run(const metadata::Variant& v, bool keep_sums) {
#if FLOTILLA_HAVE_CUDA
  return metadata::run_cuda(v, keep_sums);
#else
  (void)v;
  (void)keep_sums;
  metadata::Result skipped;
  skipped.outcome = Outcome::skipped;
  skipped.message =
      "not applicable: host-to-device metadata batching needs CUDA, and this flotilla-kernel was built without "
      "CUDA (FLOTILLA_WITH_CUDA=OFF)";
  return skipped;
#endif
}

class MetadataFamily final : public KernelFamily {
 public:
  std::string_view name() const override { return "h2d_metadata"; }
  std::string_view description() const override {
    return "per-step host-to-device metadata: one copy per small array vs one packed copy (CUDA only)";
  }
  const std::vector<ParamDecl>& params() const override { return m_params; }

  BenchmarkResult benchmark(const Params& given) const override {
    const metadata::Variant v = variant(given);
    const metadata::Result r = run(v, false);
    if (r.outcome != Outcome::ok) return BenchmarkResult{r.outcome, r.message, {}};
    const double t = r.time_s > 0 ? r.time_s : 1e-9;
    return BenchmarkResult{Outcome::ok, "", {{"us_per_step", 1e6 * t / v.steps}, {"time_s", r.time_s}, {"steps_per_s", v.steps / t}}};
  }

  VerifyResult verify(const Params& given, int shard, int shards) const override {
    const metadata::Variant v = variant(given);
    decode::check_shard(shard, shards, v.steps, "steps");
    const decode::Band band = decode::shard_band(v.steps, shard, shards);
    const std::string where = "shard " + std::to_string(shard) + "/" + std::to_string(shards) + " steps " +
                              std::to_string(band.begin) + ".." + std::to_string(band.end - 1) + ": ";
    const metadata::Result r = run(v, true);
    if (r.outcome != Outcome::ok) return VerifyResult{r.outcome, where + r.message, 0, 0};
    int wrong = 0;
    for (int s = band.begin; s < band.end; ++s)
      for (int a = 0; a < v.arrays; ++a) {
        std::int64_t sum = 0;
        for (int i = 0; i < v.ints; ++i) sum += metadata::value(v.seed, s, a, i);
        wrong += r.sums[std::size_t(s) * v.arrays + a] != sum;
      }
    return VerifyResult{wrong ? Outcome::failed : Outcome::ok,
                        where + std::to_string(wrong) + " of " + std::to_string((band.end - band.begin) * v.arrays) +
                            " array sums differ from the host's (tolerance 0)",
                        double(wrong), 0};
  }

 private:
  metadata::Variant variant(const Params& given) const {
    const Params p = resolve_params(*this, given);
    return metadata::Variant{p.at("impl") == "packed", decode::iparam(p, "arrays"), decode::iparam(p, "ints"),
                             decode::iparam(p, "steps"), static_cast<std::uint64_t>(int_param(p, "seed"))};
  }

  // clang-format off
  std::vector<ParamDecl> m_params = {
      {"impl", "separate (one cudaMemcpyAsync per array) or packed (one pinned buffer, one copy)", "separate",
       {"separate", "packed"}, 0, 0},
      {"arrays", "metadata arrays per step (token ids, positions, lengths, block-table rows...)", "8", {}, 1, 1024},
      {"ints", "int32 values per array", "32", {}, 1, 65536},
      {"steps", "decode steps", "200", {}, 1, 100000},
      {"seed", "seed of the metadata", "1", {}, 0, 2147483647},
  };
  // clang-format on
};

}  // namespace

const KernelFamily& h2d_metadata_family() {
  static const MetadataFamily family;
  return family;
}

}  // namespace flotilla::kernels

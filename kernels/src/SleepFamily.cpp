// SleepFamily.cpp — the `sleep` family: waits a given time and does nothing else.
//
// It is the calibration workload of the dispatch benchmark (bench/dispatch): `us=0` is the empty
// task whose cost is pure scheduling overhead, `us=1000` the 1 ms task. Being a real family, it
// runs through the same registry, parameter checks and result path as every other kernel.
#include <chrono>
#include <thread>

#include "Families.h"

namespace flotilla::kernels {
namespace {

class SleepFamily final : public KernelFamily {
 public:
  std::string_view name() const override { return "sleep"; }
  std::string_view description() const override {
    return "waits `us` microseconds (us=0: the empty task of dispatch benchmarks)";
  }
  const std::vector<ParamDecl>& params() const override { return m_params; }

  BenchmarkResult benchmark(const Params& given) const override {
    const auto us = int_param(resolve_params(*this, given), "us");
    const auto start = std::chrono::steady_clock::now();
    if (us > 0) std::this_thread::sleep_for(std::chrono::microseconds(us));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return BenchmarkResult{Outcome::ok, "", {{"time_s", seconds}}};
  }

  VerifyResult verify(const Params& given, int shard, int shards) const override {
    (void)resolve_params(*this, given);
    if (shards < 1 || shard < 0 || shard >= shards)
      throw InvalidParameter(
          "shard", "parameter 'shard' must be in [0, " + std::to_string(shards) + "), got " + std::to_string(shard));
    return VerifyResult{Outcome::ok,
                        "shard " + std::to_string(shard) + "/" + std::to_string(shards) + ": nothing to verify", 0, 0};
  }

 private:
  std::vector<ParamDecl> m_params = {
      {"us", "microseconds to wait", "0", {}, 0, 3'600'000'000LL},
  };
};

}  // namespace

const KernelFamily& sleep_family() {
  static const SleepFamily family;
  return family;
}

}  // namespace flotilla::kernels

// StencilTest.cpp — the stencil family against its reference: every tile/unroll shape of the
// double variant verifies on every shard, float fails with a located message, shards partition
// the rows, and bad parameters are rejected with exact messages.
#include <gtest/gtest.h>

#include <cmath>
#include <regex>

#include "flotilla/kernels/Family.h"
#include "flotilla/kernels/Stencil.h"

namespace fk = flotilla::kernels;
namespace st = flotilla::kernels::stencil;

namespace {

const fk::KernelFamily& stencil_family() { return *fk::find_family("stencil"); }

std::string stencil_rejection(const fk::Params& params, int shard = 0, int shards = 1) {
  try {
    (void)stencil_family().verify(params, shard, shards);
  } catch (const fk::InvalidParameter& e) {
    return e.what();
  }
  return "accepted";
}

TEST(StencilReference, OneSweepOfOnePointIsTheMeanOfItsNeighbours) {
  const std::vector<double> g = st::initial_grid(1, 7);
  const std::vector<double> r = st::reference_grid(1, 1, 7);
  ASSERT_EQ(r.size(), 9u);
  EXPECT_EQ(r[4], 0.25 * (g[1] + g[7] + g[3] + g[5]));
  for (std::size_t k : {0, 1, 2, 3, 5, 6, 7, 8}) EXPECT_EQ(r[k], g[k]) << "boundary " << k;
}

TEST(StencilReference, InitialGridIsSeededDeterministicAndNonTrivial) {
  const std::vector<double> a = st::initial_grid(16, 1);
  EXPECT_EQ(a, st::initial_grid(16, 1));
  EXPECT_NE(a, st::initial_grid(16, 2));
  for (double v : a) EXPECT_TRUE(v >= 0.0 && v < 1.0) << v;
  EXPECT_NE(a[19], a[20]);
  EXPECT_NE(st::reference_grid(16, 3, 1), a);  // sweeps change the interior
}

TEST(StencilShards, BandsPartitionTheRowsInOrder) {
  EXPECT_EQ(st::shard_rows(256, 2, 4).begin, 128);
  EXPECT_EQ(st::shard_rows(256, 2, 4).end, 192);
  for (int n : {1, 7, 64, 255, 256}) {
    for (int shards = 1; shards <= std::min(n, 17); ++shards) {
      std::vector<int> seen(static_cast<std::size_t>(n), 0);
      int next = 0;
      for (int s = 0; s < shards; ++s) {
        const st::RowBand band = st::shard_rows(n, s, shards);
        EXPECT_EQ(band.begin, next) << n << " " << s << "/" << shards;
        for (int r = band.begin; r < band.end; ++r) ++seen[static_cast<std::size_t>(r)];
        next = band.end;
      }
      EXPECT_EQ(next, n);
      EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), n) << n << " rows, " << shards << " shards";
    }
  }
}

struct Shape {
  int tile_x, tile_y, unroll, n_verify, shards;
};
// Readable test names in ctest instead of gtest's byte dump.
void PrintTo(const Shape& s, std::ostream* os) {
  *os << "tile " << s.tile_x << "x" << s.tile_y << " unroll " << s.unroll << " n_verify " << s.n_verify
      << " shards " << s.shards;
}

class StencilDoubleVerifies : public ::testing::TestWithParam<Shape> {};

TEST_P(StencilDoubleVerifies, OnEveryShard) {
  const Shape s = GetParam();
  const fk::Params params = {{"tile_x", std::to_string(s.tile_x)},
                             {"tile_y", std::to_string(s.tile_y)},
                             {"unroll", std::to_string(s.unroll)},
                             {"n_verify", std::to_string(s.n_verify)},
                             {"iters", "7"},
                             {"precision", "double"}};
  for (int shard = 0; shard < s.shards; ++shard) {
    const fk::VerifyResult r = stencil_family().verify(params, shard, s.shards);
    const st::RowBand band = st::shard_rows(s.n_verify, shard, s.shards);
    EXPECT_EQ(r.outcome, fk::Outcome::ok) << r.message;
    EXPECT_EQ(r.max_abs_error, 0.0);  // same summation order: bit-identical to the reference
    EXPECT_EQ(r.message, "shard " + std::to_string(shard) + "/" + std::to_string(s.shards) + " rows " +
                             std::to_string(band.begin) + ".." + std::to_string(band.end - 1) +
                             ": max abs error 0 <= tolerance 1e-12");
  }
}

// Tiles that divide the range, tiles that leave partial tiles, tiles larger than the grid.
INSTANTIATE_TEST_SUITE_P(Shapes, StencilDoubleVerifies,
                         ::testing::Values(Shape{1, 1, 1, 64, 4}, Shape{4, 2, 2, 64, 3},
                                           Shape{32, 8, 1, 64, 2}, Shape{7, 3, 4, 64, 5},
                                           Shape{256, 16, 4, 64, 1}, Shape{64, 1, 2, 60, 7},
                                           Shape{16, 5, 1, 33, 33}),
                         [](const ::testing::TestParamInfo<Shape>& info) {
                           const Shape& s = info.param;
                           return "tx" + std::to_string(s.tile_x) + "_ty" + std::to_string(s.tile_y) + "_u" +
                                  std::to_string(s.unroll) + "_n" + std::to_string(s.n_verify) + "_s" +
                                  std::to_string(s.shards);
                         });

TEST(StencilFloat, FailsVerificationWithALocatedMessage) {
  const fk::VerifyResult r =
      stencil_family().verify({{"precision", "float"}, {"n_verify", "64"}, {"iters", "5"}}, 1, 4);
  EXPECT_EQ(r.outcome, fk::Outcome::failed);
  EXPECT_GT(r.max_abs_error, 1e-10);
  EXPECT_LT(r.max_abs_error, 1e-5);
  EXPECT_EQ(r.tolerance, 1e-12);
  std::smatch m;
  ASSERT_TRUE(std::regex_match(
      r.message, m,
      std::regex(
          R"(shard 1/4 rows 16\.\.31: max abs error [0-9.]+e-0[5-9] > tolerance 1e-12 at \((\d+), (\d+)\))")))
      << r.message;
  EXPECT_GE(std::stoi(m[1]), 16);  // the worst point lies in this shard's band
  EXPECT_LE(std::stoi(m[1]), 31);
  EXPECT_LT(std::stoi(m[2]), 64);
}

TEST(StencilBenchmark, ReportsGflopsTimeAndBandwidth) {
  for (const char* precision : {"double", "float"}) {
    const fk::BenchmarkResult r =
        stencil_family().benchmark({{"n", "128"}, {"iters", "3"}, {"precision", precision}});
    ASSERT_EQ(r.outcome, fk::Outcome::ok) << r.message;
    ASSERT_EQ(r.metrics.size(), 4u);
    EXPECT_EQ(r.metrics[0].name, "gflops");
    EXPECT_EQ(r.metrics[1].name, "time_s");
    EXPECT_EQ(r.metrics[2].name, "gbps");
    EXPECT_EQ(r.metrics[3].name, "residual");
    for (const fk::Metric& m : r.metrics) EXPECT_TRUE(std::isfinite(m.value) && m.value > 0) << m.name;
    // 4 flops and 2 scalars moved per point.
    const double bytes_per_flop = std::string(precision) == "double" ? 4.0 : 2.0;
    EXPECT_NEAR(r.metrics[2].value / r.metrics[0].value, bytes_per_flop, 1e-9);
  }
}

// The residual is the reference's distance from convergence after `iters` sweeps: it falls as
// sweeps are added, and a variant's tiles do not change it (configs/pareto.ini trades it for time).
TEST(StencilBenchmark, ResidualFallsWithSweepsAndIgnoresTiles) {
  auto residual = [](const char* iters, const char* tile_x) {
    const auto r = stencil_family().benchmark({{"n", "64"}, {"iters", iters}, {"tile_x", tile_x}});
    EXPECT_EQ(r.outcome, fk::Outcome::ok) << r.message;
    return r.metrics.at(3).value;
  };
  const double r10 = residual("10", "16"), r50 = residual("50", "16"), r200 = residual("200", "16");
  EXPECT_GT(r10, r50);
  EXPECT_GT(r50, r200);
  EXPECT_GT(r200, 0);
  EXPECT_EQ(residual("50", "64"), r50);
  // By hand on a 1x1 interior: the centre is the mean of its four boundary neighbours after one
  // sweep, so a second sweep changes nothing.
  std::vector<double> grid = fk::stencil::initial_grid(1, 7);
  EXPECT_GT(fk::stencil::residual(grid, 1), 0);
  EXPECT_EQ(fk::stencil::residual(fk::stencil::reference_grid(1, 1, 7), 1), 0);
}

TEST(StencilParams, BadShardsAndUnrollMultiplesAreRejectedExactly) {
  EXPECT_EQ(stencil_rejection({}, 0, 0), "parameter 'shards' must be >= 1, got 0");
  EXPECT_EQ(stencil_rejection({}, 4, 4), "parameter 'shard' must be in [0, 4), got 4");
  EXPECT_EQ(stencil_rejection({}, -1, 4), "parameter 'shard' must be in [0, 4), got -1");
  EXPECT_EQ(stencil_rejection({}, 0, 300), "parameter 'shards' (300) must be <= n_verify (256)");
  EXPECT_EQ(stencil_rejection({{"unroll", "4"}, {"n", "1022"}}),
            "parameter 'n' (1022) must be a multiple of unroll (4)");
  EXPECT_EQ(stencil_rejection({{"unroll", "2"}, {"n_verify", "99"}}),
            "parameter 'n_verify' (99) must be a multiple of unroll (2)");
  EXPECT_EQ(
      stencil_rejection({{"device", "cuda"}, {"tile_x", "64"}, {"tile_y", "32"}}),
      "parameters 'tile_x' * 'tile_y' (2048) must be <= 1024 threads per CUDA block with device 'cuda'");
  EXPECT_THROW((void)stencil_family().benchmark({{"tile_x", "0"}}), std::invalid_argument);
}

// Here (no GPU, or no CUDA built in) the CUDA twin is skipped with a reason; on a GPU it verifies.
TEST(StencilCuda, VerifiesOrIsSkippedWithAReasonButNeverFails) {
  const fk::VerifyResult r = stencil_family().verify({{"device", "cuda"}, {"n_verify", "64"}, {"iters", "5"}}, 0, 2);
  ASSERT_NE(r.outcome, fk::Outcome::failed) << r.message;
  if (r.outcome == fk::Outcome::skipped) {
    EXPECT_TRUE(std::regex_search(r.message, std::regex("^shard 0/2 rows 0\\.\\.31: .*CUDA"))) << r.message;
    GTEST_SKIP() << r.message;
  }
  EXPECT_EQ(r.max_abs_error, 0.0);
}

}  // namespace

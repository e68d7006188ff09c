// Stencil.cpp — the stencil family's pure host pieces: seeded initial grid, reference, shards.
//
// The reference is deliberately the obvious loop (no Kokkos, no tiling, no unrolling): it is
// what every variant, on every device, is checked against.
#include "flotilla/kernels/Stencil.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>

namespace flotilla::kernels::stencil {

namespace {

// splitmix64: a well-mixed 64-bit hash, so the grid has no structure a bug could hide behind.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

RowBand shard_rows(int n, int shard, int shards) {
  // 64-bit products: n * shards may exceed int for large grids split many ways.
  const auto begin = static_cast<std::int64_t>(shard) * n / shards;
  const auto end = static_cast<std::int64_t>(shard + 1) * n / shards;
  return RowBand{static_cast<int>(begin), static_cast<int>(end)};
}

std::vector<double> initial_grid(int n, std::uint64_t seed) {
  const std::size_t width = static_cast<std::size_t>(n) + 2;
  std::vector<double> grid(width * width);
  const std::uint64_t key = mix(seed);
  for (std::size_t k = 0; k < grid.size(); ++k) {
    // Top 53 bits -> [0, 1): exactly representable in double.
    grid[k] = static_cast<double>(mix(key ^ k) >> 11) * 0x1.0p-53;
  }
  return grid;
}

std::vector<double> reference_grid(int n, int iters, std::uint64_t seed) {
  const std::size_t w = static_cast<std::size_t>(n) + 2;
  std::vector<double> in = initial_grid(n, seed);
  std::vector<double> out = in;  // same fixed boundary in both buffers
  for (int it = 0; it < iters; ++it) {
    for (std::size_t i = 1; i <= static_cast<std::size_t>(n); ++i) {
      for (std::size_t j = 1; j <= static_cast<std::size_t>(n); ++j) {
        out[i * w + j] =
            0.25 * (in[(i - 1) * w + j] + in[(i + 1) * w + j] + in[i * w + j - 1] + in[i * w + j + 1]);
      }
    }
    std::swap(in, out);
  }
  return in;
}

double residual(const std::vector<double>& grid, int n) {
  const std::size_t w = static_cast<std::size_t>(n) + 2;
  double worst = 0;
  for (std::size_t i = 1; i <= static_cast<std::size_t>(n); ++i)
    for (std::size_t j = 1; j <= static_cast<std::size_t>(n); ++j) {
      const double next = 0.25 * (grid[(i - 1) * w + j] + grid[(i + 1) * w + j] + grid[i * w + j - 1] + grid[i * w + j + 1]);
      worst = std::max(worst, std::fabs(next - grid[i * w + j]));
    }
  return worst;
}

}  // namespace flotilla::kernels::stencil

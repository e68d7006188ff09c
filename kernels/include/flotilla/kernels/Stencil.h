// Stencil.h — the pure, host-only pieces of the `stencil` family that callers and tests may use:
// the seeded initial grid, the plain double-precision reference and the shard-to-rows split.
//
// Grid: (n+2) x (n+2) values, row-major (row i, column j; j is contiguous), index i*(n+2)+j.
// Rows and columns 0 and n+1 are the fixed boundary; the n x n interior is swept. One Jacobi
// sweep: out(i,j) = 0.25 * (in(i-1,j) + in(i+1,j) + in(i,j-1) + in(i,j+1)), summed in exactly
// that order, so that every double-precision variant reproduces the reference bit for bit.
// Interior rows and columns are named 0..n-1 in messages (grid row r+1 is interior row r).
#pragma once

#include <cstdint>
#include <vector>

namespace flotilla::kernels::stencil {

// A double variant must match the reference to this; float variants miss it by ~1e-8.
inline constexpr double tolerance = 1e-12;

// Interior rows [begin, end) that shard `shard` of `shards` checks: [s*n/S, (s+1)*n/S).
// Together the shards cover 0..n-1 exactly once. Preconditions: 0 <= shard < shards <= n.
struct RowBand {
  int begin = 0;
  int end = 0;
};
RowBand shard_rows(int n, int shard, int shards);

// The deterministic, non-trivial initial grid (boundary included): values in [0, 1) from a
// hash of (seed, i, j), so neighbouring points differ and every sweep changes every point.
std::vector<double> initial_grid(int n, std::uint64_t seed);

// The reference: `iters` sweeps of the obvious double loop over initial_grid(n, seed).
std::vector<double> reference_grid(int n, int iters, std::uint64_t seed);

// How far a grid is from the Jacobi fixed point: the largest change one more sweep would make to
// an interior point. It falls as sweeps are added, so `iters` trades time for accuracy.
double residual(const std::vector<double>& grid, int n);

}  // namespace flotilla::kernels::stencil

// stencil_kokkos.cpp — the Kokkos implementation of one stencil variant.
//
// MDRangePolicy Rank<2> over (interior row i, work item jj), both directions Right so the
// contiguous j axis is innermost; tile = {tile_y, tile_x}. Work item jj covers the `Unroll`
// consecutive points j = 1 + jj*Unroll ... : fewer, fatter work items amortise the per-point
// cost of the MDRange iteration, which is what the `unroll` parameter tunes.
#include <Kokkos_Core.hpp>
#include <chrono>
#include <stdexcept>
#include <utility>

#include "StencilRun.h"
#include "flotilla/kernels/Stencil.h"

namespace flotilla::kernels::stencil {

namespace {

template <class Scalar>
using Grid = Kokkos::View<Scalar**, Kokkos::LayoutRight>;

template <class Scalar, int Unroll>
struct JacobiSweep {
  Kokkos::View<const Scalar**, Kokkos::LayoutRight> m_in;
  Grid<Scalar> m_out;

  KOKKOS_INLINE_FUNCTION void operator()(const int i, const int jj) const {
    const int j0 = 1 + jj * Unroll;
    for (int u = 0; u < Unroll; ++u) {  // constant trip count: fully unrolled by the compiler
      const int j = j0 + u;
      // Same summation order as reference_grid, so double variants match it exactly.
      m_out(i, j) = Scalar(0.25) * (m_in(i - 1, j) + m_in(i + 1, j) + m_in(i, j - 1) + m_in(i, j + 1));
    }
  }
};

using Policy = Kokkos::MDRangePolicy<Kokkos::Rank<2, Kokkos::Iterate::Right, Kokkos::Iterate::Right>,
                                     Kokkos::IndexType<int>>;

template <class Scalar, int Unroll>
Sweeps run_typed(const Variant& v, Mode mode) {
  const int w = v.n + 2;
  Grid<Scalar> a("flotilla_stencil_a", w, w);
  Grid<Scalar> b("flotilla_stencil_b", w, w);
  auto host = Kokkos::create_mirror_view(a);
  const std::vector<double> init = initial_grid(v.n, v.seed);
  for (int i = 0; i < w; ++i) {
    for (int j = 0; j < w; ++j) host(i, j) = static_cast<Scalar>(init[static_cast<std::size_t>(i) * w + j]);
  }
  Kokkos::deep_copy(a, host);
  Kokkos::deep_copy(b, a);  // the boundary is never written, so both buffers must carry it

  const Policy policy({1, 0}, {v.n + 1, v.n / Unroll}, {v.tile_y, v.tile_x});
  auto sweep = [&] {
    Kokkos::parallel_for("flotilla_stencil", policy, JacobiSweep<Scalar, Unroll>{a, b});
    std::swap(a, b);  // ping-pong: the newest values are in `a` again
  };

  Sweeps result;
  if (mode == Mode::benchmark) {
    sweep();  // warm-up: first touch of `b`'s interior pages, caches, branch predictors
    Kokkos::fence();
    const auto start = std::chrono::steady_clock::now();
    for (int it = 0; it < v.iters; ++it) sweep();
    Kokkos::fence();
    result.time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
  }
  for (int it = 0; it < v.iters; ++it) sweep();
  Kokkos::fence();
  Kokkos::deep_copy(host, a);
  result.grid.resize(init.size());
  for (int i = 0; i < w; ++i) {
    for (int j = 0; j < w; ++j) result.grid[static_cast<std::size_t>(i) * w + j] = host(i, j);
  }
  return result;
}

template <class Scalar>
Sweeps run_scalar(const Variant& v, Mode mode) {
  switch (v.unroll) {
    case 1:
      return run_typed<Scalar, 1>(v, mode);
    case 2:
      return run_typed<Scalar, 2>(v, mode);
    case 4:
      return run_typed<Scalar, 4>(v, mode);
  }
  throw std::logic_error("run_kokkos: unroll " + std::to_string(v.unroll) + " was not validated");
}

}  // namespace

Sweeps run_kokkos(const Variant& variant, Mode mode) {
  if (!Kokkos::is_initialized()) {
    throw std::logic_error("stencil: Kokkos is not initialised; create a flotilla::kernels::Runtime first");
  }
  return variant.single ? run_scalar<float>(variant, mode) : run_scalar<double>(variant, mode);
}

}  // namespace flotilla::kernels::stencil

// Encoding.cpp — unit-cube coordinates and moves of configurations (see Encoding.h).
#include "Encoding.h"

#include <algorithm>
#include <cmath>

namespace flotilla::search {

Encoding::Encoding(const Space& space) {
  for (const auto& p : space.parameters()) {
    Dim dim;
    m_kinds.push_back(p.kind);
    dim.levels = p.grid_size();
    switch (p.kind) {
      case ParamKind::integer:
        dim.range = p.range;
        dim.sorted = p.values;
        std::sort(dim.sorted.begin(), dim.sorted.end());
        break;
      case ParamKind::real:
        dim.continuous = true;
        dim.lo = p.log_scale ? std::log(p.lo) : p.lo;
        dim.hi = p.log_scale ? std::log(p.hi) : p.hi;
        dim.log_scale = p.log_scale;
        dim.min = p.lo;
        dim.max = p.hi;
        break;
      case ParamKind::enumeration: dim.categorical = true; break;
      case ParamKind::ordinal: break;
    }
    m_dims.push_back(std::move(dim));
  }
}

std::size_t Encoding::level(std::size_t d, double value) const {
  const auto& dim = m_dims[d];
  if (dim.range) {  // what lower_bound would say of the listed range
    const auto& r = *dim.range;
    if (!(value > static_cast<double>(r.first))) return 0;
    if (value > static_cast<double>(r.last())) return r.count;
    const long long offset = static_cast<long long>(std::ceil(value)) - r.first;  // exact: within 2^53
    return static_cast<std::size_t>((offset + r.step - 1) / r.step);
  }
  if (m_kinds[d] == ParamKind::integer)
    return static_cast<std::size_t>(std::lower_bound(dim.sorted.begin(), dim.sorted.end(), value) - dim.sorted.begin());
  if (dim.continuous) return static_cast<std::size_t>(std::lround(unit(d, value) * static_cast<double>(dim.levels - 1)));
  return static_cast<std::size_t>(value);
}

double Encoding::value(std::size_t d, std::size_t level) const {
  const auto& dim = m_dims[d];
  if (dim.range) return static_cast<double>(dim.range->first + static_cast<long long>(level) * dim.range->step);
  if (m_kinds[d] == ParamKind::integer) return dim.sorted[level];
  if (dim.continuous) return set_unit(d, static_cast<double>(level) / static_cast<double>(dim.levels - 1));
  return static_cast<double>(level);
}

double Encoding::unit(std::size_t d, double value) const {
  const auto& dim = m_dims[d];
  if (dim.continuous) return ((dim.log_scale ? std::log(value) : value) - dim.lo) / (dim.hi - dim.lo);
  if (dim.levels < 2) return 0.0;
  return static_cast<double>(level(d, value)) / static_cast<double>(dim.levels - 1);
}

double Encoding::set_unit(std::size_t d, double u) const {
  const auto& dim = m_dims[d];
  u = std::clamp(u, 0.0, 1.0);
  if (dim.continuous) {
    if (u == 0.0) return dim.min;  // the ends exactly, not exp(log(bound))
    if (u == 1.0) return dim.max;
    double v = dim.lo + u * (dim.hi - dim.lo);
    // exp(log(x)) may land a hair outside [lo, hi] (exp(log(0.1)) too); Parameter::parse would
    // then refuse it, so clamp to the parameter's own bounds.
    return std::clamp(dim.log_scale ? std::exp(v) : v, dim.min, dim.max);
  }
  auto l = static_cast<std::size_t>(std::lround(u * static_cast<double>(dim.levels - 1)));
  return value(d, std::min(l, dim.levels - 1));
}

Point Encoding::point(const Configuration& config) const {
  Point p(config.size());
  for (std::size_t d = 0; d < config.size(); ++d) p[d] = unit(d, config[d]);
  return p;
}

Configuration Encoding::decode(const Point& point) const {
  Configuration c(point.size());
  for (std::size_t d = 0; d < point.size(); ++d) c[d] = set_unit(d, point[d]);
  return c;
}

double Encoding::distance2(const Point& a, const Point& b) const {
  double sum = 0;
  for (std::size_t d = 0; d < a.size(); ++d) {
    if (m_dims[d].categorical) sum += a[d] != b[d] ? 1.0 : 0.0;
    else sum += (a[d] - b[d]) * (a[d] - b[d]);
  }
  return sum;
}

Configuration Encoding::step(const Configuration& config, std::size_t d, long delta) const {
  const long top = static_cast<long>(m_dims[d].levels) - 1;
  long l = static_cast<long>(level(d, config[d])) + delta;
  if (l < 0) l = -l;  // reflect at the ends, so a move at the edge still moves
  if (l > top) l = 2 * top - l;
  l = std::clamp(l, 0L, top);
  Configuration c = config;
  c[d] = value(d, static_cast<std::size_t>(l));
  return c;
}

std::vector<Configuration> Encoding::neighbours(const Configuration& config, bool adjacent) const {
  std::vector<Configuration> out;
  for (std::size_t d = 0; d < dims(); ++d) {
    const auto& dim = m_dims[d];
    if (dim.continuous) {
      double s = 1.0 / static_cast<double>(dim.levels - 1), u = unit(d, config[d]);
      for (double t : {u - s, u + s})
        if (t >= 0 && t <= 1) out.push_back(config), out.back()[d] = set_unit(d, t);
      continue;
    }
    const auto here = level(d, config[d]);
    if (dim.levels > kListedNeighbours) {
      for (auto l : ladder(here, dim.levels, adjacent)) out.push_back(config), out.back()[d] = value(d, l);
      continue;
    }
    for (std::size_t l = 0; l < dim.levels; ++l) {
      bool near = l + 1 == here || l == here + 1;
      if (l == here || (adjacent && !dim.categorical && !near)) continue;
      out.push_back(config);
      out.back()[d] = value(d, l);
    }
  }
  return out;
}

// The levels 1, 2, 4, ... away from `here` on either side (only 1 when `adjacent`), ascending
// like the listing of a short axis. Steps that double reach any part of a long axis in few
// moves and still offer the next level, where listing every level would cost its length.
std::vector<std::size_t> Encoding::ladder(std::size_t here, std::size_t levels, bool adjacent) {
  const std::size_t top = levels - 1, widest = adjacent ? 1 : top;
  here = std::min(here, top);
  std::vector<std::size_t> below, out;
  for (std::size_t step = 1; step <= here && step <= widest; step *= 2) below.push_back(here - step);
  out.assign(below.rbegin(), below.rend());
  for (std::size_t step = 1; step <= top - here && step <= widest; step *= 2) out.push_back(here + step);
  return out;
}

Configuration Encoding::mutate(const Configuration& config, double rate, Rng& rng) const {
  Configuration c = config;
  const std::size_t forced = rng.index(dims());  // at least one parameter changes
  for (std::size_t d = 0; d < dims(); ++d) {
    const auto& dim = m_dims[d];
    if ((d != forced && !rng.chance(rate)) || dim.levels < 2) continue;
    if (dim.continuous) {
      double u = unit(d, c[d]) + 0.15 * rng.normal();
      u = u < 0 ? -u : u > 1 ? 2 - u : u;  // reflect, so a move at the bound still moves
      c[d] = set_unit(d, u);
    } else if (dim.categorical) {
      auto here = level(d, c[d]);
      c[d] = value(d, (here + 1 + rng.index(dim.levels - 1)) % dim.levels);
    } else {
      // Mostly one level, sometimes further: a geometric step keeps moves local but able to
      // jump over a ridge of infeasible or failing values.
      long size = 1;
      while (size < static_cast<long>(dim.levels) - 1 && rng.chance(0.3)) ++size;
      c = step(c, d, rng.chance(0.5) ? size : -size);
    }
  }
  return c;
}

Configuration Encoding::crossover(const Configuration& a, const Configuration& b, Rng& rng) const {
  Configuration c = a;
  for (std::size_t d = 0; d < dims(); ++d)
    if (rng.chance(0.5)) c[d] = b[d];
  return c;
}

Configuration Encoding::random(Rng& rng) const {
  Configuration c(dims());
  for (std::size_t d = 0; d < dims(); ++d)
    c[d] = m_dims[d].continuous ? set_unit(d, rng.unit()) : value(d, rng.index(m_dims[d].levels));
  return c;
}

Configuration Encoding::binned(const std::vector<double>& u) const {
  Configuration c(dims());
  for (std::size_t d = 0; d < dims(); ++d) {
    const auto& dim = m_dims[d];
    if (dim.continuous) c[d] = set_unit(d, u[d]);
    else c[d] = value(d, std::min(dim.levels - 1, static_cast<std::size_t>(u[d] * static_cast<double>(dim.levels))));
  }
  return c;
}

RandomSource::RandomSource(const Space& space, std::uint64_t seed)
    : m_space(space), m_encoding(space), m_rng(seed), m_order(space.feasible_indices()) {
  if (m_order) {
    m_permutation.resize(m_order->size());
    for (std::size_t i = 0; i < m_permutation.size(); ++i) m_permutation[i] = static_cast<std::uint32_t>(i);
  }
}

}  // namespace flotilla::search

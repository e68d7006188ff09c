// Encoding.h — a configuration seen as a point of the unit cube, for the adaptive strategies.
//
// Each parameter is one coordinate in [0, 1]: int parameters by the rank of their value (so
// "8,16,32,64" is evenly spaced, as tuning parameters usually act multiplicatively), ordinal
// ones by their index, real ones linearly or on a log scale. Enum parameters are categorical:
// their coordinate only names a choice, and any two different choices are at distance 1.
// Moves (neighbours, mutation, crossover) keep values on the parameters' own grids, except
// for real parameters, which move continuously. No function here checks constraints; callers
// filter with Space::feasible. Nothing here costs memory or time in proportion to a
// parameter's number of levels (an int range may hold 10^7): a long range is arithmetic, not a
// table, and a neighbourhood along a long axis is a ladder of steps, not every level.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "flotilla/search/Space.h"
#include "Rng.h"

namespace flotilla::search {

using Point = std::vector<double>;

class Encoding {
 public:
  explicit Encoding(const Space& space);

  std::size_t dims() const { return m_dims.size(); }
  bool categorical(std::size_t d) const { return m_dims[d].categorical; }
  bool continuous(std::size_t d) const { return m_dims[d].continuous; }
  // Grid levels (real parameters: their grid points, used as step sizes for moves).
  std::size_t levels(std::size_t d) const { return m_dims[d].levels; }

  Point point(const Configuration& config) const;
  Configuration decode(const Point& point) const;
  // Squared distance; a categorical mismatch counts 1, as the full range of another axis.
  double distance2(const Point& a, const Point& b) const;

  std::size_t level(std::size_t d, double value) const;
  double value(std::size_t d, std::size_t level) const;

  // Configurations that differ from `config` in one parameter: by one level up or down
  // (`adjacent`), or to any other value (Hamming). Real parameters move by one grid step. An
  // axis of more than kListedNeighbours levels offers, in place of every other value, those 1,
  // 2, 4, 8, ... levels away on either side (at most 2 log2(levels): 46 for 1..9999999).
  static constexpr std::size_t kListedNeighbours = 64;
  std::vector<Configuration> neighbours(const Configuration& config, bool adjacent) const;
  // Changes each parameter with probability `rate` (at least one): ordered ones by a small
  // step (mostly one level), categorical ones to another choice, real ones by a Gaussian step.
  Configuration mutate(const Configuration& config, double rate, Rng& rng) const;
  // Uniform crossover: each parameter from one parent or the other.
  Configuration crossover(const Configuration& a, const Configuration& b, Rng& rng) const;
  // A uniformly random grid point (real parameters: uniform in their range), maybe infeasible.
  Configuration random(Rng& rng) const;
  // The configuration at a point of a space-filling design in [0, 1)^dims: coordinate u picks
  // level floor(u * levels) (equal-probability bins, so end levels are not halved); real
  // parameters take u itself.
  Configuration binned(const std::vector<double>& u) const;

 private:
  struct Dim {
    bool categorical = false;
    bool continuous = false;
    std::size_t levels = 1;
    std::vector<double> sorted;  // int parameters: values in ascending order, unless `range`
    std::optional<Parameter::IntRange> range;  // int parameters: a long range (ascending)
    double lo = 0, hi = 1;        // real parameters: the bounds, on the log scale when log_scale
    double min = 0, max = 1;      // real parameters: the bounds themselves
    bool log_scale = false;
  };
  double set_unit(std::size_t d, double u) const;  // unit coordinate -> parameter value
  double unit(std::size_t d, double value) const;  // parameter value -> unit coordinate
  Configuration step(const Configuration& config, std::size_t d, long delta) const;
  static std::vector<std::size_t> ladder(std::size_t here, std::size_t levels, bool adjacent);

  std::vector<Dim> m_dims;
  std::vector<ParamKind> m_kinds;
};

// Unseen feasible configurations in random order, drawn from the seed. A space whose grid is
// small enough is enumerated once (Space::feasible_indices) and shuffled, so draws are exactly
// uniform and `next` reports exhaustion truthfully; otherwise draws are by rejection.
class RandomSource {
 public:
  RandomSource(const Space& space, std::uint64_t seed);
  // The next feasible configuration that `taken` does not reject; nullopt when none is left.
  template <class Taken>
  std::optional<Configuration> next(Taken&& taken);
  bool enumerated() const { return m_order != nullptr; }
  std::size_t feasible_count() const { return m_order ? m_order->size() : 0; }
  const Space& space() const { return m_space; }
  Rng& rng() { return m_rng; }

 private:
  const Space& m_space;
  Encoding m_encoding;
  Rng m_rng;
  const std::vector<std::uint64_t>* m_order = nullptr;
  std::vector<std::uint32_t> m_permutation;  // positions into *m_order, shuffled lazily
  std::size_t m_next = 0;
};

template <class Taken>
std::optional<Configuration> RandomSource::next(Taken&& taken) {
  if (m_order) {
    // Lazy Fisher-Yates: position i is fixed only when reached, so a short search on a huge
    // enumerated space does not pay for shuffling all of it.
    while (m_next < m_permutation.size()) {
      std::swap(m_permutation[m_next], m_permutation[m_next + m_rng.index(m_permutation.size() - m_next)]);
      auto config = m_space.grid_point((*m_order)[m_permutation[m_next++]]);
      if (!taken(config)) return config;
    }
    return std::nullopt;
  }
  for (int attempt = 0; attempt < Space::kMaxRejections; ++attempt) {
    auto config = m_encoding.random(m_rng);
    if (m_space.feasible(config) && !taken(config)) return config;
  }
  return std::nullopt;
}

}  // namespace flotilla::search

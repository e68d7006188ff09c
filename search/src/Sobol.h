// Sobol.h — a scrambled Sobol sequence in the unit cube.
//
// Direction numbers are Joe and Kuo's (new-joe-kuo-6.21201) for the first 40 dimensions;
// further dimensions are uniformly random (a tuning space with more than 40 parameters gains
// little from low discrepancy anyway). Points are scrambled with a random digital shift drawn
// from the seed, which keeps the sequence's (t, s)-net structure while making repeats with
// different seeds independent. Point 0 is kept, so every prefix of 2^k points is balanced.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "Rng.h"

namespace flotilla::search {

class SobolSequence {
 public:
  static constexpr std::size_t kMaxDims = 40;

  SobolSequence(std::size_t dims, std::uint64_t seed);
  // The next point, each coordinate in [0, 1).
  std::vector<double> next();

 private:
  std::size_t m_dims;
  std::vector<std::array<std::uint32_t, 32>> m_directions;
  std::vector<std::uint32_t> m_shift;
  std::vector<std::uint32_t> m_state;
  std::uint32_t m_index = 0;
  Rng m_rng;  // dimensions past the table
};

}  // namespace flotilla::search

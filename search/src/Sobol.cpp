// Sobol.cpp — Sobol points by Gray-code updates (one XOR per coordinate per point).
#include "Sobol.h"

#include <sstream>
#include <string_view>

namespace flotilla::search {
namespace {

// Joe & Kuo, new-joe-kuo-6.21201, dimensions 2..40: "s a m_1 .. m_s" (dimension 1 is the
// van der Corput sequence and needs none). A data table, not code to check by eye: the unit
// tests verify the first points and the balance of every 2^k prefix.
constexpr std::string_view kJoeKuo =
    "1 0 1|2 1 1 3|3 1 1 3 1|3 2 1 1 1|4 1 1 1 3 3|4 4 1 3 5 13|5 2 1 1 5 5 17|5 4 1 1 5 5 5|"
    "5 7 1 1 7 11 19|5 11 1 1 5 1 1|5 13 1 1 1 3 11|5 14 1 3 5 5 31|6 1 1 3 3 9 7 49|"
    "6 13 1 1 1 15 21 21|6 16 1 3 1 13 27 49|6 19 1 1 1 15 7 5|6 22 1 3 1 15 13 25|"
    "6 25 1 1 5 5 19 61|7 1 1 3 7 11 23 15 103|7 4 1 3 7 13 13 15 69|7 7 1 1 3 13 7 35 63|"
    "7 8 1 3 5 9 1 25 53|7 14 1 3 1 13 9 35 107|7 19 1 3 1 5 27 61 31|7 21 1 1 5 11 19 41 61|"
    "7 28 1 3 5 3 3 13 69|7 31 1 1 7 13 1 19 1|7 32 1 3 7 5 13 19 59|7 37 1 1 3 9 25 29 41|"
    "7 41 1 3 5 13 23 1 55|7 42 1 3 7 3 13 59 17|7 50 1 3 1 3 5 53 69|7 55 1 1 5 5 23 33 13|"
    "7 56 1 1 7 7 1 61 123|7 59 1 1 7 9 13 61 49|7 62 1 3 3 5 3 55 33|8 14 1 3 1 15 31 13 49 245|"
    "8 21 1 3 5 15 31 59 63 97|8 22 1 3 1 11 11 11 77 249";

std::vector<std::array<std::uint32_t, 32>> direction_table() {
  std::vector<std::array<std::uint32_t, 32>> all;
  std::array<std::uint32_t, 32> first{};
  for (int j = 0; j < 32; ++j) first[j] = std::uint32_t{1} << (31 - j);
  all.push_back(first);
  std::istringstream rows{std::string(kJoeKuo)};
  for (std::string row; std::getline(rows, row, '|');) {
    std::istringstream in(row);
    unsigned s = 0, a = 0;
    in >> s >> a;
    std::array<std::uint32_t, 32> v{};
    for (unsigned j = 0; j < s; ++j) {
      std::uint32_t m = 0;
      in >> m;
      v[j] = m << (31 - j);
    }
    // Bratley and Fox's recurrence; the primitive polynomial's inner coefficients are a's bits.
    for (unsigned j = s; j < 32; ++j) {
      std::uint32_t x = v[j - s] ^ (v[j - s] >> s);
      for (unsigned k = 1; k < s; ++k)
        if ((a >> (s - 1 - k)) & 1u) x ^= v[j - k];
      v[j] = x;
    }
    all.push_back(v);
  }
  return all;
}

}  // namespace

SobolSequence::SobolSequence(std::size_t dims, std::uint64_t seed) : m_dims(dims), m_rng(mix_seed(seed, 1)) {
  static const auto table = direction_table();
  Rng shift_rng(seed);
  for (std::size_t d = 0; d < dims && d < table.size(); ++d) {
    m_directions.push_back(table[d]);
    m_shift.push_back(static_cast<std::uint32_t>(shift_rng.bits() >> 32));
  }
  m_state.assign(m_directions.size(), 0);
}

std::vector<double> SobolSequence::next() {
  std::vector<double> point(m_dims);
  for (std::size_t d = 0; d < m_directions.size(); ++d)
    point[d] = static_cast<double>(m_state[d] ^ m_shift[d]) * 0x1.0p-32;
  for (std::size_t d = m_directions.size(); d < m_dims; ++d) point[d] = m_rng.unit();
  // Gray-code order: the next point differs by the direction of the lowest zero bit of index.
  unsigned c = 0;
  for (std::uint32_t i = m_index; i & 1u; i >>= 1) ++c;
  if (c < 32)
    for (std::size_t d = 0; d < m_directions.size(); ++d) m_state[d] ^= m_directions[d][c];
  ++m_index;
  return point;
}

}  // namespace flotilla::search

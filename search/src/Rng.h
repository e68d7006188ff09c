// Rng.h — the seeded random source of every strategy.
//
// Only mt19937_64's raw output is used: its sequence is fixed by the standard, whereas the
// standard distributions (uniform_int_distribution, normal_distribution, shuffle) differ
// between library implementations. Every draw below is written out, so a campaign replays
// bit for bit from its seed on any platform.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <utility>
#include <vector>

namespace flotilla::search {

// SplitMix64: derives independent seeds for the parts of a strategy (and repeats of a replay).
inline std::uint64_t mix_seed(std::uint64_t seed, std::uint64_t salt) {
  std::uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (salt + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : m_engine(seed) {}

  std::uint64_t bits() { return m_engine(); }

  // Uniform in [0, bound); unbiased (rejects the short last stripe).
  std::uint64_t below(std::uint64_t bound) {
    const auto max = std::numeric_limits<std::uint64_t>::max();
    const std::uint64_t limit = max - max % bound;
    std::uint64_t x;
    do x = m_engine(); while (x >= limit);
    return x % bound;
  }
  std::size_t index(std::size_t size) { return static_cast<std::size_t>(below(size)); }

  // Uniform in [0, 1) with 53 random bits.
  double unit() { return static_cast<double>(m_engine() >> 11) * 0x1.0p-53; }
  bool chance(double p) { return unit() < p; }

  // Standard normal (Box-Muller; the second value is dropped to keep the state simple).
  double normal() {
    double u = 1.0 - unit();  // (0, 1]
    return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * unit());
  }

  template <class T>
  void shuffle(std::vector<T>& items) {  // Fisher-Yates
    for (std::size_t i = items.size(); i > 1; --i) std::swap(items[i - 1], items[index(i)]);
  }

 private:
  std::mt19937_64 m_engine;
};

}  // namespace flotilla::search

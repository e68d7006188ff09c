// DecodeCommon.h — internal host helpers shared by the decode-step families and the engine:
// seeded data, shard checks, a wall clock with fences, and number formatting for messages.
//
// Every value a family or the engine generates comes from splitmix64 of (seed, stream, index), so
// a variant and its reference always see the same inputs, on any platform and compiler.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include "flotilla/kernels/Family.h"

namespace flotilla::kernels::decode {

inline std::uint64_t splitmix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A value in [-scale, scale) for element `index` of stream `stream` under `seed`; exact in float.
inline float seeded_uniform(std::uint64_t seed, std::uint64_t stream, std::uint64_t index, float scale) {
  const std::uint64_t bits = splitmix(splitmix(seed * 0x100000001b3ULL + stream) ^ index) >> 40;  // 24 bits
  return scale * (static_cast<float>(bits) * 0x1.0p-23f - 1.0f);
}

// The same generic shard checks and messages as the stencil family; `units` names what is sharded.
inline void check_shard(int shard, int shards, int count, const std::string& count_name) {
  if (shards < 1) throw InvalidParameter("shards", "parameter 'shards' must be >= 1, got " + std::to_string(shards));
  if (shard < 0 || shard >= shards) {
    throw InvalidParameter("shard", "parameter 'shard' must be in [0, " + std::to_string(shards) + "), got " +
                                        std::to_string(shard));
  }
  if (shards > count) {
    throw InvalidParameter("shards", "parameter 'shards' (" + std::to_string(shards) + ") must be <= " + count_name +
                                         " (" + std::to_string(count) + ")");
  }
}

struct Band {
  int begin = 0;
  int end = 0;
};
inline Band shard_band(int count, int shard, int shards) {
  return Band{static_cast<int>(static_cast<std::int64_t>(shard) * count / shards),
              static_cast<int>(static_cast<std::int64_t>(shard + 1) * count / shards)};
}

inline std::string fmt_g(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

inline int iparam(const Params& p, const char* name) { return static_cast<int>(int_param(p, name)); }

}  // namespace flotilla::kernels::decode

// Philox4x32-10 (Salmon, Moraes, Dror, Shaw: "Parallel random numbers: as
// easy as 1, 2, 3", SC'11) and the maps from its 32-bit outputs to kiln's
// random values. Header-only and dependency-free so that every backend (the
// reference evaluator, JIT-generated CPU code, CUDA kernels) draws exactly the
// same numbers: element i of a random node with attrs {seed, offset} is
//
//   philox4x32_10(counter = {lo32(offset + i), hi32(offset + i), 0, 0},
//                 key     = {lo32(seed), hi32(seed)})
//
// one Philox call per element, whatever the device or the evaluation order.
#pragma once

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define KILN_PHILOX_HD __host__ __device__
#else
#define KILN_PHILOX_HD
#endif

namespace kiln {

struct PhiloxBlock {
  uint32_t x[4];
};

namespace philox_detail {
constexpr uint32_t kM0 = 0xD2511F53u;  // multipliers
constexpr uint32_t kM1 = 0xCD9E8D57u;
constexpr uint32_t kW0 = 0x9E3779B9u;  // key bumps (golden ratio, sqrt(3) - 1)
constexpr uint32_t kW1 = 0xBB67AE85u;
}  // namespace philox_detail

// Philox4x32 with 10 rounds: the standard (Random123) generator.
KILN_PHILOX_HD constexpr PhiloxBlock philox4x32_10(PhiloxBlock ctr, uint32_t k0, uint32_t k1) {
  using namespace philox_detail;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += kW0;
      k1 += kW1;
    }
    const uint64_t p0 = static_cast<uint64_t>(kM0) * ctr.x[0];
    const uint64_t p1 = static_cast<uint64_t>(kM1) * ctr.x[2];
    const uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
    const uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
    ctr = PhiloxBlock{{hi1 ^ ctr.x[1] ^ k0, lo1, hi0 ^ ctr.x[3] ^ k1, lo0}};
  }
  return ctr;
}

// The block for element `index` of a random node with attrs {seed, offset}.
KILN_PHILOX_HD constexpr PhiloxBlock philox_element(uint64_t seed, uint64_t offset,
                                                    uint64_t index) {
  const uint64_t c = offset + index;  // wraps mod 2^64
  return philox4x32_10(
      PhiloxBlock{{static_cast<uint32_t>(c), static_cast<uint32_t>(c >> 32), 0u, 0u}},
      static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}

// Uniform in [0, 1) with 24 random bits, for float32 / float16 / bfloat16
// (computed and exact in float): the top 24 bits of x0 times 2^-24.
KILN_PHILOX_HD constexpr float philox_uniform_float(const PhiloxBlock& b) {
  return static_cast<float>(b.x[0] >> 8) * (1.0f / 16777216.0f);
}

// Uniform in [0, 1) with 53 random bits, for float64 (exact in double):
// the 53-bit integer whose top 32 bits are x0 and low 21 bits are the top 21
// bits of x1, i.e. ((x0 << 21) | (x1 >> 11)), times 2^-53.
KILN_PHILOX_HD constexpr double philox_uniform_double(const PhiloxBlock& b) {
  const uint64_t bits = (static_cast<uint64_t>(b.x[0]) << 21) | (b.x[1] >> 11);
  return static_cast<double>(bits) * (1.0 / 9007199254740992.0);
}

// A standard normal draw (Box-Muller, in double):
//   u1 = (x0 + 1) * 2^-32  in (0, 1]   (never 0, so the log is finite)
//   u2 = x1 * 2^-32        in [0, 1)
//   z  = sqrt(-2 ln u1) * cos(2 pi u2)
KILN_PHILOX_HD inline double philox_normal_double(const PhiloxBlock& b) {
  const double two_m32 = 1.0 / 4294967296.0;
  const double u1 = (static_cast<double>(b.x[0]) + 1.0) * two_m32;
  const double u2 = static_cast<double>(b.x[1]) * two_m32;
  const double two_pi = 6.283185307179586476925286766559;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(two_pi * u2);
}

// An integer in [low, high) (high > low): low + ((x1 << 32 | x0) mod (high - low)),
// in wrapping 64-bit arithmetic.
KILN_PHILOX_HD constexpr int64_t philox_randint(const PhiloxBlock& b, int64_t low, int64_t high) {
  const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  const uint64_t r = (static_cast<uint64_t>(b.x[1]) << 32) | b.x[0];
  return static_cast<int64_t>(static_cast<uint64_t>(low) + r % range);
}

}  // namespace kiln

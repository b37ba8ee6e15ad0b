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
#include <cstring>

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
// ln and cos are kiln's own (below), not libm's: built from +, -, *, /, fma,
// sqrt and integer bit operations only, all correctly rounded in IEEE double
// on every backend, so the reference and JIT-compiled CPU code (which
// evaluates the same steps in vector lanes, with no libm call in the loop)
// draw the same bits, as will CUDA code compiled without FMA contraction
// (kiln's own C++ is compiled with -ffp-contract=off for the same reason).
// ln is within 1.5 ulp, cos within 1.5 * 2^-53 (tests/test_reference.cpp
// measures both).
namespace philox_detail {
// ln 2 split so that k * kLn2Hi is exact for |k| < 2^9: 44 significant bits.
constexpr double kLn2Hi = 0x1.62e42fefa3a00p-1;
constexpr double kLn2Lo = -0x1.0ca86c3898d00p-49;
constexpr double kSqrt2 = 0x1.6a09e667f3bcdp+0;
// ln(1 + f) = 2 atanh(s), s = f / (2 + f): 2s (1 + z P(z)), z = s^2 <= 0.0295,
// P(z) = sum_{j=1..9} z^(j-1) / (2j + 1); the first term left out is below
// 2^-55 of the result.
constexpr double kAtanhCoef[9] = {
    0x1.5555555555555p-2, 0x1.999999999999ap-3, 0x1.2492492492492p-3,
    0x1.c71c71c71c71cp-4, 0x1.745d1745d1746p-4, 0x1.3b13b13b13b14p-4,
    0x1.1111111111111p-4, 0x1.e1e1e1e1e1e1ep-5, 0x1.af286bca1af28p-5};
// Taylor coefficients in t of cos(2 pi t) = sum c_n t^2n and
// sin(2 pi t) = t sum s_n t^2n, n = 0..8, for |t| <= 1/8 (terms left out are
// below 2^-56).
constexpr double kCos2PiCoef[9] = {
    0x1.0000000000000p+0,  -0x1.3bd3cc9be45dep+4, 0x1.03c1f081b5ac4p+6,
    -0x1.55d3c7e3cbffap+6, 0x1.e1f506891babbp+5,  -0x1.a6d1f2a204a8cp+4,
    0x1.f9d38a3763cc3p+2,  -0x1.b6e24f44b128fp+0, 0x1.20c62c2f2d7f5p-2};
constexpr double kSin2PiCoef[9] = {
    0x1.921fb54442d18p+2,  -0x1.4abbce625be53p+5, 0x1.466bc6775aae2p+6,
    -0x1.32d2cce62bd86p+6, 0x1.50783487ee782p+5,  -0x1.e3074fde8871fp+3,
    0x1.e8f434d018d63p+1,  -0x1.6fadb9f155744p-1, 0x1.aaec32af93359p-4};

KILN_PHILOX_HD inline uint64_t double_bits(double d) {
#if defined(__CUDACC__) || defined(__HIPCC__)
  return static_cast<uint64_t>(__double_as_longlong(d));
#else
  uint64_t u;
  std::memcpy(&u, &d, sizeof u);
  return u;
#endif
}
KILN_PHILOX_HD inline double bits_double(uint64_t u) {
#if defined(__CUDACC__) || defined(__HIPCC__)
  return __longlong_as_double(static_cast<long long>(u));
#else
  double d;
  std::memcpy(&d, &u, sizeof d);
  return d;
#endif
}
// Horner's rule with fused multiply-adds: c[0] + x (c[1] + x (... c[n-1])).
template <int N>
KILN_PHILOX_HD inline double horner(const double (&c)[N], double x) {
  double r = c[N - 1];
  for (int i = N - 2; i >= 0; --i) r = std::fma(r, x, c[i]);
  return r;
}
}  // namespace philox_detail

// ln u for a positive normal double u (kiln's, see above). u = 2^e m with m in
// [sqrt(2)/2, sqrt(2)); ln u = e ln 2 + ln(1 + f), f = m - 1 (exact).
KILN_PHILOX_HD inline double philox_log(double u) {
  using namespace philox_detail;
  const uint64_t bits = double_bits(u);
  double e = static_cast<double>(static_cast<int>(bits >> 52) - 1023);
  double m = bits_double((bits & 0x000fffffffffffffull) | 0x3ff0000000000000ull);  // [1, 2)
  if (m >= kSqrt2) {
    m = m * 0.5;
    e = e + 1.0;
  }
  const double f = m - 1.0;
  const double s = f / (2.0 + f);
  const double two_s = s + s;
  const double z = s * s;
  const double ln1pf = std::fma(two_s * z, horner(kAtanhCoef, z), two_s);
  return std::fma(e, kLn2Hi, std::fma(e, kLn2Lo, ln1pf));
}

// cos(2 pi x / 2^32) for a 32-bit x (kiln's, see above): the top bits pick the
// quadrant exactly, t = (x - q 2^30) / 2^32 in [-1/8, 1/8) is exact.
KILN_PHILOX_HD inline double philox_cos_2pi(uint32_t x) {
  using namespace philox_detail;
  const uint32_t q = (x + 0x20000000u) >> 30;
  const double t = static_cast<double>(static_cast<int32_t>(x - (q << 30))) * 0x1p-32;
  const double t2 = t * t;
  const double v = (q & 1u) ? t * horner(kSin2PiCoef, t2) : horner(kCos2PiCoef, t2);
  return ((q + 1u) & 2u) ? -v : v;  // q = 1: -sin, 2: -cos, 3: sin
}

KILN_PHILOX_HD inline double philox_normal_double(const PhiloxBlock& b) {
  const double u1 = (static_cast<double>(b.x[0]) + 1.0) * 0x1p-32;
  return std::sqrt(-2.0 * philox_log(u1)) * philox_cos_2pi(b.x[1]);
}

// An integer in [low, high) (high > low): low + ((x1 << 32 | x0) mod (high - low)),
// in wrapping 64-bit arithmetic.
KILN_PHILOX_HD constexpr int64_t philox_randint(const PhiloxBlock& b, int64_t low, int64_t high) {
  const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  const uint64_t r = (static_cast<uint64_t>(b.x[1]) << 32) | b.x[0];
  return static_cast<int64_t>(static_cast<uint64_t>(low) + r % range);
}

}  // namespace kiln

// The scalar twins of the lane functions (runtime_math.h): float_math.cpp's
// IR written again as C++, operation for operation. kiln is
// built with -ffp-contract=off, so nothing here is fused that the IR does
// not fuse; std::fma is the IR's llvm.fma. Each function is compiled twice
// (GCC's target_clones, picked once at load time): with FMA instructions
// for the CPUs that have them, since a loop that stays scalar (a strided
// read) calls its twin for every element, and without them for the rest,
// where std::fma is libm's, correctly rounded all the same.
#include "codegen/llvm/runtime_math.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>

#include "core/philox.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define KILN_TWIN __attribute__((target_clones("fma", "default")))
#else
#define KILN_TWIN
#endif

namespace {

constexpr double kMagic = 6755399441055744.0;  // 1.5 * 2^52
constexpr double kLog2e = 1.4426950408889634;
constexpr double kLn2 = 0.6931471805599453;
constexpr double kLn2Hi = 6.93147180369123816490e-01;
constexpr double kLn2Lo = 1.90821492927058770002e-10;
constexpr float kInfF = std::numeric_limits<float>::infinity();
constexpr float kNanF = std::numeric_limits<float>::quiet_NaN();

inline uint64_t bits_of(double d) { return std::bit_cast<uint64_t>(d); }
inline double double_of(uint64_t u) { return std::bit_cast<double>(u); }
inline uint32_t bits_of(float f) { return std::bit_cast<uint32_t>(f); }
inline float float_of(uint32_t u) { return std::bit_cast<float>(u); }

// float_math.cpp's horner: p = c0, then p = p * x + c (no fma).
template <size_t N>
inline double horner(double x, const double (&c)[N]) {
  double p = c[0];
#pragma GCC unroll 16
  for (size_t i = 1; i < N; ++i) p = p * x + c[i];
  return p;
}
// float_math.cpp's horner_fma: p = c0, then p = fma(p, x, c).
template <size_t N>
inline double horner_fma(double x, const double (&c)[N]) {
  double p = c[0];
#pragma GCC unroll 16
  for (size_t i = 1; i < N; ++i) p = std::fma(p, x, c[i]);
  return p;
}

inline double expm1_core(double r) {
  constexpr double c[] = {1.0 / 39916800, 1.0 / 3628800, 1.0 / 362880, 1.0 / 40320, 1.0 / 5040,
                          1.0 / 720,      1.0 / 120,     1.0 / 24,     1.0 / 6,     0.5,
                          1.0};
  return horner(r, c) * r;
}

inline double pow2_from_magic(double t) { return double_of((bits_of(t) + 1023) << 52); }

inline double clamp(double x, double lo, double hi) {
  x = x > hi ? hi : x;
  return x < lo ? lo : x;
}

// float_math.cpp's reduce_ln2: d = k ln2 + r; t = k + kMagic.
struct Reduced {
  double t, r;
};
inline Reduced reduce_ln2(double d) {
  const double t = d * kLog2e + kMagic;
  const double k = t - kMagic;
  return {t, (d - k * kLn2Hi) - k * kLn2Lo};
}

inline double exp_double(double d) {
  const auto [t, r] = reduce_ln2(d);
  return (1.0 + expm1_core(r)) * pow2_from_magic(t);
}

// float_math.cpp's expm1_double.
inline double expm1_double(double y) {
  const auto [t, r] = reduce_ln2(y);
  const double scale = pow2_from_magic(t);
  return scale * expm1_core(r) + (scale - 1.0);
}

struct LogParts {
  double log_m, e;
};
inline LogParts log_parts(double d) {
  const uint64_t bits = bits_of(d);
  double ex = double_of((bits >> 52) | 0x4330000000000000ull) - (4503599627370496.0 + 1023.0);
  double m = double_of((bits & 0x000FFFFFFFFFFFFFull) | 0x3FF0000000000000ull);
  const bool big = m > 1.4142135623730951;
  m = big ? m * 0.5 : m;
  ex = big ? ex + 1.0 : ex;
  const double f = m - 1.0;
  const double s = f / (f + 2.0);
  const double z = s * s;
  constexpr double c[] = {2.0 / 21, 2.0 / 19, 2.0 / 17, 2.0 / 15, 2.0 / 13, 2.0 / 11,
                          2.0 / 9,  2.0 / 7,  2.0 / 5,  2.0 / 3,  2.0};
  return {s * horner(z, c), ex};
}

inline bool sign_bit(float x) { return static_cast<int32_t>(bits_of(x)) < 0; }

// |x| = q pi/2 + r for every float (float_math.cpp's sin, cos and tan call
// the twin for |x| >= 2^24, inf and NaN): x * 2/pi mod 4 from eight 24-bit
// pieces of 2/pi, each product exact in double and reduced mod 4 exactly,
// summed after removing the quadrant.
struct Quadrant {
  double r;
  uint64_t quadrant;
};
inline Quadrant reduce_quadrant(float x) {
  static constexpr double kTwoOverPi[8] = {
      0xA2F983 * 0x1p-24,  0x6E4E44 * 0x1p-48,  0x1529FC * 0x1p-72,  0x2757D1 * 0x1p-96,
      0xF534DD * 0x1p-120, 0xC0DB62 * 0x1p-144, 0x95993C * 0x1p-168, 0x439041 * 0x1p-192};
  const double a = std::fabs(static_cast<double>(x));
  double q[8];
  double approx = 0.0;
#pragma GCC unroll 8
  for (int j = 0; j < 8; ++j) {
    const double p = a * kTwoOverPi[j];
    const double whole = std::floor(p * 0.25);
    q[j] = p - whole * 4.0;
    approx = approx + q[j];
  }
  const double t = approx + kMagic;
  const double n = t - kMagic;
  double frac = q[0] - n;
#pragma GCC unroll 8
  for (int j = 1; j < 8; ++j) frac = frac + q[j];
  return {frac * 1.5707963267948966, bits_of(t) & 3};
}

// float_math.cpp's reduce_quadrant_short, for |x| < kShortReductionBelow.
inline Quadrant reduce_quadrant_short(float x) {
  using namespace kiln::codegen::llvmcg;
  const double a = std::fabs(static_cast<double>(x));
  const double t = a * kTwoOverPi + kMagic;
  const double minus_n = kMagic - t;
  double r = std::fma(minus_n, kHalfPiHi, a);
  r = std::fma(minus_n, kHalfPiLo, r);
  return {r, bits_of(t) & 3};
}
inline Quadrant reduce_quadrant_any(float x) {
  return std::fabs(x) < kiln::codegen::llvmcg::kShortReductionBelow ? reduce_quadrant_short(x) : reduce_quadrant(x);
}

struct SinCos {
  double s, c;
};
inline SinCos sin_cos_poly(double r) {  // float_math.cpp's, FMA for FMA
  using namespace kiln::codegen::llvmcg;
  const double z = r * r;
  return {std::fma(r * z, horner_fma(z, kSinTaylor), r), std::fma(z, horner_fma(z, kCosTaylor), 1.0)};
}

inline float nan_to_itself(float v, float r) { return std::isnan(v) ? v : r; }
inline float odd_in(float v, float f) { return sign_bit(v) ? -f : f; }
inline float not_finite_to_nan(float x, float f) { return std::fabs(x) < kInfF ? f : kNanF; }

inline float sincos(float x, bool want_sin) {
  const auto [r, quadrant] = reduce_quadrant_any(x);
  const auto [s, c] = sin_cos_poly(r);
  const bool odd = (quadrant & 1) != 0;
  double v = want_sin ? (odd ? c : s) : (odd ? s : c);
  const uint64_t qn = want_sin ? quadrant : quadrant + 1;
  v = (qn & 2) != 0 ? -v : v;
  float f = static_cast<float>(v);
  if (want_sin) f = odd_in(x, f);
  return not_finite_to_nan(x, f);
}

constexpr double kPi = 3.141592653589793;
constexpr double kHalfPi = 1.5707963267948966;
constexpr double kLog10of2 = 0.30102999566398120;
constexpr double kLog10e = 0.43429448190325182;

// float_math.cpp's atan_unit, FMA for FMA.
inline double atan_unit(double t) {
  using namespace kiln::codegen::llvmcg;
  const bool mid = t > kTanPi16, high = t > kTan3Pi16;
  const double c = high ? 1.0 : mid ? kTanPi8 : 0.0;
  const double base = high ? kPi / 4 : mid ? kPi / 8 : 0.0;
  const double u = (t - c) / std::fma(t, c, 1.0);
  const double z = u * u;
  return base + std::fma(u * z, horner_fma(z, kAtanTaylor), u);
}

inline double angle(double y, double x) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  const bool steep = y > x;
  const double big = steep ? y : x;
  double ratio = (steep ? x : y) / big;
  ratio = big == 0.0 ? 0.0 : ratio;
  ratio = (x == inf && y == inf) ? 1.0 : ratio;
  const double r = atan_unit(ratio);
  return steep ? kHalfPi - r : r;
}

// float_math.cpp's log1p_double (y > -1).
inline double log1p_double(double y) {
  const double u = y + 1.0;
  const LogParts lp = log_parts(u);
  const double l = lp.e * kLn2 + lp.log_m;
  return l + (y - (u - 1.0)) / u;
}

inline double one_minus_square_root(double d) { return std::sqrt((1.0 - d) * (1.0 + d)); }
inline float in_unit_range(float v, float r) { return std::fabs(v) <= 1.0f ? r : kNanF; }

// float_math.cpp's log_base: e a + log(m) b (a factor 1 multiplies nothing).
inline float log_base(float v, double a, double b) {
  const LogParts lp = log_parts(static_cast<double>(v));
  float r = static_cast<float>((a == 1.0 ? lp.e : lp.e * a) + (b == 1.0 ? lp.log_m : lp.log_m * b));
  r = v == 0.0f ? -kInfF : r;
  r = v == kInfF ? v : r;
  return v >= 0.0f ? r : nan_to_itself(v, kNanF);
}

}  // namespace

extern "C" {

namespace {
// float_math.cpp's expf_parts: e^v = (1 + q) s1 s2 for v clamped to [-104, 89].
struct ExpfParts {
  float q, scale1, scale2;
};
inline ExpfParts expf_parts(float v) {
  constexpr float kMagicF = 12582912.0f;
  constexpr float kLn2HiF = 0.693145751953125f;
  constexpr float kLn2LoF = 1.428606765330187045e-06f;
  float xc = v > 89.0f ? 89.0f : v;
  xc = xc < -104.0f ? -104.0f : xc;
  const float t = std::fma(xc, 1.44269504088896341f, kMagicF);
  const float k = t - kMagicF;
  const int32_t ki = static_cast<int32_t>(bits_of(t) - 0x4B400000u);
  float r = std::fma(k, -kLn2HiF, xc);
  r = std::fma(k, -kLn2LoF, r);
  float u = 1.0f / 5040.0f;
  u = std::fma(u, r, 1.0f / 720.0f);
  u = std::fma(u, r, 1.0f / 120.0f);
  u = std::fma(u, r, 1.0f / 24.0f);
  u = std::fma(u, r, 1.0f / 6.0f);
  u = std::fma(u, r, 0.5f);
  const float q = std::fma(r * r, u, r);
  const int32_t k1 = ki >> 1;
  const int32_t k2 = ki - k1;
  auto pow2 = [](int32_t kk) { return float_of(static_cast<uint32_t>(kk + 127) << 23); };
  return {q, pow2(k1), pow2(k2)};
}
}  // namespace

KILN_TWIN float kiln_rt_expf(float v) {
  const ExpfParts x = expf_parts(v);
  const float p = 1.0f + x.q;
  const float res = (p * x.scale1) * x.scale2;
  return nan_to_itself(v, res);
}

namespace {
// float_math.cpp's sigmoid_core: 1 / (1 + e^-v), compensated; NaN not handled.
inline float sigmoid_core(float v) {
  const ExpfParts x = expf_parts(-v);
  const float ph = 1.0f + x.q;
  const float pl = (1.0f - ph) + x.q;
  const float eh = (ph * x.scale1) * x.scale2;
  const float el = (pl * x.scale1) * x.scale2;
  const float dh = 1.0f + eh;
  const float bb = dh - 1.0f;
  const float dl = ((1.0f - (dh - bb)) + (eh - bb)) + el;
  float s = 1.0f / dh;
  const float err = std::fma(-dh, s, 1.0f) - dl * s;
  s = std::fma(s, err, s);
  return dh == kInfF ? 0.0f : s;
}
}  // namespace

KILN_TWIN float kiln_rt_sigmoidf(float v) { return nan_to_itself(v, sigmoid_core(v)); }

KILN_TWIN float kiln_rt_logf(float v) {
  using namespace kiln::codegen::llvmcg;
  const bool sub = v < kMinNormalF;
  const float xs = sub ? v * 8388608.0f : v;
  const uint32_t ix = bits_of(xs) - kSqrtHalfBits;
  const int32_t k = (static_cast<int32_t>(ix) >> 23) - (sub ? 23 : 0);
  const float f = float_of((ix & 0x007fffffu) + kSqrtHalfBits) - 1.0f;
  const float s = f / (2.0f + f);
  const float z = s * s, w = z * z;
  const float t1 = w * (kLogLg[1] + w * kLogLg[3]);
  const float t2 = z * (kLogLg[0] + w * kLogLg[2]);
  const float hfsq = 0.5f * f * f;
  const float dk = static_cast<float>(k);
  float r = s * (hfsq + (t2 + t1));
  r = r + dk * kLn2LoLogF;
  r = (r - hfsq) + f;
  r = r + dk * kLn2HiLogF;
  r = v == 0.0f ? -kInfF : r;
  r = v == kInfF ? v : r;
  return v >= 0.0f ? r : nan_to_itself(v, kNanF);
}

KILN_TWIN float kiln_rt_sinf(float v) {
  const float r = sincos(v, true);
  return nan_to_itself(v, r);
}

KILN_TWIN float kiln_rt_cosf(float v) {
  const float r = sincos(v, false);
  return nan_to_itself(v, r);
}

KILN_TWIN float kiln_rt_tanhf(float v) {
  using namespace kiln::codegen::llvmcg;
  const float a = std::fabs(v);
  const float z = a * a;
  float p = kTanhPolyF[0];
  for (size_t i = 1; i < std::size(kTanhPolyF); ++i) p = std::fma(p, z, kTanhPolyF[i]);
  const float small = std::fma(a * z, p, a);
  const float large = std::fma(-2.0f, sigmoid_core(-2.0f * a), 1.0f);
  const float res = a < kTanhSmallF ? small : large;
  return nan_to_itself(v, odd_in(v, res));
}

KILN_TWIN float kiln_rt_powf(float xv, float yv) {
  constexpr double dinf = std::numeric_limits<double>::infinity();
  const double ax = std::fabs(static_cast<double>(xv));
  const double yd = static_cast<double>(yv);
  const LogParts lp = log_parts(ax);
  double l2 = lp.log_m * kLog2e + lp.e;
  l2 = ax == 0.0 ? -dinf : l2;
  l2 = ax == dinf ? dinf : l2;
  const double z = clamp(yd * l2, -300.0, 300.0);
  const double t = z + kMagic;
  const double k = t - kMagic;
  const double r = (z - k) * kLn2;
  const double p = (1.0 + expm1_core(r)) * pow2_from_magic(t);
  auto is_int = [](double d) { return std::floor(d) == d; };
  const bool y_int = is_int(yd);
  const bool y_odd = y_int && !is_int(yd * 0.5);
  float res = static_cast<float>(p);
  res = (sign_bit(xv) && y_odd) ? -res : res;
  const bool x_fin = ax < dinf;
  const bool y_fin = std::fabs(yd) < dinf;
  const bool neg_frac = (xv < 0.0f && x_fin) && (y_fin && !y_int);
  res = neg_frac ? kNanF : res;
  res = (std::isnan(xv) || std::isnan(yv)) ? kNanF : res;
  const bool m1_inf = xv == -1.0f && !y_fin;
  res = (m1_inf && !std::isnan(yv)) ? 1.0f : res;
  const bool one = xv == 1.0f || yv == 0.0f;
  return one ? 1.0f : res;
}

KILN_TWIN float kiln_rt_expm1f(float v) {
  const double d = clamp(static_cast<double>(v), -40.0, 89.0);
  float res = static_cast<float>(expm1_double(d));
  res = v == 0.0f ? v : res;
  return nan_to_itself(v, res);
}

KILN_TWIN float kiln_rt_log1pf(float v) {
  float r = static_cast<float>(log1p_double(static_cast<double>(v)));
  r = v == -1.0f ? -kInfF : r;
  r = v == kInfF ? v : r;
  r = v == 0.0f ? v : r;
  return v >= -1.0f ? r : nan_to_itself(v, kNanF);
}

KILN_TWIN float kiln_rt_erff(float v) {
  using kiln::codegen::llvmcg::kErfcxF;
  using kiln::codegen::llvmcg::kErfSmallF;
  auto horner_f = [](float x, const auto& c) {
    float p = c[0];
    for (size_t i = 1; i < std::size(c); ++i) p = std::fma(p, x, c[i]);
    return p;
  };
  const float a = std::fabs(v);
  const float small = std::fma(v, horner_f(v * v, kErfSmallF), v);
  const float ac = a > 3.92f ? 3.92f : a;
  const float r = horner_f(ac - 2.5f, kErfcxF);
  const float hi = ac * ac;
  const float lo = std::fma(ac, ac, -hi);
  const float ex = kiln_rt_expf(-hi);
  const float em = std::fma(-ex, lo, ex);
  const float big = std::copysign(1.0f - em * r, v);
  return nan_to_itself(v, a < 1.0f ? small : big);
}

KILN_TWIN float kiln_rt_tanf(float v) {
  const auto [r, quadrant] = reduce_quadrant_any(v);
  const auto [s, c] = sin_cos_poly(r);
  const bool odd = (quadrant & 1) != 0;
  const double t = odd ? -(c / s) : s / c;
  return nan_to_itself(v, not_finite_to_nan(v, odd_in(v, static_cast<float>(t))));
}

KILN_TWIN float kiln_rt_asinf(float v) {
  const double d = static_cast<double>(v);
  const double a = angle(std::fabs(d), one_minus_square_root(d));
  return nan_to_itself(v, in_unit_range(v, odd_in(v, static_cast<float>(a))));
}

KILN_TWIN float kiln_rt_acosf(float v) {
  const double d = static_cast<double>(v);
  double a = angle(one_minus_square_root(d), std::fabs(d));
  a = d < 0.0 ? kPi - a : a;
  return nan_to_itself(v, in_unit_range(v, static_cast<float>(a)));
}

KILN_TWIN float kiln_rt_atanf(float v) {
  const double a = angle(std::fabs(static_cast<double>(v)), 1.0);
  return nan_to_itself(v, odd_in(v, static_cast<float>(a)));
}

KILN_TWIN float kiln_rt_atan2f(float y, float x) {
  double a = angle(std::fabs(static_cast<double>(y)), std::fabs(static_cast<double>(x)));
  a = sign_bit(x) ? kPi - a : a;
  const float r = odd_in(y, static_cast<float>(a));
  return nan_to_itself(y, nan_to_itself(x, r));
}

KILN_TWIN float kiln_rt_sinhf(float v) {
  const double em1 = expm1_double(clamp(std::fabs(static_cast<double>(v)), 0.0, 100.0));
  const double sh = (em1 + em1 / (em1 + 1.0)) * 0.5;
  return nan_to_itself(v, odd_in(v, static_cast<float>(sh)));
}

KILN_TWIN float kiln_rt_coshf(float v) {
  const double ex = exp_double(clamp(std::fabs(static_cast<double>(v)), 0.0, 100.0));
  return nan_to_itself(v, static_cast<float>((ex + 1.0 / ex) * 0.5));
}

KILN_TWIN float kiln_rt_asinhf(float v) {
  const double a = std::fabs(static_cast<double>(v));
  const double sq = a * a;
  const double root = std::sqrt(1.0 + sq);
  const double y = a + sq / (1.0 + root);
  float r = static_cast<float>(log1p_double(y));
  r = a == static_cast<double>(kInfF) ? kInfF : r;
  return nan_to_itself(v, odd_in(v, r));
}

KILN_TWIN float kiln_rt_acoshf(float v) {
  const double d = static_cast<double>(v);
  const double y = d - 1.0;
  const double root = std::sqrt(y * (d + 1.0));
  float r = static_cast<float>(log1p_double(y + root));
  r = v == kInfF ? v : r;
  r = v >= 1.0f ? r : kNanF;
  return nan_to_itself(v, r);
}

KILN_TWIN float kiln_rt_atanhf(float v) {
  const double a = std::fabs(static_cast<double>(v));
  const double a1 = a < 1.0 ? a : 0.0;
  const double y = (a1 + a1) / (1.0 - a1);
  float r = static_cast<float>(log1p_double(y) * 0.5);
  r = a == 1.0 ? kInfF : r;
  r = in_unit_range(v, odd_in(v, r));
  return nan_to_itself(v, r);
}

KILN_TWIN float kiln_rt_log2f(float v) { return log_base(v, 1.0, kLog2e); }
KILN_TWIN float kiln_rt_log10f(float v) { return log_base(v, kLog10of2, kLog10e); }

KILN_TWIN float kiln_rt_exp2f(float v) {
  const double d = clamp(static_cast<double>(v), -300.0, 300.0);
  const double t = d + kMagic;
  const double k = t - kMagic;
  const double r = (d - k) * kLn2;
  const double p = (1.0 + expm1_core(r)) * pow2_from_magic(t);
  return nan_to_itself(v, static_cast<float>(p));
}

uint64_t kiln_rt_philox(uint64_t counter, uint64_t seed) {
  const kiln::PhiloxBlock b = kiln::philox_element(seed, counter, 0);
  return (static_cast<uint64_t>(b.x[1]) << 32) | b.x[0];
}

}  // extern "C"

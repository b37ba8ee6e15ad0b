// The scalar twins of the LLVM backend's lane functions (vector_variants.cpp):
// kiln's float32 exp / log / sin / cos / tanh / pow / expm1 / log1p / erf
// (float_math.cpp) and the Philox generator (philox.cpp), compiled into
// kiln. A kernel's vectorized loops evaluate those functions as inline IR;
// its scalar code (the remainder after a loop's last full vector, values
// computed once per row) calls these, so LLVM compiles the function's body
// for the vector loop only. Each is the IR step for step (same operations,
// same constants, fma where the IR has fma), so a twin's result is the
// inline code's bit for bit (tests/test_llvm_backend.cpp compares the vector
// lanes and the remainder of one loop, per function).
#pragma once

#include <cstdint>

// Coefficients float_math.cpp's erf and its twin share.
namespace kiln::codegen::llvmcg {
// erf in float arithmetic (float_math.cpp, erff_body). |x| < 1:
// erf(x) = x + x Q(x^2), Q(z) = erf(sqrt z) / sqrt z - 1 fitted on [0, 1]
// (absolute error 1.5e-8, coefficients rounded to float one at a time, the
// rest refitted). 1 <= |x| <= 3.92: erfc(x) e^(x^2) as a polynomial in
// x - 2.5 (relative error 5.4e-8). Exhaustively over every float of
// [0, 4.5]: at most 1 ulp from glibc's erff and from erf rounded from
// double.
inline constexpr float kErfSmallF[7] = {7.889115659e-05f, -8.020840469e-04f, 5.189535208e-03f,
                                        -2.685444430e-02f, 1.128360033e-01f, -3.761262596e-01f,
                                        1.283791661e-01f};
inline constexpr float kErfcxF[12] = {-4.402369598e-07f, 1.634873684e-06f,  -3.690654239e-06f,
                                      1.453461755e-05f,  -5.959336704e-05f, 2.126638865e-04f,
                                      -7.331336383e-04f, 2.466194797e-03f,  -8.001684211e-03f,
                                      2.493815310e-02f,  -7.434733957e-02f, 2.108063549e-01f};
// float32 log (float_math.cpp, logf_body): FreeBSD e_logf.c's R(s^2)
// coefficients Lg1..Lg4 and two-part ln 2.
// float32 tanh: below kTanhSmallF, x + x^3 P(x^2) with P's coefficients
// from the highest power (Cephes' tanhf); above, from sigmoid.
inline constexpr float kTanhSmallF = 0.625f;
inline constexpr float kTanhPolyF[5] = {-5.70498872745e-3f, 2.06390887954e-2f, -5.37397155531e-2f,
                                        1.33314422036e-1f, -3.33332819422e-1f};
inline constexpr float kLogLg[4] = {0.66666662693f, 0.40000972152f, 0.28498786688f, 0.24279078841f};
inline constexpr float kLn2HiLogF = 6.9313812256e-01f;
inline constexpr float kLn2LoLogF = 9.0580006145e-06f;
inline constexpr float kMinNormalF = 1.17549435e-38f;
inline constexpr uint32_t kSqrtHalfBits = 0x3f3504f3u;  // sqrt(1/2)'s bits
// sin, cos, tan (float_math.cpp): below kShortReductionBelow |x| is reduced
// by |x| - n kHalfPiHi - n kHalfPiLo, n = round(|x| kTwoOverPi) (pi/2 =
// kHalfPiHi + kHalfPiLo + O(2^-108)); Taylor's coefficients of sin r / r and
// cos r in r^2, highest first (to r^13 / r^14).
inline constexpr float kShortReductionBelow = 0x1p24f;
inline constexpr double kTwoOverPi = 0.6366197723675814;
inline constexpr double kHalfPiHi = 0x1.921fb54442d18p0;
inline constexpr double kHalfPiLo = 0x1.1a62633145c07p-54;
inline constexpr double kSinTaylor[6] = {1.0 / 6227020800.0, -1.0 / 39916800.0, 1.0 / 362880.0,
                                         -1.0 / 5040.0,      1.0 / 120.0,       -1.0 / 6.0};
inline constexpr double kCosTaylor[7] = {-1.0 / 87178291200.0, 1.0 / 479001600.0, -1.0 / 3628800.0,
                                         1.0 / 40320.0,        -1.0 / 720.0,      1.0 / 24.0,
                                         -0.5};
// atan_unit (float_math.cpp): the reduction's points tan(pi/16), tan(pi/8),
// tan(3pi/16), and Taylor's coefficients (-1)^k / (2k + 1), k = 10 .. 1.
inline constexpr double kTanPi16 = 0.19891236737965800691;
inline constexpr double kTanPi8 = 0.41421356237309504880;
inline constexpr double kTan3Pi16 = 0.66817863791929891999;
inline constexpr double kAtanTaylor[10] = {1.0 / 21, -1.0 / 19, 1.0 / 17, -1.0 / 15, 1.0 / 13,
                                           -1.0 / 11, 1.0 / 9,   -1.0 / 7,  1.0 / 5,   -1.0 / 3};
}  // namespace kiln::codegen::llvmcg

extern "C" {
float kiln_rt_expf(float x);           // float arithmetic, <= 1 ulp
float kiln_rt_sigmoidf(float x);        // float arithmetic, compensated
float kiln_rt_logf(float x);
float kiln_rt_sinf(float x);
float kiln_rt_cosf(float x);
float kiln_rt_tanhf(float x);
float kiln_rt_powf(float x, float y);
float kiln_rt_expm1f(float x);
float kiln_rt_log1pf(float x);
float kiln_rt_erff(float x);
float kiln_rt_tanf(float x);
float kiln_rt_asinf(float x);
float kiln_rt_acosf(float x);
float kiln_rt_atanf(float x);
float kiln_rt_sinhf(float x);
float kiln_rt_coshf(float x);
float kiln_rt_asinhf(float x);
float kiln_rt_acoshf(float x);
float kiln_rt_atanhf(float x);
float kiln_rt_log2f(float x);
float kiln_rt_log10f(float x);
float kiln_rt_exp2f(float x);
float kiln_rt_atan2f(float y, float x);
// x1 << 32 | x0 of Philox4x32-10 on {lo32(counter), hi32(counter), 0, 0} and
// the key {lo32(seed), hi32(seed)} (core/philox.h; philox.cpp's lane function).
uint64_t kiln_rt_philox(uint64_t counter, uint64_t seed);
}

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
// erf(x) / x as a polynomial in x^2 for |x| <= 1: Taylor to x^26 (error < 4e-13).
inline constexpr double kErfTaylor[14] = {
    -6.7113668551641105e-12, 9.422759064650411e-11, -1.2290555301717926e-09,
    1.4807192815879218e-08,  -1.6365844691234924e-07, 1.6462114365889246e-06,
    -1.492565035840625e-05,  0.00012055332981789664, -0.0008548327023450852,
    0.005223977625442188,    -0.026866170645131252,  0.11283791670955126,
    -0.37612638903183754,    1.1283791670955126};
// erfc(x) e^(x^2) on [1, 4] as a polynomial in t = (x - 2.5) / 1.5: a
// least-squares Chebyshev fit of degree 16 (relative error < 1e-11).
inline constexpr double kErfcxFit[17] = {
    2.1959092212979671e-07, -6.37000917128114e-07,  9.346490433758612e-07,
    -2.669425837684714e-06, 8.900885365887715e-06,  -2.407277110687787e-05,
    6.24646221364199e-05,   -0.0001617603378238894, 0.00040912528239897436,
    -0.0010059081905482053, 0.002403639720879758,   -0.0055706938159251285,
    0.012489374662781251,   -0.027005297556065556,  0.05611049341538538,
    -0.11152102016598248,   0.2108063640613273};
}  // namespace kiln::codegen::llvmcg

extern "C" {
float kiln_rt_expf(float x);           // float arithmetic, <= 1 ulp
float kiln_rt_expf_via_double(float x);  // through double, for sigmoid
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

// float32 sin, cos and tan (codegen/llvm/float_math.cpp): arguments below
// 2^24 are reduced inline by a two-FMA Cody-Waite step; a vector holding a
// larger, infinite or NaN lane branches to calls of the function's twin,
// which reduces those the long way. The oracles: libm's sin, cos and tan in
// double rounded to float, and the kernel's own results on the same vector
// without the rare lane (the branch must not change the other lanes).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "kernel_builder.h"

using namespace kiln;
using namespace kiln::test;

namespace {

int64_t ulp_distance(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : int64_t{1} << 40;
  int32_t ia, ib;
  std::memcpy(&ia, &a, 4);
  std::memcpy(&ib, &b, 4);
  const int64_t ka = ia < 0 ? int64_t{INT32_MIN} - ia : ia, kb = ib < 0 ? int64_t{INT32_MIN} - ib : ib;
  return ka > kb ? ka - kb : kb - ka;
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, 4) == 0; }

// out[i] = op(in[i]), i < params[0]; the optimized IR with it.
codegen::CompiledKernel compile_unary(VOp op) {
  KB kb("trig");
  const int in = kb.buffer(kFloat32, false), out = kb.buffer(kFloat32, true);
  const ValueId i = kb.idx(0);
  kb.k.body.push_back(loop(0, kb.param(0), true, {store(out, i, kb.val(op, kFloat32, {kb.load(in, i)}))}));
  return be().compile(kb.k, true);
}

std::vector<float> run_unary(jit::KernelFn fn, const std::vector<float>& x) {
  const size_t n = x.size();
  Buf a(kFloat32, n), o(kFloat32, n);
  std::memcpy(a.ptr(), x.data(), n * 4);
  run(fn, {&a, &o}, {static_cast<int64_t>(n)}, 0, static_cast<int64_t>(n));
  return std::vector<float>(o.as<float>(), o.as<float>() + n);
}

double libm(VOp op, double x) { return op == VOp::Sin ? std::sin(x) : op == VOp::Cos ? std::cos(x) : std::tan(x); }

struct Trig {
  VOp op;
  const char* name;
  const char* twin;
};
constexpr Trig kTrig[] = {{VOp::Sin, "sin", "kiln_rt_sinf"}, {VOp::Cos, "cos", "kiln_rt_cosf"},
                          {VOp::Tan, "tan", "kiln_rt_tanf"}};

}  // namespace

TEST_CASE("llvm: float32 sin, cos and tan reduce |x| < 2^24 inline, and only vectors holding a larger, infinite or NaN lane call the twin") {
  KILN_SKIP_WITHOUT_LLVM();
  const float inf = std::numeric_limits<float>::infinity();
  for (const Trig& t : kTrig) {
    const std::string name = t.name;
    CAPTURE(name);
    const codegen::CompiledKernel ck = compile_unary(t.op);
    REQUIRE(static_cast<bool>(ck.fn));
    CAPTURE(ck.llvm_ir);
    // the long reduction (eight pieces of 2/pi, each product floored) is not in the kernel
    CHECK(ck.llvm_ir.find("@llvm.floor") == std::string::npos);
    CHECK(ck.llvm_ir.find("@llvm.fma.v") != std::string::npos);  // the vector loop reduces inline
    CHECK(ck.llvm_ir.find(std::string("call float @") + t.twin) != std::string::npos);
    CHECK(ck.llvm_ir.find("vector.reduce.or") != std::string::npos);  // the branch to the twin

    std::vector<float> base(64);
    for (size_t i = 0; i < base.size(); ++i) base[i] = std::sin(0.37f * static_cast<float>(i)) * 40.0f;
    base[1] = 0.0f;
    base[2] = -0.0f;
    base[3] = 16777215.0f;  // the largest float reduced inline
    base[4] = -1.0e-30f;
    const std::vector<float> out_base = run_unary(ck.fn, base);
    for (size_t i = 0; i < base.size(); ++i) {
      CAPTURE(base[i]);
      CHECK(ulp_distance(out_base[i], static_cast<float>(libm(t.op, base[i]))) <= 1);
    }
    CHECK(std::signbit(out_base[2]) == (t.op != VOp::Cos));  // sin(-0) = tan(-0) = -0
    for (float rare : {16777216.0f, -16777218.0f, 1.0e10f, 1.6263033e25f, 3.4028235e38f, inf, -inf,
                       std::numeric_limits<float>::quiet_NaN()}) {
      for (size_t p : {0, 5, 15, 16, 31, 63}) {
        CAPTURE(rare);
        CAPTURE(p);
        std::vector<float> x = base;
        x[p] = rare;
        const std::vector<float> out = run_unary(ck.fn, x);
        for (size_t i = 0; i < x.size(); ++i)
          if (i != p && !same_bits(out[i], out_base[i])) {
            CAPTURE(i);
            CHECK(same_bits(out[i], out_base[i]));
          }
        if (std::isfinite(rare)) CHECK(ulp_distance(out[p], static_cast<float>(libm(t.op, rare))) <= 1);
        else CHECK(std::isnan(out[p]));
      }
    }
  }
}

// Where a float lies closest to a multiple of pi/2 the reduction cancels the
// most: r there is ~2^-29 of x, and the result keeps float accuracy only if r
// keeps ~50 correct bits. Every 97th multiple of pi/2 below 2^24, the float
// nearest it and the floats on either side.
TEST_CASE("llvm: float32 sin, cos and tan stay within 1 ulp of libm next to multiples of pi/2 below 2^24") {
  KILN_SKIP_WITHOUT_LLVM();
  std::vector<float> x;
  const long double half_pi = 1.5707963267948966192313216916397514L;
  for (int64_t k = 1; static_cast<long double>(k) * half_pi < 16777216.0L; k += 97) {
    const float f = static_cast<float>(static_cast<long double>(k) * half_pi);
    for (float v : {std::nextafter(f, 0.0f), f, std::nextafter(f, 3.0e7f)})
      if (v < 16777216.0f) x.push_back(v);
  }
  REQUIRE(x.size() > 300000);
  for (const Trig& t : kTrig) {
    const std::string name = t.name;
    CAPTURE(name);
    const codegen::CompiledKernel ck = compile_unary(t.op);
    REQUIRE(static_cast<bool>(ck.fn));
    const std::vector<float> out = run_unary(ck.fn, x);
    int64_t worst = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const int64_t u = ulp_distance(out[i], static_cast<float>(libm(t.op, x[i])));
      if (u > 1) {
        CAPTURE(x[i]);
        CAPTURE(out[i]);
        CHECK(u <= 1);
      }
      worst = std::max(worst, u);
    }
    MESSAGE(name, ": max ulp next to multiples of pi/2 ", worst);
    CHECK(worst <= 1);
  }
}

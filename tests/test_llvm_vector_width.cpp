// The vector widths codegen/llvm/lower_kernel.cpp chooses where the host
// runs 512-bit vectors at full clock (AVX-512 with AVX512_VBMI2), LLVM's own
// choice elsewhere: a float32 sum of lane function values (softmax's
// exp(x - max) summed in float64) 16 lanes, one vector a step; a loop that
// only moves float32 values 16 lanes: two vectors a step for a row maximum,
// one for a row kernel's subtraction of a row's log; a loop whose only math
// is float32 exp, erf, log or sigmoid (computed in float arithmetic) 16
// lanes, its last partial vector masked. The oracles: the host's features
// as the backend's target id lists them, libm's exp and log in double,
// std::max.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "kernel_builder.h"

using namespace kiln;
using namespace kiln::test;

namespace {

// Whether the backend's target ("llvm-<version>/<cpu>/+f1,+f2,...") has
// every 512-bit feature the wide rule asks for.
bool host_runs_wide_vectors() {
  const std::string id = be().target_id();
  std::stringstream features(id.substr(id.rfind('/') + 1));
  int found = 0;
  for (std::string f; std::getline(features, f, ',');)
    for (const char* want : {"+avx512f", "+avx512bw", "+avx512dq", "+avx512vl", "+avx512vbmi2"})
      found += f == want;
  return found == 5;
}

// out[r] = sum_j exp(in[r * p1 + j]) in float64, r < p0.
jit::Kernel exp_row_sums() {
  KB kb("exp_row_sums");
  const int in = kb.buffer(kFloat32, false), out = kb.buffer(kFloat64, true);
  const int acc = kb.acc(jit::Combiner::Sum, kFloat64);
  const ValueId r = kb.idx(0), j = kb.idx(1);
  const ValueId e = kb.val(VOp::Exp, kFloat32, {kb.load(in, kb.add(kb.mul(r, kb.param(1)), j))});
  const ValueId wide = kb.val(VOp::Cast, kFloat64, {e});
  kb.k.body.push_back(loop(0, kb.param(0), true,
                           {acc_init(acc), loop(1, kb.param(1), false, {acc_update(acc, wide)}),
                            store(out, r, kb.val(VOp::AccRead, kFloat64, {}, acc))}));
  return kb.k;
}

}  // namespace

TEST_CASE("llvm: a float32 sum of exp values runs 16 lanes a step where 512-bit vectors run at full clock") {
  KILN_SKIP_WITHOUT_LLVM();
  const codegen::CompiledKernel ck = be().compile(exp_row_sums(), true);
  REQUIRE(static_cast<bool>(ck.fn));
  const bool wide = host_runs_wide_vectors();
  CAPTURE(be().target_id());
  // the exp polynomial in 16 float lanes, widened into 16 doubles; no
  // second copy of 8 lanes (LLVM's 2 x 8)
  CHECK((ck.llvm_ir.find("fpext <16 x float>") != std::string::npos) == wide);
  if (wide) CHECK(ck.llvm_ir.find("<8 x float> @llvm.fma.") == std::string::npos);
  // the row up to a multiple of 16, then the rest as one masked vector
  // (loop_hints.cpp, split): no scalar remainder calling exp's twin; the
  // tail's loads are plain within a page (pipeline.cpp's
  // UnmaskFullVectors: test_llvm_partial_vectors.cpp), and it stores
  // nothing, so no branch tests for a full vector
  CAPTURE(ck.llvm_ir);
  CHECK(ck.llvm_ir.find("call float @kiln_rt_expf") == std::string::npos);
  CHECK(ck.llvm_ir.find("llvm.masked.load") != std::string::npos);
  CHECK(ck.llvm_ir.find("llvm.vector.reduce.and") == std::string::npos);
  CHECK(ck.llvm_ir.find("kiln.loop.tail") != std::string::npos);
  // and it sums: rows of 0 (no vector step), 5 (remainder only), 16, 37
  // and 1000 elements
  for (int64_t cols : {0, 5, 16, 37, 1000}) {
    const int64_t rows = 3;
    Buf a(kFloat32, static_cast<size_t>(rows * cols)), o(kFloat64, rows);
    for (int64_t x = 0; x < rows * cols; ++x)
      a.as<float>()[x] = std::sin(0.37f * static_cast<float>(x)) * 4.0f;
    run(ck.fn, {&a, &o}, {rows, cols}, 0, rows);
    for (int64_t y = 0; y < rows; ++y) {
      double want = 0;
      for (int64_t x = 0; x < cols; ++x) want += std::exp(static_cast<double>(a.as<float>()[y * cols + x]));
      CAPTURE(cols);
      CHECK(o.as<double>()[y] == doctest::Approx(want).epsilon(1e-6));
    }
  }
}

namespace {

// log_softmax's shape: s = sum_j in[r, j] in float64, then
// out[r, j] = in[r, j] - log(float(s)): the log is the same for a whole row.
jit::Kernel shift_by_log_of_sum() {
  KB kb("shift_by_log_of_sum");
  const int in = kb.buffer(kFloat32, false), out = kb.buffer(kFloat32, true);
  const int acc = kb.acc(jit::Combiner::Sum, kFloat64);
  const ValueId r = kb.idx(0), j = kb.idx(1), j2 = kb.idx(2);
  const ValueId at = kb.add(kb.mul(r, kb.param(1)), j), at2 = kb.add(kb.mul(r, kb.param(1)), j2);
  const ValueId sum = kb.val(VOp::AccRead, kFloat64, {}, acc);
  const ValueId log = kb.val(VOp::Log, kFloat32, {kb.val(VOp::Cast, kFloat32, {sum})});
  const ValueId wide = kb.val(VOp::Cast, kFloat64, {kb.load(in, at)});
  const ValueId shifted = kb.val(VOp::Sub, kFloat32, {kb.load(in, at2), log});
  kb.k.body.push_back(loop(0, kb.param(0), true,
                           {acc_init(acc), loop(1, kb.param(1), false, {acc_update(acc, wide)}),
                            loop(2, kb.param(1), false, {store(out, at2, shifted)})}));
  return kb.k;
}

// out[i] = op(in[i]) for i < p0, float32, compiled with its IR kept.
codegen::CompiledKernel unary_loop(const char* name, VOp op) {
  KB kb(name);
  const int in = kb.buffer(kFloat32, false), out = kb.buffer(kFloat32, true);
  kb.k.body.push_back(loop(0, kb.param(0), true, {store(out, kb.idx(0), kb.val(op, kFloat32, {kb.load(in, kb.idx(0))}))}));
  return be().compile(kb.k, true);
}

// n inputs: `special` first, then rest(i).
template <typename Rest>
void fill(Buf& x, int64_t n, const std::vector<float>& special, Rest rest) {
  for (int64_t i = 0; i < n; ++i)
    x.as<float>()[i] = i < static_cast<int64_t>(special.size()) ? special[static_cast<size_t>(i)] : rest(i);
}

}  // namespace

TEST_CASE("llvm: a float32 row maximum runs 2 x 16 lanes a step where 512-bit vectors run at full clock") {
  KILN_SKIP_WITHOUT_LLVM();
  const codegen::CompiledKernel ck = be().compile(row_reduction("row_max", jit::Combiner::Max, kFloat32), true);
  REQUIRE(static_cast<bool>(ck.fn));
  const bool wide = host_runs_wide_vectors();
  CAPTURE(be().target_id());
  CAPTURE(ck.llvm_ir);
  // LLVM's own choice is 4 x 8 lanes (256-bit vectors) on these hosts
  if (wide) {
    CHECK(occurrences(ck.llvm_ir, "load <16 x float>") == 2);
    CHECK(occurrences(ck.llvm_ir, "load <8 x float>") == 0);
  } else {
    CHECK(occurrences(ck.llvm_ir, "load <16 x float>") == 0);
  }
  // rows of 1, 15, 31, 32 (one step), 33, 100 and 1000 elements; row 1 holds
  // a NaN, row 2 only -0 and +0 (max is +0)
  for (int64_t cols : {1, 15, 31, 32, 33, 100, 1000}) {
    const int64_t rows = 3;
    Buf a(kFloat32, static_cast<size_t>(rows * cols)), o(kFloat32, rows);
    float* x = a.as<float>();
    for (int64_t i = 0; i < rows * cols; ++i) x[i] = std::sin(0.37f * static_cast<float>(i)) * 4.0f;
    x[cols + cols / 2] = NAN;
    for (int64_t i = 0; i < cols; ++i) x[2 * cols + i] = i % 3 == 1 ? 0.0f : -0.0f;
    run(ck.fn, {&a, &o}, {rows, cols}, 0, rows);
    CAPTURE(cols);
    float want = x[0];
    for (int64_t i = 1; i < cols; ++i) want = std::max(want, x[i]);
    CHECK(o.as<float>()[0] == want);
    CHECK(std::isnan(o.as<float>()[1]));
    CHECK(o.as<float>()[2] == 0.0f);
    CHECK(std::signbit(o.as<float>()[2]) == (cols == 1));
  }
}

TEST_CASE("llvm: a loop that subtracts a row's log runs as wide as a plain subtraction (the log is not in the loop)") {
  KILN_SKIP_WITHOUT_LLVM();
  const codegen::CompiledKernel ck = be().compile(shift_by_log_of_sum(), true);
  REQUIRE(static_cast<bool>(ck.fn));
  const bool wide = host_runs_wide_vectors();
  CAPTURE(be().target_id());
  CAPTURE(ck.llvm_ir);
  // the sum: 8 lanes x 2 (a float64 sum of float32 values), its rest one
  // vector of 16 (lower_kernel.cpp); the subtraction: 16 lanes where wide
  // (8 before the log's row invariance was seen), one vector a step, as
  // every move loop of a row kernel (loop_hints.cpp): its scalar
  // remainder is under 16 elements
  if (wide) CHECK(occurrences(ck.llvm_ir, "load <8 x float>") == 2);
  if (wide) CHECK(occurrences(ck.llvm_ir, "load <16 x float>") == 2);
  for (int64_t cols : {1, 5, 16, 33, 56, 100, 1000}) {
    const int64_t rows = 3;
    Buf a(kFloat32, static_cast<size_t>(rows * cols)), o(kFloat32, static_cast<size_t>(rows * cols));
    const float* x = a.as<float>();
    for (int64_t i = 0; i < rows * cols; ++i) a.as<float>()[i] = 1.5f + std::sin(0.37f * static_cast<float>(i));
    run(ck.fn, {&a, &o}, {rows, cols}, 0, rows);
    CAPTURE(cols);
    for (int64_t y = 0; y < rows; ++y) {
      double s = 0;
      for (int64_t i = 0; i < cols; ++i) s += x[y * cols + i];
      const float l = std::log(static_cast<float>(s));
      for (int64_t i = 0; i < cols; ++i)
        CHECK(o.as<float>()[y * cols + i] == doctest::Approx(x[y * cols + i] - l).epsilon(1e-6));
    }
  }
}

TEST_CASE("llvm: a loop whose only math is float32 exp runs 16 lanes, its tail masked, where 512-bit vectors run at full clock") {
  KILN_SKIP_WITHOUT_LLVM();
  // out[i] = relu(a[i]) * exp(-a[i]), i < p0: the chain's shape
  KB kb("relu_times_exp");
  const int in = kb.buffer(kFloat32, false), out = kb.buffer(kFloat32, true);
  const ValueId a = kb.load(in, kb.idx(0));
  const ValueId e = kb.val(VOp::Exp, kFloat32, {kb.val(VOp::Neg, kFloat32, {a})});
  kb.k.body.push_back(loop(0, kb.param(0), true, {store(out, kb.idx(0), kb.mul(kb.val(VOp::Relu, kFloat32, {a}), e))}));
  const codegen::CompiledKernel ck = be().compile(kb.k, true);
  REQUIRE(static_cast<bool>(ck.fn));
  const bool wide = host_runs_wide_vectors();
  CAPTURE(be().target_id());
  CAPTURE(ck.llvm_ir);
  // one copy of the polynomial, in 16 float lanes (LLVM's own choice is 8),
  // the row's last partial vector masked: no scalar remainder calling exp's
  // twin
  CHECK((ck.llvm_ir.find("<16 x float> @llvm.fma.v16f32") != std::string::npos) == wide);
  if (wide) {
    CHECK(ck.llvm_ir.find("<8 x float> @llvm.fma.") == std::string::npos);
    CHECK(occurrences(ck.llvm_ir, "call <16 x float> @llvm.masked.load.v16f32") == 1);
    CHECK(ck.llvm_ir.find("call float @kiln_rt_expf") == std::string::npos);
    // a full vector (every lane active) loads and stores without the mask
    // (pipeline.cpp, UnmaskFullVectors), told by a scalar compare of its
    // last lane's index, not a reduction of the mask
    CHECK(occurrences(ck.llvm_ir, "= load <16 x float>") == 1);
    CHECK(occurrences(ck.llvm_ir, "store <16 x float>") == 1);
    CHECK(ck.llvm_ir.find("@llvm.vector.reduce.and") == std::string::npos);
  }
  for (int64_t n : {1, 15, 16, 17, 100, 1000}) {
    Buf x(kFloat32, static_cast<size_t>(n)), o(kFloat32, static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) x.as<float>()[i] = std::sin(0.37f * static_cast<float>(i)) * 30.0f;
    if (n > 3) x.as<float>()[3] = NAN;
    if (n > 5) x.as<float>()[5] = INFINITY;
    run(ck.fn, {&x, &o}, {n}, 0, n);
    CAPTURE(n);
    for (int64_t i = 0; i < n; ++i) {
      const float v = x.as<float>()[i];
      const double want = (v > 0 ? static_cast<double>(v) : 0.0) * std::exp(-static_cast<double>(v));
      CAPTURE(v);
      if (std::isnan(v) || std::isinf(v)) {
        CHECK(std::isnan(o.as<float>()[i]));  // NaN * ..., inf * 0
      } else {
        CHECK(o.as<float>()[i] == doctest::Approx(want).epsilon(1e-6));
      }
    }
  }
}

TEST_CASE("llvm: float32 erf is computed in float arithmetic, 16 lanes with a masked tail where 512-bit vectors run at full clock") {
  KILN_SKIP_WITHOUT_LLVM();
  // out[i] = a[i] * 0.5 * (1 + erf(a[i] * sqrt(1/2))): GELU's shape
  KB kb("gelu_erf");
  const int in = kb.buffer(kFloat32, false), out = kb.buffer(kFloat32, true);
  auto fc = [&](double c) {
    jit::Value v{VOp::Const, kFloat32};
    v.f = c;
    return kb.k.add(v);
  };
  const ValueId a = kb.load(in, kb.idx(0));
  const ValueId e = kb.val(VOp::Erf, kFloat32, {kb.mul(a, fc(0.70710678118654752))});
  const ValueId g = kb.mul(kb.mul(a, fc(0.5)), kb.add(fc(1.0), e));
  kb.k.body.push_back(loop(0, kb.param(0), true, {store(out, kb.idx(0), g)}));
  const codegen::CompiledKernel ck = be().compile(kb.k, true);
  REQUIRE(static_cast<bool>(ck.fn));
  const bool wide = host_runs_wide_vectors();
  CAPTURE(be().target_id());
  CAPTURE(ck.llvm_ir);
  // no double anywhere: the polynomials and exp's are float's
  CHECK(ck.llvm_ir.find("double") == std::string::npos);
  CHECK((ck.llvm_ir.find("<16 x float> @llvm.fma.v16f32") != std::string::npos) == wide);
  if (wide) {
    CHECK(occurrences(ck.llvm_ir, "call <16 x float> @llvm.masked.load.v16f32") == 1);
    CHECK(ck.llvm_ir.find("call float @kiln_rt_erff") == std::string::npos);
  }
  for (int64_t n : {1, 15, 16, 17, 100, 1000}) {
    Buf x(kFloat32, static_cast<size_t>(n)), o(kFloat32, static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) x.as<float>()[i] = std::sin(0.37f * static_cast<float>(i)) * 6.0f;
    if (n > 3) x.as<float>()[3] = NAN;
    if (n > 5) x.as<float>()[5] = -INFINITY;
    run(ck.fn, {&x, &o}, {n}, 0, n);
    CAPTURE(n);
    for (int64_t i = 0; i < n; ++i) {
      const float v = x.as<float>()[i];
      CAPTURE(v);
      if (std::isnan(v) || std::isinf(v)) {
        CHECK(std::isnan(o.as<float>()[i]));  // NaN, and -inf * (1 + -1) = -inf * 0
      } else {
        // the same float formula with libm's erff: erf within 1 ulp (of
        // 1.0 at most, 6e-8), which 1 + erf(...) leaves absolute
        const float want = v * 0.5f * (1.0f + std::erf(v * 0.70710678f));
        CHECK(std::fabs(o.as<float>()[i] - want) <= std::fabs(v) * 1.2e-7f);
      }
    }
  }
}

TEST_CASE("llvm: float32 log is computed in float arithmetic, 16 lanes where 512-bit vectors run at full clock") {
  KILN_SKIP_WITHOUT_LLVM();
  const codegen::CompiledKernel ck = unary_loop("log_loop", VOp::Log);
  REQUIRE(static_cast<bool>(ck.fn));
  const bool wide = host_runs_wide_vectors();
  CAPTURE(be().target_id());
  CAPTURE(ck.llvm_ir);
  CHECK(ck.llvm_ir.find("double") == std::string::npos);
  CHECK((ck.llvm_ir.find("fdiv <16 x float>") != std::string::npos) == wide);
  // denormals, zeros, negatives, inf, NaN, 1 and values around it: within
  // 1 ulp of libm's logf (the accuracy test measures every function so)
  const std::vector<float> special = {1e-45f, 3e-39f, 0.0f, -0.0f, -1.0f, INFINITY, -INFINITY, NAN, 1.0f,
                                      0.99999994f, 1.00000012f, 0.70710677f, 1.41421354f, 2.0f, 3e38f};
  for (int64_t n : {1, 15, 16, 17, 100, 1000}) {
    Buf x(kFloat32, static_cast<size_t>(n)), o(kFloat32, static_cast<size_t>(n));
    fill(x, n, special, [](int64_t i) { return std::exp(std::sin(0.37f * static_cast<float>(i)) * 40.0f); });
    run(ck.fn, {&x, &o}, {n}, 0, n);
    CAPTURE(n);
    for (int64_t i = 0; i < n; ++i) {
      const float v = x.as<float>()[i], got = o.as<float>()[i], want = std::log(v);
      CAPTURE(v);
      if (std::isnan(want)) {
        CHECK(std::isnan(got));
      } else if (std::isinf(want) || want == 0.0f) {
        CHECK(got == want);
      } else {
        CHECK(std::fabs(got - want) <= std::fabs(want) * 1.2e-7f);
      }
    }
  }
}

TEST_CASE("llvm: float32 sigmoid is computed in float arithmetic, within 2 ulp of the float formula with libm's exp") {
  KILN_SKIP_WITHOUT_LLVM();
  const codegen::CompiledKernel ck = unary_loop("sigmoid_loop", VOp::Sigmoid);
  REQUIRE(static_cast<bool>(ck.fn));
  CAPTURE(ck.llvm_ir);
  CHECK(ck.llvm_ir.find("double") == std::string::npos);
  CHECK((ck.llvm_ir.find("fdiv <16 x float>") != std::string::npos) == host_runs_wide_vectors());
  // 0.5 at 0, 1 and 0 at the infinities, 0 where exp(-x) overflows (as the
  // formula), NaN itself
  const std::vector<float> special = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -88.8f, -87.0f, 20.0f, 1e-7f, -1e-7f};
  auto ulps = [](float a, float b) {
    auto key = [](float f) {
      const int32_t i = std::bit_cast<int32_t>(f);
      return i < 0 ? static_cast<int64_t>(INT32_MIN) - i : static_cast<int64_t>(i);
    };
    return std::llabs(key(a) - key(b));
  };
  for (int64_t n : {1, 15, 16, 17, 100, 1000}) {
    Buf x(kFloat32, static_cast<size_t>(n)), o(kFloat32, static_cast<size_t>(n));
    fill(x, n, special, [](int64_t i) { return std::sin(0.37f * static_cast<float>(i)) * 30.0f; });
    run(ck.fn, {&x, &o}, {n}, 0, n);
    CAPTURE(n);
    for (int64_t i = 0; i < n; ++i) {
      const float v = x.as<float>()[i], got = o.as<float>()[i], want = 1.0f / (1.0f + std::exp(-v));
      CAPTURE(v);
      if (std::isnan(v)) CHECK(std::isnan(got));
      else CHECK(ulps(got, want) <= 2);
    }
  }
}

TEST_CASE("llvm: a scan's running float64 sum is not split into a vector tail (it runs in order)") {
  // out[r, j] = sum_{i <= j} in[r, i] in float64: the same widening as a
  // row sum, but a running value (loop_hints.cpp: reduces_only)
  KILN_SKIP_WITHOUT_LLVM();
  KB kb("running_sums");
  const int in = kb.buffer(kFloat32, false), out = kb.buffer(kFloat64, true);
  const int acc = kb.acc(jit::Combiner::Sum, kFloat64);
  kb.k.accs[static_cast<size_t>(acc)].running = true;
  const ValueId r = kb.idx(0), j = kb.idx(1);
  const ValueId at = kb.add(kb.mul(r, kb.param(1)), j);
  const ValueId wide = kb.val(VOp::Cast, kFloat64, {kb.load(in, at)});
  kb.k.body.push_back(loop(0, kb.param(0), true,
                           {acc_init(acc), loop(1, kb.param(1), false,
                                                {acc_update(acc, wide), store(out, at, kb.val(VOp::AccRead, kFloat64, {}, acc))})}));
  const codegen::CompiledKernel ck = be().compile(kb.k, true);
  REQUIRE(static_cast<bool>(ck.fn));
  CAPTURE(ck.llvm_ir);
  CHECK(ck.llvm_ir.find("kiln.loop.tail") == std::string::npos);
  const int64_t rows = 2, cols = 37;
  Buf a(kFloat32, rows * cols), o(kFloat64, rows * cols);
  for (int64_t i = 0; i < rows * cols; ++i) a.as<float>()[i] = static_cast<float>(std::sin(0.3 * static_cast<double>(i)));
  run(ck.fn, {&a, &o}, {rows, cols}, 0, rows);
  for (int64_t y = 0; y < rows; ++y) {
    double want = 0;
    for (int64_t x = 0; x < cols; ++x) {
      want += a.as<float>()[y * cols + x];
      CHECK(o.as<double>()[y * cols + x] == want);  // the same additions in the same order
    }
  }
}

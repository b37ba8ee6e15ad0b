// Reads at a small constant step (jit/lowerer.h kConstantStepMax): a
// view's step up to 8 and a strided slice's phase within it are constants
// of the kernel, a strided slice of a buffer reads through the buffer's own
// sizes, and the compiled loop loads such reads as whole vectors and
// shuffles (LLVM's interleaved groups), not as gathers
// (codegen/llvm/lower_kernel.cpp avoid_gathers). Pinned: the kernel IR's
// constants and params, the compiled IR's loads, the reference evaluator's
// values, and that a new step compiles a new kernel while a new shape does
// not.
#include <doctest/doctest.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "kernel_builder.h"
#include "kiln/nn_functional.h"
#include "tests/check_values.h"
#include "tests/jit_checks.h"

using namespace kiln;
using namespace kiln::test;

namespace {

Tensor data(const Shape& s, DType dt = kFloat32) { return kiln_test::sine_leaf(s, dt, 2.0); }

const jit::Kernel& output_kernel(const jit::Schedule& s) { return s.steps.back().code->ir; }


}  // namespace

TEST_CASE("jit: a slice at a small step reads its buffer at constant steps and phases") {
  // a buffer of the slices' rank (data()'s leaf is a 1-D buffer viewed as
  // [6, 10]: a slice of it reads through the flat position, a param offset
  // each, at the constant step)
  const Tensor m = data({6, 10}) * 1;
  m.eval();
  // x[:, 1::2] + x[:, ::2]: both read m at m's own row size (one param) and
  // the constant step 2; the phase 1 is a constant too
  const jit::Schedule s = kiln_test::plan(m.slice(1, 1, std::nullopt, 2) + m.slice(1, 0, std::nullopt, 2));
  const jit::Kernel& k = output_kernel(s);
  int params = 0, twos = 0;
  for (const jit::Value& v : k.values) {
    params += v.op == VOp::Param;
    twos += v.op == VOp::IntConst && v.i == 2;
  }
  // the output's 2 extents and m's row size
  CAPTURE(k.to_string());
  CHECK(params == 3);
  CHECK(twos == 1);
  kiln_test::check_jit(m.slice(1, 1, std::nullopt, 2) + m.slice(1, 0, std::nullopt, 2));
  kiln_test::check_jit(m.slice(0, 1, std::nullopt, 3) * m.slice(0, 0, 2, 3));
  kiln_test::check_jit(m.slice(1, 3, std::nullopt, 9) - 1);  // a step above 8: a param
  kiln_test::check_jit(m.slice(1, 9, std::nullopt, 2) * 2);  // a phase above 8: a param
  kiln_test::check_jit(m.t().slice(1, 1, std::nullopt, 2) + 1);
  kiln_test::check_jit(m.slice(0, 1, std::nullopt, 2).slice(1, 1, std::nullopt, 4).exp2());
}

TEST_CASE("jit: a new shape of a strided read compiles nothing, a new step or phase does") {
  // kernels are cached by their IR (jit/kernel_cache.h): equal IR, one kernel
  const Tensor a = data({8, 12}) * 1, b = data({5, 20}) * 1;
  a.eval(), b.eval();
  auto key = [](const Tensor& t) { return output_kernel(kiln_test::plan(t)).key(); };
  const std::string first = key(a.slice(1, 1, std::nullopt, 2) * 3);
  CHECK(key(b.slice(1, 1, std::nullopt, 2) * 3) == first);  // a new shape
  CHECK(key(b.slice(1, 0, std::nullopt, 2) * 3) != first);  // another phase
  CHECK(key(b.slice(1, 1, std::nullopt, 3) * 3) != first);  // another step
  CHECK(key(b.slice(1, 1, std::nullopt, 9) * 3) == key(a.slice(1, 1, std::nullopt, 10) * 3));  // steps above 8: params
  Tensor y = b.slice(1, 1, std::nullopt, 2) * 3;
  // b's first row at 1, 3, ... 19, times 3 (b = 2 sin(0.7 i + 0.3), float32)
  std::vector<double> want;
  for (int j = 1; j < 20; j += 2)
    want.push_back(static_cast<double>(3.0f * static_cast<float>(2.0 * std::sin(0.7 * j + 0.3))));
  kiln_test::check_values(y.slice(0, 0, 1), kFloat32, {1, 10}, want, 1e-6);
}

TEST_CASE("llvm: reads at a constant step load whole vectors, not gathers") {
  KILN_SKIP_WITHOUT_LLVM();
  if (!host_has_avx512()) {
    MESSAGE("the host has no AVX-512 (LLVM's gathers and interleaved loads differ): test skipped");
    return;
  }
  // buffers of the views' rank (computed), and 1-D buffers viewed (leaves)
  const Tensor m = data({64, 64}) * 1, x = data({2, 3, 16, 16}) * 1, mf = data({64, 64}), xf = data({2, 3, 16, 16});
  m.eval(), x.eval(), mf.eval(), xf.eval();
  // a lone read at step 2, and a 2 x 2 pooling window's 4 taps (2 groups
  // of 2 where the buffer has the views' rank)
  for (const Tensor& t : {m.slice(1, 0, std::nullopt, 2) * 2, max_pool2d(x, {2}), mf.slice(1, 0, std::nullopt, 2) * 2,
                          max_pool2d(xf, {2})}) {
    const codegen::CompiledKernel ck = be().compile(output_kernel(kiln_test::plan(t)), true);
    REQUIRE(static_cast<bool>(ck.fn));
    CHECK(ck.llvm_ir.find("llvm.masked.gather") == std::string::npos);
    kiln_test::check_jit(t);
  }
  for (const Tensor& t : {m.slice(1, 0, std::nullopt, 2) * 2, max_pool2d(x, {2})})
    CHECK(be().compile(output_kernel(kiln_test::plan(t)), true).llvm_ir.find("shufflevector") != std::string::npos);
}

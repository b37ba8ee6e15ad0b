// Shifted blocks of one stored buffer (jit/lower_views.cpp: shifted_of):
// three or more views of a buffer at unit steps whose starts differ by a
// little (a window's taps over a stored padded input, a stencil) read
// through the buffer's own sizes at a shared base start (a param) plus
// constants, not at an offset and strides of their own each. Pinned: the
// kernel IR's params and constants, that a new base compiles nothing while
// one or two views keep their params, the reference evaluator's values (a
// broadcast column beside the shifts among them: its step 0 once read as
// a step 1), and the compiled fold's masked tail (codegen/llvm/loop_hints.cpp).
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernel_builder.h"
#include "kiln/nn_functional.h"
#include "tests/check_values.h"
#include "tests/jit_checks.h"

using namespace kiln;
using namespace kiln::test;

namespace {

// a stored buffer of the views' rank (a leaf of data() is 1-D, viewed)
Tensor stored(const Shape& s) {
  Tensor t = kiln_test::sine_leaf(s, kFloat32, 2.0) * 1;
  t.eval();
  return t;
}

const jit::Kernel& output_kernel(const jit::Schedule& s) { return s.steps.back().code->ir; }

int count(const jit::Kernel& k, VOp op) {
  int n = 0;
  for (const jit::Value& v : k.values) n += v.op == op;
  return n;
}


}  // namespace

TEST_CASE("jit: shifted views of a buffer read at a shared base and constant shifts") {
  const Tensor m = stored({6, 10});
  // a 3-tap stencil along the rows: starts 0, 1, 2 (base 0: no param)
  const Tensor y = m.narrow(1, 2, 8) + m.narrow(1, 1, 8) - m.narrow(1, 0, 8);
  const jit::Kernel& k = output_kernel(kiln_test::plan(y));
  CAPTURE(k.to_string());
  // the output's 2 extents and m's row size; before, 7 (the extents, a row
  // stride each of the three views, two views' offsets)
  CHECK(count(k, VOp::Param) == 3);
  CHECK(count(k, VOp::Load) == 3);
  kiln_test::check_jit(y);
  // shifts along both dims (a 2 x 2 window), at a base of (1, 1)
  kiln_test::check_jit(m.slice(0, 1, 5).slice(1, 1, 9) - m.slice(0, 2, 6).slice(1, 2, 10) +
                       m.slice(0, 1, 5).slice(1, 2, 10) * m.slice(0, 2, 6).slice(1, 1, 9));
  // a column broadcast along the rows (step 0) beside shifted blocks: read
  // at its own column, not shifted along the broadcast dim
  kiln_test::check_jit(m.select(1, 9).unsqueeze(1) * m.narrow(1, 0, 4) + m.narrow(1, 4, 4) -
                       m.narrow(1, 2, 4).sin());
  // shifts of more than 16 apart: each view through its own params
  const Tensor w = stored({4, 40});
  kiln_test::check_jit(w.narrow(1, 0, 5) + w.narrow(1, 30, 5) + w.narrow(1, 1, 5));
  // a view of one row (one element along dim 0) among the shifts
  kiln_test::check_jit(m.slice(0, 2, 3).slice(1, 1, 5) * m.slice(1, 0, 4) + m.slice(1, 2, 6));
}

TEST_CASE("jit: a new base of shifted views compiles nothing, one or two views keep their offset params") {
  // kernels are cached by their IR (jit/kernel_cache.h): equal IR, one kernel
  const Tensor a = stored({8, 12}), b = stored({5, 20});
  auto key = [](const Tensor& t) { return output_kernel(kiln_test::plan(t)).key(); };
  auto taps = [](const Tensor& x, int64_t s) {
    return x.narrow(1, s, 6) - x.narrow(1, s + 1, 6) + x.narrow(1, s + 2, 6);
  };
  const std::string at1 = key(taps(a, 1));
  CHECK(key(taps(a, 3)) == at1);  // another base: a param
  CHECK(key(taps(b, 5)) == at1);  // and another shape
  CHECK(key(a.narrow(1, 1, 6) - a.narrow(1, 2, 6) + a.narrow(1, 4, 6)) != at1);  // another shift: a constant
  const jit::Kernel& k = output_kernel(kiln_test::plan(taps(a, 1)));
  CHECK(count(k, VOp::Param) == 4);  // the output's extents, a's row size, the base start
  // a loop over a lone view's start compiles one kernel, and over a pair's
  // (x[:, 1:] - x[:, :-1], read at an offset param each: lower_views.cpp)
  CHECK(key(a.narrow(1, 2, 6) * 2) == key(a.narrow(1, 5, 6) * 2));
  CHECK(key(a.narrow(1, 1, 6) - a.narrow(1, 2, 6)) == key(a.narrow(1, 4, 6) - a.narrow(1, 6, 6)));
  // b's row 0: 2 sin(0.7 i + 0.3) at i = 5..10 minus at 6..11 plus at 7..12 (float32)
  const Tensor d = taps(b, 5);
  std::vector<double> want;
  auto v = [](int j) { return static_cast<float>(2.0 * std::sin(0.7 * j + 0.3)); };
  for (int j = 5; j < 11; ++j) want.push_back(static_cast<double>(v(j) - v(j + 1) + v(j + 2)));
  kiln_test::check_values(d.narrow(0, 0, 1), kFloat32, {1, 6}, want, 1e-6);
}

TEST_CASE("llvm: a depthwise fold's taps end their rows in a masked vector") {
  KILN_SKIP_WITHOUT_LLVM();
  if (!host_has_avx512()) {
    MESSAGE("the host has no AVX-512 (the fold's vector width differs): test skipped");
    return;
  }
  // rows of 20 outputs: 16 in a vector, 4 in a masked one, not a scalar
  // remainder of every tap
  const Tensor x = stored({2, 4, 6, 20}), w = stored({4, 1, 3, 3});
  const Tensor y = conv2d(x, w, Tensor(), {1}, {1}, {1}, 4);
  const codegen::CompiledKernel ck = be().compile(output_kernel(kiln_test::plan(y)), true);
  REQUIRE(static_cast<bool>(ck.fn));
  CHECK(ck.llvm_ir.find("llvm.masked.store") != std::string::npos);
  kiln_test::check_jit_close(y, 1e-5);
}

// Columns of narrow rows (jit/lowerer.h kNarrowRowMax): a view whose last
// dim steps over a row of at most 16 elements of a stored buffer (the x, y,
// z columns of [N, 3] points, a 3 x 3 matrix's entries, the gradient of a
// stack read back) reads at a constant stride and, inside the row, a
// constant offset, so LLVM loads a row's columns as one interleaved group
// instead of running the loop one element at a time; and a loop computing
// exp over reads at a constant step folds no tail (codegen/llvm/
// loop_hints.cpp). Pinned: kernel keys (a new N compiles nothing, a new row
// width or column does), the compiled IR's loads, values against the
// reference evaluator.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernel_builder.h"
#include "kiln/kiln.h"
#include "tests/jit_checks.h"

using namespace kiln;
using namespace kiln::test;

namespace {

Tensor data(const Shape& s, DType dt = kFloat32) { return kiln_test::sine_leaf(s, dt, 2.0); }

const jit::Kernel& output_kernel(const jit::Schedule& s) { return s.steps.back().code->ir; }

std::string key(const Tensor& t) { return output_kernel(kiln_test::plan(t)).key(); }

// x, y, z of points p [.., 3]: their norm
Tensor norm3(const Tensor& p) {
  const int64_t d = p.dim() - 1;
  return (p.select(d, 0).square() + p.select(d, 1).square() + p.select(d, 2).square()).sqrt();
}

}  // namespace

TEST_CASE("jit: columns of narrow rows read at a constant stride: a new N compiles nothing, a new width does") {
  const Tensor p = data({100, 3}), p2 = data({37, 3}), q = data({100, 4}), w = data({100, 17});
  const std::string k = key(norm3(p));
  CHECK(kiln_test::kernels(norm3(p)) == 1);
  CHECK(key(norm3(p2)) == k);                       // another N
  CHECK(key(norm3(q)) != k);                        // rows of 4: a constant stride of 4
  CHECK(key(p.select(1, 0) * 2) != key(p.select(1, 2) * 2));  // the column, a constant
  CHECK(key(w.select(1, 2) * 2) == key(w.select(1, 3) * 2));  // rows of 17: params
  CHECK(key(data({100, 16}).select(1, 0) * 2) != key(data({100, 16}).select(1, 3) * 2));
  // the row stride and the column are constants: the kernel reading p has
  // two params fewer than rows of 17 (their stride and offset)
  const int np = output_kernel(kiln_test::plan(p.select(1, 1) * 2)).num_params;
  CHECK(output_kernel(kiln_test::plan(w.select(1, 1) * 2)).num_params == np + 2);
  // an offset past the first rows (p[10:, 1]) stays a param: one kernel for p[10:] and p[20:]
  CHECK(key(p.narrow(0, 10, 90).select(1, 1) * 2) == key(p.narrow(0, 20, 80).select(1, 1) * 2));
}

TEST_CASE("jit: columns of narrow rows against the reference") {
  for (int64_t n : {1, 5, 16, 17, 100, 1000}) {
    CAPTURE(n);
    const Tensor p = data({n, 3}), m = data({n, 3, 3}), q = data({n, 16});
    kiln_test::check_jit(norm3(p));
    kiln_test::check_jit(p.select(1, 2) - p.select(1, 0) * 3);
    kiln_test::check_jit(p.narrow(0, n > 1 ? 1 : 0, n > 1 ? n - 1 : 1).select(1, 1) * 2);  // offset past a row
    kiln_test::check_jit(m.select(2, 1).select(1, 2) + m.select(2, 0).select(1, 0));  // a 3 x 3's entries
    kiln_test::check_jit(m.diagonal(0, 1, 2).sum(1));
    kiln_test::check_jit(p.t() * 2);  // [3, n], each row at stride 3
    kiln_test::check_jit(q.select(1, 15) + q.select(1, 0) - q.select(1, 7));
    kiln_test::check_jit_close(p.select(1, 1).atan2(p.select(1, 0)), 1e-6);
    kiln_test::check_jit_close(q.select(1, 3).exp() * q.select(1, 9), 1e-6);
    kiln_test::check_jit(data({2, n, 3}).select(2, 1) * data({2, n}));  // [B, N, 3]
  }
  for (DType dt : {kFloat64, kInt32, kInt64, kFloat16, kUInt8}) {
    CAPTURE(dt);
    const Tensor p = (data({50, 3}) * 9).to(dt), r = (data({50, 2}) * 9).to(dt);
    kiln_test::check_jit(p.select(1, 0) + p.select(1, 2) * r.select(1, 1));
  }
}

TEST_CASE("jit: a gradient of columns stacked into 3 x 3 matrices against the reference") {
  const int64_t n = 41;
  const Tensor a = data({n}).requires_grad_(), b = (data({n}) * 0.5).requires_grad_();
  const Tensor ca = a.cos(), sa = a.sin(), cb = b.cos(), sb = b.sin();
  const Tensor r = stack({ca * cb, -sa, ca * sb, sa * cb, ca, sa * sb, -sb, zeros_like(a), cb}, 1).reshape({n, 3, 3});
  const Tensor g = data({n, 3, 3}) * 0.25;
  const std::vector<Tensor> gs = grad({r}, {a, b}, {g});
  kiln_test::close_to_reference(gs[0], 1e-5);
  kiln_test::close_to_reference(gs[1], 1e-5);
  // by hand, row 4: d/da of sum(g * r) with r's a-dependent entries
  const std::vector<float> av = a.to_vector<float>(), bv = b.to_vector<float>(), gv = g.to_vector<float>();
  const double A = av[4], B = bv[4];
  const float* G = gv.data() + 36;
  const double want = G[0] * -std::sin(A) * std::cos(B) + G[1] * -std::cos(A) + G[2] * -std::sin(A) * std::sin(B) +
                      G[3] * std::cos(A) * std::cos(B) + G[4] * -std::sin(A) + G[5] * std::cos(A) * std::sin(B);
  CHECK(gs[0].to_vector<float>()[4] == doctest::Approx(want).epsilon(1e-5));
}

TEST_CASE("llvm: columns of narrow rows load as interleaved groups and an exp loop at a constant step folds no tail") {
  KILN_SKIP_WITHOUT_LLVM();
  if (!host_has_avx512()) {
    MESSAGE("the host has no AVX-512 (LLVM's interleaved loads differ): test skipped");
    return;
  }
  const Tensor p = data({256, 3}) * 1, q = data({256, 4}) * 1;
  p.eval(), q.eval();
  for (const Tensor& t : {norm3(p), q.select(1, 0).exp() * q.select(1, 3) + q.select(1, 1)}) {
    const codegen::CompiledKernel ck = be().compile(output_kernel(kiln_test::plan(t)), true);
    REQUIRE(static_cast<bool>(ck.fn));
    CHECK(ck.llvm_ir.find("shufflevector") != std::string::npos);
    CHECK(ck.llvm_ir.find("llvm.masked.gather") == std::string::npos);
    CHECK(ck.llvm_ir.find("llvm.masked.load") == std::string::npos);  // no folded tail
    kiln_test::check_jit_close(t, 1e-6);
  }
}

// Kernels over narrow rows (jit/lowerer.h kNarrowUnrollMax: at most 6
// elements). Elementwise (jit/lower.cpp: lower_group): where the innermost
// dims cannot merge with the outer ones (rows scaled by a column [N, 1]; a
// row broadcast along them, [N, 3] points minus their centroid [3], runs
// as one flat loop: tests/test_jit_periodic_rows.cpp), each
// position of the row is computed and stored at constant indices under the
// rows' loop, not in a loop of 3 run once a row. Row kernels
// (jit/lower_reduce.cpp): sums, products, maxima and minima over such rows
// (a softmax over 3 classes) are chains over the positions, no accumulator
// loops. Rows read from a wider tensor, or bodies with too much math, keep
// the loops. And codegen/llvm/wide_shuffles.h: the interleaved store of
// rows of 3 is native vector shuffles, not a lane-by-lane build. Pinned:
// the kernels' stores, accumulators and keys, the fallbacks, values against
// the reference evaluator and by hand (a max's NaN and signed zeros too).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kernel_builder.h"
#include "kiln/kiln.h"
#include "tests/jit_checks.h"

using namespace kiln;
using namespace kiln::test;
using kiln_test::output_kernel;

namespace {

Tensor data(const Shape& s, DType dt = kFloat32, double scale = 2.0) { return kiln_test::sine_leaf(s, dt, scale); }

std::string key(const Tensor& t) { return output_kernel(t).key(); }

int stores(const Tensor& t) { return kiln_test::innermost_stores(output_kernel(t)); }

}  // namespace

TEST_CASE("jit: narrow rows with a broadcast column store each position: a new N compiles nothing, a new width does") {
  // (a row operand broadcast along the rows, p - c, runs as one flat loop
  // instead: tests/test_jit_periodic_rows.cpp)
  const Tensor p = data({100, 3}), col = data({100, 1}, kFloat32, 0.5);
  CHECK(kiln_test::kernels(p * col) == 1);
  CHECK(stores(p * col) == 3);
  CHECK(kiln_test::innermost_constant(output_kernel(p * col)) == -1);  // no loop of 3 left
  CHECK(key(data({37, 3}) * data({37, 1})) == key(p * col));          // another N
  CHECK(key(data({100, 4}) * col) != key(p * col));                   // rows of 4
  CHECK(stores(data({100, 4}) * col) == 4);
  CHECK(stores(data({8, 50, 3}) * data({8, 1, 3})) == 3);  // a row broadcast along part of the outer dims
  CHECK(stores(data({50, 2, 3}) + data({50, 1, 1})) == 6);  // two dims of the row, one block
  CHECK(stores(data({50, 3, 1}) - data({50, 1, 1})) == 3);  // a size-1 dim after it
  CHECK(stores(data({100, 6}) - data({100, 1})) == 6);
  CHECK(stores(p * col - data({3})) == 3);  // a column and a row: not periodic
  // horizontal: two outputs, three positions each
  CHECK(kiln_test::innermost_stores(kiln_test::plan({p * col, p + col}).steps.back().code->ir) == 6);
}

TEST_CASE("jit: narrow rows keep their loop where unrolling does not pay") {
  const Tensor c = data({3});
  CHECK(stores(data({100, 7}) * data({100, 1})) == 1);   // more than 6 positions
  CHECK(stores(data({100, 16}) * data({100, 1})) == 1);  // a row of 16: one vector already
  CHECK(stores(data({100, 64}).narrow(1, 0, 3) * 2) == 1);  // rows of a wider tensor, a param stride
  CHECK(stores(data({100, 12}).narrow(1, 0, 3) - c) == 1);  // a constant stride of 12, not 3
  CHECK(stores(data({100, 12}).slice(1, 0, 12, 4) + c) == 1);
  CHECK(stores(data({100, 3}) + 1) == 1);  // no broadcast: one flat loop
  // math: a function counts 4, another op 1, at most 24 in all
  CHECK(stores((data({100, 4}) - data({100, 1})).exp()) == 4);  // 4 x (1 + 4)
  CHECK(stores((data({100, 5}) - data({100, 1})).exp()) == 1);  // 5 x (1 + 4)
  const Tensor x = data({100, 2}) - data({100, 1});
  CHECK(stores(x * 0.5 * (1 + (0.79788 * (x + 0.044715 * x * x * x)).tanh())) == 1);  // a GELU: 2 x 13
}

TEST_CASE("jit: narrow rows against the reference") {
  for (int64_t w : {2, 3, 4, 5, 6, 7}) {
    for (int64_t n : {1, 2, 5, 16, 17, 100, 1000}) {
      CAPTURE(w);
      CAPTURE(n);
      const Tensor p = data({n, w}), c = data({w}, kFloat32, 0.5), s = data({w}, kFloat32, 3.0) + 4;
      const Tensor col = data({n, 1}, kFloat32, 1.5);
      kiln_test::check_jit(p - c);
      kiln_test::check_jit((p - c) * s + 1);
      kiln_test::check_jit(p * col - c);
      kiln_test::check_jit(where(p > c, p, c * 2));
      kiln_test::check_jit((p >= c).to(kInt64) + (p < col).to(kInt64));  // comparisons, casts
      kiln_test::check_jit_close((p - c).exp(), 1e-6);
      kiln_test::check_jit_close(((p - c) * s).sigmoid() + 1, 1e-6);
      kiln_test::check_jit(data({3, n, w}) * data({3, 1, w}) + data({w}));
      kiln_test::check_jit(c - p);  // the broadcast operand first
    }
  }
  for (DType dt : {kFloat64, kInt32, kInt64, kFloat16, kBFloat16, kUInt8}) {
    CAPTURE(dt);
    const Tensor p = (data({61, 3}) * 9).to(dt), c = (data({3}) * 4).to(dt);
    kiln_test::check_jit(p - c);
    kiln_test::check_jit(p * c + p);
    kiln_test::check_jit((p - c).to(kFloat32) * 0.5);
  }
  kiln_test::check_jit(data({40, 2, 3}) + data({2, 3}));
  kiln_test::check_jit(data({40, 3, 1}) - data({3, 1}));
  kiln_test::check_jit(data({2, 40, 1, 3}) * data({2, 1, 1, 3}));
}

TEST_CASE("jit: narrow rows by hand, in place, horizontally and through a gradient") {
  // [[1, 2, 3], [4, 5, 6]] - [10, 20, 30], scaled by rows [2, 3]
  const Tensor p = tensor(std::vector<float>{1, 2, 3, 4, 5, 6}).reshape({2, 3});
  const Tensor c = tensor(std::vector<float>{10, 20, 30});
  const Tensor r = tensor(std::vector<float>{2, 3}).reshape({2, 1});
  CHECK((p - c).to_vector<float>() == std::vector<float>{-9, -18, -27, -6, -15, -24});
  CHECK(((p - c) * r).to_vector<float>() == std::vector<float>{-18, -36, -54, -18, -45, -72});
  // in place: y -= c (an assign writing y's own buffer)
  Tensor y = data({33, 3}).clone();
  const std::vector<float> before = y.to_vector<float>(), cv = c.to_vector<float>();
  y.sub_(c);
  const std::vector<float> after = y.to_vector<float>();
  for (size_t i = 0; i < after.size(); ++i) CHECK(after[i] == before[i] - cv[i % 3]);
  // two outputs of one kernel
  const Tensor q = data({50, 3});
  Tensor d = q - c, m = q * c;
  eval({d, m});
  const std::vector<float> qv = q.to_vector<float>(), dv = d.to_vector<float>(), mv = m.to_vector<float>();
  for (size_t i = 0; i < qv.size(); ++i) {
    CHECK(dv[i] == qv[i] - cv[i % 3]);
    CHECK(mv[i] == qv[i] * cv[i % 3]);
  }
  // d/dp and d/dc of sum(((p - c) * s)^2): 2 (p - c) s^2 and its negated column sums
  const Tensor pp = data({70, 3}).requires_grad_(), cc = data({3}, kFloat32, 0.5).requires_grad_();
  const Tensor s = data({3}, kFloat32, 1.0) + 2;
  const std::vector<Tensor> g = grad({((pp - cc) * s).square().sum()}, {pp, cc});
  kiln_test::close_to_reference(g[0], 1e-6);
  kiln_test::close_to_reference(g[1], 1e-5);
  const std::vector<float> pv = pp.to_vector<float>(), c2 = cc.to_vector<float>(), sv = s.to_vector<float>();
  const std::vector<float> g0 = g[0].to_vector<float>();
  CHECK(g0[7] == doctest::Approx(2.0 * (pv[7] - c2[1]) * sv[1] * sv[1]).epsilon(1e-6));
}

TEST_CASE("llvm: a narrow row's interleaved store is native vector shuffles") {
  KILN_SKIP_WITHOUT_LLVM();
  if (!host_has_avx512()) {
    MESSAGE("the host has no AVX-512 (LLVM's vector widths differ): test skipped");
    return;
  }
  const Tensor p = data({256, 3}), col = data({256, 1});
  const Tensor t = (p * col) * 2;
  const codegen::CompiledKernel ck = be().compile(output_kernel(t), true, true);
  REQUIRE(static_cast<bool>(ck.fn));
  CHECK(ck.llvm_ir.find("store <48 x float>") == std::string::npos);  // stored as three vectors
  CHECK(ck.llvm_ir.find("store <16 x float>") != std::string::npos);
  CHECK(ck.assembly.find("vinsertps") == std::string::npos);  // no lane-by-lane build
  CHECK(ck.assembly.find("vpermt2ps") != std::string::npos);
  kiln_test::check_jit(t);
}

namespace {

size_t accs(const Tensor& t) { return output_kernel(t).accs.size(); }

}  // namespace

TEST_CASE("jit: reductions over narrow rows are chains over the positions, no accumulator loops") {
  const Tensor p = data({100, 3}), q = data({100, 4});
  CHECK(kiln_test::kernels(p.softmax(1)) == 1);
  CHECK(accs(p.softmax(1)) == 0);
  CHECK(stores(p.softmax(1)) == 3);
  CHECK(accs(p.sum(1)) == 0);
  CHECK(stores(p.sum(1)) == 1);
  CHECK(accs(q.amax(1)) == 0);
  CHECK(accs(q.amin(1) + q.prod(1)) == 0);
  CHECK(stores(p - p.mean(1, true)) == 3);
  CHECK(accs(data({3, 100}).sum(0)) == 0);        // the reduced dim outer: rows read at unit steps
  CHECK(accs(data({5, 4, 30}).sum(1)) == 0);      // a middle dim
  CHECK(key(data({37, 3}).softmax(1)) == key(p.softmax(1)));  // another N: the same kernel
  // the loops stay: argmax, rows of 7, a log_softmax of 6 (its math: 6 exp and a log), rows of a wider tensor
  CHECK(accs(p.argmax(1)) == 1);
  CHECK(accs(data({100, 7}).sum(1)) == 1);
  CHECK(accs(data({100, 6}).log_softmax(1)) > 0);
  CHECK(accs(data({100, 64}).narrow(1, 0, 3).sum(1)) == 1);
  CHECK(accs((data({100, 3}) > 0).any(1)) == 1);  // (not a sum, product, max or min)
  // evaluated together, the rows' sum and max are one kernel (horizontal fusion)
  CHECK(kiln_test::plan({p.sum(1), p.amax(1)}).steps.size() == 1);
}

TEST_CASE("jit: reductions over narrow rows against the reference") {
  for (int64_t w : {2, 3, 4, 5, 6}) {
    for (int64_t n : {1, 2, 5, 17, 100}) {
      CAPTURE(w);
      CAPTURE(n);
      const Tensor p = data({n, w}), c = data({w}, kFloat32, 0.5);
      kiln_test::check_jit(p.sum(1));
      kiln_test::check_jit(p.prod(1));
      kiln_test::check_jit(p.amax(1) - p.amin(1));
      kiln_test::check_jit(p - p.mean(1, true));
      kiln_test::check_jit((p - c).square().sum(1, true).sqrt());
      kiln_test::check_jit(p.var(1));
      kiln_test::check_jit_close(p.softmax(1), 1e-6);
      kiln_test::check_jit_close(p.log_softmax(1), 1e-6);
      kiln_test::check_jit(data({w, n}).sum(0));
      kiln_test::check_jit(data({3, w, 7}).amax(1) + data({3, w, 7}).sum(1));
      kiln_test::check_jit(data({n, 2, 3}).sum({1, 2}));
    }
  }
  for (DType dt : {kFloat64, kInt32, kInt64, kFloat16, kBFloat16, kUInt8}) {
    CAPTURE(dt);
    const Tensor p = (data({41, 3}) * 9).to(dt);
    kiln_test::check_jit(p.sum(1));
    kiln_test::check_jit(p.amax(1));
    kiln_test::check_jit(p.amin(1));
    kiln_test::check_jit(p.prod(1));
  }
  // cross-entropy over 3 classes: values and the gradient
  const Tensor logits = data({50, 3}).requires_grad_();
  std::vector<int64_t> classes(50);
  for (size_t i = 0; i < classes.size(); ++i) classes[i] = static_cast<int64_t>(i * 7 % 3);
  const Tensor target = tensor(classes);
  const Tensor loss = cross_entropy(logits, target);
  kiln_test::close_to_reference(loss, 1e-6);
  kiln_test::close_to_reference(grad({loss}, {logits})[0], 1e-5);
}

TEST_CASE("jit: maxima and minima of narrow rows keep NaN and order -0 below +0, as the reference") {
  const float nan = std::nanf(""), inf = INFINITY;
  const Tensor x = tensor(std::vector<float>{0.f, -0.f, -1.f, -0.f, 0.f, -1.f, -0.f, -0.f, -2.f, nan, 1.f, 2.f,
                                             1.f, nan, 2.f, 3.f, 1.f, nan, -inf, -inf, -inf, 2.f, 5.f, 5.f})
                       .reshape({8, 3});
  for (const Tensor& r : {x.amax(1), x.amin(1)}) {
    CHECK(accs(r) == 0);
    const NodePtr n = r.impl()->node();  // (before r is evaluated: then it is its buffer)
    const std::vector<float> want = make_tensor(make_buffer_node(reference::evaluate({n})[0], n->shape)).to_vector<float>();
    const std::vector<float> got = r.to_vector<float>();
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      CAPTURE(i);
      CHECK(std::isnan(got[i]) == std::isnan(want[i]));
      if (!std::isnan(want[i])) {
        CHECK(got[i] == want[i]);
        CHECK(std::signbit(got[i]) == std::signbit(want[i]));
      }
    }
  }
  // by hand: max of (+0, -0) and of (-0, +0) is +0, min -0; a NaN anywhere wins
  const std::vector<float> mx = x.amax(1).to_vector<float>(), mn = x.amin(1).to_vector<float>();
  CHECK((mx[0] == 0 && !std::signbit(mx[0])));
  CHECK((mx[1] == 0 && !std::signbit(mx[1])));
  CHECK((mx[2] == 0 && std::signbit(mx[2])));
  CHECK((mn[0] == -1 && mn[2] == -2));
  CHECK((std::isnan(mx[3]) && std::isnan(mx[4]) && std::isnan(mx[5]) && std::isnan(mn[5])));
  CHECK((mx[6] == -inf && mx[7] == 5 && mn[7] == 2));
  const Tensor z = tensor(std::vector<float>{0.f, -0.f, -0.f, 0.f}).reshape({2, 2});
  const std::vector<float> zmin = z.amin(1).to_vector<float>();
  CHECK((std::signbit(zmin[0]) && std::signbit(zmin[1])));
}

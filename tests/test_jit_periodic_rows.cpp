// Elementwise kernels over rows of at most 256 elements that read a row
// operand broadcast along the rows (jit/lower_periodic.cpp): `p - c` of
// [N, 3] points and a [3] centre, `(x - mean) / std` over [N, 10]. One
// flat loop over the whole tensor in spans, the row operand read from a
// local holding its row repeated, filled once a call. Pinned: the kernel's
// form (one local per row operand, one store a position, no index
// division), a key shared by every N and every width up to 64, the forms
// it leaves to others, and values against the reference evaluator (both
// the compiled kernel and the kernel-IR interpreter) and by hand.
#include <doctest/doctest.h>

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

// The locals a kernel fills (a row operand's repeats each).
int locals(const jit::Kernel& k) {
  int n = 0;
  for (const jit::BufferArg& b : k.buffers) n += b.local() && b.local_rows == 1;
  return n;
}

// The stores of the parallel loop's innermost loop (the spans' positions).
int span_stores(const jit::Kernel& k) {
  const jit::Stmt* loop = nullptr;
  for (const jit::Stmt& s : k.body)
    if (s.kind == jit::StmtKind::Loop && s.parallel) loop = &s;
  if (!loop) return -1;
  while (!loop->body.empty() && loop->body.front().kind == jit::StmtKind::Loop) loop = &loop->body.front();
  int n = 0;
  for (const jit::Stmt& s : loop->body) n += s.kind == jit::StmtKind::Store;
  return n;
}

bool divides_indices(const jit::Kernel& k) {
  for (const jit::Value& v : k.values)
    if ((v.op == jit::VOp::Div || v.op == jit::VOp::Mod) && v.dtype == kInt64) return true;
  return false;
}

}  // namespace

TEST_CASE("jit: a row broadcast along narrow rows is one flat loop reading the row from a local") {
  const Tensor p = data({100, 3}), c = data({3}, kFloat32, 0.5);
  CHECK(kiln_test::kernels(p - c) == 1);
  const jit::Kernel& k = output_kernel(p - c);
  CHECK(locals(k) == 1);
  CHECK(span_stores(k) == 1);
  CHECK_FALSE(divides_indices(k));  // every read contiguous in the flat position
  // one kernel for every N and every width up to 64 (wider: whose
  // multiple of 16 lanes is at most 1024): the sizes are params
  const std::string key = k.key();
  CHECK(output_kernel(data({37, 3}) - c).key() == key);
  for (int64_t w : {2, 4, 10, 16, 56, 63, 64, 100, 200, 256}) {
    CAPTURE(w);
    CHECK(output_kernel(data({100, w}) - data({w})).key() == key);
  }
  for (int64_t w : {65, 250, 257}) {  // multiples of 1040, 2000; a row too wide: their loops
    CAPTURE(w);
    CHECK(output_kernel(data({100, w}) - data({w})).key() != key);
    CHECK(locals(output_kernel(data({100, w}) - data({w}))) == 0);
  }
  // (x - mean) / std: two row operands, two locals, one store
  const Tensor x = data({1000, 10});
  const jit::Kernel& z = output_kernel((x - data({10})) / (data({10}, kFloat32, 1.0) + 3));
  CHECK(locals(z) == 2);
  CHECK(span_stores(z) == 1);
  // a row of two dims, a size-1 dim after the row, a row of [N, 3] broadcast along B
  CHECK(locals(output_kernel(data({50, 2, 3}) + data({2, 3}))) == 1);
  CHECK(locals(output_kernel(data({50, 3, 1}) - data({3, 1}))) == 1);
  CHECK(locals(output_kernel(data({4, 5, 3}) * data({5, 3}))) == 1);
  // horizontal: two outputs of one kernel, each a store
  const jit::Schedule both = kiln_test::plan({p - c, p * c});
  REQUIRE(both.steps.size() == 1);
  CHECK(span_stores(both.steps.back().code->ir) == 2);
}

TEST_CASE("jit: row operands that do not repeat by rows keep the other forms") {
  const Tensor p = data({100, 3});
  CHECK(locals(output_kernel(p * data({100, 1}))) == 0);                  // a column
  CHECK(locals(output_kernel(p * data({100, 1}) - data({3}))) == 0);      // a column and a row
  CHECK(locals(output_kernel(data({8, 50, 3}) * data({8, 1, 3}))) == 0);  // broadcast along part of the outer dims
  CHECK(locals(output_kernel(p + 1)) == 0);                               // no broadcast: one flat loop already
  CHECK(locals(output_kernel(data({100, 64}).narrow(1, 0, 3) - data({3}))) == 0);  // rows of a wider tensor
  CHECK(locals(output_kernel(data({1, 3}) - data({3}))) == 0);  // one row
  CHECK(locals(output_kernel(p.sum(1, true) - data({100, 1}))) == 0);
  // at most 8 row operands (a local of 4096 elements each in the frame)
  Tensor eight = p, nine = p;
  for (int j = 0; j < 8; ++j) eight = eight * data({3}, kFloat32, 1.0 + j);
  for (int j = 0; j < 9; ++j) nine = nine * data({3}, kFloat32, 1.0 + j);
  CHECK(locals(output_kernel(eight)) == 8);
  CHECK(locals(output_kernel(nine)) == 0);
  kiln_test::check_jit(nine);
}

TEST_CASE("jit: rows with a broadcast row operand against the reference") {
  for (int64_t w : {2, 3, 5, 7, 8, 10, 15, 16, 20, 31, 56, 63, 64, 65, 100, 200, 257}) {
    for (int64_t n : {1, 2, 5, 17, 100, 301}) {
      CAPTURE(w);
      CAPTURE(n);
      const Tensor p = data({n, w}), c = data({w}, kFloat32, 0.5), s = data({w}, kFloat32, 3.0) + 4;
      kiln_test::check_jit(p - c);
      kiln_test::check_jit((p - c) / s);
      kiln_test::check_jit(c - p * 2);
      kiln_test::check_jit(where(c > 0, p, c * s));  // a Bool row operand beside float ones
      kiln_test::check_jit((p >= c).to(kInt64) * 3 + 1);
      kiln_test::check_jit_close((p - c * s).exp(), 1e-6);  // the row operand's own math, once a call
      kiln_test::check_jit(data({3, n, w}) + data({n, w}));   // a row of two dims
    }
  }
  // many spans, the last one partial, on every thread: [50000, 3], [7001, 10], [999, 200]
  kiln_test::check_jit(data({50000, 3}) - data({3}));
  kiln_test::check_jit_close((data({7001, 10}) * data({10}) + data({10}, kFloat32, 0.3)).tanh(), 1e-6);
  kiln_test::check_jit(data({999, 200}) - data({200}));
  // statistics over the rows (one row kernel walking the columns, or stored)
  const Tensor f = data({1000, 10});
  kiln_test::close_to_reference(f - f.mean(0), 1e-6);
  kiln_test::close_to_reference((f - f.mean(0)) / f.std(0), 1e-5);
  kiln_test::check_jit((data({50, 3}) - data({3})).reshape({150}));  // a reshape of the rows as the output
  kiln_test::check_jit(data({20, 30, 2, 3}) * data({2, 3}) - 1);
  kiln_test::check_jit(data({61, 3}) + randn({61, 3}) * data({3}));  // random numbers at the flat position
  for (DType dt : {kFloat64, kInt32, kInt64, kFloat16, kBFloat16, kUInt8, kBool}) {
    CAPTURE(dt);
    const Tensor p = (data({61, 7}) * 9).to(dt), c = (data({7}) * 4).to(dt);
    kiln_test::check_jit(p + c);
    kiln_test::check_jit(p * c + p);
    kiln_test::check_jit((p.to(kFloat32) - c.to(kFloat32)) * 0.5);
  }
}

TEST_CASE("jit: rows with a broadcast row operand by hand, in place and through a gradient") {
  // [[1, 2, 3], [4, 5, 6]] - [10, 20, 30]
  const Tensor p = tensor(std::vector<float>{1, 2, 3, 4, 5, 6}).reshape({2, 3});
  const Tensor c = tensor(std::vector<float>{10, 20, 30});
  CHECK((p - c).to_vector<float>() == std::vector<float>{-9, -18, -27, -6, -15, -24});
  CHECK((c / p).to_vector<float>() == std::vector<float>{10, 10, 10, 2.5, 4, 5});
  // 2500 rows of 10 (several spans): element i is x[i] - m[i % 10]
  const Tensor x = data({2500, 10}), m = data({10}, kFloat32, 0.5);
  const std::vector<float> xv = x.to_vector<float>(), mv = m.to_vector<float>(), d = (x - m).to_vector<float>();
  REQUIRE(d.size() == xv.size());
  size_t wrong = 0;
  for (size_t i = 0; i < d.size(); ++i) wrong += d[i] != xv[i] - mv[i % 10];
  CHECK(wrong == 0);
  // in place: y -= m writes y's own buffer
  Tensor y = x.clone();
  y.sub_(m);
  CHECK(y.to_vector<float>() == d);
  // d/dx and d/dm of sum((x - m)^2 / s): 2 (x - m) / s and its negated column sums
  const Tensor xx = data({300, 5}).requires_grad_(), mm = data({5}, kFloat32, 0.5).requires_grad_();
  const Tensor s = data({5}, kFloat32, 1.0) + 2;
  const std::vector<Tensor> g = grad({((xx - mm).square() / s).sum()}, {xx, mm});
  kiln_test::close_to_reference(g[0], 1e-6);
  kiln_test::close_to_reference(g[1], 1e-5);
  const std::vector<float> xs = xx.to_vector<float>(), ms = mm.to_vector<float>(), sv = s.to_vector<float>();
  CHECK(g[0].to_vector<float>()[13] == doctest::Approx(2.0 * (xs[13] - ms[3]) / sv[3]).epsilon(1e-6));
}

// Pins where a small column reduction (a reduced dim that is not the
// innermost, core/reduce.cpp's blocked_column_reduction) runs as levels of
// contiguous row-block combinations rather than one kernel walking down
// each column: from 16384 elements always, from 2048 for a max or min and
// for a reduction of exp-like math (whose single kernel is a scalar chain
// per column); over rows narrower than 16 elements, for sums and products
// only. Values against the reference evaluator and by hand.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "tests/jit_checks.h"

using namespace kiln;
using kiln_test::check_jit;
using kiln_test::check_jit_close;
using kiln_test::kernels;

namespace {

Tensor data(const Shape& s, DType dt = kFloat32, double scale = 1.0) { return kiln_test::sine_leaf(s, dt, scale); }

// Whether the first kernel t schedules is a stage of a blocked reduction.
bool blocked(const Tensor& t) {
  const jit::Schedule p = jit::schedule({t.impl()->storage->node}, jit::ScheduleOptions{});
  return p.steps.front().why.cut == jit::Cut::ByDesign;
}

}  // namespace

TEST_CASE("jit column reduction: small maxima and reductions of exp-like math run as levels, small sums as one kernel") {
  const Tensor x = data({64, 64});  // 4096 elements
  CHECK(blocked(x.amax({0})));
  CHECK(blocked(x.amin({0})));
  CHECK(blocked(x.exp().sum(0)));
  CHECK(blocked(x.softmax(0)));
  CHECK(blocked(x.log_softmax(0)));
  check_jit(x.amax({0}));
  check_jit(x.amin({0}));
  check_jit_close(x.exp().sum(0), 1e-6);
  check_jit_close(x.softmax(0), 1e-6);
  check_jit_close(x.log_softmax(0), 1e-6);
  // a plain sum's single kernel costs less than the levels' launches
  CHECK(!blocked(x.sum(0)));
  CHECK(kernels(x.sum(0)) == 1);
  CHECK(kernels((x * 2.0f + 1.0f).sum(0)) == 1);
  check_jit(x.sum(0));
  // under 2048 elements everything stays one kernel
  const Tensor tiny = data({32, 32});
  CHECK(kernels(tiny.amax({0})) == 1);
  CHECK(kernels(tiny.softmax(0)) == 1);
  check_jit_close(tiny.softmax(0), 1e-6);
  // NaN wins a column's max in any level
  Tensor y = data({64, 40}).clone();
  y.index({37, 3}) = std::nan("");
  const std::vector<float> m = y.amax({0}).to_vector<float>();
  CHECK(std::isnan(m[3]));
  CHECK(!std::isnan(m[2]));
  check_jit(y.amax({0}));
  // By hand: the max of column j of sin(0.7 (64 i + j) + 0.3) over i
  const std::vector<float> got = x.amax({0}).to_vector<float>();
  for (int j = 0; j < 64; ++j) {
    double want = -2;
    for (int i = 0; i < 64; ++i) want = std::max(want, std::sin(0.7 * (64 * i + j) + 0.3));
    CHECK(got[static_cast<size_t>(j)] == static_cast<float>(want));
  }
}

TEST_CASE("jit column reduction: narrow rows' sums run as levels, their maxima and exp-like math as one kernel") {
  // [N, 3] points and [N, 12] rows, 16384 elements and more: a sum or
  // product walks x once in levels, not once per column
  const Tensor p = data({8192, 3}), q = data({2048, 12}), b = data({64, 256, 3});
  CHECK(blocked(p.sum(0)));
  CHECK(blocked(p.mean(0)));
  CHECK(blocked(q.sum(0)));
  CHECK(blocked((q * 2.0f).prod(0)));
  CHECK(blocked(b.sum(1)));
  check_jit_close(p.sum(0), 1e-6);
  check_jit_close(p.mean(0), 1e-6);
  check_jit_close(q.sum(0), 1e-6);
  check_jit_close(b.sum(1), 1e-6);
  check_jit_close(b.sum({0, 1}), 1e-6);
  check_jit_close(q.var(0), 1e-5);
  check_jit_close((q * 0.5f + 1.0f).prod(0), 1e-5);
  // a max, a min and a reduction of exp stay one kernel (the levels' inner
  // loop of 3 would run them an element at a time)
  CHECK(kernels(p.amax({0})) == 1);
  CHECK(kernels(p.amin({0})) == 1);
  CHECK(kernels(p.exp().sum(0)) == 1);
  check_jit(p.amax({0}));
  check_jit_close(p.exp().sum(0), 1e-6);
  // under 16384 elements a narrow sum stays one kernel
  CHECK(kernels(data({4000, 3}).sum(0)) == 1);
  // By hand: column j of sin(0.7 (3 i + j) + 0.3) summed over i, in double
  const std::vector<float> got = p.sum(0).to_vector<float>();
  for (int j = 0; j < 3; ++j) {
    double want = 0;
    for (int i = 0; i < 8192; ++i) want += std::sin(0.7 * (3 * i + j) + 0.3);
    CHECK(got[static_cast<size_t>(j)] == doctest::Approx(want).epsilon(1e-5));
  }
}

// Pins where a small column reduction (a reduced dim that is not the
// innermost, core/reduce.cpp's blocked_column_reduction) runs as levels of
// contiguous row-block combinations rather than one kernel walking down
// each column: from 16384 elements always, from 2048 for a max or min and
// for a reduction of exp-like math (whose single kernel is a scalar chain
// per column). Values against the reference evaluator and by hand.
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

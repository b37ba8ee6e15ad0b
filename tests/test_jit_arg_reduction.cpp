// Pins argmax / argmin and max(dim) / min(dim)'s indices along 16 elements
// or more (core/reduce.cpp, first_extreme_position): the extreme, then the
// first position holding it (or the first NaN), two passes that vectorize,
// in place of a position-keeping reduction that runs one element at a time.
// Values against the reference evaluator (its ArgMax: the first element no
// later one beats) and by hand.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "tests/jit_checks.h"

using namespace kiln;
using kiln_test::check_jit;
using kiln_test::kernels;

namespace {

Tensor data(const Shape& s, DType dt = kFloat32, double scale = 1.0) { return kiln_test::sine_leaf(s, dt, scale); }

// Whether any kernel of t's plan keeps a position (an ArgMax / ArgMin node).
bool keeps_positions(const Tensor& t) {
  for (const jit::Step& s : jit::schedule({t.impl()->storage->node}, jit::ScheduleOptions{}).steps)
    for (const jit::Accumulator& a : s.code->ir.accs)
      if (jit::keeps_position(a.combiner)) return true;
  return false;
}

}  // namespace

TEST_CASE("jit arg reduction: argmax and argmin along long rows are the extreme, then its first position") {
  const Tensor x = data({64, 100});
  const Tensor am = x.argmax(1), an = x.argmin(1);
  CHECK(kernels(am) == 1);  // one row kernel: the max loop, then the position loop
  CHECK(!keeps_positions(am));
  check_jit(am);
  check_jit(an);
  check_jit(x.argmax(1, true));
  check_jit(x.argmax(0));  // a column reduction: both passes in levels
  CHECK(!keeps_positions(x.argmax(0)));
  check_jit(x.argmax());   // flattened
  // By hand: the first maximum of each row
  const std::vector<int64_t> got = am.to_vector<int64_t>();
  for (int r = 0; r < 64; ++r) {
    int best = 0;
    for (int c = 1; c < 100; ++c)
      if (std::sin(0.7 * (100 * r + c) + 0.3) > std::sin(0.7 * (100 * r + best) + 0.3)) best = c;
    CHECK(got[static_cast<size_t>(r)] == best);
  }
  // max(dim): values and indices from one max
  auto [values, indices] = x.max(1);
  CHECK(values.sizes() == Shape{64});
  check_jit(values);
  check_jit(indices);
  CHECK(indices.to_vector<int64_t>() == got);
  auto [lo, at] = x.min(0, true);
  CHECK(at.sizes() == Shape{1, 100});
  check_jit(lo);
  check_jit(at);
  // integers and float16
  check_jit(data({8, 40}, kInt64, 50).argmax(1));
  check_jit(data({8, 40}, kInt32, 50).argmin(1));
  check_jit(data({8, 40}, kFloat16).argmax(1));
  check_jit(data({8, 40}, kBFloat16).argmin(0));
  // short rows keep the one position-keeping reduction
  CHECK(keeps_positions(data({64, 8}).argmax(1)));
  check_jit(data({64, 8}).argmax(1));
}

TEST_CASE("jit arg reduction: ties go to the first, -0 and +0 tie, the first NaN wins") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> v(4 * 20, 0.0);
  for (int c = 0; c < 20; ++c) v[c] = c % 5;            // row 0: max 4 first at 4, min 0 at 0
  for (int c = 0; c < 20; ++c) v[20 + c] = c == 7 ? 0.0 : -0.0;  // row 1: -0 but +0 at 7: all tie
  for (int c = 0; c < 20; ++c) v[40 + c] = c;            // row 2: a NaN at 11 and 15
  v[40 + 11] = nan, v[40 + 15] = nan;
  for (int c = 0; c < 20; ++c) v[60 + c] = -1.0;         // row 3: -inf at 6, +inf at 9
  v[60 + 6] = -std::numeric_limits<double>::infinity(), v[60 + 9] = std::numeric_limits<double>::infinity();
  const Tensor x = tensor(v).reshape({4, 20}).to(kFloat32);
  CHECK(x.argmax(1).to_vector<int64_t>() == std::vector<int64_t>{4, 0, 11, 9});
  CHECK(x.argmin(1).to_vector<int64_t>() == std::vector<int64_t>{0, 0, 11, 6});
  check_jit(x.argmax(1));
  check_jit(x.argmin(1));
  auto [values, indices] = x.max(1);
  CHECK(indices.to_vector<int64_t>() == std::vector<int64_t>{4, 0, 11, 9});
  const std::vector<float> mv = values.to_vector<float>();
  CHECK(mv[0] == 4.0f);
  CHECK(std::isnan(mv[2]));
  CHECK(mv[3] == std::numeric_limits<float>::infinity());
  // the same along dim 0 (a column reduction) and flattened
  check_jit(x.t().contiguous().argmax(0));
  CHECK(x.t().contiguous().argmax(0).to_vector<int64_t>() == std::vector<int64_t>{4, 0, 11, 9});
  CHECK(x.argmax().item<int64_t>() == 40 + 11);
}

TEST_CASE("jit arg reduction: along short rows (one position-keeping loop) ties, -0 and +0, NaN and infinities as PyTorch") {
  // PyTorch 1.13's argmax / argmin / max(1) / min(1) indices of these rows,
  // the same in float32, float64, float16 and bfloat16. The JIT compares
  // integer keys here (lower_kernel.cpp, compares_keys): each case is a key
  // rule (equal values, the two zeros, the first NaN, a row of one infinity).
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const std::vector<double> v = {1, 4, 2, 4, 0, 3, 4, 1,                              // ties
                                 -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0,          // zeros tie
                                 1, 2, nan, 5, nan, 7, 0, -1,                         // the first NaN
                                 -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf,      // the identity's neighbours
                                 inf, inf, inf, inf, inf, inf, inf, inf,
                                 -1, -inf, -1, inf, -1, -inf, inf, -1,
                                 nan, 1, 2, 3, -4, nan, 0, 0};
  const std::vector<int64_t> argmax = {1, 0, 2, 0, 0, 3, 0}, argmin = {4, 0, 2, 0, 0, 1, 0};
  for (DType dt : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
    CAPTURE(dtype_name(dt));
    const Tensor x = tensor(v).reshape({7, 8}).to(dt);
    CHECK(keeps_positions(x.argmax(1)));
    CHECK(x.argmax(1).to_vector<int64_t>() == argmax);
    CHECK(x.argmin(1).to_vector<int64_t>() == argmin);
    CHECK(std::get<1>(x.max(1)).to_vector<int64_t>() == argmax);
    CHECK(std::get<1>(x.min(1)).to_vector<int64_t>() == argmin);
    check_jit(x.argmax(1));
    check_jit(x.argmin(1));
    check_jit(std::get<0>(x.max(1)));
  }
}

// Pins where a small column reduction (a reduced dim that is not the
// innermost, core/reduction_forms.cpp's blocked_column_reduction) runs as
// levels of contiguous row-block combinations rather than one kernel
// walking down each column: from 16384 elements always, from 2048 for a
// max or min and for a reduction of exp-like math (whose single kernel is
// a scalar chain per column). Rows narrower than 16 elements read in
// row-major order (stored, or computed from such reads, per-column
// operands and single values) run as rows of lcm(w, 16); others take the
// levels for sums and products only. Values against the reference
// evaluator and, for the rewrites themselves (which the reference
// evaluator runs too), by hand.
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
  // a max, a min and a reduction of exp of rows that cannot be read as
  // wider ones (random numbers: below) stay one kernel (the levels' inner
  // loop of 3 would run them an element at a time)
  const Tensor pc = p * rand({8192, 3});
  CHECK(kernels(pc.amax({0})) == 1);
  CHECK(kernels(pc.amin({0})) == 1);
  CHECK(kernels(pc.exp().sum(0)) == 1);
  check_jit(pc.amax({0}));
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

TEST_CASE("jit column reduction: narrow rows of stored memory reduce over rows of lcm(w, 16)") {
  // [N, w] stored, w < 16: the first q * k rows viewed as [q, L], L =
  // lcm(w, 16), k = L / w, reduced in levels over full vectors; then L
  // folds into w and the last N - q * k rows are combined
  const Tensor p = data({8192, 3}).eval(), f = data({5000, 10}).eval();
  auto first_level = [](const Tensor& t) {
    const jit::Schedule s = jit::schedule({t.impl()->storage->node}, jit::ScheduleOptions{});
    return s.steps.front().outputs.front()->shape;
  };
  CHECK(blocked(p.amax({0})));
  CHECK(blocked(p.amin({0})));
  CHECK(blocked(p.sum(0)));
  // 8192 rows of 3: 512 of 48, 16 to a level's row (stored rows)
  CHECK(first_level(p.amax({0})) == Shape{1, 32, 48});
  CHECK(first_level(p.sum(0)) == Shape{1, 32, 48});
  CHECK(first_level(f.amax({0})) == Shape{1, 39, 80});  // 5000 rows of 10: 625 of 80 (and none left)
  // rows computed inline: 8 to a level's row, 16 where they are a few
  // additions and products of stored rows (core/reduction_forms.cpp)
  CHECK(first_level((p * 2.0f).exp().sum(0)) == Shape{1, 64, 48});
  CHECK(first_level((p * 2.0f).sum(0)) == Shape{1, 32, 48});
  // rows of random numbers keep one kernel for a max (drawn at another
  // position, they would be other numbers)
  CHECK(kernels((p * rand({8192, 3})).amax({0})) == 1);
  // small inputs keep it too: a max under 8192 elements, exp-like math
  // under 4096 (sums under 16384, above)
  CHECK(kernels(data({2700, 3}).eval().amax({0})) == 1);  // 8100
  CHECK(kernels(data({2800, 3}).eval().amax({0})) > 1);   // 8400
  CHECK(kernels(data({1300, 3}).eval().softmax(0)) == 1);  // 3900
  CHECK(kernels(data({1400, 3}).eval().softmax(0)) > 1);   // 4200
  check_jit(p.amax({0}));
  check_jit(p.amin({0}));
  check_jit_close(p.sum(0), 1e-6);
  check_jit_close(p.mean(0), 1e-6);
  // Every width under 16, rows with and without a remainder, outer dims,
  // dtypes whose max is exact and sums kept in float64 or int64: against
  // the columns' max, min and sum worked out here in double (the reference
  // evaluator runs the same rewritten graph, so it checks the kernels, not
  // the rewrite).
  auto by_hand = [](const Tensor& x, double eps) {
    const int64_t w = x.sizes().back(), rows = x.sizes()[x.dim() - 2], outer = x.numel() / (w * rows);
    const std::vector<double> v = x.to(kFloat64).to_vector<double>();
    const std::vector<double> mx = x.amax({-2}).to(kFloat64).to_vector<double>(),
                              mn = x.amin({-2}).to(kFloat64).to_vector<double>(),
                              sm = x.sum(-2).to(kFloat64).to_vector<double>();
    int64_t wrong = 0;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t c = 0; c < w; ++c) {
        double hi = -1e300, lo = 1e300, sum = 0;
        for (int64_t i = 0; i < rows; ++i) {
          const double e = v[static_cast<size_t>((o * rows + i) * w + c)];
          hi = std::max(hi, e);
          lo = std::min(lo, e);
          sum += e;
        }
        const size_t at = static_cast<size_t>(o * w + c);
        wrong += mx[at] != hi || mn[at] != lo || std::abs(sm[at] - sum) > eps * (1 + std::abs(sum));
      }
    CHECK(wrong == 0);
  };
  for (int64_t w = 2; w < 16; ++w)
    for (int64_t n : {int64_t{4096}, int64_t{4099}, int64_t{6007}}) {
      CAPTURE(w);
      CAPTURE(n);
      const Tensor x = data({n, w}).eval();
      by_hand(x, 1e-6);
      check_jit(x.amax({0}));
      check_jit_close(x.sum(0), 1e-6);
    }
  const Tensor b = data({7, 2001, 3}).eval();
  by_hand(b, 1e-6);
  check_jit(b.amax({1}));
  // float16 / bfloat16 sums are rounded to their 11 / 8 bits
  for (DType dt : {kFloat64, kFloat16, kBFloat16, kInt32, kInt64}) {
    CAPTURE(dt);
    const Tensor x = data({4001, 5}, dt, 1000.0).eval();
    by_hand(x, dt == kFloat16 ? 1e-3 : dt == kBFloat16 ? 8e-3 : 1e-12);
    check_jit(x.amin({0}));
  }
  // NaN in any part: the wide rows, a level's leftover, the last rows
  for (int64_t at : {int64_t{17}, int64_t{4090}, int64_t{4098}}) {
    CAPTURE(at);
    Tensor y = data({4099, 3}).clone();
    y.index({at, 1}) = std::nan("");
    y.eval();
    const std::vector<float> m = y.amax({0}).to_vector<float>(), s = y.sum(0).to_vector<float>();
    CHECK(std::isnan(m[1]));
    CHECK(!std::isnan(m[0]));
    CHECK(!std::isnan(m[2]));
    CHECK(std::isnan(s[1]));
    check_jit(y.amax({0}));
  }
  // By hand: the max and the sum of column j of sin(0.7 (3 i + j) + 0.3)
  // over 8192 rows, in double
  const std::vector<float> mx = p.amax({0}).to_vector<float>(), sm = p.sum(0).to_vector<float>();
  for (int j = 0; j < 3; ++j) {
    double want_max = -2, want_sum = 0;
    for (int i = 0; i < 8192; ++i) {
      const double v = static_cast<double>(static_cast<float>(std::sin(0.7 * (3 * i + j) + 0.3)));
      want_max = std::max(want_max, v);
      want_sum += v;
    }
    CHECK(mx[static_cast<size_t>(j)] == static_cast<float>(want_max));
    CHECK(sm[static_cast<size_t>(j)] == doctest::Approx(want_sum).epsilon(1e-6));
  }
}

TEST_CASE("jit column reduction: computed narrow rows (var, softmax, a column operand) reduce as wide rows") {
  // x computed from stored rows, a per-column operand broadcast along the
  // rows (a column mean, a centre) and single values: rebuilt over rows of
  // L = lcm(w, 16), each per-column operand its row repeated (stored)
  const Tensor f = data({5000, 10}).eval(), p = data({8192, 3}).eval(), c = data({3}).eval();
  // (the first levels of shape `computed`, 8 rows to a level's row, or of
  // `stored`, 16: the reduction reads x's own rows)
  auto first_levels = [](const Tensor& t, const Shape& computed, const Shape& stored = Shape{}) {
    const jit::Schedule s = jit::schedule({t.impl()->storage->node}, jit::ScheduleOptions{});
    int n = 0;
    for (const jit::Step& st : s.steps)
      n += st.outputs.front()->shape == computed || st.outputs.front()->shape == stored;
    return n;
  };
  // float32's var in one pass: the sums of d and d * d in one kernel
  // (core/reduce.cpp); float64's the mean's, then the squared deviations'
  CHECK(first_levels(f.var(0), Shape{1, 78, 80}, Shape{1, 39, 80}) == 1);
  CHECK(first_levels(f.to(kFloat64).eval().var(0), Shape{1, 78, 80}, Shape{1, 39, 80}) == 2);
  CHECK(first_levels(p.softmax(0), Shape{1, 64, 48}, Shape{1, 32, 48}) == 2);  // the max's, then the exp sum's
  CHECK(first_levels((p - c).abs().amax({0}), Shape{1, 32, 48}) == 1);  // cheap rows: 16 a level
  CHECK(first_levels((p * 0.5f).exp().sum(0), Shape{1, 64, 48}) == 1);
  // By hand, in double, for every width under 16 and rows with a remainder
  for (int64_t w = 2; w < 16; ++w) {
    CAPTURE(w);
    const int64_t n = 4099;
    const Tensor x = data({n, w}).eval(), col = data({w}, kFloat32, 2.0).eval();
    const std::vector<double> v = x.to(kFloat64).to_vector<double>(), cv = col.to(kFloat64).to_vector<double>();
    const std::vector<double> var = x.var(0).to(kFloat64).to_vector<double>(),
                              far = (x - col).abs().amax({0}).to(kFloat64).to_vector<double>(),
                              sm = x.softmax(0).to(kFloat64).to_vector<double>();
    int64_t wrong = 0;
    for (int64_t j = 0; j < w; ++j) {
      double mean = 0, hi = -1e300, far_j = 0;
      for (int64_t i = 0; i < n; ++i) {
        const double e = v[static_cast<size_t>(i * w + j)];
        mean += e;
        hi = std::max(hi, e);
        far_j = std::max(far_j, std::abs(static_cast<double>(static_cast<float>(e - cv[static_cast<size_t>(j)]))));
      }
      mean /= static_cast<double>(n);
      double ss = 0, es = 0;
      for (int64_t i = 0; i < n; ++i) {
        const double e = v[static_cast<size_t>(i * w + j)];
        ss += (e - mean) * (e - mean);
        es += std::exp(e - hi);
      }
      const double want_var = ss / static_cast<double>(n - 1);
      wrong += std::abs(var[static_cast<size_t>(j)] - want_var) > 1e-5 * want_var;
      wrong += far[static_cast<size_t>(j)] != far_j;
      for (int64_t i = 0; i < n; i += 13) {
        const double want = std::exp(v[static_cast<size_t>(i * w + j)] - hi) / es;
        wrong += std::abs(sm[static_cast<size_t>(i * w + j)] - want) > 2e-6 * want;
      }
    }
    CHECK(wrong == 0);
  }
  // a mean per batch ([7, 1, 3], varying along the outer dim): each
  // batch's row repeated over its wide row; by hand
  const Tensor b = data({7, 2001, 3}).eval();
  CHECK(first_levels(b.var(1), Shape{7, 15, 48}, Shape{7, 7, 48}) == 1);  // 2001 rows of 3: 125 of 48 and 1 left
  {
    const std::vector<double> v = b.to(kFloat64).to_vector<double>();
    const std::vector<double> var = b.var(1).to(kFloat64).to_vector<double>(),
                              far = (b - b.mean(1, true)).abs().amax({1}).to(kFloat64).to_vector<double>();
    int64_t wrong = 0;
    for (int64_t o = 0; o < 7; ++o)
      for (int64_t j = 0; j < 3; ++j) {
        auto at = [&](int64_t i) { return v[static_cast<size_t>((o * 2001 + i) * 3 + j)]; };
        double mean = 0;
        for (int64_t i = 0; i < 2001; ++i) mean += at(i);
        mean /= 2001.0;
        double ss = 0, far_j = 0;
        for (int64_t i = 0; i < 2001; ++i) {
          ss += (at(i) - mean) * (at(i) - mean);
          far_j = std::max(far_j, std::abs(at(i) - mean));
        }
        const size_t k = static_cast<size_t>(o * 3 + j);
        wrong += std::abs(var[k] - ss / 2000.0) > 1e-5 * ss / 2000.0;
        wrong += std::abs(far[k] - far_j) > 1e-6;  // the mean rounded to float32 first
      }
    CHECK(wrong == 0);
  }
  // a column operand broadcast along outer dims too, against the reference
  // evaluator
  kiln_test::check_jit_close((b - c).abs().amax({1}), 1e-6);
  kiln_test::check_jit_close(b.var(1), 1e-5);
  kiln_test::check_jit_close(b.softmax(1), 1e-5);
  kiln_test::check_jit_close(p.softmax(0), 1e-5);
  kiln_test::check_jit_close(f.std(0), 1e-5);
}

TEST_CASE("jit column reduction: a reduction of the same node built twice is one node, computed once") {
  // x.mean(0) beside x.std(0) of float64: the two-pass variance builds x's
  // mean too
  const Tensor x = data({5000, 10}, kFloat64).eval();
  const Tensor a = x.sum(0), b = x.sum(0), c = x.sum(0, true);
  const Node* ra = a.impl()->storage->node->inputs[0].get();
  CHECK(ra == b.impl()->storage->node->inputs[0].get());
  CHECK(ra == c.impl()->storage->node.get());  // keepdim: the reduction itself
  CHECK(ra != x.sum(1).impl()->storage->node->inputs[0].get());
  CHECK(ra != x.to(kFloat32).sum(0).impl()->storage->node->inputs[0].get());
  // the standardization: one mean's levels (5000 rows of 10 as 625 of 80:
  // a first level of [1, 39, 80] over x's rows, of [1, 78, 80] over
  // computed ones) and the squared deviations', as std's. First levels
  // stored, whether in a kernel of their own or merged with another's:
  auto first_levels = [](const Tensor& t) {
    const jit::Schedule s = jit::schedule({t.impl()->storage->node}, jit::ScheduleOptions{});
    int n = 0;
    for (const jit::Step& st : s.steps)
      for (const Node* out : st.outputs) n += out->shape == Shape{1, 39, 80} || out->shape == Shape{1, 78, 80};
    return n;
  };
  const Tensor z = (x - x.mean(0)) / x.std(0);
  CHECK(first_levels(x.std(0)) == 2);
  CHECK(first_levels(z) == 2);
  // another node's mean: its own levels (merged with x's mean's: both read x)
  CHECK(first_levels((x - (x * 1.0).mean(0)) / x.std(0)) == 3);
  // float32: the mean's sums and the one-pass variance's (of d and d * d)
  // in one pass over x (three first levels in one kernel), then the output
  {
    const Tensor x32 = data({5000, 10}).eval();
    const Tensor z32 = (x32 - x32.mean(0)) / x32.std(0);
    CHECK(first_levels(z32) == 3);
    const jit::Schedule s = jit::schedule({z32.impl()->storage->node}, jit::ScheduleOptions{});
    int reading = 0;  // the passes over x (the leftover rows' few reads aside)
    for (const jit::Step& st : s.steps)
      for (const Node* in : st.inputs) reading += in == x32.impl()->storage->node.get() && st.outputs[0]->numel() >= 3120;
    CHECK(reading == 2);
    kiln_test::check_jit_close(z32, 1e-5);
  }
  // values by hand, in double
  const std::vector<double> v = x.to(kFloat64).to_vector<double>(), got = z.to(kFloat64).to_vector<double>();
  int64_t wrong = 0;
  for (int64_t j = 0; j < 10; ++j) {
    double mean = 0, ss = 0;
    for (int64_t i = 0; i < 5000; ++i) mean += v[static_cast<size_t>(i * 10 + j)];
    mean /= 5000.0;
    for (int64_t i = 0; i < 5000; ++i) ss += std::pow(v[static_cast<size_t>(i * 10 + j)] - mean, 2);
    const double sd = std::sqrt(ss / 4999.0);
    for (int64_t i = 0; i < 5000; i += 7) {
      const double want = (v[static_cast<size_t>(i * 10 + j)] - mean) / sd;
      wrong += std::abs(got[static_cast<size_t>(i * 10 + j)] - want) > 1e-5 * (1 + std::abs(want));
    }
  }
  CHECK(wrong == 0);
  // written in place between the two: another node, another value
  Tensor y = data({5000, 3}).eval().clone();
  const Tensor before = y.sum(0);
  y.add_(1.0f);
  const Tensor after = y.sum(0);
  const std::vector<float> sb = before.to_vector<float>(), sa = after.to_vector<float>();
  for (size_t j = 0; j < 3; ++j) CHECK(sa[j] == doctest::Approx(sb[j] + 5000.0).epsilon(1e-6));
}

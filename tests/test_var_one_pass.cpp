// var / std of float32 and narrower in one pass (core/reduce.cpp): the sums
// of d = x - K and d * d in float64, K the first element along the reduced
// dims, so that x.var(0) reads x once and, merged with x.mean(0)'s sums, a
// standardization reads x twice, not three times. Values by hand in double
// (two passes over the float values) on data chosen to break a careless
// one-pass formula: large offsets, an outlier as the shift, constant
// columns, inf and NaN; the passes over x pinned by the steps reading it.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/reference/evaluate.h"
#include "jit/executor.h"
#include "tests/jit_checks.h"

using namespace kiln;

namespace {

// The steps of t's schedule reading the stored x, and the first of them.
int passes_over(const Tensor& t, const Tensor& x) {
  const jit::Schedule s = jit::schedule({t.impl()->storage->node}, jit::ScheduleOptions{});
  int n = 0;
  for (const jit::Step& st : s.steps)
    for (const Node* in : st.inputs) n += in == x.impl()->storage->node.get();
  return n;
}

// var along dim 0 of a [n, w] float tensor's values, two passes in double.
std::vector<double> column_var(const std::vector<double>& v, int64_t n, int64_t w, bool unbiased) {
  std::vector<double> out(static_cast<size_t>(w));
  for (int64_t j = 0; j < w; ++j) {
    double mean = 0, ss = 0;
    for (int64_t i = 0; i < n; ++i) mean += v[static_cast<size_t>(i * w + j)];
    mean /= static_cast<double>(n);
    for (int64_t i = 0; i < n; ++i) ss += std::pow(v[static_cast<size_t>(i * w + j)] - mean, 2);
    out[static_cast<size_t>(j)] = ss / static_cast<double>(n - (unbiased ? 1 : 0));
  }
  return out;
}

// [n, w] float32: column j is sin(...) * spread + an offset of 10^(j % 8)
// (up to 1e7: the offset 1e7 times the spread, a naive sum of squares in
// float64 cancels 14 digits), column 1's first element an outlier (the
// shift K itself 1e6 from the mean), column 2 constant.
Tensor hostile(int64_t n, int64_t w, std::vector<double>& values, int decades = 8) {
  values.assign(static_cast<size_t>(n * w), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < w; ++j) {
      double v = std::sin(0.7 * static_cast<double>(i * w + j) + 0.3) + std::pow(10.0, static_cast<double>(j % decades));
      if (j == 1 && i == 0) v = 1e6;
      if (j == 2) v = 3.7;
      values[static_cast<size_t>(i * w + j)] = static_cast<double>(static_cast<float>(v));
    }
  return tensor(values).reshape({n, w}).to(kFloat32).contiguous().eval();
}

}  // namespace

TEST_CASE("var one pass: offsets, an outlier as the shift and constant columns, by hand") {
  const int64_t n = 4096, w = 32;
  std::vector<double> v;
  const Tensor x = hostile(n, w, v);
  for (const bool unbiased : {true, false}) {
    CAPTURE(unbiased);
    const std::vector<double> want = column_var(v, n, w, unbiased);
    const std::vector<double> got = x.var(0, unbiased).to(kFloat64).to_vector<double>();
    const std::vector<double> sd = x.std(0, unbiased, true).to(kFloat64).to_vector<double>();
    for (int64_t j = 0; j < w; ++j) {
      CAPTURE(j);
      const size_t k = static_cast<size_t>(j);
      if (j == 2) {  // constant: exactly 0, not a rounding below it (nor NaN under the sqrt)
        CHECK(got[k] == 0.0);
        CHECK(sd[k] == 0.0);
        continue;
      }
      CHECK(got[k] == doctest::Approx(want[k]).epsilon(2e-7));  // float32's rounding of the result
      CHECK(sd[k] == doctest::Approx(std::sqrt(want[k])).epsilon(2e-7));
    }
  }
  CHECK(x.var(0, true, true).sizes() == Shape{1, 32});
}

TEST_CASE("var one pass: several dims, every dim of a large tensor, float16, one row, inf and NaN") {
  // {0, 2} of [64, 40, 24], offset 1000: by hand
  {
    std::vector<double> v(64 * 40 * 24);
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = static_cast<double>(static_cast<float>(1000.0 + std::sin(0.37 * static_cast<double>(i))));
    const Tensor x = tensor(v).reshape({64, 40, 24}).to(kFloat32).eval();
    const std::vector<double> got = x.var({0, 2}).to(kFloat64).to_vector<double>();
    for (int64_t c = 0; c < 40; ++c) {
      double mean = 0, ss = 0;
      for (int64_t a = 0; a < 64; ++a)
        for (int64_t b = 0; b < 24; ++b) mean += v[static_cast<size_t>((a * 40 + c) * 24 + b)];
      mean /= 64.0 * 24.0;
      for (int64_t a = 0; a < 64; ++a)
        for (int64_t b = 0; b < 24; ++b) ss += std::pow(v[static_cast<size_t>((a * 40 + c) * 24 + b)] - mean, 2);
      CHECK(got[static_cast<size_t>(c)] == doctest::Approx(ss / (64.0 * 24.0 - 1.0)).epsilon(2e-7));
    }
  }
  // every element of [512, 256] (beyond a row kernel's two passes), offset -5e4
  {
    std::vector<double> v(512 * 256);
    double mean = 0, ss = 0;
    for (size_t i = 0; i < v.size(); ++i) {
      v[i] = static_cast<double>(static_cast<float>(-5e4 + 3.0 * std::cos(0.11 * static_cast<double>(i))));
      mean += v[i];
    }
    mean /= static_cast<double>(v.size());
    for (double e : v) ss += (e - mean) * (e - mean);
    const Tensor x = tensor(v).reshape({512, 256}).to(kFloat32).eval();
    CHECK(passes_over(x.var(), x) == 1);
    CHECK(x.var().item<float>() == doctest::Approx(ss / static_cast<double>(v.size() - 1)).epsilon(2e-7));
    CHECK(x.std(false).item<float>() == doctest::Approx(std::sqrt(ss / static_cast<double>(v.size()))).epsilon(2e-7));
  }
  // float16 (offsets up to 1e3): the float64 sums round to half once
  {
    std::vector<double> v;
    const Tensor x32 = hostile(2048, 20, v, 4);
    const Tensor h = x32.to(kFloat16).eval();
    const std::vector<double> hv = h.to(kFloat64).to_vector<double>();
    const std::vector<double> want = column_var(hv, 2048, 20, true);
    const std::vector<double> got = h.var(0).to(kFloat64).to_vector<double>();
    for (size_t j = 0; j < 20; ++j) {
      CAPTURE(j);
      if (j == 1) CHECK(std::isnan(got[j]));  // the outlier, 1e6, is inf in half
      else CHECK(got[j] == doctest::Approx(want[j]).epsilon(1e-3));
    }
  }
  // one row: unbiased 0 / 0 is NaN, biased 0 (as PyTorch)
  const Tensor one = kiln_test::sine_leaf({1, 32}).eval();
  for (float e : one.var(0).to_vector<float>()) CHECK(std::isnan(e));
  for (float e : one.var(0, false).to_vector<float>()) CHECK(e == 0.0f);
  // inf or NaN anywhere in a column (the shift K included) gives NaN there only
  std::vector<double> v(300 * 16);
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(static_cast<double>(i));
  v[5 * 16 + 3] = std::numeric_limits<double>::infinity();
  v[0 * 16 + 7] = -std::numeric_limits<double>::infinity();
  v[9 * 16 + 11] = std::numeric_limits<double>::quiet_NaN();
  const std::vector<float> got = tensor(v).reshape({300, 16}).to(kFloat32).eval().var(0).to_vector<float>();
  for (size_t j = 0; j < 16; ++j) {
    CAPTURE(j);
    CHECK(std::isnan(got[j]) == (j == 3 || j == 7 || j == 11));
  }
}

TEST_CASE("var one pass: x.var(0) reads x once, a standardization twice, float64 and rows keep two passes") {
  std::vector<double> v;
  const Tensor x = hostile(4096, 64, v);
  CHECK(passes_over(x.var(0), x) == 1);
  CHECK(passes_over(x.std(0), x) == 1);
  // the mean's sums and the variance's share one pass; the result reads x again
  const Tensor z = (x - x.mean(0)) / x.std(0);
  CHECK(passes_over(z, x) == 2);
  {
    // that pass loads each of its 16 rows of x once for the three sums
    // (their slices' steps and starts constants, jit/lowerer.h), and K's row
    const jit::Schedule s = jit::schedule({z.impl()->storage->node}, jit::ScheduleOptions{});
    const jit::Step* stats = nullptr;
    for (const jit::Step& st : s.steps)
      if (st.outputs.size() == 3) stats = &st;
    REQUIRE(stats != nullptr);
    int loads = 0;
    for (const jit::Value& val : stats->code->ir.values) loads += val.op == jit::VOp::Load;
    CHECK(loads == 17);
  }
  const std::vector<double> var = column_var(v, 4096, 64, true);
  const std::vector<double> got = z.to(kFloat64).to_vector<double>();
  int64_t wrong = 0;
  for (int64_t j = 0; j < 64; ++j) {
    if (j == 2) continue;  // constant: 0 / 0
    double mean = 0;
    for (int64_t i = 0; i < 4096; ++i) mean += v[static_cast<size_t>(i * 64 + j)];
    mean /= 4096.0;
    // the mean and variance rounded to float32, the rest in float32 (x - m
    // exact: x near m); the variance's rounding may differ by an ulp
    const float m = static_cast<float>(mean), sd = std::sqrt(static_cast<float>(var[static_cast<size_t>(j)]));
    for (int64_t i = 0; i < 4096; i += 5) {
      const double want = static_cast<double>((static_cast<float>(v[static_cast<size_t>(i * 64 + j)]) - m) / sd);
      wrong += std::abs(got[static_cast<size_t>(i * 64 + j)] - want) > 3e-7 * std::abs(want);
    }
  }
  CHECK(wrong == 0);
  // float64 has no wider accumulator: the mean, then the squared deviations
  const Tensor x64 = x.to(kFloat64).eval();
  CHECK(passes_over(x64.var(0), x64) == 2);
  // a row a kernel holds in cache: two passes over it there, one kernel
  CHECK(passes_over(x.var(1), x) == 1);
  // narrow columns, reduced as wide rows: the mean's and the variance's
  // sums rebuild the same wide rows (core/built_nodes.h), so they merge
  // into one pass over x (two when each rebuilt its own); the shift's row
  // (x's first, repeated along the wide rows) is a small step of its own
  const Tensor xn = (kiln_test::sine_leaf({8192, 3}) * 1).eval();  // stored as [8192, 3]
  CHECK(passes_over(xn.var(0), xn) == 2);
  const Tensor zn = (xn - xn.mean(0)) / xn.std(0);
  CHECK(passes_over(zn, xn) == 3);
  kiln_test::check_jit_close(zn, 1e-5);
}

TEST_CASE("var one pass: sibling column sums over one x, asked for together, read it once") {
  // x.sum(0) and (x * x).sum(0): their first levels merge (the second's
  // placed where the first ran: the first's later levels run between)
  const Tensor x = kiln_test::sine_leaf({2048, 48}).eval();
  const Tensor a = x.sum(0), b = (x * x).sum(0);
  const jit::Schedule s = jit::schedule({a.impl()->storage->node, b.impl()->storage->node}, jit::ScheduleOptions{});
  int reading = 0;
  for (const jit::Step& st : s.steps)
    for (const Node* in : st.inputs) reading += in == x.impl()->storage->node.get();
  CHECK(reading == 1);
  eval(a, b);
  const std::vector<double> xv = x.to(kFloat64).to_vector<double>();
  const std::vector<float> av = a.to_vector<float>(), bv = b.to_vector<float>();
  for (int64_t j = 0; j < 48; ++j) {
    double sa = 0, sb = 0;
    for (int64_t i = 0; i < 2048; ++i) {
      const double e = xv[static_cast<size_t>(i * 48 + j)];
      sa += e;
      sb += static_cast<double>(static_cast<float>(e * e));
    }
    CHECK(av[static_cast<size_t>(j)] == doctest::Approx(sa).epsilon(1e-6).scale(1));
    CHECK(bv[static_cast<size_t>(j)] == doctest::Approx(sb).epsilon(1e-6));
  }
}

TEST_CASE("var one pass: a merge that moves steps past it keeps an in-place write's copy and scatter together") {
  // A program the differential test found (seed 42968 of its in-place
  // writes): the merged kernel runs where the later member ran, and the
  // steps between that read the first member move after it; an Assign's
  // copy of its base and its scatter, which the executor runs as a pair,
  // moved apart. Both roots against the reference evaluator's.
  auto program = [] {
    manual_seed(5628808);
    Tensor v0 = rand({2, 1, 4}, kFloat64);
    Tensor v1 = v0.eq(v0);
    Tensor v2 = v1.softmax(1, kFloat64);
    Tensor v3 = v1.clone();
    v3.transpose(0, 2).index_put_({3, indexing::Slice(0, indexing::None, indexing::None)}, false);
    Tensor v5 = v2.slice(1, 2, -2, 1);
    Tensor v6 = v3.asinh();
    Tensor v8 = v5.clone();
    v8.slice(0, 2, std::nullopt, 2).zero_();
    eval(v8, v6);
    return std::make_pair(v8.to_vector<double>(), v6.to_vector<float>());
  };
  const auto jit = program();
  set_evaluator(Evaluator::Reference);
  const auto ref = program();
  set_evaluator(Evaluator::Jit);
  CHECK(jit.first == ref.first);
  CHECK(jit.second == ref.second);
  CHECK(ref.second.size() == 8);
}

TEST_CASE("var one pass: a merge does not run a kernel before one a merge before it made it read") {
  // Another program of the differential test (seed 52210 of its
  // reductions): the sums of a softmax merged with a product that reads
  // exp(x - max), so the sum's step came to read the exp; merging the exp
  // with a value that reads the sum then had to keep the sum's step before
  // it (the dependences stored when merging began no longer held). The
  // three roots evaluated together, interpreted and compiled, against the
  // reference evaluator's.
  manual_seed(6839511);
  const Tensor v1 = randn({3, 4}, kBFloat16);
  const Tensor v2 = v1.tanh();
  const Tensor v3 = v2.log_softmax(1);
  const Tensor v4 = v2.mul(v1);
  const Tensor v5 = v2.softmax(1);
  const Tensor v6 = v4.unsqueeze(2);
  const Tensor v9 = v3.select(0, 1).expand({3, -1});
  const std::vector<NodePtr> roots{v9.impl()->node(), v6.impl()->node(), v5.impl()->node()};
  auto values = [&](const std::vector<BufferPtr>& bufs) {
    std::vector<std::vector<float>> out;
    for (size_t i = 0; i < roots.size(); ++i)
      out.push_back(make_tensor(make_buffer_node(bufs[i], roots[i]->shape)).to(kFloat32).to_vector<float>());
    return out;
  };
  const auto ref = values(reference::evaluate(roots));
  CHECK(values(jit::evaluate(roots, true)) == ref);
  CHECK(values(jit::evaluate(roots, false)) == ref);
  CHECK(ref[2].size() == 12);
}

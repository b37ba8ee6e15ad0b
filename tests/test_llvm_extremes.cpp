// A float max or min accumulates an integer key of the value's bits
// (codegen/llvm/lower_kernel.cpp, keyed accumulators) and its loop folds
// its tail (codegen/llvm/loop_hints.cpp): no llvm.maximum / llvm.minimum
// chain, no scalar remainder. The oracle: the reference's rule written out
// here (a NaN wins; otherwise the largest / smallest, -0 below +0), over
// rows of every length up to 40 holding NaNs of both signs, infinities and
// zeros of both signs; through the graph, the reference evaluator for
// every float dtype.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernel_builder.h"
#include "tests/jit_checks.h"

using namespace kiln;
using namespace kiln::test;

namespace {

// The reference's extreme of a row (core/reference: a NaN is kept once
// seen; -0 orders below +0).
template <typename T>
T extreme(const T* x, int64_t n, bool is_max) {
  T best = is_max ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
  for (int64_t i = 0; i < n; ++i) {
    if (std::isnan(best)) break;
    const T v = x[i];
    const bool zeros = v == 0 && best == 0;
    const bool wins = std::isnan(v) || (zeros ? (is_max ? !std::signbit(v) : std::signbit(v))
                                              : (is_max ? v > best : v < best));
    if (wins) best = v;
  }
  return best;
}

// Row r of length n: values from r, with some of the specials.
template <typename T>
void fill_row(T* x, int64_t n, int64_t r) {
  const T specials[] = {std::numeric_limits<T>::quiet_NaN(), -std::numeric_limits<T>::quiet_NaN(),
                        std::numeric_limits<T>::infinity(), -std::numeric_limits<T>::infinity(),
                        T(0), -T(0)};
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<T>(std::sin(0.61 * static_cast<double>(i + 7 * r)) * 3);
  switch (r % 5) {
    case 0: break;                                   // numbers only
    case 1: x[(r * 7) % n] = specials[(r / 5) % 6];  // one special anywhere
            break;
    case 2: for (int64_t i = 0; i < n; ++i) x[i] = (i + r) % 3 ? T(0) : -T(0);  // zeros only
            break;
    case 3: for (int64_t i = 0; i < n; ++i) x[i] = i % 2 ? -std::numeric_limits<T>::infinity() : -T(0);
            break;
    default: x[n - 1] = specials[(r / 5) % 2];        // a NaN last (the folded tail's lanes)
  }
}

template <typename T>
void check_rows(jit::KernelFn fn, DType dt, bool is_max) {
  for (int64_t n = 1; n <= 40; ++n) {
    const int64_t rows = 25;
    Buf a(dt, static_cast<size_t>(rows * n)), o(dt, rows);
    for (int64_t r = 0; r < rows; ++r) fill_row(a.as<T>() + r * n, n, r);
    run(fn, {&a, &o}, {rows, n}, 0, rows);
    for (int64_t r = 0; r < rows; ++r) {
      CAPTURE(n);
      CAPTURE(r);
      const T want = extreme(a.as<T>() + r * n, n, is_max), got = o.as<T>()[r];
      CHECK(std::isnan(got) == std::isnan(want));
      if (!std::isnan(want)) {
        CHECK(got == want);
        CHECK(std::signbit(got) == std::signbit(want));
      }
    }
  }
}

}  // namespace

TEST_CASE("llvm: a float max or min accumulates integer keys, its tail folded, with the reference's values") {
  KILN_SKIP_WITHOUT_LLVM();
  for (jit::Combiner c : {jit::Combiner::Max, jit::Combiner::Min}) {
    const bool is_max = c == jit::Combiner::Max;
    for (DType dt : {kFloat32, kFloat64}) {
      CAPTURE(dt);
      CAPTURE(is_max);
      const codegen::CompiledKernel ck = be().compile(row_reduction("row_extreme", c, dt), true);
      REQUIRE(static_cast<bool>(ck.fn));
      CAPTURE(ck.llvm_ir);
      CHECK(occurrences(ck.llvm_ir, is_max ? "llvm.maximum" : "llvm.minimum") == 0);
      CHECK(occurrences(ck.llvm_ir, is_max ? "llvm.vector.reduce.smax" : "llvm.vector.reduce.smin") >= 1);
      CHECK(occurrences(ck.llvm_ir, "llvm.masked.load") >= 1);  // the last partial vector
      if (dt == kFloat32) check_rows<float>(ck.fn, dt, is_max);
      else check_rows<double>(ck.fn, dt, is_max);
    }
  }
}

TEST_CASE("llvm: max and min of every float dtype through the graph equal the reference evaluator's") {
  // rows of 56 (a CNN's image rows) with NaNs, infinities and signed zeros
  std::vector<double> v(8 * 56);
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(0.3 * static_cast<double>(i)) * 5;
  v[60] = std::numeric_limits<double>::quiet_NaN();
  v[2 * 56 + 55] = -std::numeric_limits<double>::quiet_NaN();
  for (size_t i = 3 * 56; i < 4 * 56; ++i) v[i] = i % 2 ? 0.0 : -0.0;
  for (size_t i = 4 * 56; i < 5 * 56; ++i) v[i] = -std::numeric_limits<double>::infinity();
  v[5 * 56 + 9] = std::numeric_limits<double>::infinity();
  for (DType dt : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
    CAPTURE(dt);
    const Tensor x = tensor(v).reshape({8, 56}).to(dt);
    for (const Tensor& t : {x.amax(1), x.amin(1), x.amax(1, true) - x, x.reshape({2, 4, 56}).amin({1, 2})}) {
      kiln_test::check_jit(t);
      const NodePtr n = t.impl()->node();
      auto values = [&](const BufferPtr& b) { return make_tensor(make_buffer_node(b, n->shape)).to_vector<double>(); };
      const std::vector<double> want = values(reference::evaluate({n})[0]), got = values(jit::evaluate({n}, false)[0]);
      size_t signs = 0;  // zeros of the wrong sign
      for (size_t i = 0; i < want.size(); ++i) signs += !std::isnan(want[i]) && std::signbit(got[i]) != std::signbit(want[i]);
      CHECK(signs == 0);
    }
  }
}

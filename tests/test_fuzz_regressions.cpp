// Regression tests for what the fuzzer (fuzz/kiln_fuzz.cpp) and the
// sanitizer builds (./dev test-asan) found. Each case names the finding.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "check_values.h"
#include "kiln/kiln.h"

using namespace kiln;
using kiln_test::kInf;
using kiln_test::kNaN;

namespace {
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
}

// UBSan: kiln::tensor(std::vector<double>{inf}) converted every float to
// int64 with a plain cast (undefined for NaN, infinities and values beyond
// int64) even for a float tensor; Scalar::to_long() likewise (arange with a
// float bound). They now truncate as the Cast op does: NaN
// and out-of-range values give INT64_MIN (x86's value, and PyTorch's on x86).
TEST_CASE("fuzz regression: float data with NaN / infinity / huge values into integer dtypes") {
  CHECK_T(tensor(std::vector<double>{kInf, kNaN, 1e300, -2.7, 3.9}), kFloat32, {5},
          {kInf, kNaN, kInf, -2.7, 3.9});
  CHECK(tensor(std::vector<double>{kInf, kNaN, 1e300, -2.7, 3.9}, kInt64).to_vector<int64_t>() ==
        std::vector<int64_t>{kMin, kMin, kMin, -2, 3});
  CHECK(tensor({kNaN, -1e19}, kInt64).to_vector<int64_t>() == std::vector<int64_t>{kMin, kMin});
  // full / fill_ refuse such values, as PyTorch does.
  CHECK_THROWS_WITH_AS(full({2}, kNaN, kInt64), "[full] value cannot be converted to type int64_t without overflow", Error);
  CHECK(Scalar(kInf).to_long() == kMin);
  CHECK(Scalar(-1e300).to_long() == kMin);
  CHECK(Scalar(-5.9).to_long() == -5);
  Tensor t = zeros({2}, kInt64);
  CHECK_THROWS_WITH_AS(t.fill_(kNaN), "[fill_] value cannot be converted to type int64_t without overflow", Error);
  // The same value as the Cast op gives, JIT and reference alike.
  CHECK(tensor({kNaN, kInf}).to(kInt64).to_vector<int64_t>() == std::vector<int64_t>{kMin, kMin});
}

// UBSan: arange's int64 length computed end - start in int64, which
// overflows for bounds of opposite signs near the int64 limits.
TEST_CASE("fuzz regression: arange with bounds whose difference overflows int64") {
  const int64_t a = -(int64_t{1} << 62) * 2, b = (int64_t{1} << 62) + ((int64_t{1} << 62) - 1);
  Tensor r = arange(a, b, int64_t{1} << 62);
  CHECK(r.to_vector<int64_t>() ==
        std::vector<int64_t>{a, a + (int64_t{1} << 62), 0, int64_t{1} << 62});
  CHECK_THROWS_WITH_AS(arange(0.0, 1e30), doctest::Contains("[arange] invalid size, possible overflow?"), Error);
  CHECK_THROWS_AS(arange(0.0, kInf), Error);
  CHECK_THROWS_AS(arange(0.0, 1.0, kNaN), Error);
}

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

// The fuzzer (a clang build, whose program generator built the nodes in
// another order): a matmul merged into one row kernel with a log_softmax of
// its operand. The row kernel keeps log1p(x), computed for the max, in the
// first output's buffer (the matmul's) to read it back instead of computing
// it again; the matmul's result was written there before the log_softmax
// read it back (a load is emitted where its value is first used), so the
// log_softmax read the matmul's values. The output holding the kept value
// is now written last.
TEST_CASE("fuzz regression: a merged matmul does not overwrite the value a log_softmax keeps in its buffer") {
  static std::vector<int32_t> ones_data(16, 1);
  const Tensor x = from_blob(ones_data.data(), {4, 4}, TensorOptions(kInt32));
  const Tensor w = tensor(std::vector<double>{-3, -0.5, -3.125, 2.5, 0.5, -4, -2.75, 0.25, -1.625, -2.875, 1, 3.125,
                                              -1, 1.5, 0.625, -2.75})
                       .reshape({4, 4});
  const Tensor l = x.log1p();
  const Tensor m = l.mm(w);  // built first: the first output of the merged kernel
  const Tensor s = l.log_softmax(-1);
  kiln::eval(m, s);
  // PyTorch: log_softmax of four equal values is -log(4); the matmul's rows are log(2) * w's column sums
  CHECK_T(s, kFloat32, {4, 4}, std::vector<double>(16, -1.3862943649291992));
  CHECK_T(m[0], kFloat32, {4}, {-3.5523793697357178, -4.072239875793457, -2.945875644683838, 2.1660852432250977});
}

// Helpers shared by the value tests (test_promotion.cpp, test_ops_*.cpp,
// test_graph.cpp): build a tensor from flat values, and compare a tensor's
// dtype, shape and values with the ones PyTorch 1.13 gave (pasted as data).
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kiln/kiln.h"

namespace kiln_test {

inline const double kNaN = std::numeric_limits<double>::quiet_NaN();
inline const double kInf = std::numeric_limits<double>::infinity();

// A tensor of dtype dt and shape s holding the row-major values v (each value
// exactly representable in dt, so no conversion rounding is involved).
inline kiln::Tensor mk(const std::vector<double>& v, const kiln::Shape& s, kiln::DType dt) {
  return kiln::tensor(v, dt).reshape(s);
}
inline kiln::Tensor mki(const std::vector<int64_t>& v, const kiln::Shape& s, kiln::DType dt) {
  return kiln::tensor(v, dt).reshape(s);
}

// Checks dtype, shape and values. Integer and bool results, and infinities,
// must match exactly; NaN must be NaN; other floats compare with
// doctest::Approx(want).epsilon(eps): |got - want| < eps * (1 + max(|got|, |want|)),
// a relative tolerance that turns absolute near zero; eps = 0 asks for exact equality.
inline void check_values(const kiln::Tensor& t, kiln::DType dt, const kiln::Shape& shape,
                         const std::vector<double>& want, double eps = 1e-6) {
  CHECK(t.dtype() == dt);
  REQUIRE(t.sizes() == shape);
  const std::vector<double> got = t.to_vector<double>();
  REQUIRE(got.size() == want.size());
  const bool exact = !kiln::is_floating_point(dt) || eps == 0;
  for (size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CAPTURE(got[i]);
    CAPTURE(want[i]);
    if (std::isnan(want[i])) {
      CHECK(std::isnan(got[i]));
    } else if (exact || std::isinf(want[i])) {
      CHECK(got[i] == want[i]);
    } else {
      CHECK(got[i] == doctest::Approx(want[i]).epsilon(eps));
    }
  }
}

// Exact comparison of int64 values beyond double's 2^53.
inline void check_ints(const kiln::Tensor& t, kiln::DType dt, const kiln::Shape& shape,
                       const std::vector<int64_t>& want) {
  CHECK(t.dtype() == dt);
  REQUIRE(t.sizes() == shape);
  CHECK(t.to_vector<int64_t>() == want);
}

}  // namespace kiln_test

// CHECK_T(tensor expression, dtype, {shape}, {values} [, eps])
#define CHECK_T(expr, ...)                               \
  do {                                                   \
    INFO("tensor: " #expr);                              \
    ::kiln_test::check_values((expr), __VA_ARGS__);      \
  } while (0)

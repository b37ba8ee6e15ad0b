// Scalar: a number passed to an op (a Python scalar in PyTorch's terms). Its
// kind (bool / integer / floating) takes part in type promotion as a
// "wrapped number": it never widens a tensor's dtype within its category.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kiln/dtype.h"

namespace kiln {

// Float to int64, truncating toward zero; NaN and values outside int64's
// range give INT64_MIN (what x86's cvttsd2si gives, so kiln has no undefined
// behaviour there: a plain cast would be UB).
inline int64_t trunc_to_int64(double d) {
  if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) return INT64_MIN;
  return static_cast<int64_t>(d);
}

class Scalar {
 public:
  enum class Kind : uint8_t { Bool, Int, Float };

  Scalar() : kind_(Kind::Int), i_(0) {}
  Scalar(bool v) : kind_(Kind::Bool), i_(v ? 1 : 0) {}  // NOLINT
  template <typename T,
            std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) : kind_(Kind::Int), i_(static_cast<int64_t>(v)) {}  // NOLINT
  template <typename T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  Scalar(T v) : kind_(Kind::Float), d_(static_cast<double>(v)) {}  // NOLINT
  Scalar(Half v) : kind_(Kind::Float), d_(static_cast<float>(v)) {}  // NOLINT
  Scalar(BFloat16 v) : kind_(Kind::Float), d_(static_cast<float>(v)) {}  // NOLINT

  Kind kind() const { return kind_; }
  bool is_floating_point() const { return kind_ == Kind::Float; }
  bool is_integral() const { return kind_ == Kind::Int; }
  bool is_bool() const { return kind_ == Kind::Bool; }

  double to_double() const { return kind_ == Kind::Float ? d_ : static_cast<double>(i_); }
  int64_t to_long() const { return kind_ == Kind::Float ? trunc_to_int64(d_) : i_; }
  bool to_bool() const { return kind_ == Kind::Float ? d_ != 0.0 : i_ != 0; }
  template <typename T> T to() const;

  // The dtype this scalar would have as a tensor: bool, int64 or float64.
  DType dtype() const;

 private:
  Kind kind_;
  union {
    int64_t i_;
    double d_;
  };
};

template <typename T> T Scalar::to() const {
  if constexpr (std::is_same_v<T, bool>) return to_bool();
  else if constexpr (std::is_integral_v<T>) return static_cast<T>(to_long());
  else return static_cast<T>(static_cast<float>(to_double()));
}
template <> inline double Scalar::to<double>() const { return to_double(); }
template <> inline float Scalar::to<float>() const { return static_cast<float>(to_double()); }

}  // namespace kiln

// Internal to the reference evaluator: the per-op-class kernels that
// evaluate.cpp dispatches to, and the dtype helpers they share (dispatch on a
// DType, compute types, and the one value-conversion rule `cast_value`).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "core/buffer.h"
#include "core/node.h"
#include "kiln/dtype.h"
#include "kiln/error.h"
#include "kiln/scalar.h"

namespace kiln::reference {

// ---- kernels: each computes one node from its inputs' values ----
// `in` holds one buffer per node input (row-major values of the input shapes).
using Inputs = std::vector<const Buffer*>;
BufferPtr eval_source(const Node& n);                       // sources.cpp
BufferPtr eval_random(const Node& n);                       // random.cpp
BufferPtr eval_unary(const Node& n, const Inputs& in);      // unary.cpp
BufferPtr eval_binary(const Node& n, const Inputs& in);     // binary.cpp
BufferPtr eval_ternary(const Node& n, const Inputs& in);    // binary.cpp
BufferPtr eval_as_strided(const Node& n, const Inputs& in); // movement.cpp
BufferPtr eval_assign(const Node& n, const Inputs& in);     // movement.cpp
BufferPtr eval_cat(const Node& n, const Inputs& in);        // movement.cpp
BufferPtr eval_gather(const Node& n, const Inputs& in);     // indexed.cpp
BufferPtr eval_scatter(const Node& n, const Inputs& in);
BufferPtr eval_sort(const Node& n, const Inputs& in);  // scan.cpp: ArgSort (core/sort_rows.h)
BufferPtr eval_scan(const Node& n, const Inputs& in);  // scan.cpp: CumSum, CumProd, CumMax/Min, CumArgMax/Min  // indexed.cpp: ScatterAdd, Scatter
BufferPtr eval_to_device(const Node& n, const Inputs& in);  // movement.cpp
BufferPtr eval_reduce(const Node& n, const Inputs& in);     // reduce.cpp
BufferPtr eval_matmul(const Node& n, const Inputs& in);     // matmul.cpp

// A fresh CPU buffer for node n's value.
inline BufferPtr allocate_for(const Node& n) {
  return Buffer::allocate(n.dtype, n.numel(), Device());
}

// ---- dtype helpers ----
template <typename T> struct Tag { using type = T; };

// Calls f(Tag<T>{}) with T the C++ type of dtype t.
template <typename F> void visit_dtype(DType t, F&& f) {
  switch (t) {
#define KILN_REF_VISIT(name, type) \
  case DType::name:                \
    f(Tag<type>{});                \
    return;
    KILN_FORALL_DTYPES(KILN_REF_VISIT)
#undef KILN_REF_VISIT
  }
  KILN_INTERNAL_ASSERT(false, "unknown dtype ", static_cast<int>(t));
}

template <typename T>
constexpr bool kIsFloat = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16> ||
                          std::is_same_v<T, float> || std::is_same_v<T, double>;

// The type elementwise math runs in: float for float16 / bfloat16 / float32,
// double for float64, int64 for bool and the integers (cast back afterwards).
template <typename T>
using compute_t = std::conditional_t<std::is_same_v<T, double>, double,
                                     std::conditional_t<kIsFloat<T>, float, int64_t>>;
// The type sums, products and dot products accumulate in.
template <typename T> using accum_t = std::conditional_t<kIsFloat<T>, double, int64_t>;

using kiln::trunc_to_int64;  // kiln/scalar.h: float to int64 without UB

// The value conversion used everywhere (Cast, storing computed values):
//   anything -> bool: != 0 (NaN -> true);  bool -> anything: 0 / 1;
//   float -> integer: truncate toward zero via int64, then wrap;
//   integer -> integer: wrap (mod 2^bits);
//   -> float16 / bfloat16: through float (one rounding from float).
template <typename To, typename From> To cast_value(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<To, bool>) {
    if constexpr (kIsFloat<From>) {
      return static_cast<double>(static_cast<compute_t<From>>(v)) != 0.0;
    } else {
      return v != 0;
    }
  } else if constexpr (std::is_same_v<From, bool>) {
    if constexpr (kIsFloat<To>) {
      return To(v ? 1.0f : 0.0f);
    } else {
      return static_cast<To>(v ? 1 : 0);
    }
  } else if constexpr (kIsFloat<From> && !kIsFloat<To>) {
    const int64_t i = trunc_to_int64(static_cast<double>(static_cast<compute_t<From>>(v)));
    return static_cast<To>(i);  // modular since C++20
  } else if constexpr (!kIsFloat<From> && !kIsFloat<To>) {
    return static_cast<To>(v);
  } else if constexpr (std::is_same_v<To, Half> || std::is_same_v<To, BFloat16>) {
    return To(static_cast<float>(static_cast<compute_t<From>>(v)));
  } else if constexpr (kIsFloat<From>) {
    return static_cast<To>(static_cast<compute_t<From>>(v));  // float <-> double
  } else {
    return static_cast<To>(v);  // integer -> float / double: one rounding
  }
}

// The scans' rules, shared by the reference and the IR interpreter.
// PyTorch's _log_add_exp_helper(x, acc): log(exp(x) + exp(acc)) in A, NaN
// propagating, two equal infinities kept (logcumsumexp's step).
template <typename A>
A log_add_exp(A x, A acc) {
  const A mn = std::isnan(acc) ? acc : std::min(x, acc), mx = std::isnan(acc) ? acc : std::max(x, acc);
  return mn != mx || std::isfinite(mn) ? std::log1p(std::exp(mn - mx)) + mx : x;
}
// Whether x replaces the kept value k (PyTorch's cummax / cummin rule: a
// value >= (<=) the kept one, or a NaN; nothing but a NaN replaces a NaN).
template <typename C>
bool replaces(bool is_max, C x, C k) {
  if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(x)) return true;
    if (std::isnan(k)) return false;
  }
  return is_max ? x >= k : x <= k;
}

// Integer power by repeated squaring, wrapping mod 2^64. A negative exponent
// gives 1 for base 1, +-1 for base -1 (by the exponent's parity), and 0 for
// every other base. Shared by the reference, the IR interpreter and the tests.
inline int64_t int_pow(int64_t base, int64_t exp) {
  if (exp < 0) {
    if (base == 1) return 1;
    if (base == -1) return (exp & 1) ? -1 : 1;
    return 0;
  }
  uint64_t result = 1, b = static_cast<uint64_t>(base);
  for (uint64_t e = static_cast<uint64_t>(exp); e != 0; e >>= 1) {
    if (e & 1) result *= b;
    b *= b;
  }
  return static_cast<int64_t>(result);
}

// Whether a value is NaN (false for every non-floating type).
template <typename C> bool is_nan(C v) {
  if constexpr (std::is_floating_point_v<C>) {
    return std::isnan(v);
  } else {
    return false;
  }
}

// Row-major strides of a shape.
inline std::vector<int64_t> row_major_strides(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t d = s.size(); d-- > 1;) st[d - 1] = st[d] * s[d];
  return st;
}

// An odometer over the index space of `shape` that keeps one linear position
// per stride set up to date (pos[j] = base[j] + sum_k idx_k * strides[j][k]).
// Call next() after each of numel() positions.
struct Odometer {
  Shape shape;
  std::vector<int64_t> idx;
  std::vector<std::vector<int64_t>> strides;
  std::vector<int64_t> pos;

  Odometer(Shape s, std::vector<std::vector<int64_t>> st, std::vector<int64_t> base)
      : shape(std::move(s)), idx(shape.size(), 0), strides(std::move(st)), pos(std::move(base)) {}
  void next() {
    for (size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d]) {
        for (size_t j = 0; j < pos.size(); ++j) pos[j] += strides[j][d];
        return;
      }
      for (size_t j = 0; j < pos.size(); ++j) pos[j] -= strides[j][d] * (shape[d] - 1);
      idx[d] = 0;
    }
  }
};

}  // namespace kiln::reference

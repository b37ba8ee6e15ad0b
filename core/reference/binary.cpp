// Reference kernels for the binary elementwise ops (arithmetic in compute_t
// with wrapping integers, NaN-propagating maximum / minimum, comparisons to
// bool) and the ternary Where.
#include "core/reference/kernels.h"

#include <cstring>

namespace kiln::reference {

namespace {

// out[i] = f(a[i], b[i]) computed in compute_t<T>, stored back as T.
template <typename T, typename F> void map2(const Buffer& a, const Buffer& b, Buffer& out, F f) {
  using C = compute_t<T>;
  const T* x = a.as<T>();
  const T* y = b.as<T>();
  T* o = out.as<T>();
  for (int64_t i = 0; i < out.numel(); ++i)
    o[i] = cast_value<T>(f(static_cast<C>(x[i]), static_cast<C>(y[i])));
}

// out[i] = f(a[i], b[i]) computed in compute_t<T>, stored as bool.
template <typename T, typename F> void compare(const Buffer& a, const Buffer& b, Buffer& out, F f) {
  using C = compute_t<T>;
  const T* x = a.as<T>();
  const T* y = b.as<T>();
  bool* o = out.as<bool>();
  for (int64_t i = 0; i < out.numel(); ++i) o[i] = f(static_cast<C>(x[i]), static_cast<C>(y[i]));
}

// Integer arithmetic wraps mod 2^64 (then mod 2^bits when stored back).
inline uint64_t u(int64_t v) { return static_cast<uint64_t>(v); }
inline int64_t s(uint64_t v) { return static_cast<int64_t>(v); }


template <typename T> void binary_op(Op op, const Buffer& a, const Buffer& b, Buffer& out) {
  using C = compute_t<T>;
  constexpr bool fp = kIsFloat<T>;
  switch (op) {
    case Op::Add:
      if constexpr (fp) map2<T>(a, b, out, [](C x, C y) { return x + y; });
      else map2<T>(a, b, out, [](C x, C y) { return s(u(x) + u(y)); });
      return;
    case Op::Sub:
      if constexpr (fp) map2<T>(a, b, out, [](C x, C y) { return x - y; });
      else map2<T>(a, b, out, [](C x, C y) { return s(u(x) - u(y)); });
      return;
    case Op::Mul:
      if constexpr (fp) map2<T>(a, b, out, [](C x, C y) { return x * y; });
      else map2<T>(a, b, out, [](C x, C y) { return s(u(x) * u(y)); });
      return;
    case Op::Div:  // integers: truncated; -1 negates (INT64_MIN / -1 wraps), 0 is refused earlier
      if constexpr (fp) map2<T>(a, b, out, [](C x, C y) { return x / y; });
      else map2<T>(a, b, out, [](C x, C y) { return y == 0 ? C{0} : y == -1 ? s(0 - u(x)) : x / y; });
      return;
    case Op::Fmod:
      if constexpr (fp) map2<T>(a, b, out, [](C x, C y) { return std::fmod(x, y); });
      else map2<T>(a, b, out, [](C x, C y) { return y == 0 || y == -1 ? C{0} : x % y; });
      return;
    case Op::Pow:
      if constexpr (fp) map2<T>(a, b, out, [](C x, C y) { return std::pow(x, y); });
      else map2<T>(a, b, out, [](C x, C y) { return int_pow(x, y); });
      return;
    case Op::Atan2:  // floats only: the front end computes integers in the default float dtype
      if constexpr (fp) map2<T>(a, b, out, [](C x, C y) { return std::atan2(x, y); });
      else KILN_INTERNAL_ASSERT(false, "atan2 needs a floating dtype");
      return;
    case Op::Maximum:  // a NaN operand makes the result NaN
      map2<T>(a, b, out, [](C x, C y) { return is_nan(x) ? x : is_nan(y) ? y : x > y ? x : y; });
      return;
    case Op::Minimum:
      map2<T>(a, b, out, [](C x, C y) { return is_nan(x) ? x : is_nan(y) ? y : x < y ? x : y; });
      return;
    case Op::Eq: compare<T>(a, b, out, [](C x, C y) { return x == y; }); return;
    case Op::Ne: compare<T>(a, b, out, [](C x, C y) { return x != y; }); return;
    case Op::Lt: compare<T>(a, b, out, [](C x, C y) { return x < y; }); return;
    case Op::Le: compare<T>(a, b, out, [](C x, C y) { return x <= y; }); return;
    case Op::Gt: compare<T>(a, b, out, [](C x, C y) { return x > y; }); return;
    case Op::Ge: compare<T>(a, b, out, [](C x, C y) { return x >= y; }); return;
    case Op::Buffer: case Op::Full: case Op::Arange: case Op::Linspace: case Op::Eye:
    case Op::RandUniform: case Op::RandNormal: case Op::RandInt:
    case Op::Cast: case Op::Neg: case Op::Exp: case Op::Log: case Op::Sqrt: case Op::Rsqrt:
    case Op::Abs: case Op::Sin: case Op::Cos: case Op::Tanh: case Op::Sigmoid: case Op::Relu:
    case Op::Floor: case Op::Ceil: case Op::Round: case Op::Trunc: case Op::Sign:
    case Op::Log1p: case Op::Expm1: case Op::Erf:
    case Op::Tan: case Op::Asin: case Op::Acos: case Op::Atan: case Op::Sinh: case Op::Cosh:
    case Op::Asinh: case Op::Acosh: case Op::Atanh: case Op::Log2: case Op::Log10: case Op::Exp2:
    case Op::LogicalNot: case Op::Where: case Op::AsStrided: case Op::Assign: case Op::ScatterAdd: case Op::Scatter: case Op::Gather:
    case Op::Sum: case Op::Prod: case Op::Max: case Op::Min: case Op::ArgMax: case Op::ArgMin:
    case Op::All: case Op::Any: case Op::Matmul: case Op::Cat: case Op::CumSum: case Op::CumProd: case Op::LogCumSumExp:
    case Op::CumMax: case Op::CumMin: case Op::CumArgMax: case Op::CumArgMin: case Op::ArgSort: case Op::ToDevice:
      KILN_INTERNAL_ASSERT(false, "binary_op called for ", op_name(op));
  }
}

}  // namespace

BufferPtr eval_binary(const Node& n, const Inputs& in) {
  KILN_INTERNAL_ASSERT(in.size() == 2, op_name(n.op), " takes two inputs");
  const Buffer& a = *in[0];
  const Buffer& b = *in[1];
  KILN_INTERNAL_ASSERT(a.numel() == n.numel() && b.numel() == n.numel(), op_name(n.op),
                       " inputs do not match its output shape ", n.shape);
  KILN_INTERNAL_ASSERT(a.dtype() == b.dtype(), op_name(n.op), " inputs differ in dtype: ",
                       a.dtype(), " and ", b.dtype());
  KILN_INTERNAL_ASSERT(is_comparison(n.op) ? n.dtype == DType::Bool : n.dtype == a.dtype(),
                       op_name(n.op), " of ", a.dtype(), " cannot produce ", n.dtype);
  BufferPtr out = allocate_for(n);
  visit_dtype(a.dtype(), [&](auto tag) {
    binary_op<typename decltype(tag)::type>(n.op, a, b, *out);
  });
  return out;
}

BufferPtr eval_ternary(const Node& n, const Inputs& in) {
  KILN_INTERNAL_ASSERT(n.op == Op::Where && in.size() == 3, "unexpected ternary op ",
                       op_name(n.op));
  const Buffer& cond = *in[0];
  const Buffer& a = *in[1];
  const Buffer& b = *in[2];
  KILN_INTERNAL_ASSERT(cond.dtype() == DType::Bool && a.dtype() == n.dtype &&
                           b.dtype() == n.dtype,
                       "Where needs {bool, ", n.dtype, ", ", n.dtype, "}");
  KILN_INTERNAL_ASSERT(cond.numel() == n.numel() && a.numel() == n.numel() &&
                           b.numel() == n.numel(),
                       "Where inputs do not match its output shape ", n.shape);
  BufferPtr out = allocate_for(n);
  const size_t es = element_size(n.dtype);
  const auto* c = cond.as<const uint8_t>();  // bool storage read as bytes: nonzero is true
  const auto* x = a.as<const char>();
  const auto* y = b.as<const char>();
  auto* o = out->as<char>();
  for (int64_t i = 0; i < n.numel(); ++i) {
    const size_t at = static_cast<size_t>(i) * es;
    std::memcpy(o + at, (c[i] != 0 ? x : y) + at, es);
  }
  return out;
}

}  // namespace kiln::reference

// Reference kernels for the unary elementwise ops: Cast (any dtype to any),
// LogicalNot (any dtype to bool), and the math ops, which read and write the
// node's dtype and compute in compute_t (float / double / int64).
#include "core/reference/kernels.h"

namespace kiln::reference {

namespace {

// out[i] = f(in[i]) computed in compute_t<T>, stored back as T.
template <typename T, typename F> void map1(const Buffer& a, Buffer& out, F f) {
  using C = compute_t<T>;
  const T* x = a.as<T>();
  T* o = out.as<T>();
  for (int64_t i = 0; i < out.numel(); ++i) o[i] = cast_value<T>(f(static_cast<C>(x[i])));
}

// The floating-only ops: the front end never sends them integers.
template <typename T, typename F> void map1_float(Op op, const Buffer& a, Buffer& out, F f) {
  if constexpr (kIsFloat<T>) {
    map1<T>(a, out, f);
  } else {
    KILN_INTERNAL_ASSERT(false, op_name(op), " needs a floating dtype");
  }
}

inline int64_t wrap_neg(int64_t x) {
  return static_cast<int64_t>(uint64_t{0} - static_cast<uint64_t>(x));
}

template <typename T> void unary_math(Op op, const Buffer& a, Buffer& out) {
  using C = compute_t<T>;
  constexpr bool fp = kIsFloat<T>;
  switch (op) {
    case Op::Neg:
      if constexpr (fp) map1<T>(a, out, [](C x) { return -x; });
      else map1<T>(a, out, [](C x) { return wrap_neg(x); });
      return;
    case Op::Abs:
      if constexpr (fp) map1<T>(a, out, [](C x) { return std::fabs(x); });
      else map1<T>(a, out, [](C x) { return x < 0 ? wrap_neg(x) : x; });
      return;
    case Op::Relu:  // NaN propagates (NaN > 0 is false, so test it apart)
      map1<T>(a, out, [](C x) { return (x > 0 || is_nan(x)) ? x : C(0); });
      return;
    case Op::Exp: map1_float<T>(op, a, out, [](auto x) { return std::exp(x); }); return;
    case Op::Log: map1_float<T>(op, a, out, [](auto x) { return std::log(x); }); return;
    case Op::Sqrt: map1_float<T>(op, a, out, [](auto x) { return std::sqrt(x); }); return;
    case Op::Rsqrt:
      map1_float<T>(op, a, out, [](auto x) { return decltype(x)(1) / std::sqrt(x); });
      return;
    case Op::Sin: map1_float<T>(op, a, out, [](auto x) { return std::sin(x); }); return;
    case Op::Cos: map1_float<T>(op, a, out, [](auto x) { return std::cos(x); }); return;
    case Op::Tanh: map1_float<T>(op, a, out, [](auto x) { return std::tanh(x); }); return;
    case Op::Log1p: map1_float<T>(op, a, out, [](auto x) { return std::log1p(x); }); return;
    case Op::Expm1: map1_float<T>(op, a, out, [](auto x) { return std::expm1(x); }); return;
    case Op::Erf: map1_float<T>(op, a, out, [](auto x) { return std::erf(x); }); return;
    case Op::Tan: map1_float<T>(op, a, out, [](auto x) { return std::tan(x); }); return;
    case Op::Asin: map1_float<T>(op, a, out, [](auto x) { return std::asin(x); }); return;
    case Op::Acos: map1_float<T>(op, a, out, [](auto x) { return std::acos(x); }); return;
    case Op::Atan: map1_float<T>(op, a, out, [](auto x) { return std::atan(x); }); return;
    case Op::Sinh: map1_float<T>(op, a, out, [](auto x) { return std::sinh(x); }); return;
    case Op::Cosh: map1_float<T>(op, a, out, [](auto x) { return std::cosh(x); }); return;
    case Op::Asinh: map1_float<T>(op, a, out, [](auto x) { return std::asinh(x); }); return;
    case Op::Acosh: map1_float<T>(op, a, out, [](auto x) { return std::acosh(x); }); return;
    case Op::Atanh: map1_float<T>(op, a, out, [](auto x) { return std::atanh(x); }); return;
    case Op::Log2: map1_float<T>(op, a, out, [](auto x) { return std::log2(x); }); return;
    case Op::Log10: map1_float<T>(op, a, out, [](auto x) { return std::log10(x); }); return;
    case Op::Exp2: map1_float<T>(op, a, out, [](auto x) { return std::exp2(x); }); return;
    // Integers never reach the rounding ops: the front end copies them.
    case Op::Floor: map1_float<T>(op, a, out, [](auto x) { return std::floor(x); }); return;
    case Op::Ceil: map1_float<T>(op, a, out, [](auto x) { return std::ceil(x); }); return;
    case Op::Trunc: map1_float<T>(op, a, out, [](auto x) { return std::trunc(x); }); return;
    case Op::Round:  // half to even, as PyTorch (nearbyint in the default rounding mode)
      map1_float<T>(op, a, out, [](auto x) { return std::nearbyint(x); });
      return;
    case Op::Sign:  // (0 < x) - (x < 0): NaN and -0 give +0, as PyTorch
      map1<T>(a, out, [](C x) { return static_cast<C>((C(0) < x) - (x < C(0))); });
      return;
    case Op::Sigmoid:
      map1_float<T>(op, a, out, [](auto x) {
        using F = decltype(x);
        return F(1) / (F(1) + std::exp(-x));
      });
      return;
    case Op::Cast: case Op::LogicalNot:  // dtype-changing: handled by eval_unary
    case Op::Buffer: case Op::Full: case Op::Arange: case Op::Linspace: case Op::Eye:
    case Op::RandUniform: case Op::RandNormal: case Op::RandInt:
    case Op::Add: case Op::Sub: case Op::Mul: case Op::Div: case Op::Pow: case Op::Atan2:
    case Op::Fmod: case Op::Maximum: case Op::Minimum: case Op::Eq: case Op::Ne: case Op::Lt: case Op::Le:
    case Op::Gt: case Op::Ge: case Op::Where: case Op::AsStrided: case Op::Assign: case Op::ScatterAdd: case Op::Scatter: case Op::Gather:
    case Op::Sum: case Op::Prod: case Op::Max: case Op::Min: case Op::ArgMax: case Op::ArgMin:
    case Op::All: case Op::Any: case Op::Matmul: case Op::Cat: case Op::CumSum: case Op::CumProd: case Op::LogCumSumExp:
    case Op::CumMax: case Op::CumMin: case Op::CumArgMax: case Op::CumArgMin: case Op::ArgSort: case Op::ToDevice:
      KILN_INTERNAL_ASSERT(false, "unary_math called for ", op_name(op));
  }
}

void cast(const Buffer& a, Buffer& out) {
  visit_dtype(a.dtype(), [&](auto from_tag) {
    using From = typename decltype(from_tag)::type;
    visit_dtype(out.dtype(), [&](auto to_tag) {
      using To = typename decltype(to_tag)::type;
      const From* x = a.as<From>();
      To* o = out.as<To>();
      for (int64_t i = 0; i < out.numel(); ++i) o[i] = cast_value<To>(x[i]);
    });
  });
}

void logical_not(const Buffer& a, Buffer& out) {
  KILN_INTERNAL_ASSERT(out.dtype() == DType::Bool, "LogicalNot produces bool");
  visit_dtype(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = a.as<T>();
    bool* o = out.as<bool>();
    for (int64_t i = 0; i < out.numel(); ++i) o[i] = !cast_value<bool>(x[i]);
  });
}

}  // namespace

BufferPtr eval_unary(const Node& n, const Inputs& in) {
  KILN_INTERNAL_ASSERT(in.size() == 1 && in[0]->numel() == n.numel(), op_name(n.op),
                       " input does not match its output shape ", n.shape);
  BufferPtr out = allocate_for(n);
  if (n.op == Op::Cast) {
    cast(*in[0], *out);
  } else if (n.op == Op::LogicalNot) {
    logical_not(*in[0], *out);
  } else {
    KILN_INTERNAL_ASSERT(in[0]->dtype() == n.dtype, op_name(n.op), " input dtype ",
                         in[0]->dtype(), " differs from its output's ", n.dtype);
    visit_dtype(n.dtype, [&](auto tag) {
      unary_math<typename decltype(tag)::type>(n.op, *in[0], *out);
    });
  }
  return out;
}

}  // namespace kiln::reference

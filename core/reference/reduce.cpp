// Reference kernels for the reductions (Sum, Prod, Max, Min, ArgMax, ArgMin,
// All, Any). The input is walked once in row-major order; each element is
// folded into the accumulator of its output position (reduced dims kept as
// size 1), so every output sees its elements in increasing index order.
#include "core/reference/kernels.h"

#include <cmath>

namespace kiln::reference {

namespace {

struct Reduction {
  Shape in_shape;
  std::vector<int64_t> out_strides;  // per input dim; 0 along reduced dims
  int64_t out_numel = 0;
  int64_t reduced_size = 1;          // elements folded into each output

  // Calls f(input index, output index, input coordinate) for each input element.
  template <typename F> void for_each(F f) const {
    Odometer it(in_shape, {out_strides}, {0});
    for (int64_t i = 0; i < in_shape.numel(); ++i, it.next()) f(i, it.pos[0], it.idx);
  }
};

Reduction describe(const Node& n) {
  const Shape& in_shape = n.inputs[0]->shape;
  KILN_INTERNAL_ASSERT(n.rank() == static_cast<int64_t>(in_shape.size()), op_name(n.op),
                       " output rank differs from its input's");
  Reduction r;
  r.in_shape = in_shape;
  r.out_strides = row_major_strides(n.shape);
  r.out_numel = n.numel();
  std::vector<bool> reduced(in_shape.size(), false);
  for (int64_t d : n.attrs.ints) {
    KILN_INTERNAL_ASSERT(d >= 0 && d < n.rank(), op_name(n.op), " reduces dim ", d,
                         " of a rank ", n.rank(), " input");
    reduced[d] = true;
  }
  for (size_t d = 0; d < in_shape.size(); ++d) {
    if (reduced[d]) {
      KILN_INTERNAL_ASSERT(n.shape[d] == 1, op_name(n.op), " keeps reduced dim ", d, " as ",
                           n.shape[d]);
      r.out_strides[d] = 0;
      r.reduced_size *= in_shape[d];
    } else {
      KILN_INTERNAL_ASSERT(n.shape[d] == in_shape[d], op_name(n.op), " changes kept dim ", d);
    }
  }
  return r;
}

// Sum / Prod: floats accumulate in double, integers in int64 with wraparound.
template <typename T> void sum_prod(bool is_sum, const Reduction& r, const Buffer& a, Buffer& out) {
  using A = accum_t<T>;
  std::vector<A> acc(static_cast<size_t>(r.out_numel), is_sum ? A(0) : A(1));
  const T* x = a.as<T>();
  r.for_each([&](int64_t i, int64_t o, const std::vector<int64_t>&) {
    const A v = static_cast<A>(static_cast<compute_t<T>>(x[i]));
    A& s = acc[static_cast<size_t>(o)];
    if constexpr (kIsFloat<T>) {
      s = is_sum ? s + v : s * v;
    } else {
      const uint64_t us = static_cast<uint64_t>(s), uv = static_cast<uint64_t>(v);
      s = static_cast<int64_t>(is_sum ? us + uv : us * uv);
    }
  });
  T* o = out.as<T>();
  for (int64_t k = 0; k < r.out_numel; ++k) o[k] = cast_value<T>(acc[static_cast<size_t>(k)]);
}

// Max / Min (values) and ArgMax / ArgMin (int64 index along the one reduced
// dim). The first extreme wins ties; a NaN is the extreme: the first NaN wins.
// Values order -0 below +0 (IEEE 754-2019 maximum / minimum), so a max or min
// of zeros does not depend on their order (the compiled kernels vectorize it).
template <typename T>
void extreme(bool is_max, bool is_arg, int64_t dim, const Reduction& r, const Buffer& a,
             Buffer& out) {
  using C = compute_t<T>;
  KILN_INTERNAL_ASSERT(r.out_numel == 0 || r.reduced_size > 0,
                       "max / min / argmax / argmin of an empty reduction");
  std::vector<C> best(static_cast<size_t>(r.out_numel), C(0));
  std::vector<int64_t> where(static_cast<size_t>(r.out_numel), -1);  // -1: nothing seen yet
  const T* x = a.as<T>();
  r.for_each([&](int64_t i, int64_t o, const std::vector<int64_t>& idx) {
    const C v = static_cast<C>(x[i]);
    const size_t k = static_cast<size_t>(o);
    bool take;
    if (where[k] < 0) take = true;
    else if (is_nan(best[k])) take = false;
    else if (is_nan(v)) take = true;
    else take = is_max ? v > best[k] : v < best[k];
    if (!take && !is_arg && v == best[k] && v == C(0))
      take = is_max ? (!std::signbit(static_cast<double>(v)) && std::signbit(static_cast<double>(best[k])))
                    : (std::signbit(static_cast<double>(v)) && !std::signbit(static_cast<double>(best[k])));
    if (take) {
      best[k] = v;
      where[k] = is_arg ? idx[static_cast<size_t>(dim)] : 0;
    }
  });
  if (is_arg) {
    int64_t* o = out.as<int64_t>();
    for (int64_t k = 0; k < r.out_numel; ++k) o[k] = where[static_cast<size_t>(k)];
  } else {
    T* o = out.as<T>();
    for (int64_t k = 0; k < r.out_numel; ++k) o[k] = cast_value<T>(best[static_cast<size_t>(k)]);
  }
}

// All / Any: truthy is != 0; empty All is true, empty Any is false.
template <typename T> void all_any(bool is_all, const Reduction& r, const Buffer& a, Buffer& out) {
  std::vector<bool> acc(static_cast<size_t>(r.out_numel), is_all);
  const T* x = a.as<T>();
  r.for_each([&](int64_t i, int64_t o, const std::vector<int64_t>&) {
    const bool v = cast_value<bool>(x[i]);
    const size_t k = static_cast<size_t>(o);
    acc[k] = is_all ? (acc[k] && v) : (acc[k] || v);
  });
  visit_dtype(out.dtype(), [&](auto tag) {
    using O = typename decltype(tag)::type;
    O* o = out.as<O>();
    for (int64_t k = 0; k < r.out_numel; ++k) o[k] = cast_value<O>(bool(acc[static_cast<size_t>(k)]));
  });
}

}  // namespace

BufferPtr eval_reduce(const Node& n, const Inputs& in) {
  KILN_INTERNAL_ASSERT(in.size() == 1, op_name(n.op), " takes one input");
  const Buffer& a = *in[0];
  const Reduction r = describe(n);
  BufferPtr out = allocate_for(n);
  auto same_dtype = [&] {
    KILN_INTERNAL_ASSERT(a.dtype() == n.dtype, op_name(n.op), " of ", a.dtype(),
                         " cannot produce ", n.dtype);
  };
  auto arg = [&](bool is_max) {
    KILN_INTERNAL_ASSERT(n.dtype == DType::Int64 && n.attrs.ints.size() == 1,
                         op_name(n.op), " produces int64 over exactly one dim");
    visit_dtype(a.dtype(), [&](auto tag) {
      extreme<typename decltype(tag)::type>(is_max, true, n.attrs.ints[0], r, a, *out);
    });
  };
  switch (n.op) {
    case Op::Sum:
    case Op::Prod:
      same_dtype();
      visit_dtype(a.dtype(), [&](auto tag) {
        sum_prod<typename decltype(tag)::type>(n.op == Op::Sum, r, a, *out);
      });
      break;
    case Op::Max:
    case Op::Min:
      same_dtype();
      visit_dtype(a.dtype(), [&](auto tag) {
        extreme<typename decltype(tag)::type>(n.op == Op::Max, false, 0, r, a, *out);
      });
      break;
    case Op::ArgMax: arg(true); break;
    case Op::ArgMin: arg(false); break;
    case Op::All:
    case Op::Any:
      visit_dtype(a.dtype(), [&](auto tag) {
        all_any<typename decltype(tag)::type>(n.op == Op::All, r, a, *out);
      });
      break;
    case Op::Buffer: case Op::Full: case Op::Arange: case Op::Linspace: case Op::Eye:
    case Op::RandUniform: case Op::RandNormal: case Op::RandInt:
    case Op::Cast: case Op::Neg: case Op::Exp: case Op::Log: case Op::Sqrt: case Op::Rsqrt:
    case Op::Abs: case Op::Sin: case Op::Cos: case Op::Tanh: case Op::Sigmoid: case Op::Relu:
    case Op::Floor: case Op::Ceil: case Op::Round: case Op::Trunc: case Op::Sign:
    case Op::Log1p: case Op::Expm1: case Op::Erf:
    case Op::Tan: case Op::Asin: case Op::Acos: case Op::Atan: case Op::Sinh: case Op::Cosh:
    case Op::Asinh: case Op::Acosh: case Op::Atanh: case Op::Log2: case Op::Log10: case Op::Exp2:
    case Op::LogicalNot: case Op::Add: case Op::Sub: case Op::Mul: case Op::Div: case Op::Pow: case Op::Atan2:
    case Op::Fmod: case Op::Maximum: case Op::Minimum: case Op::Eq: case Op::Ne: case Op::Lt: case Op::Le:
    case Op::Gt: case Op::Ge: case Op::Where: case Op::AsStrided: case Op::Assign: case Op::ScatterAdd: case Op::Scatter: case Op::Gather:
    case Op::Matmul: case Op::Cat: case Op::CumSum: case Op::CumProd: case Op::LogCumSumExp:
    case Op::CumMax: case Op::CumMin: case Op::CumArgMax: case Op::CumArgMin: case Op::ArgSort: case Op::ToDevice:
      KILN_INTERNAL_ASSERT(false, "eval_reduce called for ", op_name(n.op));
  }
  return out;
}

}  // namespace kiln::reference

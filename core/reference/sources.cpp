// Reference kernels for nodes without inputs: the index-computed sources
// (Full, Arange, Linspace, Eye) and the Philox random sources (RandUniform,
// RandNormal, RandInt; the generator and its maps live in core/philox.h).
#include "core/philox.h"
#include "core/reference/kernels.h"

namespace kiln::reference {

namespace {

void fill_full(const Node& n, Buffer& out) {
  visit_dtype(n.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T v;
    if constexpr (kIsFloat<T>) {
      KILN_INTERNAL_ASSERT(n.attrs.reals.size() == 1, "Full needs reals {value}");
      v = cast_value<T>(n.attrs.reals[0]);
    } else {
      KILN_INTERNAL_ASSERT(n.attrs.ints.size() >= 1, "Full needs ints {value}");
      v = cast_value<T>(n.attrs.ints[0]);
    }
    T* o = out.as<T>();
    for (int64_t i = 0; i < n.numel(); ++i) o[i] = v;
  });
}

void fill_arange(const Node& n, Buffer& out) {
  visit_dtype(n.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = out.as<T>();
    if constexpr (kIsFloat<T>) {
      KILN_INTERNAL_ASSERT(n.attrs.reals.size() == 2, "Arange needs reals {start, step}");
      const double start = n.attrs.reals[0], step = n.attrs.reals[1];
      for (int64_t i = 0; i < n.numel(); ++i)
        o[i] = cast_value<T>(start + static_cast<double>(i) * step);
    } else {
      KILN_INTERNAL_ASSERT(n.attrs.ints.size() == 2, "Arange needs ints {start, step}");
      const uint64_t start = static_cast<uint64_t>(n.attrs.ints[0]);
      const uint64_t step = static_cast<uint64_t>(n.attrs.ints[1]);
      for (int64_t i = 0; i < n.numel(); ++i)
        o[i] = cast_value<T>(static_cast<int64_t>(start + static_cast<uint64_t>(i) * step));
    }
  });
}

// PyTorch's linspace: start and end are first converted to the dtype (so an
// integer linspace starts from truncated endpoints), the step is computed in
// float (float32 / float16 / bfloat16) or double (float64, integers), and the
// second half counts back from the end so both endpoints are exact.
void fill_linspace(const Node& n, Buffer& out) {
  KILN_INTERNAL_ASSERT(n.attrs.reals.size() == 2, "Linspace needs reals {start, end}");
  visit_dtype(n.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using L = std::conditional_t<std::is_same_v<compute_t<T>, float>, float, double>;
    T* o = out.as<T>();
    const int64_t steps = n.numel();
    const L start = static_cast<L>(cast_value<T>(n.attrs.reals[0]));
    const L end = static_cast<L>(cast_value<T>(n.attrs.reals[1]));
    if (steps == 1) {
      o[0] = cast_value<T>(start);
      return;
    }
    const L step = (end - start) / static_cast<L>(steps - 1);
    const int64_t halfway = steps / 2;
    for (int64_t i = 0; i < steps; ++i) {
      const L v = i < halfway ? start + step * static_cast<L>(i)
                              : end - step * static_cast<L>(steps - 1 - i);
      o[i] = cast_value<T>(v);
    }
  });
}

void fill_eye(const Node& n, Buffer& out) {
  KILN_INTERNAL_ASSERT(n.rank() == 2, "Eye needs shape {n, m}");
  const int64_t rows = n.shape[0], cols = n.shape[1];
  visit_dtype(n.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = out.as<T>();
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) o[r * cols + c] = cast_value<T>(r == c);
  });
}

// Random nodes: element i uses philox_element(seed, offset, i).
void fill_random(const Node& n, Buffer& out) {
  KILN_INTERNAL_ASSERT(n.attrs.ints.size() >= 2, op_name(n.op), " needs ints {seed, offset, ...}");
  const uint64_t seed = static_cast<uint64_t>(n.attrs.ints[0]);
  const uint64_t offset = static_cast<uint64_t>(n.attrs.ints[1]);
  const Op op = n.op;
  visit_dtype(n.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = out.as<T>();
    if (op == Op::RandInt) {
      KILN_INTERNAL_ASSERT(n.attrs.ints.size() == 4, "RandInt needs ints {seed, offset, low, high}");
      const int64_t low = n.attrs.ints[2], high = n.attrs.ints[3];
      KILN_INTERNAL_ASSERT(high > low, "RandInt needs low < high, got ", low, ", ", high);
      for (int64_t i = 0; i < n.numel(); ++i)
        o[i] = cast_value<T>(philox_randint(philox_element(seed, offset, i), low, high));
      return;
    }
    KILN_INTERNAL_ASSERT(n.attrs.reals.size() == 2, op_name(op), " needs two reals");
    const double a = n.attrs.reals[0], b = n.attrs.reals[1];
    if (op == Op::RandNormal) {  // a = mean, b = std
      for (int64_t i = 0; i < n.numel(); ++i)
        o[i] = cast_value<T>(a + b * philox_normal_double(philox_element(seed, offset, i)));
      return;
    }
    KILN_INTERNAL_ASSERT(op == Op::RandUniform, "unexpected random op ", op_name(op));
    if constexpr (std::is_same_v<T, double>) {  // a = low, b = high
      for (int64_t i = 0; i < n.numel(); ++i)
        o[i] = a + (b - a) * philox_uniform_double(philox_element(seed, offset, i));
    } else if constexpr (kIsFloat<T>) {
      const float low = static_cast<float>(a), high = static_cast<float>(b);
      for (int64_t i = 0; i < n.numel(); ++i)
        o[i] = cast_value<T>(low + (high - low) * philox_uniform_float(philox_element(seed, offset, i)));
    } else {
      KILN_INTERNAL_ASSERT(false, "RandUniform needs a floating dtype, got ", n.dtype);
    }
  });
}

}  // namespace

BufferPtr eval_source(const Node& n) {
  BufferPtr out = allocate_for(n);
  switch (n.op) {
    case Op::Full: fill_full(n, *out); break;
    case Op::Arange: fill_arange(n, *out); break;
    case Op::Linspace: fill_linspace(n, *out); break;
    case Op::Eye: fill_eye(n, *out); break;
    case Op::Buffer:  // a leaf: evaluate() takes its buffer and never calls here
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
    case Op::Sum: case Op::Prod: case Op::Max: case Op::Min: case Op::ArgMax: case Op::ArgMin:
    case Op::All: case Op::Any: case Op::Matmul: case Op::Cat: case Op::CumSum: case Op::CumProd: case Op::LogCumSumExp:
    case Op::CumMax: case Op::CumMin: case Op::CumArgMax: case Op::CumArgMin: case Op::ArgSort: case Op::ToDevice:
      KILN_INTERNAL_ASSERT(false, "eval_source called for ", op_name(n.op));
  }
  return out;
}

BufferPtr eval_random(const Node& n) {
  BufferPtr out = allocate_for(n);
  switch (n.op) {
    case Op::RandUniform:
    case Op::RandNormal:
    case Op::RandInt: fill_random(n, *out); break;
    case Op::Buffer: case Op::Full: case Op::Arange: case Op::Linspace: case Op::Eye:
    case Op::Cast: case Op::Neg: case Op::Exp: case Op::Log: case Op::Sqrt: case Op::Rsqrt:
    case Op::Abs: case Op::Sin: case Op::Cos: case Op::Tanh: case Op::Sigmoid: case Op::Relu:
    case Op::Floor: case Op::Ceil: case Op::Round: case Op::Trunc: case Op::Sign:
    case Op::Log1p: case Op::Expm1: case Op::Erf:
    case Op::Tan: case Op::Asin: case Op::Acos: case Op::Atan: case Op::Sinh: case Op::Cosh:
    case Op::Asinh: case Op::Acosh: case Op::Atanh: case Op::Log2: case Op::Log10: case Op::Exp2:
    case Op::LogicalNot: case Op::Add: case Op::Sub: case Op::Mul: case Op::Div: case Op::Pow: case Op::Atan2:
    case Op::Fmod: case Op::Maximum: case Op::Minimum: case Op::Eq: case Op::Ne: case Op::Lt: case Op::Le:
    case Op::Gt: case Op::Ge: case Op::Where: case Op::AsStrided: case Op::Assign: case Op::ScatterAdd: case Op::Scatter: case Op::Gather:
    case Op::Sum: case Op::Prod: case Op::Max: case Op::Min: case Op::ArgMax: case Op::ArgMin:
    case Op::All: case Op::Any: case Op::Matmul: case Op::Cat: case Op::CumSum: case Op::CumProd: case Op::LogCumSumExp:
    case Op::CumMax: case Op::CumMin: case Op::CumArgMax: case Op::CumArgMin: case Op::ArgSort: case Op::ToDevice:
      KILN_INTERNAL_ASSERT(false, "eval_random called for ", op_name(n.op));
  }
  return out;
}

}  // namespace kiln::reference

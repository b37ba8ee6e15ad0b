// Reference kernel of the scans, along one dim in row-major order of the
// other dims. CumSum / CumProd accumulate as PyTorch's CPU kernels do (their
// acc_type: double for float32 / float64, float for float16 / bfloat16,
// int64 for integers, wrapping), each running value cast to the dtype;
// LogCumSumExp (floats) by PyTorch's _log_add_exp_helper in that type.
// CumMax / CumMin (and their positions, CumArgMax / CumArgMin) follow
// PyTorch's cummax_cummin_helper: a value >= (<=) the kept one, or a NaN,
// replaces it; nothing but a NaN replaces a NaN. ArgSort: the rows sorted
// by core/sort_rows.h, the rule the JIT's sort steps run too.
#include "core/reference/kernels.h"

#include "core/sort_rows.h"
#include "core/tensor_impl.h"

namespace kiln::reference {

namespace {
template <typename T>
using scan_acc_t = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, accum_t<T>>;

template <typename A>
A combine(Op op, A acc, A x) {
  if constexpr (std::is_integral_v<A>) {
    const auto ua = static_cast<uint64_t>(acc), ux = static_cast<uint64_t>(x);
    return static_cast<A>(op == Op::CumSum ? ua + ux : ua * ux);
  } else {
    if (op == Op::LogCumSumExp) return log_add_exp(x, acc);
    return op == Op::CumSum ? acc + x : acc * x;
  }
}
}  // namespace

BufferPtr eval_scan(const Node& n, const Inputs& in) {
  const bool positions = n.op == Op::CumArgMax || n.op == Op::CumArgMin;
  KILN_INTERNAL_ASSERT(op_class(n.op) == OpClass::Scan && in.size() == 1 && n.attrs.ints.size() == 1 &&
                           (positions ? n.dtype == DType::Int64 : in[0]->dtype() == n.dtype) &&
                           n.inputs[0]->shape == n.shape,
                       "unexpected scan ", op_name(n.op));
  BufferPtr out = allocate_for(n);
  const int64_t d = n.attrs.ints[0];
  const int64_t len = n.shape[static_cast<size_t>(d)];
  const int64_t stride = contiguous_strides(n.shape)[static_cast<size_t>(d)];
  if (n.numel() == 0) return out;
  const int64_t rows = n.numel() / len;
  const bool is_max = n.op == Op::CumMax || n.op == Op::CumArgMax;
  visit_dtype(in[0]->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = scan_acc_t<T>;
    using C = compute_t<T>;
    const T* x = in[0]->as<T>();
    for (int64_t r = 0; r < rows; ++r) {
      // row r: outer index r / stride, inner r % stride
      const int64_t base = (r / stride) * stride * len + r % stride;
      if (n.op == Op::CumSum || n.op == Op::CumProd || n.op == Op::LogCumSumExp) {
        T* o = out->as<T>();
        A acc = n.op == Op::CumSum ? A(0) : n.op == Op::CumProd ? A(1) : static_cast<A>(-INFINITY);
        for (int64_t i = 0; i < len; ++i) {
          const int64_t p = base + i * stride;
          A v;
          if constexpr (std::is_integral_v<A>) v = static_cast<A>(static_cast<int64_t>(x[p]));
          else v = static_cast<A>(static_cast<C>(x[p]));
          acc = combine<A>(n.op, acc, v);
          o[p] = cast_value<T>(acc);
        }
        continue;
      }
      T kept = x[base];
      int64_t where = 0;
      for (int64_t i = 0; i < len; ++i) {
        const int64_t p = base + i * stride;
        if (replaces<C>(is_max, static_cast<C>(x[p]), static_cast<C>(kept))) {
          kept = x[p];
          where = i;
        }
        if (positions) out->as<int64_t>()[p] = where;
        else out->as<T>()[p] = kept;
      }
    }
  });
  return out;
}

BufferPtr eval_sort(const Node& n, const Inputs& in) {
  KILN_INTERNAL_ASSERT(n.op == Op::ArgSort && in.size() == 1 &&
                           (n.attrs.ints.size() == 3 || n.attrs.ints.size() == 4) && n.dtype == DType::Int64,
                       "unexpected sort ", op_name(n.op));
  BufferPtr out = allocate_for(n);
  const Shape& xs = n.inputs[0]->shape;
  const int64_t d = n.attrs.ints[0];
  if (n.numel() > 0)
    sort_rows(*in[0], *out, xs, d, n.attrs.ints[1] != 0, n.attrs.ints[2], 0, xs.numel() / xs[static_cast<size_t>(d)],
              sort_select(n.attrs.ints));
  return out;
}

}  // namespace kiln::reference

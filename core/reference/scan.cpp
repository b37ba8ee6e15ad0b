// Reference kernel of the scans: CumSum, a running sum along one dim in
// row-major order of the other dims, accumulated as PyTorch's CPU kernel
// does (its acc_type: double for float32 / float64, float for float16 /
// bfloat16, int64 for integers), each running value cast to the dtype.
#include "core/reference/kernels.h"

#include "core/tensor_impl.h"

namespace kiln::reference {

namespace {
template <typename T>
using scan_acc_t = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, accum_t<T>>;
}  // namespace

BufferPtr eval_scan(const Node& n, const Inputs& in) {
  KILN_INTERNAL_ASSERT(n.op == Op::CumSum && in.size() == 1 && n.attrs.ints.size() == 1 &&
                           in[0]->dtype() == n.dtype && n.inputs[0]->shape == n.shape,
                       "unexpected scan ", op_name(n.op));
  BufferPtr out = allocate_for(n);
  const int64_t d = n.attrs.ints[0];
  const int64_t len = n.shape[static_cast<size_t>(d)];
  const int64_t stride = contiguous_strides(n.shape)[static_cast<size_t>(d)];
  if (n.numel() == 0) return out;
  const int64_t rows = n.numel() / len;
  visit_dtype(n.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = scan_acc_t<T>;
    const T* x = in[0]->as<T>();
    T* o = out->as<T>();
    for (int64_t r = 0; r < rows; ++r) {
      // row r: outer index r / stride, inner r % stride
      const int64_t base = (r / stride) * stride * len + r % stride;
      A acc = 0;
      for (int64_t i = 0; i < len; ++i) {
        const int64_t p = base + i * stride;
        if constexpr (std::is_integral_v<A>)
          acc = static_cast<A>(static_cast<uint64_t>(acc) + static_cast<uint64_t>(static_cast<int64_t>(x[p])));
        else acc += static_cast<A>(static_cast<compute_t<T>>(x[p]));
        o[p] = cast_value<T>(acc);
      }
    }
  });
  return out;
}

}  // namespace kiln::reference

// Reference kernel for Matmul: [..., M, K] x [..., K, N] -> [..., M, N] with
// equal batch dims, as a plain triple loop per batch. Floats accumulate in
// double, integers in int64 (wrapping), bool as an OR of ANDs. K = 0 gives 0.
#include "core/reference/kernels.h"

namespace kiln::reference {

namespace {

template <typename T>
void matmul(int64_t batch, int64_t m, int64_t k, int64_t n, const Buffer& a, const Buffer& b,
            Buffer& out) {
  using A = accum_t<T>;
  const T* x = a.as<T>();
  const T* y = b.as<T>();
  T* o = out.as<T>();
  for (int64_t bi = 0; bi < batch; ++bi) {
    const T* xb = x + bi * m * k;
    const T* yb = y + bi * k * n;
    T* ob = o + bi * m * n;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        if constexpr (std::is_same_v<T, bool>) {
          bool acc = false;
          for (int64_t p = 0; p < k && !acc; ++p) acc = xb[i * k + p] && yb[p * n + j];
          ob[i * n + j] = acc;
        } else if constexpr (kIsFloat<T>) {
          A acc = 0;
          for (int64_t p = 0; p < k; ++p)
            acc += static_cast<A>(static_cast<compute_t<T>>(xb[i * k + p])) *
                   static_cast<A>(static_cast<compute_t<T>>(yb[p * n + j]));
          ob[i * n + j] = cast_value<T>(acc);
        } else {
          uint64_t acc = 0;
          for (int64_t p = 0; p < k; ++p)
            acc += static_cast<uint64_t>(static_cast<int64_t>(xb[i * k + p])) *
                   static_cast<uint64_t>(static_cast<int64_t>(yb[p * n + j]));
          ob[i * n + j] = cast_value<T>(static_cast<int64_t>(acc));
        }
      }
    }
  }
}

}  // namespace

BufferPtr eval_matmul(const Node& node, const Inputs& in) {
  KILN_INTERNAL_ASSERT(node.op == Op::Matmul && in.size() == 2, "unexpected contraction op ",
                       op_name(node.op));
  const Shape& sa = node.inputs[0]->shape;
  const Shape& sb = node.inputs[1]->shape;
  const size_t r = sa.size();
  KILN_INTERNAL_ASSERT(r >= 2 && sb.size() == r && node.shape.size() == r,
                       "Matmul needs equal ranks >= 2, got ", sa, " x ", sb, " -> ", node.shape);
  int64_t batch = 1;
  for (size_t d = 0; d + 2 < r; ++d) {
    KILN_INTERNAL_ASSERT(sa[d] == sb[d] && sa[d] == node.shape[d], "Matmul batch dims differ: ",
                         sa, " x ", sb);
    batch *= sa[d];
  }
  const int64_t m = sa[r - 2], k = sa[r - 1], n = sb[r - 1];
  KILN_INTERNAL_ASSERT(sb[r - 2] == k && node.shape[r - 2] == m && node.shape[r - 1] == n,
                       "Matmul shapes do not chain: ", sa, " x ", sb, " -> ", node.shape);
  KILN_INTERNAL_ASSERT(in[0]->dtype() == node.dtype && in[1]->dtype() == node.dtype,
                       "Matmul inputs must have the output's dtype ", node.dtype);
  BufferPtr out = allocate_for(node);
  visit_dtype(node.dtype, [&](auto tag) {
    matmul<typename decltype(tag)::type>(batch, m, k, n, *in[0], *in[1], *out);
  });
  return out;
}

}  // namespace kiln::reference

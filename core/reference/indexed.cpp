// Reference kernels of the indexed ops: Gather (read x where an int64 index
// tensor says) and ScatterAdd (add src into a copy of base where the index
// says, in row-major order of the index), plain loops over row-major values.
#include "core/reference/kernels.h"

#include <cstring>

#include "core/tensor_impl.h"

namespace kiln::reference {

namespace {

// Calls f(i, p) for each flat position i of `shape` with p the flat position
// in `target` of the same multi-index but dim replaced by index[i]: the
// odometer walks the other dims (dim's stride 0), index[i] adds dim's.
template <typename F>
void for_each_indexed(const Shape& shape, const Shape& target, int64_t dim, const int64_t* index, F f) {
  const Shape ts = contiguous_strides(target);
  std::vector<int64_t> walk(ts.begin(), ts.end());
  walk[static_cast<size_t>(dim)] = 0;
  Odometer it(shape, {walk}, {0});
  for (int64_t i = 0; i < shape.numel(); ++i, it.next()) {
    KILN_INTERNAL_ASSERT(index[i] >= 0 && index[i] < target[dim], "index ", index[i], " out of range [0, ",
                         target[dim], ")");
    f(i, it.pos[0] + index[i] * ts[dim]);
  }
}

}  // namespace

BufferPtr eval_gather(const Node& n, const Inputs& in) {
  KILN_INTERNAL_ASSERT(n.op == Op::Gather && in.size() == 2 && n.attrs.ints.size() == 1, "unexpected op ",
                       op_name(n.op));
  const Node& x = *n.inputs[0];
  KILN_INTERNAL_ASSERT(in[1]->dtype() == DType::Int64 && x.rank() == n.rank() && in[0]->dtype() == n.dtype,
                       "Gather needs an int64 index of x's rank");
  BufferPtr out = allocate_for(n);
  const size_t es = element_size(n.dtype);
  const char* src = in[0]->as<const char>();
  char* o = out->as<char>();
  for_each_indexed(n.shape, x.shape, n.attrs.ints[0], in[1]->as<int64_t>(),
                   [&](int64_t i, int64_t p) { std::memcpy(o + i * es, src + p * es, es); });
  return out;
}

BufferPtr eval_scatter(const Node& n, const Inputs& in) {
  KILN_INTERNAL_ASSERT((n.op == Op::ScatterAdd || n.op == Op::Scatter) && in.size() == 3 && n.attrs.ints.size() == 1, "unexpected op ",
                       op_name(n.op));
  const Node& index = *n.inputs[1];
  KILN_INTERNAL_ASSERT(in[1]->dtype() == DType::Int64 && n.inputs[2]->shape == index.shape &&
                           in[0]->dtype() == n.dtype && in[2]->dtype() == n.dtype && index.rank() == n.rank(),
                       "scatters need an int64 index of base's rank and a source of its shape");
  BufferPtr out = allocate_for(n);
  if (n.numel() > 0) std::memcpy(out->data(), in[0]->data(), out->nbytes());
  visit_dtype(n.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const T* s = in[2]->as<T>();
    T* o = out->as<T>();
    const bool add = n.op == Op::ScatterAdd;
    // integers add wrapping mod 2^64 (then mod 2^bits), as the binary ops
    auto plus = [](C x, C y) {
      if constexpr (std::is_integral_v<C>)
        return static_cast<C>(static_cast<uint64_t>(x) + static_cast<uint64_t>(y));
      else return x + y;
    };
    for_each_indexed(index.shape, n.shape, n.attrs.ints[0], in[1]->as<int64_t>(), [&](int64_t i, int64_t p) {
      o[p] = add ? cast_value<T>(plus(static_cast<C>(o[p]), static_cast<C>(s[i]))) : s[i];
    });
  });
  return out;
}

}  // namespace kiln::reference

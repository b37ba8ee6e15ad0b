// cumsum: a CumSum node (one kernel whose loop along the dim carries the
// running sum; the elementwise work feeding it is computed in that loop).
// As PyTorch: integers and bool sum to int64, `dtype` casts the input
// first; the gradient is the reversed cumulative sum of the gradient.
#include <optional>

#include "core/ops_common.h"
#include "core/provenance.h"

namespace kiln {

Tensor cumsum_node(const Tensor& x, int64_t d, const char* op) {
  Attrs a;
  a.ints = {d};
  Tensor out = make_tensor(make_node(Op::CumSum, x.dtype(), x.device(), x.sizes(), node_list(node_of(x, op)), std::move(a)));
  if (auto f = record(autograd::GradFn::CumsumBackward0, out, {&x})) f->ints = {d};
  return out;
}

Tensor Tensor::cumsum(int64_t dim, std::optional<DType> dtype, SourceLoc loc) const {
  const LocScope at(loc);
  KILN_CHECK(defined(), "cumsum", "expected a defined tensor but got an undefined one");
  const int64_t d = wrap_dim(dim, this->dim(), "cumsum");
  const DType dt = dtype ? *dtype : is_floating_point() ? this->dtype() : DType::Int64;
  const Tensor x = this->dtype() == dt ? *this : to(dt);
  if (this->dim() == 0) return cumsum_node(x.reshape({1}), 0, "cumsum").reshape({});
  return cumsum_node(x, d, "cumsum");
}

}  // namespace kiln

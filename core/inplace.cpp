// In-place ops. A write never mutates a node: it computes the new value of
// the written region, then replaces the storage's node with an Assign node
// (old value, region replaced) and bumps the storage's version, so the base
// and every view on the storage see it. Autograd: the function recorded by
// the out-of-place op becomes the written tensor's history (through
// CopySlices on the base when it is a view), as PyTorch's rebase_history.
#include <algorithm>

#include "core/layout.h"
#include "core/ops_common.h"
#include "core/provenance.h"

namespace kiln {

namespace {
// Writes `value` (dst's dtype and device, dst's shape) into dst's region.
void write_into(const Tensor& dst, NodePtr value, const char* op) {
  TensorImpl& t = *dst.impl();
  for (size_t i = 0; i < t.sizes.size(); ++i)
    KILN_CHECK(!(t.strides[i] == 0 && t.sizes[i] > 1), op,
               "unsupported operation: more than one element of the written-to tensor refers to a "
               "single memory location. Please clone() the tensor before performing the operation.");
  KILN_INTERNAL_ASSERT(value->shape == t.sizes && value->dtype == t.dtype(), "write of ",
                       value->shape, " into ", t.sizes);
  Storage& s = *t.storage;
  if (t.covers_storage()) {
    write_storage(s, reshape_node(value, s.node->shape));
    return;
  }
  // The whole storage in another order (x.t(), a result in a permuted
  // layout): the new value is `value` read in memory order, no scatter.
  if (Shape p = storage_permutation(t); !p.empty()) {
    write_storage(s, reshape_node(permute_node(value, p), s.node->shape));
    return;
  }
  Attrs a;
  a.ints.push_back(t.offset);
  for (int64_t st : t.strides) a.ints.push_back(st);
  // node_list, not a braced list: the list's copies would hold the old node
  // until write_storage returns, and a write evaluated there (the depth
  // limit) could then not go into the old node's buffer in place.
  NodePtr assign = make_node(Op::Assign, s.dtype(), s.device(), s.node->shape, node_list(s.node, std::move(value)),
                             std::move(a));
  write_storage(s, std::move(assign));
}

// After a write to self: its history, or (grad mode off) the step boundary.
void finish_write(const Tensor& self, const autograd::FunctionPtr& fn) {
  if (fn) autograd::rebase_history(self, fn);
  else if (!GradMode::is_enabled() && self.impl()->requires_grad && !self.impl()->grad_fn &&
           !self.impl()->view_base)
    autograd::note_leaf_update(self);
}

}  // namespace

// self = result of an out-of-place op on self: checks PyTorch's in-place rules.
Tensor& assign_result(Tensor& self, const Tensor& result, const char* op) {
  autograd::check_inplace(self, op);
  KILN_CHECK(can_cast(result.dtype(), self.dtype()), op, "result type ",
             scalar_type_name(result.dtype()), " can't be cast to the desired output type ",
             scalar_type_name(self.dtype()));
  KILN_CHECK(result.sizes() == self.sizes(), op, "output with shape ", self.sizes(),
             " doesn't match the broadcast shape ", result.sizes());
  NodePtr v = cast_node(node_of(result, op), self.dtype());
  write_into(self, v, op);
  finish_write(self, result.impl()->grad_fn);
  return self;
}

namespace {

// PyTorch's assert_no_partial_overlap between the written tensor and an input:
// an input that shares some but not all of the written memory is refused
// (PyTorch would read elements it has already overwritten). As in PyTorch,
// layouts that are not dense are not examined.
void check_no_partial_overlap(const Tensor& self, const Tensor& src, const char* op) {
  if (!src.defined()) return;
  const TensorImpl& a = *self.impl();
  const TensorImpl& b = *src.impl();
  if (&a == &b || a.storage != b.storage || a.numel() == 0 || b.numel() == 0) return;
  if (!non_overlapping_and_dense(a.sizes, a.strides) || !non_overlapping_and_dense(b.sizes, b.strides)) return;
  const int64_t a0 = a.offset, a1 = a.offset + a.numel();
  const int64_t b0 = b.offset, b1 = b.offset + b.numel();
  const bool same = a0 == b0 && a1 == b1 && a.strides == b.strides;
  KILN_CHECK(same || a1 <= b0 || b1 <= a0, op,
             "unsupported operation: some elements of the input tensor and the written-to tensor "
             "refer to a single memory location. Please clone() the tensor before performing the "
             "operation. (written ", a.sizes, " at offset ", a.offset, ", input ", b.sizes,
             " at offset ", b.offset, ")");
}
}  // namespace

Tensor& Tensor::add_(const Tensor& o, Scalar alpha, SourceLoc loc) {
  const LocScope at(loc);
  check_defined(*this, "add_");
  check_no_partial_overlap(*this, o, "add_");
  return assign_result(*this, add(o, alpha), "add_");
}
Tensor& Tensor::add_(Scalar o, Scalar alpha, SourceLoc loc) {
  const LocScope at(loc);
  check_defined(*this, "add_"); return assign_result(*this, add(o, alpha), "add_");
}
Tensor& Tensor::sub_(const Tensor& o, Scalar alpha, SourceLoc loc) {
  const LocScope at(loc);
  check_defined(*this, "sub_");
  check_no_partial_overlap(*this, o, "sub_");
  return assign_result(*this, sub(o, alpha), "sub_");
}
Tensor& Tensor::sub_(Scalar o, Scalar alpha, SourceLoc loc) {
  const LocScope at(loc);
  check_defined(*this, "sub_"); return assign_result(*this, sub(o, alpha), "sub_");
}
Tensor& Tensor::mul_(const Tensor& o, SourceLoc loc) {
  const LocScope at(loc);
  check_defined(*this, "mul_");
  check_no_partial_overlap(*this, o, "mul_");
  return assign_result(*this, mul(o), "mul_");
}
Tensor& Tensor::mul_(Scalar o, SourceLoc loc) {
  const LocScope at(loc);
  check_defined(*this, "mul_"); return assign_result(*this, mul(o), "mul_");
}
Tensor& Tensor::div_(const Tensor& o, SourceLoc loc) {
  const LocScope at(loc);
  check_defined(*this, "div_");
  check_no_partial_overlap(*this, o, "div_");
  return assign_result(*this, div(o), "div_");
}
Tensor& Tensor::div_(Scalar o, SourceLoc loc) {
  const LocScope at(loc);
  check_defined(*this, "div_"); return assign_result(*this, div(o), "div_");
}
Tensor& Tensor::clamp_(std::optional<Scalar> lo, std::optional<Scalar> hi, SourceLoc loc) {
  const LocScope at(loc);
  check_defined(*this, "clamp_");
  return assign_result(*this, clamp(lo, hi), "clamp_");
}
Tensor& Tensor::masked_fill_(const Tensor& mask, Scalar value, SourceLoc loc) {
  const LocScope at(loc);
  check_defined(*this, "masked_fill_");
  return assign_result(*this, masked_fill(mask, value), "masked_fill_");
}
Tensor& Tensor::masked_fill_(const Tensor& mask, const Tensor& value, SourceLoc loc) {
  const LocScope at(loc);
  check_defined(*this, "masked_fill_");
  return assign_result(*this, masked_fill(mask, value), "masked_fill_");
}
Tensor& Tensor::addcmul_(const Tensor& tensor1, const Tensor& tensor2, Scalar value, SourceLoc loc) {
  const LocScope at(loc);
  check_defined(*this, "addcmul_");
  check_no_partial_overlap(*this, tensor1, "addcmul_");
  check_no_partial_overlap(*this, tensor2, "addcmul_");
  return assign_result(*this, addcmul(tensor1, tensor2, value), "addcmul_");
}
Tensor& Tensor::addcdiv_(const Tensor& tensor1, const Tensor& tensor2, Scalar value, SourceLoc loc) {
  const LocScope at(loc);
  check_defined(*this, "addcdiv_");
  check_no_partial_overlap(*this, tensor1, "addcdiv_");
  check_no_partial_overlap(*this, tensor2, "addcdiv_");
  return assign_result(*this, addcdiv(tensor1, tensor2, value), "addcdiv_");
}
Tensor& Tensor::lerp_(const Tensor& end, Scalar weight, SourceLoc loc) {
  const LocScope at(loc);
  check_defined(*this, "lerp_");
  check_no_partial_overlap(*this, end, "lerp_");
  return assign_result(*this, lerp(end, weight), "lerp_");
}
Tensor& Tensor::lerp_(const Tensor& end, const Tensor& weight, SourceLoc loc) {
  const LocScope at(loc);
  check_defined(*this, "lerp_");
  check_no_partial_overlap(*this, end, "lerp_");
  check_no_partial_overlap(*this, weight, "lerp_");
  return assign_result(*this, lerp(end, weight), "lerp_");
}
Tensor& Tensor::tril_(int64_t diagonal, SourceLoc loc) {
  const LocScope at(loc);
  check_defined(*this, "tril_");
  return assign_result(*this, tril(diagonal), "tril_");
}
Tensor& Tensor::triu_(int64_t diagonal, SourceLoc loc) {
  const LocScope at(loc);
  check_defined(*this, "triu_");
  return assign_result(*this, triu(diagonal), "triu_");
}

// The indexed writes: the out-of-place op's result written back.
Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, const Tensor& src, SourceLoc loc) {
  const LocScope at(loc);
  check_defined(*this, "scatter_");
  return assign_result(*this, scatter(dim, index, src), "scatter_");
}
Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, Scalar value, SourceLoc loc) {
  const LocScope at(loc);
  check_defined(*this, "scatter_");
  return assign_result(*this, scatter(dim, index, value), "scatter_");
}
Tensor& Tensor::scatter_add_(int64_t dim, const Tensor& index, const Tensor& src, SourceLoc loc) {
  const LocScope at(loc);
  check_defined(*this, "scatter_add_");
  return assign_result(*this, scatter_add(dim, index, src), "scatter_add_");
}
Tensor& Tensor::index_add_(int64_t dim, const Tensor& index, const Tensor& source, Scalar alpha, SourceLoc loc) {
  const LocScope at(loc);
  check_defined(*this, "index_add_");
  return assign_result(*this, index_add(dim, index, source, alpha), "index_add_");
}
Tensor& Tensor::index_copy_(int64_t dim, const Tensor& index, const Tensor& source, SourceLoc loc) {
  const LocScope at(loc);
  check_defined(*this, "index_copy_");
  return assign_result(*this, index_copy(dim, index, source), "index_copy_");
}
Tensor& Tensor::index_fill_(int64_t dim, const Tensor& index, Scalar value, SourceLoc loc) {
  const LocScope at(loc);
  check_defined(*this, "index_fill_");
  return assign_result(*this, index_fill(dim, index, value), "index_fill_");
}

// fill_ may write an expanded view, as in PyTorch: every element gets the
// same value, so it writes each memory location once (stride-0 dims collapse).
static Tensor distinct_locations(const Tensor& t) {
  Shape sizes = t.sizes();
  bool collapsed = false;
  for (size_t i = 0; i < sizes.size(); ++i)
    if (t.strides()[i] == 0 && sizes[i] > 1) {
      sizes[i] = 1;
      collapsed = true;
    }
  return collapsed ? make_view(t, sizes, t.strides(), t.storage_offset()) : t;
}

static Tensor& fill_scalar(Tensor& self, Scalar v, GradFn kind, const char* op) {
  check_defined(self, op);
  autograd::check_inplace(self, op);
  check_fill_value(v, self.dtype(), op);
  auto fn = autograd::make_function(kind, {&self});
  Tensor dst = distinct_locations(self);
  write_into(dst, full_node(dst.sizes(), v, self.dtype(), self.device()), op);
  finish_write(self, fn);
  return self;
}
Tensor& Tensor::fill_(Scalar v, SourceLoc loc) {
  const LocScope at(loc);
  return fill_scalar(*this, v, GradFn::FillBackward0, "fill_");
}
Tensor& Tensor::zero_(SourceLoc loc) {
  const LocScope at(loc);
  return fill_scalar(*this, 0, GradFn::ZeroBackward0, "zero_");
}

Tensor& Tensor::fill_(const Tensor& v, SourceLoc loc) {
  const LocScope at(loc);
  check_defined(*this, "fill_");
  KILN_CHECK(v.dim() == 0, "fill_", "fill_ only supports 0-dimension value tensor but got tensor with ",
             v.dim(), " dimensions.");
  // The value is read before the write (PyTorch reads it as a scalar), so a
  // value aliasing this tensor is fine.
  autograd::check_inplace(*this, "fill_");
  auto fn = autograd::make_function(GradFn::FillBackward2, {this, &v});
  Tensor dst = distinct_locations(*this);
  NodePtr n = node_of(v, "fill_");
  if (v.device() != device()) n = make_node(Op::ToDevice, n->dtype, device(), n->shape, {n});
  write_into(dst, expand_node(cast_node(n, dtype()), dst.sizes()), "fill_");
  finish_write(*this, fn);
  return *this;
}

Tensor& Tensor::copy_(const Tensor& src, SourceLoc loc) {
  const LocScope at(loc);
  check_defined(*this, "copy_");
  check_defined(src, "copy_");
  check_no_partial_overlap(*this, src, "copy_");
  autograd::check_inplace(*this, "copy_");
  Shape b = broadcast_shapes(sizes(), src.sizes(), "copy_");
  KILN_CHECK(b == sizes(), "copy_", "output with shape ", sizes(),
             " doesn't match the broadcast shape ", b, " (copy_ from ", src.sizes(), ")");
  NodePtr v = node_of(src, "copy_");
  if (src.device() != device()) v = make_node(Op::ToDevice, v->dtype, device(), v->shape, {v});
  v = expand_node(cast_node(v, dtype()), sizes());
  auto fn = autograd::make_function(GradFn::CopyBackwards, {this, &src});
  write_into(*this, v, "copy_");
  finish_write(*this, fn);
  return *this;
}

// Assignment cannot take a location: the write is stamped with the view's.
Tensor& Tensor::operator=(const Tensor& src) && {
  const LocScope at(impl_ ? impl_->view_loc : SourceLoc{});
  return copy_(src);
}
Tensor& Tensor::operator=(Scalar v) && {
  const LocScope at(impl_ ? impl_->view_loc : SourceLoc{});
  return fill_(v);
}

// As LibTorch's set_item (copy_to): equal shapes copy; a 0-dim CPU value
// fills; otherwise the value's leading size-1 dims are dropped and it is
// broadcast into the indexed region.
//
// With tensor indices (advanced indexing): a scalar through one mask is
// masked_fill_ (no positions needed); otherwise the indexed view gets its
// new value, the value scattered into it (advanced_index.cpp).
namespace {
bool put_through_tensors(const Tensor& self, std::initializer_list<indexing::TensorIndex> indices, const Tensor& v) {
  std::vector<int64_t> dims;
  std::vector<Tensor> tensors;
  Tensor dst = apply_basic_index(self, indices, &dims, &tensors);
  if (tensors.empty()) return false;
  check_defined(v, "index_put_");
  const Tensor& first = tensors[0];
  if (tensors.size() == 1 && is_mask(first) && v.dim() == 0 && first.dtype() == DType::Bool) {
    const int64_t d = dims[0];
    check_mask_shape(first, dst, d, "index_put_");
    Shape m(static_cast<size_t>(dst.dim()), 1);
    for (int64_t j = 0; j < first.dim(); ++j) m[static_cast<size_t>(d + j)] = first.size(j);
    dst.masked_fill_(first.reshape(m), v.device() == dst.device() ? v : v.to(dst.device()));
    return true;
  }
  dst.copy_(put_by_tensors(dst, dims, tensors, v.dtype() == dst.dtype() || v.dim() > 0 ? v : v.to(dst.dtype()),
                           false));
  return true;
}
}  // namespace

Tensor& Tensor::index_put_(std::initializer_list<indexing::TensorIndex> indices, const Tensor& v, SourceLoc loc) {
  const LocScope at(loc);
  if (put_through_tensors(*this, indices, v)) return *this;
  Tensor dst = index(indices);
  check_defined(v, "index_put_");
  if (dst.sizes() == v.sizes()) {
    dst.copy_(v);
  } else if (v.dim() == 0 && v.device().is_cpu()) {
    dst.fill_(v);
  } else {
    size_t lead = 0;
    while (lead < v.sizes().size() && v.sizes()[lead] == 1) ++lead;
    Shape s(v.sizes().begin() + lead, v.sizes().end());
    dst.copy_(lead ? v.view(s) : v);
  }
  return *this;
}
Tensor& Tensor::index_put_(std::initializer_list<indexing::TensorIndex> indices, Scalar v, SourceLoc loc) {
  const LocScope at(loc);
  for (const auto& i : indices)
    if (i.kind() == indexing::TensorIndex::Kind::Tensor) {
      check_fill_value(v, dtype(), "index_put_");
      return index_put_(indices, full({}, v, TensorOptions(dtype()).device(device())));
    }
  index(indices).fill_(v);
  return *this;
}

// LibTorch's index_put_(indices, values, accumulate): one position tensor
// (or mask) per leading dim.
Tensor Tensor::index_put(const std::vector<Tensor>& indices, const Tensor& values, bool accumulate,
                         SourceLoc loc) const {
  const LocScope at(loc);
  KILN_CHECK(defined() && values.defined(), "index_put", "expected defined tensors but got an undefined one");
  std::vector<int64_t> dims;
  std::vector<Tensor> tensors;
  int64_t d = 0;
  for (const Tensor& t : indices) {
    KILN_CHECK(t.defined(), "index_put", "expected defined index tensors but got an undefined one");
    dims.push_back(d);
    tensors.push_back(t);
    d += is_mask(t) ? t.dim() : 1;
  }
  KILN_CHECK(!indices.empty() && d <= dim(), "index_put", "too many indices for tensor of dimension ", dim(),
             " (got ", d, ")");
  return put_by_tensors(*this, dims, tensors, values, accumulate);
}
Tensor& Tensor::index_put_(const std::vector<Tensor>& indices, const Tensor& values, bool accumulate,
                           SourceLoc loc) {
  const LocScope at(loc);
  check_defined(*this, "index_put_");
  return assign_result(*this, index_put(indices, values, accumulate), "index_put_");
}

}  // namespace kiln

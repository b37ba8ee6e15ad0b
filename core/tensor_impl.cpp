// TensorImpl: a view of a lazily computed storage; building its value node.
#include "core/tensor_impl.h"

#include "core/eval_reason.h"
#include "core/pool_alloc.h"
#include "core/provenance.h"
#include "kiln/error.h"

namespace kiln {

Shape contiguous_strides(const Shape& sizes) {
  Shape strides(sizes.size());
  int64_t s = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = s;
    s *= std::max<int64_t>(sizes[i], 1);
  }
  return strides;
}

bool TensorImpl::is_contiguous() const {
  // PyTorch's rule: size-1 dims may have any stride; empty tensors are contiguous.
  if (numel() == 0) return true;
  int64_t expected = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    if (sizes[i] == 1) continue;
    if (strides[i] != expected) return false;
    expected *= sizes[i];
  }
  return true;
}

bool TensorImpl::compute_covers() const {
  covers_ = offset == 0 && is_contiguous() && numel() == storage->numel();
  return covers_ != 0;
}

const NodePtr& TensorImpl::node() const {
  const NodePtr& base = storage->node;
  if (covers_storage() && sizes == base->shape) return base;
  if (cached_ && cached_base_ == base.get()) return cached_;
  Attrs attrs;
  attrs.ints.reserve(strides.size() + 1);
  attrs.ints.push_back(offset);
  for (int64_t s : strides) attrs.ints.push_back(s);
  const LocScope at(view_loc, kForceLoc);
  cached_ = make_node(Op::AsStrided, base->dtype, base->device, sizes, {base}, std::move(attrs));
  cached_base_ = base.get();
  return cached_;
}

Tensor make_tensor(NodePtr node, bool requires_grad) {
  auto impl = make_pooled<TensorImpl>();
  impl->sizes = node->shape;
  impl->strides = contiguous_strides(node->shape);
  impl->storage = make_pooled<Storage>();
  impl->storage->node = std::move(node);
  impl->covers_ = 1;
  impl->requires_grad = requires_grad;
  if (impl->storage->node->depth > kAutoEvalDepth) {
    EvalReasonScope reason(EvalReason::DepthLimit);
    realize({impl.get()});
  }
  return Tensor(std::move(impl));
}

Tensor make_tensor(NodePtr value, Shape sizes, Shape strides, bool requires_grad) {
  if (strides == contiguous_strides(sizes) && sizes == value->shape) return make_tensor(std::move(value), requires_grad);
  auto impl = make_pooled<TensorImpl>();
  impl->sizes = std::move(sizes);
  impl->strides = std::move(strides);
  impl->storage = make_pooled<Storage>();
  impl->storage->node = std::move(value);
  impl->requires_grad = requires_grad;
  impl->view_loc = current_loc();  // its reads (an AsStrided node) are the op's line
  if (impl->storage->node->depth > kAutoEvalDepth) {
    EvalReasonScope reason(EvalReason::DepthLimit);
    realize({impl.get()});
  }
  return Tensor(std::move(impl));
}

Tensor make_view(const Tensor& base, Shape sizes, Shape strides, int64_t offset) {
  auto impl = make_pooled<TensorImpl>();
  impl->storage = base.impl()->storage;
  impl->sizes = std::move(sizes);
  impl->strides = std::move(strides);
  impl->offset = offset;
  const TensorImpl& b = *base.impl();
  impl->view_base = b.view_base ? b.view_base : base.impl_ptr();
  impl->view_version = impl->storage->version;
  impl->view_loc = current_loc();
  return Tensor(std::move(impl));
}

const NodePtr& node_of(const Tensor& t, const char* op) {
  KILN_CHECK(t.defined(), op, "expected a defined tensor but got an undefined one");
  return t.impl()->node();
}

}  // namespace kiln

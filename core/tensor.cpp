// Tensor attributes, evaluation, reading values, conversion and the
// requires_grad flag. Reading methods are where lazy graphs get evaluated.
#include <cstring>

#include "core/eval_reason.h"
#include "core/layout.h"
#include "core/ops_common.h"
#include "core/provenance.h"

namespace kiln {

namespace {
const TensorImpl& impl_of(const Tensor& t, const char* op) {
  KILN_CHECK(t.defined(), op, "expected a defined tensor but got an undefined one");
  return *t.impl();
}

void check_host(const Tensor& t, const char* op) {
  KILN_CHECK(t.device().is_cpu(), op, "cannot read a tensor on ", t.device(),
             " from the host: copy it to the CPU with .cpu() first");
}

// Reads element `flat` of a buffer, converted to T (as a C++ cast would,
// bool as != 0).
template <typename T>
T read_elem(const Buffer& b, int64_t flat) {
  switch (b.dtype()) {
#define KILN_READ(name, type)                                              \
  case DType::name: {                                                      \
    type v = b.as<type>()[flat];                                           \
    if constexpr (std::is_same_v<T, bool>) return static_cast<float>(v) != 0.0f; \
    else if constexpr (std::is_same_v<type, Half> || std::is_same_v<type, BFloat16>) \
      return static_cast<T>(static_cast<float>(v));                        \
    else return static_cast<T>(v);                                         \
  }
    KILN_FORALL_DTYPES(KILN_READ)
#undef KILN_READ
  }
  return T{};
}

// Visits the flat storage positions of a view in row-major order.
template <typename F>
void for_each_position(const TensorImpl& t, F&& f) {
  const int64_t n = t.numel();
  if (n == 0) return;
  const size_t rank = t.sizes.size();
  std::vector<int64_t> idx(rank, 0);
  int64_t pos = t.offset;
  for (int64_t i = 0; i < n; ++i) {
    f(pos);
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < t.sizes[d]) {
        pos += t.strides[d];
        break;
      }
      pos -= t.strides[d] * (t.sizes[d] - 1);
      idx[d] = 0;
    }
  }
}

// `why`: the read, for KILN_LOG=jit's evaluation reason.
const Buffer& realized_buffer(const Tensor& t, EvalReason why) {
  {
    EvalReasonScope reason(read_reason(why));
    t.eval();
  }
  const Node& n = *t.impl()->storage->node;
  KILN_INTERNAL_ASSERT(n.op == Op::Buffer && n.buffer, "storage not realized after eval");
  return *n.buffer;
}
}  // namespace

// ---- attributes ----
const Shape& Tensor::sizes() const { return impl_of(*this, "sizes").sizes; }
const Shape& Tensor::strides() const { return impl_of(*this, "strides").strides; }
int64_t Tensor::size(int64_t d) const { return sizes()[wrap_dim(d, dim(), "size")]; }
int64_t Tensor::stride(int64_t d) const { return strides()[wrap_dim(d, dim(), "stride")]; }
int64_t Tensor::storage_offset() const { return impl_of(*this, "storage_offset").offset; }
int64_t Tensor::dim() const { return static_cast<int64_t>(sizes().size()); }
int64_t Tensor::numel() const { return impl_of(*this, "numel").numel(); }
DType Tensor::dtype() const { return impl_of(*this, "dtype").dtype(); }
Device Tensor::device() const { return impl_of(*this, "device").device(); }
bool Tensor::is_contiguous() const { return impl_of(*this, "is_contiguous").is_contiguous(); }
bool Tensor::is_floating_point() const { return kiln::is_floating_point(dtype()); }
size_t Tensor::element_size() const { return kiln::element_size(dtype()); }
TensorOptions Tensor::options() const {
  return TensorOptions(dtype()).device(device()).requires_grad(requires_grad());
}
bool Tensor::is_alias_of(const Tensor& o) const {
  return defined() && o.defined() && impl_->storage == o.impl()->storage;
}

// ---- autograd (the engine is core/autograd/) ----
bool Tensor::requires_grad() const {
  if (!defined()) return false;
  if (impl_->requires_grad) return true;
  // A view of a tensor that gained a history through an in-place write.
  return impl_->view_base && impl_->view_base->grad_fn && autograd::grad_fn_of(*impl_);
}
bool Tensor::is_leaf() const {
  return !autograd::grad_fn_of(const_cast<TensorImpl&>(impl_of(*this, "is_leaf")));
}
std::shared_ptr<autograd::Node> Tensor::grad_fn() const {
  return autograd::grad_fn_of(const_cast<TensorImpl&>(impl_of(*this, "grad_fn")));
}
void Tensor::backward(const Tensor& gradient, std::optional<bool> retain_graph,
                      bool create_graph, SourceLoc loc) const {
  const LocScope at(loc);
  autograd::backward({*this}, {gradient}, retain_graph, create_graph);
}
void Tensor::retain_grad() const {
  TensorImpl& t = const_cast<TensorImpl&>(impl_of(*this, "retain_grad"));
  KILN_CHECK(t.requires_grad || requires_grad(), "retain_grad",
             "can't retain_grad on Tensor that has requires_grad=False");
  auto fn = autograd::grad_fn_of(t);
  if (!fn || t.retains_grad) return;  // a leaf keeps its grad anyway
  t.retains_grad = true;
  fn->retained.push_back(impl_);
}
bool Tensor::retains_grad() const { return impl_of(*this, "retains_grad").retains_grad; }
int64_t Tensor::_version() const {
  return static_cast<int64_t>(impl_of(*this, "_version").storage->version);
}
void Tensor::set_grad(const Tensor& g) {
  TensorImpl& t = const_cast<TensorImpl&>(impl_of(*this, "set_grad"));
  if (g.defined()) {
    KILN_CHECK(g.sizes() == t.sizes, "set_grad", "assigned grad has data of a different size (grad ",
               g.sizes(), ", tensor ", t.sizes, ")");
    KILN_CHECK(g.dtype() == t.dtype(), "set_grad", "assigned grad has data of a different type (grad ",
               scalar_type_name(g.dtype()), ", tensor ", scalar_type_name(t.dtype()), ")");
    KILN_CHECK(g.device() == t.device(), "set_grad",
               "assigned grad has data located on a different device (grad ", g.device(),
               ", tensor ", t.device(), ")");
  }
  t.grad = g;
}
Tensor& Tensor::requires_grad_(bool r) {
  TensorImpl& t = const_cast<TensorImpl&>(impl_of(*this, "requires_grad_"));
  KILN_CHECK(!r || kiln::is_floating_point(t.dtype()), "requires_grad_",
             "only Tensors of floating point dtype can require gradients (got ",
             dtype_name(t.dtype()), ")");
  KILN_CHECK(!t.grad_fn || r, "requires_grad_",
             "you can only change requires_grad flags of leaf variables. If you want to use a "
             "computed variable in a subgraph that doesn't require differentiation use "
             "var_no_grad = var.detach().");
  t.requires_grad = r;
  return *this;
}
const Tensor& Tensor::grad() const { return impl_of(*this, "grad").grad; }
Tensor& Tensor::mutable_grad() { return const_cast<TensorImpl&>(impl_of(*this, "grad")).grad; }

// ---- evaluation ----
const Tensor& Tensor::eval() const {
  realize({&impl_of(*this, "eval")});
  return *this;
}

void eval(const std::vector<Tensor>& tensors) {
  std::vector<const TensorImpl*> impls;
  for (const Tensor& t : tensors) impls.push_back(&impl_of(t, "eval"));
  realize(impls);
}

template <typename T> T Tensor::item() const {
  KILN_CHECK(numel() == 1, "item", "a Tensor with ", numel(),
             " elements cannot be converted to Scalar (only one element tensors can; shape ",
             sizes(), ")");
  check_host(*this, "item");
  return read_elem<T>(realized_buffer(*this, EvalReason::Item), impl_->offset);
}

Scalar Tensor::item() const {
  DType d = dtype();
  if (d == DType::Bool) return Scalar(item<bool>());
  if (kiln::is_floating_point(d)) return Scalar(item<double>());
  return Scalar(item<int64_t>());
}

template <typename T> std::vector<T> Tensor::to_vector() const {
  check_host(*this, "to_vector");
  const Buffer& b = realized_buffer(*this, EvalReason::ToVector);
  std::vector<T> out;
  out.reserve(static_cast<size_t>(numel()));
  for_each_position(*impl_, [&](int64_t pos) { out.push_back(read_elem<T>(b, pos)); });
  return out;
}

void* Tensor::data_ptr() const {
  check_host(*this, "data_ptr");
  const Buffer& b = realized_buffer(*this, EvalReason::DataPtr);
  return static_cast<char*>(b.data()) + impl_->offset * static_cast<int64_t>(element_size());
}

template <typename T> T* Tensor::data_ptr() const {
  KILN_CHECK(dtype() == dtype_of<T>::value, "data_ptr", "expected scalar type ",
             scalar_type_name(dtype_of<T>::value), " but found ", scalar_type_name(dtype()));
  return static_cast<T*>(data_ptr());
}

#define KILN_INSTANTIATE(name, type)                          \
  template type Tensor::item<type>() const;                   \
  template std::vector<type> Tensor::to_vector<type>() const; \
  template type* Tensor::data_ptr<type>() const;
KILN_FORALL_DTYPES(KILN_INSTANTIATE)
#undef KILN_INSTANTIATE

// ---- conversion ----
Tensor Tensor::to(DType d, SourceLoc loc) const {
  const LocScope at(loc);
  NodePtr n = node_of(*this, "to");
  if (d == dtype()) return *this;
  KILN_CHECK(!requires_grad() || kiln::is_floating_point(d), "to",
             "only Tensors of floating point dtype can require gradients (converting to ",
             dtype_name(d), ")");
  const OutputLayout layout(*this);  // preserve_format, as PyTorch's
  Tensor out = layout.make(layout.read(*this, d, "to"));
  record(GradFn::ToCopyBackward0, out, {this});
  return out;
}

Tensor Tensor::to(Device dev, SourceLoc loc) const {
  const LocScope at(loc);
  NodePtr n = node_of(*this, "to");
  if (dev == device()) return *this;
  const OutputLayout layout(*this);  // preserve_format: a permuted tensor moves as its memory
  NodePtr v = layout.read(*this, n->dtype, "to");
  Tensor out = layout.make(make_node(Op::ToDevice, n->dtype, dev, layout.value_shape(), node_list(std::move(v))));
  record(GradFn::ToCopyBackward0, out, {this});
  return out;
}

Tensor Tensor::to(Device dev, DType d, SourceLoc loc) const {
  const LocScope at(loc);
  return to(dev).to(d);
}

Tensor Tensor::to(const TensorOptions& o, SourceLoc loc) const {
  const LocScope at(loc);
  Tensor r = *this;
  if (o.has_device()) r = r.to(o.device());
  if (o.has_dtype()) r = r.to(*o.dtype_opt());
  return r;
}

}  // namespace kiln

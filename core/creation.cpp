// Creation functions: tensor() from nested data, from_blob (aliasing), the
// constant and sequence factories, and their *_like forms. Each returns at
// once with a source node; only tensor() copies (the caller's data, now).
#include <cmath>
#include <cstring>
#include <limits>

#include "core/layout.h"
#include "core/ops_common.h"
#include "core/provenance.h"

namespace kiln {

namespace {
void check_numel(const Shape& sizes, const char* op) {
  check_shape_nonneg(sizes, op);
  int64_t n = 1;
  for (int64_t s : sizes) {
    KILN_CHECK(s == 0 || n <= std::numeric_limits<int64_t>::max() / s, op,
               "the number of elements of shape ", sizes, " overflows int64");
    n *= s;
  }
}

void check_requires_grad(const TensorOptions& o, DType d, const char* op) {
  KILN_CHECK(!o.requires_grad() || is_floating_point(d), op,
             "only Tensors of floating point dtype can require gradients (got ", dtype_name(d), ")");
}

// Places a CPU-built node on the requested device.
NodePtr on_device(NodePtr n, Device d) {
  if (n->device == d) return n;
  DType dt = n->dtype;
  Shape shape = n->shape;  // read before n is moved into the inputs
  return make_node(Op::ToDevice, dt, d, std::move(shape), {std::move(n)});
}

Tensor finish(NodePtr n, const TensorOptions& o, const char* op) {
  check_requires_grad(o, n->dtype, op);
  Tensor t = make_tensor(std::move(n));
  if (o.requires_grad()) t.impl()->requires_grad = true;
  return t;
}

DType scalar_default_dtype(const Scalar& s) { return wrapped_scalar_dtype(s); }
}  // namespace

// ---- nested data ----
NestedData::NestedData(std::initializer_list<NestedData> list) {
  sizes_.push_back(static_cast<int64_t>(list.size()));
  if (list.size() == 0) {
    kind_ = Scalar::Kind::Float;  // torch.tensor([]) is float32
    return;
  }
  const NestedData& first = *list.begin();
  int64_t i = 0;
  kind_ = first.kind_;
  for (const NestedData& child : list) {
    KILN_CHECK(child.sizes_ == first.sizes_, "tensor", "expected sequence of length ",
               first.sizes_.empty() ? 0 : first.sizes_[0], " at dim ", 1, " (got ",
               child.sizes_.empty() ? 0 : child.sizes_[0], ")");
    if (static_cast<int>(child.kind_) > static_cast<int>(kind_)) kind_ = child.kind_;
    values_.insert(values_.end(), child.values_.begin(), child.values_.end());
    ints_.insert(ints_.end(), child.ints_.begin(), child.ints_.end());
    ++i;
  }
  sizes_.insert(sizes_.end(), first.sizes_.begin(), first.sizes_.end());
}

namespace {
template <typename T>
void fill_from(T* out, const NestedData& d) {
  const bool integral_source = d.kind() != Scalar::Kind::Float;
  for (size_t i = 0; i < d.values().size(); ++i) {
    if constexpr (std::is_same_v<T, bool>) out[i] = d.values()[i] != 0.0;
    else if constexpr (std::is_integral_v<T>)
      out[i] = integral_source ? static_cast<T>(d.ints()[i]) : static_cast<T>(trunc_to_int64(d.values()[i]));
    else if constexpr (std::is_same_v<T, double>) out[i] = integral_source ? static_cast<double>(d.ints()[i]) : d.values()[i];
    else out[i] = T(static_cast<float>(integral_source ? static_cast<double>(d.ints()[i]) : d.values()[i]));
  }
}
}  // namespace

Tensor tensor(const NestedData& data, const TensorOptions& options, SourceLoc loc) {
  const LocScope at(loc);
  DType inferred = data.kind() == Scalar::Kind::Float  ? default_dtype()
                   : data.kind() == Scalar::Kind::Int ? DType::Int64
                                                      : DType::Bool;
  DType dt = options.dtype_or(inferred);
  check_requires_grad(options, dt, "tensor");
  BufferPtr buf = Buffer::allocate(dt, data.sizes().numel(), Device());
  switch (dt) {
#define KILN_FILL(name, type) \
  case DType::name: fill_from(buf->as<type>(), data); break;
    KILN_FORALL_DTYPES(KILN_FILL)
#undef KILN_FILL
  }
  return finish(on_device(make_buffer_node(buf, data.sizes()), options.device()), options, "tensor");
}

Tensor from_blob(void* data, const Shape& sizes, const TensorOptions& options, SourceLoc loc) {
  const LocScope at(loc);
  return from_blob(data, sizes, contiguous_strides(sizes), options);
}

Tensor from_blob(void* data, const Shape& sizes, const Shape& strides, const TensorOptions& options, SourceLoc loc) {
  const LocScope at(loc);
  check_numel(sizes, "from_blob");
  KILN_CHECK(strides.size() == sizes.size(), "from_blob", "sizes ", sizes, " and strides ", strides,
             " must have the same length");
  KILN_CHECK(options.device().is_cpu(), "from_blob",
             "only host memory can be aliased (got device ", options.device(), ")");
  KILN_CHECK(data != nullptr || sizes.numel() == 0, "from_blob", "data pointer is null");
  DType dt = options.dtype_or(default_dtype());
  check_requires_grad(options, dt, "from_blob");
  int64_t span = sizes.numel() == 0 ? 0 : 1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    KILN_CHECK(strides[i] >= 0, "from_blob", "negative strides are not supported (strides ", strides, ")");
    if (sizes.numel() != 0) span += (sizes[i] - 1) * strides[i];
  }
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::make_shared<Storage>();
  impl->storage->borrowed = Buffer::borrow(data, dt, span, Device());
  bool exact = span == sizes.numel() && strides == contiguous_strides(sizes);
  impl->storage->node = make_buffer_node(impl->storage->borrowed, exact ? sizes : Shape{span});
  impl->sizes = sizes;
  impl->strides = strides;
  impl->requires_grad = options.requires_grad();
  return Tensor(std::move(impl));
}

Tensor full(const Shape& sizes, Scalar v, const TensorOptions& options, SourceLoc loc) {
  const LocScope at(loc);
  check_numel(sizes, "full");
  DType dt = options.dtype_or(scalar_default_dtype(v));
  check_fill_value(v, dt, "full");
  return finish(full_node(sizes, v, dt, options.device()), options, "full");
}
Tensor empty(const Shape& sizes, const TensorOptions& o, SourceLoc loc) {
  const LocScope at(loc);
  check_numel(sizes, "empty"); return full(sizes, 0, o.dtype(o.dtype_or(default_dtype())));
}
Tensor zeros(const Shape& sizes, const TensorOptions& o, SourceLoc loc) {
  const LocScope at(loc);
  check_numel(sizes, "zeros"); return full(sizes, 0, o.dtype(o.dtype_or(default_dtype())));
}
Tensor ones(const Shape& sizes, const TensorOptions& o, SourceLoc loc) {
  const LocScope at(loc);
  check_numel(sizes, "ones"); return full(sizes, 1, o.dtype(o.dtype_or(default_dtype())));
}

Tensor eye(int64_t n, const TensorOptions& o, SourceLoc loc) {
  const LocScope at(loc);
  return eye(n, n, o);
}
Tensor eye(int64_t n, int64_t m, const TensorOptions& o, SourceLoc loc) {
  const LocScope at(loc);
  KILN_CHECK(n >= 0, "eye", "n must be greater or equal to 0, got ", n);
  KILN_CHECK(m >= 0, "eye", "m must be greater or equal to 0, got ", m);
  check_shape_nonneg({n, m}, "eye");
  DType dt = o.dtype_or(default_dtype());
  return finish(make_node(Op::Eye, dt, o.device(), {n, m}, {}), o, "eye");
}

Tensor arange(Scalar end, const TensorOptions& o, SourceLoc loc) {
  const LocScope at(loc);
  return arange(0, end, 1, o);
}
Tensor arange(Scalar start, Scalar end, const TensorOptions& o, SourceLoc loc) {
  const LocScope at(loc);
  return arange(start, end, 1, o);
}
Tensor arange(Scalar start, Scalar end, Scalar step, const TensorOptions& o, SourceLoc loc) {
  const LocScope at(loc);
  bool floating = start.is_floating_point() || end.is_floating_point() || step.is_floating_point();
  DType dt = o.dtype_or(floating ? default_dtype() : DType::Int64);
  double s = start.to_double(), e = end.to_double(), st = step.to_double();
  KILN_CHECK(std::isfinite(s) && std::isfinite(e), "arange", "unsupported range: ", s, " -> ", e);
  // Integer dtypes step through the arguments truncated to int64 (PyTorch's
  // accumulate type): arange(0, 5, 1.5, kInt64) is 0..4. The length comes from
  // the truncated arguments for int64 and from the given ones otherwise.
  const bool integral = is_integral(dt, true);
  const int64_t is = start.to_long(), ie = end.to_long(), ist = step.to_long();
  const double cs = integral ? static_cast<double>(is) : s;
  const double ce = integral ? static_cast<double>(ie) : e;
  const double cst = integral ? static_cast<double>(ist) : st;
  KILN_CHECK(cst != 0.0, "arange", "step must be nonzero");
  KILN_CHECK((cst > 0 && ce >= cs) || (cst < 0 && ce <= cs), "arange",
             "upper bound and larger bound inconsistent with step sign (start ", s, ", end ", e,
             ", step ", st, ")");
  double size_d = dt == DType::Int64 ? std::ceil(static_cast<double>(static_cast<__int128>(ie) - is) / cst)
                                     : std::ceil((e - s) / st);
  KILN_CHECK(size_d >= 0 && size_d <= static_cast<double>(std::numeric_limits<int64_t>::max() / 8),
             "arange", "invalid size, possible overflow? (start ", s, ", end ", e, ", step ", st, ")");
  Attrs a;
  a.reals = {s, st};
  a.ints = {is, ist};
  return finish(make_node(Op::Arange, dt, o.device(), {static_cast<int64_t>(size_d)}, {}, std::move(a)), o,
                "arange");
}

Tensor linspace(Scalar start, Scalar end, int64_t steps, const TensorOptions& o, SourceLoc loc) {
  const LocScope at(loc);
  KILN_CHECK(steps >= 0, "linspace", "number of steps must be non-negative (got ", steps, ")");
  DType dt = o.dtype_or(default_dtype());
  Attrs a;
  a.reals = {start.to_double(), end.to_double()};
  return finish(make_node(Op::Linspace, dt, o.device(), {steps}, {}, std::move(a)), o, "linspace");
}

TensorOptions like_options(const Tensor& t, const TensorOptions& o) {
  KILN_CHECK(t.defined(), "like", "expected a defined tensor but got an undefined one");
  TensorOptions r = TensorOptions(o.dtype_or(t.dtype())).device(o.has_device() ? o.device() : t.device());
  return r.requires_grad(o.requires_grad());
}

// The *_like factories keep t's dense layout (PyTorch's preserve_format):
// the factory's value is made in t's memory order.
Tensor empty_like(const Tensor& t, const TensorOptions& o, SourceLoc loc) {
  const LocScope at(loc);
  return made_like(t, like_options(t, o), [](const Shape& s, const TensorOptions& opts) { return empty(s, opts); });
}
Tensor zeros_like(const Tensor& t, const TensorOptions& o, SourceLoc loc) {
  const LocScope at(loc);
  return made_like(t, like_options(t, o), [](const Shape& s, const TensorOptions& opts) { return zeros(s, opts); });
}
Tensor ones_like(const Tensor& t, const TensorOptions& o, SourceLoc loc) {
  const LocScope at(loc);
  return made_like(t, like_options(t, o), [](const Shape& s, const TensorOptions& opts) { return ones(s, opts); });
}
Tensor full_like(const Tensor& t, Scalar v, const TensorOptions& o, SourceLoc loc) {
  const LocScope at(loc);
  return made_like(t, like_options(t, o), [&](const Shape& s, const TensorOptions& opts) { return full(s, v, opts); });
}

}  // namespace kiln

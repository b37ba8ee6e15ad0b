// View ops: each returns a tensor on the same storage with new (sizes,
// strides, offset), exactly PyTorch's aliasing; nothing is copied. Reading a
// view builds one AsStrided node, which the JIT folds into index arithmetic.
#include <algorithm>
#include <numeric>

#include "core/layout.h"
#include "core/ops_common.h"
#include "core/provenance.h"

namespace kiln {

namespace {
const TensorImpl& impl_of(const Tensor& t, const char* op) {
  KILN_CHECK(t.defined(), op, "expected a defined tensor but got an undefined one");
  return *t.impl();
}

// PyTorch's computeStride: strides for viewing (sizes, strides) as `shape`
// without a copy, or nullopt when the memory layout does not allow it.
std::optional<Shape> view_strides(const Shape& old_sizes, const Shape& old_strides,
                                  const Shape& shape) {
  Shape out(shape.size());
  if (old_sizes.empty()) {
    std::fill(out.begin(), out.end(), 1);
    return out;
  }
  if (old_sizes.numel() == 0) {
    if (old_sizes == shape) return old_strides;
    return contiguous_strides(shape);
  }
  int64_t view_d = static_cast<int64_t>(shape.size()) - 1;
  int64_t chunk_base_stride = old_strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(old_sizes.size()) - 1; d >= 0; --d) {
    tensor_numel *= old_sizes[d];
    if (d == 0 ||
        (old_sizes[d - 1] != 1 && old_strides[d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
        out[view_d] = view_numel * chunk_base_stride;
        view_numel *= shape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk_base_stride = old_strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

// Resolves one -1 and checks the element count.
Shape infer_shape(const Shape& shape, int64_t numel, const char* op) {
  Shape out = shape;
  int64_t known = 1;
  bool overflow = false;  // the known dims' product overflows int64 (no signed-overflow UB)
  std::optional<size_t> infer;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      KILN_CHECK(!infer, op, "only one dimension can be inferred (shape ", shape, ")");
      infer = i;
    } else {
      KILN_CHECK(out[i] >= 0, op, "invalid shape dimension ", out[i], " (shape ", shape, ")");
      overflow |= __builtin_mul_overflow(known, out[i], &known);
    }
  }
  if (infer) {
    KILN_CHECK(!overflow && known != 0 && numel % known == 0, op, "shape '", shape,
               "' is invalid for input of size ", numel);
    out[*infer] = numel / known;
  }
  check_shape_nonneg(out, op);  // also refuses a numel that overflows
  KILN_CHECK(out.numel() == numel, op, "shape '", shape, "' is invalid for input of size ", numel);
  return out;
}
}  // namespace

Tensor Tensor::select(int64_t dim, int64_t index, SourceLoc loc) const {
  const LocScope at(loc);
  const TensorImpl& t = impl_of(*this, "select");
  KILN_CHECK(!t.sizes.empty(), "select", "select() cannot be applied to a 0-dim tensor.");
  int64_t d = wrap_dim(dim, this->dim(), "select");
  int64_t size = t.sizes[d];
  KILN_CHECK(index >= -size && index < size, "select", "index ", index,
             " is out of bounds for dimension ", d, " with size ", size);
  if (index < 0) index += size;
  Shape sizes = t.sizes, strides = t.strides;
  sizes.erase(sizes.begin() + d);
  strides.erase(strides.begin() + d);
  Tensor out = make_view(*this, sizes, strides, t.offset + index * t.strides[d]);
  if (auto f = record(GradFn::SelectBackward0, out, {this})) f->ints = {d, index};
  return out;
}

Tensor Tensor::slice(int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end,
                     int64_t step, SourceLoc loc) const {
  const LocScope at(loc);
  const TensorImpl& t = impl_of(*this, "slice");
  KILN_CHECK(!t.sizes.empty(), "slice", "slice() cannot be applied to a 0-dim tensor.");
  KILN_CHECK(step > 0, "slice", "slice step must be positive (got ", step, ")");
  int64_t d = wrap_dim(dim, this->dim(), "slice");
  int64_t size = t.sizes[d];
  auto clampi = [size](int64_t v) {
    if (v < 0) v += size;
    return std::clamp<int64_t>(v, 0, size);
  };
  int64_t s = start ? clampi(*start) : 0;
  int64_t e = end ? clampi(*end) : size;
  // (No e - s + step - 1: it overflows for a huge step. A view of at most
  // one element keeps its stride, which a huge step would overflow too.)
  int64_t len = e > s ? 1 + (e - s - 1) / step : 0;
  Shape sizes = t.sizes, strides = t.strides;
  sizes[d] = len;
  strides[d] = len > 1 ? t.strides[d] * step : t.strides[d];
  Tensor out = make_view(*this, sizes, strides, t.offset + s * t.strides[d]);
  if (auto f = record(GradFn::SliceBackward0, out, {this})) f->ints = {d, s, std::max(e, s), step};
  return out;
}

Tensor Tensor::narrow(int64_t dim, int64_t start, int64_t length, SourceLoc loc) const {
  const LocScope at(loc);
  KILN_CHECK(this->dim() > 0, "narrow", "narrow() cannot be applied to a 0-dim tensor.");
  int64_t d = wrap_dim(dim, this->dim(), "narrow");
  int64_t size = sizes()[d];
  KILN_CHECK(start >= -size && start <= size, "narrow", "start out of range (expected to be in range of [",
             -size, ", ", size, "], but got ", start, ")");
  if (start < 0) start += size;
  // (length <= size - start: start + length may overflow)
  KILN_CHECK(length >= 0 && length <= size - start, "narrow", "start (", start, ") + length (",
             length, ") exceeds dimension size (", size, ").");
  return slice(d, start, start + length, 1);
}

Tensor Tensor::view(const Shape& shape, SourceLoc loc) const {
  const LocScope at(loc);
  const TensorImpl& t = impl_of(*this, "view");
  Shape s = infer_shape(shape, t.numel(), "view");
  auto strides = view_strides(t.sizes, t.strides, s);
  KILN_CHECK(strides.has_value(), "view",
             "view size is not compatible with input tensor's size and stride (at least one "
             "dimension spans across two contiguous subspaces). Use .reshape(...) instead. (sizes ",
             t.sizes, ", strides ", t.strides, ", requested ", shape, ")");
  Tensor out = make_view(*this, s, *strides, t.offset);
  record(GradFn::ViewBackward0, out, {this});
  return out;
}

Tensor Tensor::reshape(const Shape& shape, SourceLoc loc) const {
  const LocScope at(loc);
  const TensorImpl& t = impl_of(*this, "reshape");
  Shape s = infer_shape(shape, t.numel(), "reshape");
  if (auto strides = view_strides(t.sizes, t.strides, s)) {
    Tensor out = make_view(*this, s, *strides, t.offset);
    record(GradFn::ReshapeAliasBackward0, out, {this});
    return out;
  }
  // Not expressible as a view: a new storage holding the values in order.
  Tensor out = make_tensor(reshape_node(node_of(*this, "reshape"), s));
  record(GradFn::UnsafeViewBackward0, out, {this});
  return out;
}

Tensor Tensor::flatten(int64_t start_dim, int64_t end_dim, SourceLoc loc) const {
  const LocScope at(loc);
  if (dim() == 0) return reshape({1});
  int64_t s = wrap_dim(start_dim, dim(), "flatten");
  int64_t e = wrap_dim(end_dim, dim(), "flatten");
  KILN_CHECK(s <= e, "flatten", "flatten() has invalid args: start_dim (", start_dim,
             ") cannot come after end_dim (", end_dim, ")");
  Shape shape;
  for (int64_t i = 0; i < s; ++i) shape.push_back(sizes()[i]);
  int64_t n = 1;
  for (int64_t i = s; i <= e; ++i) n *= sizes()[i];
  shape.push_back(n);
  for (int64_t i = e + 1; i < dim(); ++i) shape.push_back(sizes()[i]);
  return reshape(shape);
}

Tensor Tensor::t(SourceLoc loc) const {
  const LocScope at(loc);
  KILN_CHECK(dim() <= 2, "t", "t() expects a tensor with <= 2 dimensions, but self is ", dim(), "D");
  if (dim() < 2) {
    Tensor out = make_view(*this, sizes(), strides(), storage_offset());
    record(GradFn::TBackward0, out, {this});
    return out;
  }
  Tensor out = transpose(0, 1);
  autograd::relabel(out, GradFn::TBackward0);
  return out;
}

Tensor Tensor::transpose(int64_t dim0, int64_t dim1, SourceLoc loc) const {
  const LocScope at(loc);
  const TensorImpl& t = impl_of(*this, "transpose");
  int64_t a = wrap_dim(dim0, dim(), "transpose"), b = wrap_dim(dim1, dim(), "transpose");
  Shape sizes = t.sizes, strides = t.strides;
  if (!sizes.empty()) {
    std::swap(sizes[a], sizes[b]);
    std::swap(strides[a], strides[b]);
  }
  Tensor out = make_view(*this, sizes, strides, t.offset);
  if (auto f = record(GradFn::TransposeBackward0, out, {this})) {
    if (!t.sizes.empty()) f->ints = {a, b};
  }
  return out;
}

Tensor Tensor::permute(const Shape& dims, SourceLoc loc) const {
  const LocScope at(loc);
  const TensorImpl& t = impl_of(*this, "permute");
  KILN_CHECK(static_cast<int64_t>(dims.size()) == dim(), "permute",
             "number of dims don't match in permute (tensor has ", dim(), " dims, got ", dims, ")");
  Shape sizes(dims.size()), strides(dims.size()), wrapped(dims.size());
  std::vector<bool> used(dims.size(), false);
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = wrap_dim(dims[i], dim(), "permute");
    KILN_CHECK(!used[d], "permute", "permute(): duplicate dims are not allowed. (dims ", dims, ")");
    used[d] = true;
    wrapped[i] = d;
    sizes[i] = t.sizes[d];
    strides[i] = t.strides[d];
  }
  Tensor out = make_view(*this, sizes, strides, t.offset);
  if (auto f = record(GradFn::PermuteBackward0, out, {this})) f->ints = wrapped;
  return out;
}

Tensor Tensor::squeeze(SourceLoc loc) const {
  const LocScope at(loc);
  const TensorImpl& t = impl_of(*this, "squeeze");
  Shape sizes, strides;
  for (size_t i = 0; i < t.sizes.size(); ++i)
    if (t.sizes[i] != 1) {
      sizes.push_back(t.sizes[i]);
      strides.push_back(t.strides[i]);
    }
  Tensor out = make_view(*this, sizes, strides, t.offset);
  record(GradFn::SqueezeBackward0, out, {this});
  return out;
}

Tensor Tensor::squeeze(int64_t dim, SourceLoc loc) const {
  const LocScope at(loc);
  const TensorImpl& t = impl_of(*this, "squeeze");
  Shape sizes = t.sizes, strides = t.strides;
  if (this->dim() == 0) {
    wrap_dim(dim, 0, "squeeze");
  } else {
    int64_t d = wrap_dim(dim, this->dim(), "squeeze");
    if (sizes[d] == 1) {
      sizes.erase(sizes.begin() + d);
      strides.erase(strides.begin() + d);
    }
  }
  Tensor out = make_view(*this, sizes, strides, t.offset);
  record(GradFn::SqueezeBackward1, out, {this});
  return out;
}

Tensor Tensor::unsqueeze(int64_t dim, SourceLoc loc) const {
  const LocScope at(loc);
  const TensorImpl& t = impl_of(*this, "unsqueeze");
  int64_t d = wrap_dim(dim, this->dim() + 1, "unsqueeze");
  Shape sizes = t.sizes, strides = t.strides;
  int64_t stride = d < this->dim() ? t.sizes[d] * t.strides[d] : 1;
  sizes.insert(sizes.begin() + d, 1);
  strides.insert(strides.begin() + d, stride);
  Tensor out = make_view(*this, sizes, strides, t.offset);
  record(GradFn::UnsqueezeBackward0, out, {this});
  return out;
}

Tensor Tensor::expand(const Shape& target, SourceLoc loc) const {
  const LocScope at(loc);
  const TensorImpl& t = impl_of(*this, "expand");
  int64_t nd = static_cast<int64_t>(target.size()), td = dim();
  KILN_CHECK(nd >= td, "expand", "the number of sizes provided (", nd,
             ") must be greater or equal to the number of dimensions in the tensor (", td, ")");
  Shape sizes(nd), strides(nd);
  for (int64_t i = nd - 1; i >= 0; --i) {
    int64_t off = nd - 1 - i, d = td - 1 - off;
    int64_t want = target[i];
    if (d < 0) {
      KILN_CHECK(want >= 0, "expand", "The expanded size of the tensor (", want,
                 ") isn't allowed in a leading, non-existing dimension ", i);
      sizes[i] = want;
      strides[i] = 0;
      continue;
    }
    int64_t have = t.sizes[d];
    if (want == -1) want = have;
    KILN_CHECK(have == want || have == 1, "expand", "The expanded size of the tensor (", want,
               ") must match the existing size (", have, ") at non-singleton dimension ", i,
               ".  Target sizes: ", target, ".  Tensor sizes: ", t.sizes);
    KILN_CHECK(want >= 0, "expand", "The expanded size of the tensor (", want,
               ") must be non-negative (-1 keeps the existing size).  Target sizes: ", target);
    sizes[i] = want;
    strides[i] = have == want ? t.strides[d] : 0;
  }
  check_shape_nonneg(sizes, "expand");  // a numel that overflows
  Tensor out = make_view(*this, sizes, strides, t.offset);
  record(GradFn::ExpandBackward0, out, {this});
  return out;
}

Tensor Tensor::as_strided(const Shape& size, const Shape& stride,
                          std::optional<int64_t> storage_offset, SourceLoc loc) const {
  const LocScope at(loc);
  const TensorImpl& t = impl_of(*this, "as_strided");
  KILN_CHECK(size.size() == stride.size(), "as_strided", "mismatch in length of strides and shape (",
             size, " and ", stride, ")");
  const int64_t offset = storage_offset.value_or(t.offset);
  KILN_CHECK(offset >= 0, "as_strided", "Tensor: invalid storage offset ", offset);
  check_shape_nonneg(size, "as_strided");
  int64_t last = offset;  // the highest element read
  for (size_t i = 0; i < size.size(); ++i) {
    KILN_CHECK(stride[i] >= 0, "as_strided", "as_strided: Negative strides are not supported at the "
               "moment, got strides: ", stride);
    if (size[i] == 0) last = -1;
    if (last >= 0) last += (size[i] - 1) * stride[i];
  }
  const int64_t storage = t.storage->numel();
  KILN_CHECK(last < storage, "as_strided", "setStorage: sizes ", size, ", strides ", stride,
             ", storage offset ", offset, ", and itemsize ", element_size(), " requiring a storage size of ",
             (last + 1) * static_cast<int64_t>(element_size()), " are out of bounds for storage of size ",
             storage * static_cast<int64_t>(element_size()));
  Tensor out = make_view(*this, size, stride, offset);
  if (auto f = record(GradFn::AsStridedBackward0, out, {this})) {
    f->ints = {storage, t.offset, static_cast<int64_t>(t.sizes.size())};
    f->ints.insert(f->ints.end(), t.strides.begin(), t.strides.end());
    f->view_sizes = size;
    f->view_strides = stride;
    f->view_offset = offset;
  }
  return out;
}

namespace {
// A copy in a new storage (no copy until evaluated): row-major, or in t's
// own dense layout (PyTorch's preserve_format).
Tensor copy_of(const Tensor& t, bool preserve_layout, const char* op) {
  node_of(t, op);
  const OutputLayout layout = preserve_layout ? OutputLayout(t) : OutputLayout({}, t.sizes());
  Tensor out = layout.make(layout.read(t, t.dtype(), op));
  record(GradFn::CloneBackward0, out, {&t});
  return out;
}
}  // namespace

Tensor stored_copy(const Tensor& t) {
  const OutputLayout layout({}, t.sizes());
  const NodePtr n = layout.read(t, t.dtype(), "stored_copy");
  if (has_value(*n) || n->store) return t;
  Tensor out = layout.make(make_node(n->op, n->dtype, n->device, n->shape, n->inputs, n->attrs, /*store=*/true));
  record(GradFn::CloneBackward0, out, {&t});
  return out;
}

Tensor Tensor::contiguous(SourceLoc loc) const {
  const LocScope at(loc);
  KILN_CHECK(defined(), "contiguous", "expected a defined tensor but got an undefined one");
  return is_contiguous() ? *this : copy_of(*this, false, "contiguous");
}

Tensor Tensor::clone(SourceLoc loc) const {
  const LocScope at(loc);
  return copy_of(*this, true, "clone");
}

Tensor Tensor::detach(SourceLoc loc) const {
  const LocScope at(loc);
  const TensorImpl& t = impl_of(*this, "detach");
  // Shares the storage (and its version counter) but not the history.
  Tensor out = make_view(*this, t.sizes, t.strides, t.offset);
  out.impl()->view_base.reset();
  return out;
}

Tensor Tensor::data() const { return detach(); }

std::vector<Tensor> Tensor::split(int64_t split_size, int64_t dim, SourceLoc loc) const {
  const LocScope at(loc);
  KILN_CHECK(this->dim() > 0, "split", "split expects at least a 1-dimensional tensor");
  KILN_CHECK(split_size >= 0, "split", "split expects split_size be non-negative, but got split_size=",
             split_size);
  int64_t d = wrap_dim(dim, this->dim(), "split");
  int64_t size = sizes()[d];
  KILN_CHECK(split_size > 0 || size == 0, "split", "split_size can only be 0 if dimension size is 0, but got dimension size of ", size);
  std::vector<Tensor> out;
  if (size == 0) return {narrow(d, 0, 0)};
  for (int64_t s = 0; s < size; s += split_size) out.push_back(narrow(d, s, std::min(split_size, size - s)));
  for (const Tensor& t : out) autograd::relabel(t, GradFn::SplitBackward0);
  return out;
}

std::vector<Tensor> Tensor::split(const Shape& split_sizes, int64_t dim, SourceLoc loc) const {
  const LocScope at(loc);
  int64_t d = wrap_dim(dim, this->dim(), "split");
  int64_t total = std::accumulate(split_sizes.begin(), split_sizes.end(), int64_t{0});
  KILN_CHECK(total == sizes()[d], "split", "split_with_sizes expects split_sizes to sum exactly to ",
             sizes()[d], " (input tensor's size at dimension ", d, "), but got split_sizes=",
             split_sizes);
  std::vector<Tensor> out;
  int64_t s = 0;
  for (int64_t len : split_sizes) {
    out.push_back(narrow(d, s, len));
    s += len;
  }
  return out;
}

std::vector<Tensor> Tensor::chunk(int64_t chunks, int64_t dim, SourceLoc loc) const {
  const LocScope at(loc);
  KILN_CHECK(this->dim() > 0, "chunk", "chunk expects at least a 1-dimensional tensor");
  KILN_CHECK(chunks > 0, "chunk", "chunk expects `chunks` to be greater than 0, got: ", chunks);
  int64_t d = wrap_dim(dim, this->dim(), "chunk");
  int64_t size = sizes()[d];
  int64_t split_size = (size + chunks - 1) / chunks;
  if (split_size == 0 && size == 0) {
    std::vector<Tensor> out;
    for (int64_t i = 0; i < chunks; ++i) out.push_back(narrow(d, 0, 0));
    return out;
  }
  return split(split_size, d);
}

std::vector<Tensor> Tensor::unbind(int64_t dim, SourceLoc loc) const {
  const LocScope at(loc);
  KILN_CHECK(this->dim() > 0, "unbind", "Dimension specified as ", dim, " but tensor has no dimensions");
  int64_t d = wrap_dim(dim, this->dim(), "unbind");
  std::vector<Tensor> out;
  for (int64_t i = 0; i < sizes()[d]; ++i) out.push_back(select(d, i));
  for (const Tensor& t : out) autograd::relabel(t, GradFn::UnbindBackward0);
  return out;
}

std::vector<Tensor> chunk(const Tensor& t, int64_t chunks, int64_t dim, SourceLoc loc) {
  const LocScope at(loc);
  return t.chunk(chunks, dim);
}
std::vector<Tensor> split(const Tensor& t, int64_t s, int64_t dim, SourceLoc loc) {
  const LocScope at(loc);
  return t.split(s, dim);
}
std::vector<Tensor> split(const Tensor& t, const Shape& s, int64_t dim, SourceLoc loc) {
  const LocScope at(loc);
  return t.split(s, dim);
}

// ---- indexing: t.index({0, Slice(None, 2), Ellipsis, None}) ----
Tensor Tensor::index(std::initializer_list<indexing::TensorIndex> indices, SourceLoc loc) const {
  const LocScope at(loc);
  return index(std::vector<indexing::TensorIndex>(indices));
}

Tensor Tensor::index(const std::vector<indexing::TensorIndex>& indices, SourceLoc loc) const {
  const LocScope at(loc);
  std::vector<int64_t> dims;
  std::vector<Tensor> tensors;
  const Tensor r = apply_basic_index(*this, indices, &dims, &tensors);
  return tensors.empty() ? r : index_by_tensors(r, dims, tensors);
}

Tensor apply_basic_index(const Tensor& self, const std::vector<indexing::TensorIndex>& given,
                         std::vector<int64_t>* dims, std::vector<Tensor>* tensors) {
  using K = indexing::TensorIndex::Kind;
  KILN_CHECK(self.defined(), "index", "expected a defined tensor but got an undefined one");
  // A 0-dim integer tensor on the host indexes as its value, a 0-dim mask
  // as a bool (LibTorch's applySlicing).
  std::vector<indexing::TensorIndex> indices;
  for (const auto& i : given) {
    if (i.kind() != K::Tensor) {
      indices.push_back(i);
      continue;
    }
    const Tensor t = i.tensor();
    KILN_CHECK(t.defined(), "index", "expected a defined index tensor but got an undefined one");
    if (t.dim() == 0 && is_mask(t)) indices.emplace_back(t.item<bool>());
    else if (t.dim() == 0 && t.device().is_cpu() && !is_floating_point(t.dtype()) && !is_mask(t))
      indices.emplace_back(t.item<int64_t>());
    else indices.push_back(i);
  }
  int64_t consuming = 0, ellipses = 0;
  for (const auto& i : indices) {
    if (i.kind() == K::Integer || i.kind() == K::Slice) ++consuming;
    if (i.kind() == K::Tensor) consuming += is_mask(i.tensor()) ? i.tensor().dim() : 1;
    if (i.kind() == K::Ellipsis) ++ellipses;
  }
  KILN_CHECK(ellipses <= 1, "index", "an index can only have a single ellipsis ('...')");
  KILN_CHECK(consuming <= self.dim(), "index", "too many indices for tensor of dimension ", self.dim(),
             " (got ", consuming, ")");
  Tensor r = self;
  int64_t d = 0;  // current dim of r
  for (const auto& i : indices) {
    switch (i.kind()) {
      case K::Integer: r = r.select(d, i.integer()); break;
      case K::Slice: {
        const auto& s = i.slice();
        r = r.slice(d, s.start, s.stop, s.step.value_or(1));
        ++d;
        break;
      }
      case K::Ellipsis: d += self.dim() - consuming; break;
      case K::Tensor:
        dims->push_back(d);
        tensors->push_back(i.tensor());
        d += is_mask(i.tensor()) ? i.tensor().dim() : 1;
        break;
      case K::None: r = r.unsqueeze(d); ++d; break;
      case K::Boolean:
        r = r.unsqueeze(d);
        if (!i.boolean()) r = r.slice(d, 0, 0);
        ++d;
        break;
    }
  }
  return r;
}

indexing::TensorIndex::TensorIndex(const char* s) : kind_(Kind::Ellipsis) {
  KILN_CHECK(std::string(s) == "...", "index", "expected \"...\" to represent an ellipsis index, got \"", s, "\"");
}

}  // namespace kiln

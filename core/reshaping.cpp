// Shape ops beyond the basic views (views.cpp), as PyTorch's: movedim,
// unflatten, diagonal and unfold (views with strides of their own),
// broadcast_to, tile, repeat_interleave, rot90, take_along_dim,
// tensor_split; and the NumPy-style joins hstack / vstack / dstack /
// column_stack, meshgrid, broadcast_tensors, atleast_Nd. Each is written
// with kiln's own ops, so it fuses and differentiates like them.
#include <algorithm>
#include <numeric>

#include "core/ops_common.h"
#include "core/provenance.h"
#include "kiln/nn_functional.h"

namespace kiln {

Tensor Tensor::movedim(const Shape& source, const Shape& destination, SourceLoc loc) const {
  const LocScope at(loc);
  check_defined(*this, "movedim");
  KILN_CHECK(source.size() == destination.size(), "movedim",
             "Invalid source or destination dims: source (", source, " dims) should contain the same number of dims "
             "as destination (", destination, " dims)");
  const int64_t n = dim();
  Shape order(static_cast<size_t>(n), -1);
  std::vector<bool> src_used(static_cast<size_t>(n), false);
  for (size_t i = 0; i < source.size(); ++i) {
    const int64_t s = wrap_dim(source[i], n, "movedim"), d = wrap_dim(destination[i], n, "movedim");
    KILN_CHECK(!src_used[s], "movedim", "repeated dim in `source` (", source, ")");
    KILN_CHECK(order[d] == -1, "movedim", "repeated dim in `destination` (", destination, ")");
    src_used[s] = true;
    order[d] = s;
  }
  // the dims not moved keep their order in the free places
  int64_t next = 0;
  for (int64_t& o : order) {
    if (o != -1) continue;
    while (src_used[next]) ++next;
    o = next++;
  }
  return permute(order);
}
Tensor Tensor::movedim(int64_t source, int64_t destination, SourceLoc loc) const {
  const LocScope at(loc);
  return movedim(Shape{source}, Shape{destination});
}

Tensor Tensor::unflatten(int64_t dim, const Shape& sizes, SourceLoc loc) const {
  const LocScope at(loc);
  check_defined(*this, "unflatten");
  const int64_t d = wrap_dim(dim, this->dim(), "unflatten");
  KILN_CHECK(!sizes.empty(), "unflatten", "unflatten: sizes must be non-empty");
  Shape known = sizes;
  int64_t product = 1, infer = -1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      KILN_CHECK(infer < 0, "unflatten", "only one dimension can be inferred (sizes ", sizes, ")");
      infer = static_cast<int64_t>(i);
    } else {
      product *= sizes[i];
    }
  }
  const int64_t size = this->sizes()[d];
  if (infer >= 0 && product != 0 && size % product == 0) known[infer] = size / product;
  KILN_CHECK(known.numel() == size && (infer < 0 || product != 0), "unflatten", "unflatten: Provided sizes ", sizes,
             " don't multiply up to the size of dim ", dim, " (", size, ") in the input tensor");
  Shape shape(this->sizes().begin(), this->sizes().begin() + d);
  shape.insert(shape.end(), known.begin(), known.end());
  shape.insert(shape.end(), this->sizes().begin() + d + 1, this->sizes().end());
  return view(shape);
}

Tensor Tensor::diagonal(int64_t offset, int64_t dim1, int64_t dim2, SourceLoc loc) const {
  const LocScope at(loc);
  check_defined(*this, "diagonal");
  const int64_t a = wrap_dim(dim1, dim(), "diagonal"), b = wrap_dim(dim2, dim(), "diagonal");
  KILN_CHECK(a != b, "diagonal", "diagonal dimensions cannot be identical ", dim1, ", ", dim2, " (shape ", sizes(),
             ")");
  const Shape& sz = sizes();
  const Shape st = strides();
  const int64_t n = std::max<int64_t>(offset >= 0 ? std::min(sz[a], sz[b] - offset) : std::min(sz[a] + offset, sz[b]), 0);
  int64_t start = storage_offset();
  if (n > 0) start += offset >= 0 ? offset * st[b] : -offset * st[a];
  Shape sizes_out, strides_out;
  for (int64_t k = 0; k < dim(); ++k)
    if (k != a && k != b) {
      sizes_out.push_back(sz[k]);
      strides_out.push_back(st[k]);
    }
  sizes_out.push_back(n);
  strides_out.push_back(st[a] + st[b]);
  Tensor out = make_view(*this, sizes_out, strides_out, start);
  if (auto f = record(GradFn::DiagonalBackward0, out, {this})) f->ints = {offset, a, b};
  return out;
}

Tensor Tensor::unfold(int64_t dimension, int64_t size, int64_t step, SourceLoc loc) const {
  const LocScope at(loc);
  check_defined(*this, "unfold");
  const int64_t d = wrap_dim(dimension, dim(), "unfold");
  const int64_t len = dim() == 0 ? 1 : sizes()[d];
  KILN_CHECK(size <= len, "unfold", "maximum size for tensor at dimension ", d, " is ", len, " but size is ", size,
             " (shape ", sizes(), ")");
  KILN_CHECK(size >= 0, "unfold", "size is ", size, " but must be >= 0");
  KILN_CHECK(step > 0, "unfold", "step is ", step, " but must be > 0");
  Shape sz = sizes(), st = strides();
  if (dim() == 0) {
    sz = {size};
    st = {1};
  } else {
    sz[d] = (len - size) / step + 1;
    st[d] = strides()[d] * step;
    sz.push_back(size);
    st.push_back(strides()[d]);
  }
  Tensor out = make_view(*this, sz, st, storage_offset());
  if (auto f = record(GradFn::UnfoldBackward0, out, {this})) f->ints = {d, size, step};
  return out;
}

// Output position i gathers window o's element k where o * step + k *
// dilation == i, for each k: a masked gather per k.
constexpr int64_t kGatheredWindow = 16;

namespace {

Tensor fold_values(const Tensor& windows, int64_t d, int64_t n, int64_t step, int64_t dilation) {
  const int64_t count = windows.size(d), size = windows.size(-1);
  Shape in = windows.sizes();
  in.pop_back();
  in[d] = n;
  if (size > kGatheredWindow || count == 0 || size == 0 || n == 0) {
    const Tensor at = ((arange(count) * step).unsqueeze(1) + arange(size) * dilation).reshape({-1});
    const Device dev = windows.device();
    // n as shape scalars (runtime params): a new size compiles nothing
    const Tensor inside = at < shape_scalar(n, dev);  // an output cropped below the windows' reach
    const Tensor src = windows.movedim(-1, d + 1).flatten(d, d + 1);
    Shape along(in.size(), 1);
    along[d] = at.numel();
    return zeros(in, TensorOptions(windows.dtype()).device(windows.device()))
        .index_add(d, at.minimum(shape_scalar(std::max<int64_t>(n - 1, 0), dev)), where(inside.reshape(along), src, 0.0));
  }
  const Tensor i = arange(n, TensorOptions(DType::Int64).device(windows.device()));
  Shape along(in.size(), 1);
  along[d] = n;
  // the last window as a shape scalar (a runtime param): a new size
  // compiles nothing; the mask and the clamp name the same one
  const Tensor last = shape_scalar(count - 1, windows.device()), first = zeros_like(last);
  Tensor sum;
  for (int64_t k = 0; k < size; ++k) {
    const Tensor off = i - k * dilation;  // window o holds position i at k when o * step == off
    const Tensor o = step == 1 ? off : off.div(step, "floor");
    Tensor valid = (off >= 0).logical_and(o <= last);
    if (step > 1) valid = valid.logical_and(off.remainder(step) == 0);
    const Tensor read = gather_node(windows.select(-1, k), d, laid_along(o.maximum(first).minimum(last), d, in), "fold");
    const Tensor term = where(valid.reshape(along), read, 0.0);
    sum = sum.defined() ? sum + term : term;
  }
  return sum;
}

}  // namespace

bool next_tap(Shape& tap, const Shape& kernel) {
  for (size_t j = tap.size(); j-- > 0;) {
    if (++tap[j] < kernel[j]) return true;
    tap[j] = 0;
  }
  return false;
}

Tensor window_tap(const Tensor& windows, const Shape& tap) {
  Tensor v = windows;
  for (size_t j = tap.size(); j-- > 0;) v = v.select(-1, tap[j]);
  return v;
}

// The gradient is its adjoint, a view of g (Col2ImBackward0: unfold_windows),
// not the gathers' own (a scatter per tap into zeros: a transposed
// convolution's input gradient ran three scatters and a copy).
Tensor fold_windows(const Tensor& windows, int64_t d, int64_t n, int64_t step, int64_t dilation) {
  if (!autograd::should_record({&windows})) return fold_values(windows, d, n, step, dilation);
  Tensor out;
  {
    const NoGradGuard no_grad;
    out = fold_values(windows, d, n, step, dilation);
  }
  if (auto f = record(GradFn::Col2ImBackward0, out, {&windows})) f->ints = {d, step, dilation};
  return out;
}

Tensor unfold_windows(const Tensor& g, const Shape& windows, int64_t d, int64_t step, int64_t dilation) {
  const int64_t count = windows[static_cast<size_t>(d)], size = windows.back(), n = g.size(d);
  if (count == 0 || size == 0 || n == 0)
    return zeros(windows, TensorOptions(g.dtype()).device(g.device()));
  // the positions the windows read: g cropped to them, or zeros past its end
  const int64_t span = (size - 1) * dilation + 1, reach = (count - 1) * step + span;
  Tensor r = g;
  if (reach < n) r = g.narrow(d, 0, reach);
  if (reach > n) {
    Shape pads(static_cast<size_t>(2 * (g.dim() - d)), 0);
    pads.back() = reach - n;
    r = pad(g, pads);
  }
  Tensor w = r.unfold(d, span, step);
  return dilation > 1 ? w.slice(-1, 0, std::nullopt, dilation) : w;
}

Tensor Tensor::broadcast_to(const Shape& size, SourceLoc loc) const {
  const LocScope at(loc);
  return expand(size);
}

Tensor Tensor::tile(const Shape& dims, SourceLoc loc) const {
  const LocScope at(loc);
  check_defined(*this, "tile");
  Shape reps = dims;
  // fewer repeats than dims: the leading dims repeat once (torch.tile)
  while (static_cast<int64_t>(reps.size()) < dim()) reps.insert(reps.begin(), 1);
  return repeat(reps);
}

Tensor Tensor::repeat_interleave(int64_t repeats, std::optional<int64_t> dim, SourceLoc loc) const {
  const LocScope at(loc);
  check_defined(*this, "repeat_interleave");
  KILN_CHECK(repeats >= 0, "repeat_interleave", "repeats can not be negative (got ", repeats, ")");
  const Tensor x = dim ? as_vector(*this) : reshape({-1});
  const int64_t d = dim ? wrap_dim(*dim, x.dim(), "repeat_interleave") : 0;
  Shape expanded = x.sizes();
  expanded.insert(expanded.begin() + d + 1, repeats);
  return x.unsqueeze(d + 1).expand(expanded).flatten(d, d + 1);
}

Tensor Tensor::repeat_interleave(const Tensor& repeats, std::optional<int64_t> dim, SourceLoc loc) const {
  const LocScope at(loc);
  check_defined(*this, "repeat_interleave");
  check_defined(repeats, "repeat_interleave");
  KILN_CHECK(repeats.dim() <= 1, "repeat_interleave", "repeats must be 0-dim or 1-dim tensor (got shape ",
             repeats.sizes(), ")");
  KILN_CHECK(repeats.dtype() == DType::Int64 || repeats.dtype() == DType::Int32, "repeat_interleave",
             "repeats has to be Long or Int tensor (got ", scalar_type_name(repeats.dtype()), ")");
  if (repeats.dim() == 0) return repeat_interleave(repeats.item<int64_t>(), dim);
  const Tensor x = dim ? as_vector(*this) : reshape({-1});
  const int64_t d = dim ? wrap_dim(*dim, x.dim(), "repeat_interleave") : 0;
  KILN_CHECK(repeats.numel() == x.sizes()[d], "repeat_interleave",
             "repeats must have the same size as input along dim, but got repeats.size(0) = ", repeats.numel(),
             " and input.size(", d, ") = ", x.sizes()[d]);
  // The output's size depends on the values: read them (as PyTorch does).
  const std::vector<int64_t> counts = repeats.to(DType::Int64).to_vector<int64_t>();
  std::vector<int64_t> index;
  for (size_t i = 0; i < counts.size(); ++i) {
    KILN_CHECK(counts[i] >= 0, "repeat_interleave", "repeats can not be negative (got ", counts[i], " at ", i, ")");
    index.insert(index.end(), static_cast<size_t>(counts[i]), static_cast<int64_t>(i));
  }
  return x.index_select(d, kiln::tensor(index, TensorOptions(DType::Int64)).reshape({static_cast<int64_t>(index.size())}));
}

Tensor Tensor::rot90(int64_t k, const Shape& dims, SourceLoc loc) const {
  const LocScope at(loc);
  check_defined(*this, "rot90");
  KILN_CHECK(dims.size() == 2, "rot90", "expected total rotation dims == 2, but got dims = ", dims.size());
  KILN_CHECK(dim() >= 2, "rot90", "expected total dims >= 2, but got total dims = ", dim());
  const int64_t a = wrap_dim(dims[0], dim(), "rot90"), b = wrap_dim(dims[1], dim(), "rot90");
  KILN_CHECK(a != b, "rot90", "expected rotation dims to be different, but got dim0 = ", a, " and dim1 = ", b);
  switch (((k % 4) + 4) % 4) {  // PyTorch's cases, so the copies' layouts match
    case 1: return flip({b}).transpose(a, b);
    case 2: return flip({a, b});
    case 3: return flip({a}).transpose(a, b);
    default: return contiguous().clone();
  }
}

Tensor Tensor::take_along_dim(const Tensor& indices, std::optional<int64_t> dim, SourceLoc loc) const {
  const LocScope at(loc);
  check_defined(*this, "take_along_dim");
  check_defined(indices, "take_along_dim");
  KILN_CHECK(indices.dtype() == DType::Int64, "take_along_dim",
             "torch.take_along_dim(): dtype of indices should be Long but got ", scalar_type_name(indices.dtype()));
  if (!dim) return reshape({-1}).gather(0, indices.reshape({-1}));
  KILN_CHECK(this->dim() == indices.dim(), "take_along_dim",
             "torch.take_along_dim(): input and indices should have the same number of dimensions, but got ",
             this->dim(), " dimensions for input, and ", indices.dim(), " dimensions for indices");
  const int64_t d = wrap_dim(*dim, this->dim(), "take_along_dim");
  // every dim but d broadcasts; along d each keeps its own size
  Shape xs = sizes(), is = indices.sizes();
  xs[d] = 1;
  is[d] = 1;
  Shape common = broadcast_shapes(xs, is, "take_along_dim");
  Shape xe = common, ie = common;
  xe[d] = sizes()[d];
  ie[d] = indices.sizes()[d];
  return expand(xe).gather(d, indices.expand(ie));
}

std::vector<Tensor> Tensor::tensor_split(int64_t sections, int64_t dim, SourceLoc loc) const {
  const LocScope at(loc);
  check_defined(*this, "tensor_split");
  KILN_CHECK(this->dim() > 0, "tensor_split", "tensor_split expected at least a 1-dimensional tensor, but got a "
             "tensor with 0 dims");
  KILN_CHECK(sections > 0, "tensor_split", "number of sections must be larger than 0, got ", sections);
  const int64_t d = wrap_dim(dim, this->dim(), "tensor_split");
  const int64_t n = sizes()[d], small = n / sections, extra = n % sections;
  std::vector<Tensor> out;
  int64_t start = 0;
  for (int64_t i = 0; i < sections; ++i) {
    const int64_t len = small + (i < extra ? 1 : 0);
    out.push_back(slice(d, start, start + len));
    start += len;
  }
  return out;
}
std::vector<Tensor> Tensor::tensor_split(const Shape& indices, int64_t dim, SourceLoc loc) const {
  const LocScope at(loc);
  check_defined(*this, "tensor_split");
  KILN_CHECK(this->dim() > 0, "tensor_split", "tensor_split expected at least a 1-dimensional tensor, but got a "
             "tensor with 0 dims");
  const int64_t d = wrap_dim(dim, this->dim(), "tensor_split");
  std::vector<Tensor> out;
  int64_t start = 0;
  for (int64_t i : indices) {
    out.push_back(slice(d, start, i));  // slice clamps, and an end before the start gives an empty part
    start = i;
  }
  out.push_back(slice(d, start));
  return out;
}

// ---- joins ----

Tensor atleast_1d(const Tensor& t, SourceLoc loc) {
  const LocScope at(loc);
  check_defined(t, "atleast_1d");
  return t.dim() == 0 ? t.reshape({1}) : t;
}
Tensor atleast_2d(const Tensor& t, SourceLoc loc) {
  const LocScope at(loc);
  check_defined(t, "atleast_2d");
  if (t.dim() == 0) return t.reshape({1, 1});
  return t.dim() == 1 ? t.unsqueeze(0) : t;
}
Tensor atleast_3d(const Tensor& t, SourceLoc loc) {
  const LocScope at(loc);
  check_defined(t, "atleast_3d");
  if (t.dim() == 0) return t.reshape({1, 1, 1});
  if (t.dim() == 1) return t.unsqueeze(0).unsqueeze(-1);
  return t.dim() == 2 ? t.unsqueeze(-1) : t;
}

namespace {
std::vector<Tensor> each(const std::vector<Tensor>& ts, Tensor (*f)(const Tensor&, SourceLoc)) {
  std::vector<Tensor> out;
  for (const Tensor& t : ts) out.push_back(f(t, SourceLoc::current()));
  return out;
}
}  // namespace

Tensor hstack(const std::vector<Tensor>& tensors, SourceLoc loc) {
  const LocScope at(loc);
  KILN_CHECK(!tensors.empty(), "hstack", "hstack expects a non-empty TensorList");
  std::vector<Tensor> parts = each(tensors, atleast_1d);
  return cat(parts, parts[0].dim() == 1 ? 0 : 1);
}
Tensor vstack(const std::vector<Tensor>& tensors, SourceLoc loc) {
  const LocScope at(loc);
  KILN_CHECK(!tensors.empty(), "vstack", "vstack expects a non-empty TensorList");
  return cat(each(tensors, atleast_2d), 0);
}
Tensor dstack(const std::vector<Tensor>& tensors, SourceLoc loc) {
  const LocScope at(loc);
  KILN_CHECK(!tensors.empty(), "dstack", "dstack expects a non-empty TensorList");
  return cat(each(tensors, atleast_3d), 2);
}
Tensor column_stack(const std::vector<Tensor>& tensors, SourceLoc loc) {
  const LocScope at(loc);
  KILN_CHECK(!tensors.empty(), "column_stack", "column_stack expects a non-empty TensorList");
  std::vector<Tensor> parts;
  for (const Tensor& t : tensors) {
    check_defined(t, "column_stack");
    parts.push_back(t.dim() <= 1 ? t.reshape({t.numel(), 1}) : t);
  }
  return cat(parts, 1);
}

std::vector<Tensor> meshgrid(const std::vector<Tensor>& tensors, const char* indexing, SourceLoc loc) {
  const LocScope at(loc);
  KILN_CHECK(!tensors.empty(), "meshgrid", "torch.meshgrid: Expected at least one tensor");
  const std::string mode = indexing ? indexing : "";
  KILN_CHECK(mode == "ij" || mode == "xy", "meshgrid",
             "torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: ", mode);
  for (const Tensor& t : tensors) {
    check_defined(t, "meshgrid");
    KILN_CHECK(t.dim() <= 1, "meshgrid", "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: ",
               t.dim(), "D (shape ", t.sizes(), ")");
    KILN_CHECK(t.dtype() == tensors[0].dtype(), "meshgrid",
               "torch.meshgrid: expects all tensors to have the same dtype (got ", scalar_type_name(tensors[0].dtype()),
               " and ", scalar_type_name(t.dtype()), ")");
  }
  std::vector<const Tensor*> ptrs;
  for (const Tensor& t : tensors) ptrs.push_back(&t);
  check_same_device("meshgrid", ptrs);
  // "xy" is "ij" with the first two inputs swapped, and their grids swapped back
  const bool swap = mode == "xy" && tensors.size() >= 2;
  std::vector<Tensor> in = tensors;
  if (swap) std::swap(in[0], in[1]);
  Shape shape;
  for (const Tensor& t : in) shape.push_back(t.numel());
  std::vector<Tensor> out;
  for (size_t i = 0; i < in.size(); ++i) {
    Shape view_shape(in.size(), 1);
    view_shape[i] = -1;
    out.push_back(in[i].view(view_shape).expand(shape));
  }
  if (swap) std::swap(out[0], out[1]);
  return out;
}

std::vector<Tensor> broadcast_tensors(const std::vector<Tensor>& tensors, SourceLoc loc) {
  const LocScope at(loc);
  Shape common;
  for (const Tensor& t : tensors) {
    check_defined(t, "broadcast_tensors");
    common = broadcast_shapes(common, t.sizes(), "broadcast_tensors");
  }
  std::vector<Tensor> out;
  for (const Tensor& t : tensors) out.push_back(t.expand(common));
  return out;
}

}  // namespace kiln

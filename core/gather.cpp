// Indexed reads and their gradient: gather, index_select, embedding (a
// Gather node: x read where an int64 index tensor says) and scatter_add (a
// ScatterAdd node, which is also Gather's gradient). The index is checked
// against x's size when the call is made, as PyTorch does (which evaluates
// the index), so the kernels never read out of bounds. index_select is a
// gather whose index is the 1-D index broadcast along the other dims (a
// stride-0 view, no copy); flip and roll are gathers whose index is computed
// from the loop index.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "core/autograd/function.h"
#include "core/ops_common.h"
#include "core/provenance.h"
#include "core/tensor_impl.h"
#include "kiln/functions.h"
#include "kiln/nn_functional.h"

namespace kiln {

namespace {

void check_index_range(const Tensor& index, int64_t size, int64_t dim, const char* op) {
  const std::optional<int64_t> bad = first_outside(index, size);
  KILN_CHECK(!bad, op, "index ", *bad, " is out of bounds for dimension ", dim, " with size ", size);
}

void check_index_dtype(const Tensor& self, const Tensor& index, const char* op) {
  KILN_CHECK(self.defined() && index.defined(), op, "expected defined tensors but got an undefined one");
  check_same_device(op, {&self, &index});
  KILN_CHECK(index.dtype() == DType::Int64, op, "Expected dtype int64 for index, got ",
             scalar_type_name(index.dtype()), " (index ", index.sizes(), ")");
}

}  // namespace

std::optional<int64_t> first_outside(const Tensor& index, int64_t size, std::optional<int64_t> skip) {
  if (index.numel() == 0) return std::nullopt;
  Tensor outside = where(index < 0, true, index >= size);
  if (skip) outside = where(index == *skip, false, outside);
  if (!outside.any().item<bool>()) return std::nullopt;
  for (int64_t v : index.to_vector<int64_t>())
    if ((v < 0 || v >= size) && v != skip) return v;
  return std::nullopt;
}

// The Gather node over x's and index's logical values (same rank, every
// index in range: checked by the caller).
Tensor gather_node(const Tensor& x, int64_t d, const Tensor& index, const char* op) {
  Attrs a;
  a.ints = {d};
  Tensor out = make_tensor(make_node(Op::Gather, x.dtype(), x.device(), index.sizes(),
                                     node_list(node_of(x, op), node_of(index, op)), std::move(a)));
  if (auto f = record(autograd::GradFn::GatherBackward0, out, {&x})) {
    f->save(index);
    f->ints = {d};
  }
  return out;
}

Tensor Tensor::gather(int64_t dim, const Tensor& index, SourceLoc loc) const {
  const LocScope at(loc);
  check_index_dtype(*this, index, "gather");
  if (this->dim() == 0) return reshape({1}).gather(dim, index.reshape({1})).reshape(index.sizes());
  const int64_t d = wrap_dim(dim, this->dim(), "gather");
  KILN_CHECK(index.dim() == this->dim(), "gather", "Index tensor must have the same number of dimensions as input tensor (input ",
             sizes(), ", index ", index.sizes(), ")");
  for (int64_t k = 0; k < this->dim(); ++k)
    KILN_CHECK(k == d || index.size(k) <= size(k), "gather", "Size does not match at dimension ", k,
               " expected index ", index.sizes(), " to be smaller than self ", sizes(), " apart from dimension ", d);
  check_index_range(index, size(d), d, "gather");
  return gather_node(*this, d, index, "gather");
}

namespace {
// A 1-D index laid along dim d and broadcast to `shape` (whose dim d is its
// length): a stride-0 view, no copy.
Tensor laid_along(const Tensor& positions, int64_t d, const Shape& shape) {
  Shape view(shape.size(), 1);
  view[static_cast<size_t>(d)] = shape[static_cast<size_t>(d)];
  return positions.reshape(view).expand(shape);
}

// index_select, its errors named `op` (embedding's too).
Tensor select_rows(const Tensor& x, int64_t dim, const Tensor& index, const char* op) {
  check_index_dtype(x, index, op);
  KILN_CHECK(index.dim() <= 1, op, "index_select(): Index is supposed to be a vector (index ", index.sizes(), ")");
  if (x.dim() == 0) return select_rows(x.reshape({1}), 0, index, op).reshape(index.sizes());
  const int64_t d = wrap_dim(dim, x.dim(), op);
  const Tensor idx = index.reshape({-1});
  check_index_range(idx, x.size(d), d, op);
  Shape out = x.sizes();
  out[static_cast<size_t>(d)] = idx.numel();
  return gather_node(x, d, laid_along(idx, d, out), op);
}
}  // namespace

Tensor Tensor::index_select(int64_t dim, const Tensor& index, SourceLoc loc) const {
  const LocScope at(loc);
  return select_rows(*this, dim, index, "index_select");
}

Tensor Tensor::scatter_add(int64_t dim, const Tensor& index, const Tensor& src, SourceLoc loc) const {
  const LocScope at(loc);
  check_index_dtype(*this, index, "scatter_add");
  KILN_CHECK(src.defined(), "scatter_add", "expected a defined src");
  check_same_device("scatter_add", {this, &src});
  KILN_CHECK(src.dtype() == dtype(), "scatter_add", "Expected self.dtype to be equal to src.dtype (",
             scalar_type_name(dtype()), " and ", scalar_type_name(src.dtype()), ")");
  KILN_CHECK(dtype() != DType::Bool, "scatter_add", "\"scatter_add\" not implemented for 'Bool'");
  if (this->dim() == 0)
    return reshape({1}).scatter_add(0, index.reshape({1}), src.reshape({1})).reshape({});
  const int64_t d = wrap_dim(dim, this->dim(), "scatter_add");
  KILN_CHECK(index.dim() == this->dim() && src.dim() == this->dim(), "scatter_add",
             "Index tensor must have the same number of dimensions as self and src (self ", sizes(), ", index ",
             index.sizes(), ", src ", src.sizes(), ")");
  for (int64_t k = 0; k < this->dim(); ++k)
    KILN_CHECK(index.size(k) <= src.size(k) && (k == d || index.size(k) <= size(k)), "scatter_add",
               "Expected index ", index.sizes(), " to be smaller than self ", sizes(), " apart from dimension ", d,
               " and to be smaller size than src ", src.sizes());
  check_index_range(index, size(d), d, "scatter_add");
  // src's leading part of the index's shape, as PyTorch reads it
  Tensor s = src;
  for (int64_t k = 0; k < this->dim(); ++k)
    if (s.size(k) != index.size(k)) s = s.narrow(k, 0, index.size(k));
  return scatter_add_node(*this, d, index, s, "scatter_add");
}

Tensor scatter_add_node(const Tensor& base, int64_t d, const Tensor& index, const Tensor& src, const char* op) {
  Attrs a;
  a.ints = {d};
  Tensor out = make_tensor(make_node(Op::ScatterAdd, base.dtype(), base.device(), base.sizes(),
                                     node_list(node_of(base, op), node_of(index, op), node_of(src, op)),
                                     std::move(a)));
  if (auto f = record(autograd::GradFn::ScatterAddBackward0, out, {&base, &src})) {
    f->save(index);
    f->ints = {d};
  }
  return out;
}

namespace {
std::vector<int64_t> distinct_dims(const Tensor& t, const Shape& dims, const char* op) {
  std::vector<int64_t> ds;
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(d, t.dim(), op);
    KILN_CHECK(std::find(ds.begin(), ds.end(), w) == ds.end(), op, "dim ", w,
               " appears multiple times in the list of dims");
    ds.push_back(w);
  }
  return ds;
}
}  // namespace

// A gather per flipped dim at n - 1 - i: a new tensor, as PyTorch's flip.
Tensor Tensor::flip(const Shape& dims, SourceLoc loc) const {
  const LocScope at(loc);
  KILN_CHECK(defined(), "flip", "expected a defined tensor but got an undefined one");
  const std::vector<int64_t> ds = distinct_dims(*this, dims, "flip");
  Tensor out = *this;
  bool moved = false;
  for (int64_t d : ds) {
    if (this->dim() == 0 || size(d) <= 1) continue;
    const int64_t n = size(d);
    // n - 1 - i, computed from the loop index: in range by construction
    out = gather_node(out, d, laid_along(arange(n - 1, -1, -1, TensorOptions(DType::Int64).device(device())), d, out.sizes()),
                      "flip");
    moved = true;
  }
  return moved ? out : clone();
}

// A gather per rolled dim at (i - shift) mod n; no dims: the flattened
// tensor rolled, reshaped back.
Tensor Tensor::roll(const Shape& shifts, const Shape& dims, SourceLoc loc) const {
  const LocScope at(loc);
  KILN_CHECK(defined(), "roll", "expected a defined tensor but got an undefined one");
  KILN_CHECK(!shifts.empty(), "roll", "`shifts` required");
  if (dims.empty()) {
    KILN_CHECK(shifts.size() == 1, "roll", "shifts and dimensions must align. shifts: ", shifts.size(), ", dims:0");
    return reshape({-1}).roll(shifts, {0}).reshape(sizes());
  }
  KILN_CHECK(shifts.size() == dims.size(), "roll", "shifts and dimensions must align. shifts: ", shifts.size(),
             ", dims:", dims.size());
  Tensor out = *this;
  bool moved = false;
  for (size_t k = 0; k < dims.size(); ++k) {
    const int64_t d = wrap_dim(dims[k], this->dim(), "roll");
    if (this->dim() == 0 || size(d) <= 1) continue;
    const int64_t n = size(d), s = ((shifts[k] % n) + n) % n;
    if (s == 0) continue;
    const Tensor i = arange(n, TensorOptions(DType::Int64).device(device()));
    out = gather_node(out, d, laid_along(where(i >= s, i - s, i + (n - s)), d, out.sizes()), "roll");
    moved = true;
  }
  return moved ? out : clone();
}

Tensor gather(const Tensor& t, int64_t dim, const Tensor& index, SourceLoc loc) { return t.gather(dim, index, loc); }
Tensor index_select(const Tensor& t, int64_t dim, const Tensor& index, SourceLoc loc) {
  return t.index_select(dim, index, loc);
}
Tensor scatter_add(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src, SourceLoc loc) {
  return t.scatter_add(dim, index, src, loc);
}

// weight's rows at the ids: [*ids, embedding_dim].
Tensor embedding(const Tensor& input, const Tensor& weight, SourceLoc loc) {
  const LocScope at(loc);
  KILN_CHECK(weight.defined() && weight.dim() == 2, "embedding", "'weight' must be 2-D (weight ",
             weight.defined() ? weight.sizes() : Shape{}, ")");
  KILN_CHECK(input.defined() && input.dtype() == DType::Int64, "embedding",
             "Expected tensor for argument #1 'indices' to have scalar type Long; but got ",
             input.defined() ? scalar_type_name(input.dtype()) : std::string("an undefined tensor"), " instead");
  Shape out = input.sizes();
  out.push_back(weight.size(1));
  return select_rows(weight, 0, input.reshape({-1}), "embedding").reshape(out);
}

}  // namespace kiln

// Indexed reads and writes: gather, index_select, embedding (a Gather node:
// x read where an int64 index tensor says), scatter_add (a ScatterAdd node,
// also Gather's gradient), scatter (a Scatter node: written, not added),
// index_add / index_copy / index_fill (scatters of slices along a dim). The
// index is checked against x's size when the call is made, as PyTorch does
// (which evaluates the index), so the kernels never touch memory out of
// bounds. index_select is a gather whose index is the 1-D index broadcast
// along the other dims (a stride-0 view, no copy); flip and roll are gathers
// whose index is computed from the loop index.
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
  // size as a shape scalar (a runtime param): the check's kernel serves any size
  Tensor outside = where(index < 0, true, index >= shape_scalar(size, index.device()));
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

Tensor laid_along(const Tensor& positions, int64_t d, const Shape& shape) {
  Shape view(shape.size(), 1);
  view[static_cast<size_t>(d)] = shape[static_cast<size_t>(d)];
  return positions.reshape(view).expand(shape);
}

namespace {

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

namespace {
// PyTorch's checks of scatter / scatter_add on self, index and src (src
// undefined: a value is scattered); the dim wrapped, and src's leading part
// of the index's shape (as PyTorch reads it) in `src_part`.
int64_t check_scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, Tensor* src_part,
                      const char* op) {
  check_index_dtype(self, index, op);
  if (src.defined()) {
    check_same_device(op, {&self, &src});
    KILN_CHECK(src.dtype() == self.dtype(), op, "Expected self.dtype to be equal to src.dtype (",
               scalar_type_name(self.dtype()), " and ", scalar_type_name(src.dtype()), ")");
  }
  const int64_t r = std::max<int64_t>(self.dim(), 1);
  const int64_t d = wrap_dim(dim, r, op);
  const std::string src_text = src.defined() ? ", src " + shape_text(src.sizes()) : "";
  KILN_CHECK(std::max<int64_t>(index.dim(), 1) == r && (!src.defined() || std::max<int64_t>(src.dim(), 1) == r), op,
             "Index tensor must have the same number of dimensions as self", src.defined() ? " and src" : "",
             " (self ", self.sizes(), ", index ", index.sizes(), src_text, ")");
  if (self.dim() == 0) {  // one element: index 0 only
    check_index_range(index, 1, d, op);
    if (src.defined()) *src_part = src;
    return d;
  }
  for (int64_t k = 0; k < r; ++k)
    KILN_CHECK((!src.defined() || index.size(k) <= src.size(k)) && (k == d || index.size(k) <= self.size(k)), op,
               "Expected index ", index.sizes(), " to be smaller than self ", self.sizes(), " apart from dimension ",
               d, src.defined() ? " and to be smaller size than src " + shape_text(src.sizes()) : "");
  check_index_range(index, self.size(d), d, op);
  if (src.defined()) {
    Tensor s = src;
    for (int64_t k = 0; k < r; ++k)
      if (s.size(k) != index.size(k)) s = s.narrow(k, 0, index.size(k));
    *src_part = s;
  }
  return d;
}
}  // namespace

Tensor Tensor::scatter_add(int64_t dim, const Tensor& index, const Tensor& src, SourceLoc loc) const {
  const LocScope at(loc);
  KILN_CHECK(src.defined(), "scatter_add", "expected a defined src");
  KILN_CHECK(dtype() != DType::Bool, "scatter_add", "\"scatter_add\" not implemented for 'Bool'");
  Tensor s;
  const int64_t d = check_scatter(*this, dim, index, src, &s, "scatter_add");
  if (this->dim() == 0)
    return scatter_add_node(as_vector(*this), 0, as_vector(index), as_vector(s), "scatter_add").reshape({});
  return scatter_add_node(*this, d, index, s, "scatter_add");
}

Tensor Tensor::scatter(int64_t dim, const Tensor& index, const Tensor& src, SourceLoc loc) const {
  const LocScope at(loc);
  KILN_CHECK(src.defined(), "scatter", "expected a defined src");
  Tensor s;
  const int64_t d = check_scatter(*this, dim, index, src, &s, "scatter");
  if (this->dim() == 0)
    return scatter_node(as_vector(*this), 0, as_vector(index), as_vector(s), 0, "scatter").reshape({});
  return scatter_node(*this, d, index, s, 0, "scatter");
}

Tensor Tensor::scatter(int64_t dim, const Tensor& index, Scalar value, SourceLoc loc) const {
  const LocScope at(loc);
  const int64_t d = check_scatter(*this, dim, index, Tensor(), nullptr, "scatter");
  check_fill_value(value, dtype(), "scatter");
  if (this->dim() == 0)
    return scatter_node(as_vector(*this), 0, as_vector(index), Tensor(), value, "scatter").reshape({});
  return scatter_node(*this, d, index, Tensor(), value, "scatter");
}

namespace {
// A Scatter / ScatterAdd node of base, index and src's node, and its
// backward function `kind` over `inputs` (saving the index and the dim).
Tensor scatter_op(Op op, const Tensor& base, int64_t d, const Tensor& index, NodePtr src, autograd::GradFn kind,
                  std::initializer_list<const Tensor*> inputs, const char* name) {
  Attrs a;
  a.ints = {d};
  Tensor out = make_tensor(make_node(op, base.dtype(), base.device(), base.sizes(),
                                     node_list(node_of(base, name), node_of(index, name), std::move(src)),
                                     std::move(a)));
  if (auto f = record(kind, out, inputs)) {
    f->save(index);
    f->ints = {d};
  }
  return out;
}
}  // namespace

Tensor scatter_node(const Tensor& base, int64_t d, const Tensor& index, const Tensor& src, Scalar value,
                    const char* op) {
  if (!src.defined())
    return scatter_op(Op::Scatter, base, d, index, full_node(index.sizes(), value, base.dtype(), base.device()),
                      autograd::GradFn::ScatterBackward1, {&base}, op);
  return scatter_op(Op::Scatter, base, d, index, node_of(src, op), autograd::GradFn::ScatterBackward0, {&base, &src},
                    op);
}

Tensor scatter_add_node(const Tensor& base, int64_t d, const Tensor& index, const Tensor& src, const char* op) {
  return scatter_op(Op::ScatterAdd, base, d, index, node_of(src, op), autograd::GradFn::ScatterAddBackward0,
                    {&base, &src}, op);
}

namespace {
// index_add / index_copy / index_fill: a 1-D int64 index of positions along
// dim (checked), laid along dim over `shape` (source's, or self's with dim's
// size the index's length). Returns the wrapped dim.
int64_t laid_index(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, Tensor* laid,
                   const char* op) {
  KILN_CHECK(self.defined() && index.defined(), op, "expected defined tensors but got an undefined one");
  check_same_device(op, {&self, &index});
  KILN_CHECK(index.dtype() == DType::Int64 || index.dtype() == DType::Int32, op,
             "Expected dtype int32/int64 for index (index ", scalar_type_name(index.dtype()), ")");
  KILN_CHECK(index.dim() <= 1, op, "Index is supposed to be a vector (index ", index.sizes(), ")");
  const int64_t r = std::max<int64_t>(self.dim(), 1);
  const int64_t d = wrap_dim(dim, r, op);
  const Tensor idx = index.reshape({-1}).to(DType::Int64);
  Shape shape = self.dim() == 0 ? Shape{1} : self.sizes();
  if (source.defined()) {
    check_same_device(op, {&self, &source});
    KILN_CHECK(source.dtype() == self.dtype(), op, "self (", scalar_type_name(self.dtype()), ") and source (",
               scalar_type_name(source.dtype()), ") must have the same scalar type");
    const Shape s = source.dim() == 0 ? Shape{1} : source.sizes();
    bool slices = s.size() == shape.size();
    for (size_t k = 0; slices && k < s.size(); ++k) slices = k == static_cast<size_t>(d) || s[k] == shape[k];
    KILN_CHECK(slices, op, "Source/destination tensor must have same slice shapes (self ", self.sizes(), ", source ",
               source.sizes(), ", dim ", d, ")");
    KILN_CHECK(s[static_cast<size_t>(d)] == idx.numel(), op, "Number of indices (", idx.numel(),
               ") should be equal to source.size(dim) (", s[static_cast<size_t>(d)], ")");
  }
  shape[static_cast<size_t>(d)] = idx.numel();
  check_index_range(idx, self.dim() == 0 ? 1 : self.size(d), d, op);
  *laid = laid_along(idx, d, shape);
  return d;
}
}  // namespace

Tensor Tensor::index_add(int64_t dim, const Tensor& index, const Tensor& source, Scalar alpha, SourceLoc loc) const {
  const LocScope at(loc);
  KILN_CHECK(source.defined(), "index_add", "expected a defined source");
  KILN_CHECK(!(alpha.is_floating_point() && !is_floating_point()), "index_add",
             "For integral input tensors, argument alpha must not be a floating point number.");
  Tensor laid;
  const int64_t d = laid_index(*this, dim, index, source, &laid, "index_add");
  const Tensor s = as_vector(alpha.to_double() == 1.0 ? source : source * alpha);
  const Tensor out = scatter_add_node(as_vector(*this), d, laid, s.reshape(laid.sizes()), "index_add");
  return this->dim() == 0 ? out.reshape({}) : out;
}

Tensor Tensor::index_copy(int64_t dim, const Tensor& index, const Tensor& source, SourceLoc loc) const {
  const LocScope at(loc);
  KILN_CHECK(source.defined(), "index_copy", "expected a defined source");
  Tensor laid;
  const int64_t d = laid_index(*this, dim, index, source, &laid, "index_copy");
  const Tensor out = scatter_node(as_vector(*this), d, laid, as_vector(source).reshape(laid.sizes()), 0, "index_copy");
  return this->dim() == 0 ? out.reshape({}) : out;
}

Tensor Tensor::index_fill(int64_t dim, const Tensor& index, Scalar value, SourceLoc loc) const {
  const LocScope at(loc);
  Tensor laid;
  const int64_t d = laid_index(*this, dim, index, Tensor(), &laid, "index_fill");
  check_fill_value(value, dtype(), "index_fill");
  const Tensor out = scatter_node(as_vector(*this), d, laid, Tensor(), value, "index_fill");
  return this->dim() == 0 ? out.reshape({}) : out;
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
    // n - 1 - i, computed from the loop index: in range by construction;
    // n - 1 a shape scalar, so a new size compiles nothing
    const Tensor i = arange(n, TensorOptions(DType::Int64).device(device()));
    out = gather_node(out, d, laid_along(shape_scalar(n - 1, device()) - i, d, out.sizes()), "flip");
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
    // s and n - s as shape scalars: a new size (the same shift) compiles nothing
    const Tensor i = arange(n, TensorOptions(DType::Int64).device(device()));
    const Tensor shift = shape_scalar(s, device()), back = shape_scalar(n - s, device());
    out = gather_node(out, d, laid_along(where(i >= shift, i - shift, i + back), d, out.sizes()), "roll");
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

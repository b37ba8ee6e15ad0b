// Output layouts: the strides PyTorch gives the result of an elementwise op
// (TensorIterator's rule), and building such a result so that its value is
// computed in memory order.
//
// PyTorch's elementwise results keep their inputs' memory order: x.t() * 2
// has strides (1, n), is not contiguous, and .view(-1) of it is refused.
// kiln does the same, and it is also why it is fast: the node computes the
// value in memory order (x * 2 over x's memory, one pass, no transposing
// tiles) and the tensor is a permuted view of that node's storage.
#pragma once

#include <optional>

#include "core/tensor_impl.h"

namespace kiln {

// PyTorch's is_non_overlapping_and_dense: a permutation of a contiguous layout.
bool non_overlapping_and_dense(const Shape& sizes, const Shape& strides);

// The dims of a layout in memory order, outermost first: dims of more than
// one element by decreasing stride, dims of one element where they are.
// Empty when that order is the logical one (the layout is row-major up to
// dims of one element) or when strides tie (an overlapping or broadcast layout).
Shape memory_permutation(const Shape& sizes, const Shape& strides);

// Whether t covers the whole of its storage in a dense order: row-major, or
// a permutation of it (x.t(), a result in a permuted layout).
bool covers_storage_densely(const TensorImpl& t);
// The permutation p under which t covers its whole storage in row-major
// order (t.permute(p) is row-major over it); empty when t is row-major
// already or does not cover its storage densely.
Shape storage_permutation(const TensorImpl& t);

// n's value read with its dims in the order p (n.permute(p)): one AsStrided
// node, composed with n when n is a view itself; n itself for the identity.
NodePtr permute_node(const NodePtr& n, const Shape& p);

// t's values in a new tensor with these dense strides (a copy, recorded as
// clone); t itself when it has them over the whole of its storage.
Tensor with_strides(const Tensor& t, const Shape& strides);

// The layout of an elementwise op's result of shape `shape` whose operands
// (in PyTorch's order, a scalar operand excluded) are `operands`: PyTorch's
// strides for it, and the value node built in memory order.
class OutputLayout {
 public:
  OutputLayout(std::initializer_list<const Tensor*> operands, Shape shape);
  // The layout of t for a copy of it (clone, to, the *_like factories):
  // PyTorch's preserve_format.
  explicit OutputLayout(const Tensor& t) : OutputLayout({&t}, t.sizes()) {}

  // Whether the value is computed in an order other than the logical one.
  bool permuted() const { return strided_ && !strided_->perm.empty(); }
  // The shape of the value node: the logical shape in memory order.
  const Shape& value_shape() const { return permuted() ? strided_->value_shape : shape_; }
  // t cast to dtype and broadcast to the result's shape, in memory order.
  NodePtr read(const Tensor& t, DType dtype, const char* op) const;
  // The result: a tensor with these strides whose storage's value is `value`
  // (of value_shape()).
  Tensor make(NodePtr value, bool requires_grad = false) const;
  // The result from a new row-major tensor of the value shape (a factory's:
  // zeros, rand, ... for the *_like forms).
  Tensor adopt(const Tensor& made) const { return make(made.impl()->storage->node, made.requires_grad()); }

 private:
  // A layout other than row-major (rare: kept out of the common case's way).
  struct Strided {
    Shape strides, perm, value_shape;
  };
  Shape shape_;
  std::optional<Strided> strided_;  // empty: row-major (constructs nothing)
};

// A *_like factory's result: make(shape, options) (zeros, rand, ...) drawn
// in t's memory order, in t's dense layout (PyTorch's preserve_format).
template <class Make>
Tensor made_like(const Tensor& t, const TensorOptions& options, Make make) {
  const OutputLayout layout(t);
  return layout.adopt(make(layout.value_shape(), options));
}

}  // namespace kiln

// TensorImpl and Storage: how a Tensor handle maps onto the graph.
//
// A Storage is a lazily computed flat array: `node` is its current value.
// Tensors are (storage, sizes, strides, offset) views of it, exactly as in
// PyTorch, so views alias: an in-place write replaces storage->node with an
// Assign node (the old value with a strided region replaced) and bumps the
// version counter, and every tensor on that storage sees the new value the
// next time it builds its node. Nodes are never mutated.
#pragma once

#include <cstdint>
#include <memory>

#include "core/node.h"
#include "kiln/tensor.h"

namespace kiln {

namespace autograd {
struct Function;
}

struct Storage {
  NodePtr node;          // the current value; its numel is the storage's numel
  uint64_t version = 0;  // bumped by every in-place write
  // from_blob: the caller's memory. Such a storage's node is always a Buffer
  // node over it; a write is evaluated at once and lands in that memory.
  BufferPtr borrowed;

  int64_t numel() const { return node->numel(); }
  DType dtype() const { return node->dtype; }
  Device device() const { return node->device; }
};

struct TensorImpl {
  TensorImpl() noexcept {}  // no zero-filling before the members' own initializers (see Node)
  std::shared_ptr<Storage> storage;
  Shape sizes;
  Shape strides;  // in elements
  int64_t offset = 0;

  // ---- autograd state (core/autograd/) ----
  // A leaf requires grad when the user says so; a result, when it has a
  // grad_fn (the backward function that produced it). is_leaf == !grad_fn.
  bool requires_grad = false;
  bool retains_grad = false;
  Tensor grad;
  std::shared_ptr<autograd::Function> grad_fn;
  std::shared_ptr<autograd::Function> grad_accumulator;  // a leaf's AccumulateGrad
  // A view: the non-view tensor it was taken of, and the storage version
  // its grad_fn describes (an in-place write since regenerates it).
  std::shared_ptr<TensorImpl> view_base;
  uint64_t view_version = 0;
  // A view: where the user's code took it (its AsStrided node and writes
  // through it, `t.index({0}) = v`, are stamped with this line).
  SourceLoc view_loc;

  // The node that reads this tensor's value: the storage node itself when the
  // tensor covers it contiguously, else an AsStrided view of it. Cached until
  // the storage's node changes.
  const NodePtr& node() const;  // valid while this tensor and its storage are unchanged

  DType dtype() const { return storage->dtype(); }
  Device device() const { return storage->device(); }
  int64_t numel() const { return sizes.numel(); }
  bool is_contiguous() const;
  // Whether this tensor covers its whole storage in row-major order
  // (computed once: a tensor's geometry never changes).
  bool covers_storage() const { return covers_ >= 0 ? covers_ != 0 : compute_covers(); }

 private:
  friend Tensor make_tensor(NodePtr node, bool requires_grad);
  friend Tensor make_tensor(NodePtr value, Shape sizes, Shape strides, bool requires_grad);
  bool compute_covers() const;
  mutable int8_t covers_ = -1;  // covers_storage(), once known
  mutable NodePtr cached_;
  mutable const Node* cached_base_ = nullptr;
};

// Strides of a row-major tensor of these sizes.
Shape contiguous_strides(const Shape& sizes);

// A tensor owning a new storage whose value is `node` (a leaf).
Tensor make_tensor(NodePtr node, bool requires_grad = false);
// The same with a layout of its own: sizes and strides (dense, a permutation
// of row-major: core/layout.h) over a storage whose value is `value`, the
// elements in memory order.
Tensor make_tensor(NodePtr value, Shape sizes, Shape strides, bool requires_grad = false);
// A view of `base`'s storage (autograd sees it as a view of base).
Tensor make_view(const Tensor& base, Shape sizes, Shape strides, int64_t offset);
// The value node of a defined tensor (raises for an undefined one).
const NodePtr& node_of(const Tensor& t, const char* op);
// Evaluates the storages of these tensors (the reference evaluator for now).
void realize(const std::vector<const TensorImpl*>& tensors);
// Replaces the storage's value by `value` (an in-place write) and bumps its version.
void write_storage(Storage& storage, NodePtr value);
// Graphs deeper than this are evaluated as they are built, so that a loop
// that never reads its result keeps memory and recursion depth bounded.
constexpr uint32_t kAutoEvalDepth = 512;

}  // namespace kiln

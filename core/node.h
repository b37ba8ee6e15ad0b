// Node: one immutable vertex of the lazy graph (op, dtype, device, shape,
// inputs, attributes). Nodes hash and compare by structure, so a graph seen
// before can be recognized; leaves compare by dtype and shape, not by data.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/buffer.h"
#include "core/pool_alloc.h"
#include "core/small_vector.h"
#include "core/op.h"
#include "kiln/device.h"
#include "kiln/dtype.h"
#include "kiln/shape.h"
#include "kiln/source_location.h"

namespace kiln {

struct Node;
using NodePtr = std::shared_ptr<const Node>;
// A node's inputs: a vector whose buffer comes from the pool (pool_alloc.h).
using NodeList = std::vector<NodePtr, PoolAllocator<NodePtr>>;

struct Attrs {
  Shape ints;  // a small vector: most nodes' attributes need no allocation
  SmallVector<double, 2> reals;  // likewise: a fill value, a range's start and step
  friend bool operator==(const Attrs& a, const Attrs& b);
};

struct Node {
  // User-provided, so that make_pooled's value-initialization does not first
  // zero the whole node (a `rep stos` that was a third of make_node's time).
  Node() noexcept {}
  Op op{};
  DType dtype{};
  Device device{};
  Shape shape;
  NodeList inputs;
  Attrs attrs;
  uint64_t hash = 0;   // structural: op, dtype, device, shape, attrs, inputs' hashes
  uint32_t depth = 0;  // longest path to a leaf
  bool cpu_only = true; // this node and every node below it are on the CPU
  // Always stored by its own kernel, never computed inline in its readers:
  // a level of a blocked column reduction (core/reduction_forms.cpp), whose
  // readers would otherwise walk memory with a stride, or a narrow row
  // repeated over a wide one there (its readers would divide); what a
  // fold's window taps read (stored_copy): a padded input, each tap's read
  // masked when inline, or a stage's partial sum. Part of the structure.
  bool store = false;
  // Where the user's code created it (provenance.h); not part of the structure.
  SourceLoc loc;
  // Op::Buffer: the data. Mutable for one reason: when a borrowed buffer is
  // overwritten in place (from_blob writes), readers still pending get a
  // snapshot of the old contents first (copy-on-write, see realize.cpp).
  mutable BufferPtr buffer;
  // The value, once evaluated as a target: later graphs that still hold this
  // node reuse it instead of recomputing. Never changes the node's meaning.
  mutable BufferPtr realized;

  int64_t numel() const { return shape.numel(); }
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  OpClass cls() const { return op_class(op); }
};

// Whether a node already has a value in memory: a buffer, or a node
// evaluated as a target.
inline bool has_value(const Node& n) { return n.op == Op::Buffer || n.realized != nullptr; }

// A NodeList of the given nodes, moved in where they are rvalues: a braced
// `{a, b}` copies each element out of its initializer_list (an atomic
// reference-count increment and decrement per node per op, a measurable
// share of recording a graph).
template <typename... P>
NodeList node_list(P&&... p) {
  NodeList l;
  l.reserve(sizeof...(p));
  (l.emplace_back(std::forward<P>(p)), ...);
  return l;
}

NodePtr make_node(Op op, DType dtype, Device device, Shape shape, NodeList inputs,
                  Attrs attrs = {}, bool store = false);
NodePtr make_buffer_node(BufferPtr buffer, Shape shape);

// Structural equality: same op, dtype, device, shape, attrs and structurally
// equal inputs. Buffers compare by dtype and shape only. Attributes that are
// data (below) do not count.
bool same_structure(const Node& a, const Node& b);

// The attributes that are data, like a buffer's contents, not structure: a
// random node's seed and Philox offset, a floating-point Full's value.
// Kernels take them as params (jit/lower.h: DataParam), so new values need
// no new schedule and no new kernel.
enum class DataAttr : int32_t { Seed, Offset, FloatValue };
// The value of n's data attribute `a` as a kernel param (a double as its 64 bits).
int64_t data_attr_value(const Node& n, DataAttr a);

}  // namespace kiln

// Realization: evaluating storages and swapping their nodes for buffers.
//
// Evaluation goes through the reference evaluator for now (the JIT issue
// replaces it). After evaluation a storage's node becomes a Buffer node, so
// the graph behind it can be freed; the old node keeps the buffer as its
// `realized` memo for graphs that still hold it.
#include <cstring>
#include <unordered_set>

#include "core/reference/evaluate.h"
#include "core/tensor_impl.h"
#include "kiln/error.h"

namespace kiln {

void realize(const std::vector<const TensorImpl*>& tensors) {
  std::vector<Storage*> storages;
  std::vector<NodePtr> roots;
  std::unordered_set<Storage*> seen;
  for (const TensorImpl* t : tensors) {
    Storage* s = t->storage.get();
    if (s->node->op == Op::Buffer || !seen.insert(s).second) continue;
    storages.push_back(s);
    roots.push_back(s->node);
  }
  if (roots.empty()) return;
  std::vector<BufferPtr> results = reference::evaluate(roots);
  for (size_t i = 0; i < storages.size(); ++i) {
    Storage& s = *storages[i];
    s.node->realized = results[i];
    s.node = make_buffer_node(results[i], s.node->shape);
  }
}

// A borrowed storage's write is evaluated now and copied into the caller's
// memory. Graphs still pending may read the old contents through the old
// Buffer node: if anyone else holds it, it first gets a private snapshot
// (copy-on-write), so they see the value as it was when they were built.
static void write_borrowed(Storage& s, NodePtr value) {
  NodePtr leaf = std::move(s.node);
  BufferPtr result = reference::evaluate({value})[0];
  value->realized = result;
  value.reset();
  const size_t bytes = s.borrowed->nbytes();
  if (leaf.use_count() > 1) {
    BufferPtr snapshot = Buffer::allocate(leaf->dtype, leaf->numel(), leaf->device);
    if (bytes) std::memcpy(snapshot->data(), s.borrowed->data(), bytes);
    leaf->buffer = std::move(snapshot);
  }
  if (bytes && result->data() != s.borrowed->data())
    std::memcpy(s.borrowed->data(), result->data(), bytes);
  s.node = make_buffer_node(s.borrowed, leaf->shape);
}

void write_storage(Storage& s, NodePtr value) {
  KILN_INTERNAL_ASSERT(value->numel() == s.numel() && value->dtype == s.dtype(),
                       "write of ", value->shape, " into a storage of ", s.node->shape);
  ++s.version;
  if (s.borrowed) return write_borrowed(s, std::move(value));
  s.node = std::move(value);
  if (s.node->depth > kAutoEvalDepth) {
    std::vector<NodePtr> roots{s.node};
    BufferPtr b = reference::evaluate(roots)[0];
    s.node->realized = b;
    s.node = make_buffer_node(b, s.node->shape);
  }
}

}  // namespace kiln

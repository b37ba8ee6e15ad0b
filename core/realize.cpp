// Realization: evaluating storages and swapping their nodes for buffers.
//
// Evaluation goes through the fusing JIT where it can run, else through the
// reference evaluator. After evaluation a storage's node becomes a Buffer node, so
// the graph behind it can be freed; the old node keeps the buffer as its
// `realized` memo for graphs that still hold it.
#include <cstring>
#include <algorithm>

#include "core/eval_reason.h"
#include "core/reference/evaluate.h"
#include "jit/executor.h"
#include "jit/inspect.h"
#include "jit/jit_log.h"
#include "core/tensor_impl.h"
#include "kiln/error.h"

namespace kiln {

// The user lines that built these values ("" when unknown).
static std::string root_lines(const std::vector<NodePtr>& roots) {
  std::vector<const Node*> nodes;
  for (const NodePtr& r : roots) nodes.push_back(r.get());
  return jit::node_lines(nodes);
}

// The JIT where it can run (a CPU backend, CPU nodes), else the reference.
// KILN_LOG=jit logs each evaluation with its reason; an error names the user
// lines that built the values being evaluated (the executor adds the kernel's).
static std::vector<BufferPtr> evaluate_nodes(const std::vector<NodePtr>& roots) {
  const bool jit = jit::can_evaluate(roots);
  if (jit::jit_log_enabled()) {
    const std::string lines = root_lines(roots);
    jit::jit_log(std::string("evaluation (") + (jit ? "jit" : "reference evaluator") + ") of " +
                 std::to_string(roots.size()) + (roots.size() == 1 ? " value: " : " values: ") +
                 eval_reason_text(current_eval_reason()) + (lines.empty() ? "" : "; values built at " + lines));
  }
  try {
    return jit ? jit::evaluate(roots) : reference::evaluate(roots);
  } catch (const Error& e) {
    const std::string lines = root_lines(roots);
    if (lines.empty() || e.message().find("\n  in kernel") != std::string::npos) throw;
    throw Error(e.message() + "\n  evaluating the values built at " + lines);
  }
}

void realize(const std::vector<const TensorImpl*>& tensors) {
  std::vector<Storage*> storages;
  std::vector<NodePtr> roots;
  for (const TensorImpl* t : tensors) {
    Storage* s = t->storage.get();
    if (s->node->op == Op::Buffer || std::find(storages.begin(), storages.end(), s) != storages.end())
      continue;
    storages.push_back(s);
    roots.push_back(s->node);
  }
  if (roots.empty()) return;
  std::vector<BufferPtr> results = evaluate_nodes(roots);
  for (size_t i = 0; i < storages.size(); ++i) {
    Storage& s = *storages[i];
    s.node->realized = results[i];
    s.node = make_buffer_node(results[i], s.node->shape);
  }
}

// A borrowed storage's write is evaluated now and lands in the caller's
// memory. The storage lets go of its old Buffer node while the write runs:
// when nothing else holds that node (no pending graph reads the old
// contents), the JIT scatters straight into the caller's memory
// (executor.cpp: writable_base); else the write is computed into a new
// buffer and copied in, and the pending graphs' node first gets a private
// snapshot (copy-on-write), so they see the value as it was when they were
// built.
static void write_borrowed(Storage& s, NodePtr value) {
  EvalReasonScope reason(EvalReason::BorrowedWrite);
  const Shape shape = s.node->shape;
  std::weak_ptr<const Node> old = s.node;
  s.node.reset();
  BufferPtr result;
  try {
    result = evaluate_nodes({value})[0];
  } catch (...) {
    // The storage keeps its contents: the old node if the write's graph or
    // a pending one still holds it, else a new one over the same memory.
    s.node = old.lock();
    if (!s.node) s.node = make_buffer_node(s.borrowed, shape);
    throw;
  }
  value->realized = result;
  value.reset();
  NodePtr leaf = old.lock();
  const size_t bytes = s.borrowed->nbytes();
  if (leaf && leaf.use_count() > 1) {
    BufferPtr snapshot = Buffer::allocate(leaf->dtype, leaf->numel(), leaf->device);
    if (bytes) std::memcpy(snapshot->data(), s.borrowed->data(), bytes);
    leaf->buffer = std::move(snapshot);
  }
  if (bytes && result->data() != s.borrowed->data())
    std::memcpy(s.borrowed->data(), result->data(), bytes);
  s.node = make_buffer_node(s.borrowed, shape);
}

void write_storage(Storage& s, NodePtr value) {
  KILN_INTERNAL_ASSERT(value->numel() == s.numel() && value->dtype == s.dtype(),
                       "write of ", value->shape, " into a storage of ", s.node->shape);
  ++s.version;
  if (s.borrowed) return write_borrowed(s, std::move(value));
  s.node = std::move(value);
  if (s.node->depth > kAutoEvalDepth) {
    EvalReasonScope reason(EvalReason::DepthLimit);
    std::vector<NodePtr> roots{s.node};
    BufferPtr b = evaluate_nodes(roots)[0];
    s.node->realized = b;
    s.node = make_buffer_node(b, s.node->shape);
  }
}

}  // namespace kiln

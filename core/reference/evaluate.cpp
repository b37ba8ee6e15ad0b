// The reference evaluator's driver: orders the graph (iteratively, each node
// once), refuses CUDA work, runs one kernel per node by op class, and frees
// intermediate values as soon as their last consumer has run.
#include "core/reference/evaluate.h"

#include <unordered_map>

#include "core/reference/kernels.h"
#include "kiln/error.h"

namespace kiln::reference {

namespace {

[[noreturn]] void fail_cuda(const Device& d) {
  KILN_FAIL("eval", "cannot evaluate on ", d.str(),
            ": kiln was built without a CUDA backend or no GPU is present (move the tensor to "
            "the CPU with .cpu() first, or build with CUDA)");
}

// A node whose value is already at hand: a buffer, or a realized memo.
bool is_leaf(const Node& n) { return n.op == Op::Buffer || n.realized != nullptr; }

BufferPtr leaf_value(const Node& n) {
  BufferPtr b = n.realized ? n.realized : n.buffer;
  KILN_INTERNAL_ASSERT(b != nullptr, "Buffer node without a buffer");
  KILN_INTERNAL_ASSERT(b->numel() == n.numel() && b->dtype() == n.dtype,
                       "leaf value of ", b->numel(), " ", b->dtype(), " for a ", n.dtype,
                       " node of shape ", n.shape);
  return b;
}

// One kernel per op class. Switching on Op (not OpClass) with no default
// makes a new op in KILN_FORALL_OPS a -Wswitch warning here.
BufferPtr compute(const Node& n, const Inputs& in) {
  switch (n.op) {
    case Op::Buffer:
      KILN_INTERNAL_ASSERT(false, "a Buffer node is a leaf");
      return nullptr;
    case Op::Full: case Op::Arange: case Op::Linspace: case Op::Eye:
      return eval_source(n);
    case Op::RandUniform: case Op::RandNormal: case Op::RandInt:
      return eval_random(n);
    case Op::Cast: case Op::Neg: case Op::Exp: case Op::Log: case Op::Sqrt: case Op::Rsqrt:
    case Op::Abs: case Op::Sin: case Op::Cos: case Op::Tanh: case Op::Sigmoid: case Op::Relu:
    case Op::Floor: case Op::Ceil: case Op::Round: case Op::Trunc: case Op::Sign:
    case Op::Log1p: case Op::Expm1: case Op::Erf:
    case Op::Tan: case Op::Asin: case Op::Acos: case Op::Atan: case Op::Sinh: case Op::Cosh:
    case Op::Asinh: case Op::Acosh: case Op::Atanh: case Op::Log2: case Op::Log10: case Op::Exp2:
    case Op::LogicalNot:
      return eval_unary(n, in);
    case Op::Add: case Op::Sub: case Op::Mul: case Op::Div: case Op::Pow: case Op::Atan2: case Op::Fmod:
    case Op::Maximum: case Op::Minimum: case Op::Eq: case Op::Ne: case Op::Lt: case Op::Le: case Op::Gt:
    case Op::Ge:
      return eval_binary(n, in);
    case Op::Where: return eval_ternary(n, in);
    case Op::AsStrided: return eval_as_strided(n, in);
    case Op::Assign: return eval_assign(n, in);
    case Op::ScatterAdd:
    case Op::Scatter: return eval_scatter(n, in);
    case Op::Gather: return eval_gather(n, in);
    case Op::Sum: case Op::Prod: case Op::Max: case Op::Min: case Op::ArgMax: case Op::ArgMin:
    case Op::All: case Op::Any:
      return eval_reduce(n, in);
    case Op::Matmul: return eval_matmul(n, in);
    case Op::Cat: return eval_cat(n, in);
    case Op::CumSum:
    case Op::CumProd:
    case Op::LogCumSumExp:
    case Op::CumMax:
    case Op::CumMin:
    case Op::CumArgMax:
    case Op::CumArgMin: return eval_scan(n, in);
    case Op::ArgSort: return eval_sort(n, in);
    case Op::ToDevice: return eval_to_device(n, in);
  }
  KILN_INTERNAL_ASSERT(false, "unknown op ", static_cast<int>(n.op));
  return nullptr;
}

// The op list and the classes must agree on which kernel runs an op.
bool class_matches(const Node& n) {
  switch (n.cls()) {
    case OpClass::Source: return n.op != Op::Buffer && n.inputs.empty();
    case OpClass::Random: return n.inputs.empty();
    case OpClass::Unary: return n.inputs.size() == 1;
    case OpClass::Binary: return n.inputs.size() == 2;
    case OpClass::Ternary: return n.inputs.size() == 3;
    case OpClass::View: return n.inputs.size() == 1;
    case OpClass::Write: return n.inputs.size() == static_cast<size_t>(op_info(n.op).arity);
    case OpClass::Index: return n.inputs.size() == 2;
    case OpClass::Scan: return n.inputs.size() == 1;
    case OpClass::Sort: return n.inputs.size() == 1;
    case OpClass::Reduce: return n.inputs.size() == 1;
    case OpClass::Contraction: return n.inputs.size() == 2;
    case OpClass::Join: return !n.inputs.empty();
    case OpClass::Transfer: return n.inputs.size() == 1;
  }
  return false;
}

struct Entry {
  BufferPtr value;
  int64_t pending = 0;  // consumers in this evaluation that have not run yet
  bool root = false;    // kept until the end
};

}  // namespace

std::vector<BufferPtr> evaluate(const std::vector<NodePtr>& roots) {
  std::unordered_map<const Node*, Entry> entries;
  std::vector<const Node*> order;  // the nodes to compute, inputs before consumers

  // Registers n; returns whether its inputs still need visiting.
  auto enter = [&](const Node* n) {
    auto [it, inserted] = entries.try_emplace(n);
    if (!inserted) return false;
    if (is_leaf(*n)) {
      it->second.value = leaf_value(*n);
      return false;
    }
    if (n->device.is_cuda()) fail_cuda(n->device);
    return true;
  };

  // Iterative post-order depth-first walk.
  struct Frame {
    const Node* node;
    size_t next;
  };
  std::vector<Frame> stack;
  for (const NodePtr& root : roots) {
    KILN_INTERNAL_ASSERT(root != nullptr, "null root");
    if (enter(root.get())) stack.push_back({root.get(), 0});
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (f.next < f.node->inputs.size()) {
        const Node* in = f.node->inputs[f.next++].get();
        if (enter(in)) stack.push_back({in, 0});  // invalidates f
      } else {
        order.push_back(f.node);
        stack.pop_back();
      }
    }
    entries[root.get()].root = true;
  }

  // Count consumers; a computed node may not read memory on a CUDA device.
  for (const Node* n : order) {
    for (const NodePtr& in : n->inputs) {
      Entry& e = entries.at(in.get());
      ++e.pending;
      if (e.value && e.value->device().is_cuda()) fail_cuda(e.value->device());
    }
  }

  Inputs in;
  for (const Node* n : order) {
    in.clear();
    for (const NodePtr& i : n->inputs) {
      const Entry& e = entries.at(i.get());
      KILN_INTERNAL_ASSERT(e.value != nullptr, "input ", op_name(i->op), " of ", op_name(n->op),
                           " has no value");
      in.push_back(e.value.get());
    }
    KILN_INTERNAL_ASSERT(class_matches(*n), op_name(n->op), " with ", n->inputs.size(),
                         " inputs does not fit its op class");
    BufferPtr v = compute(*n, in);
    KILN_INTERNAL_ASSERT(v->numel() == n->numel() && v->dtype() == n->dtype, op_name(n->op),
                         " produced ", v->numel(), " ", v->dtype(), " for ", n->shape, " ",
                         n->dtype);
    entries.at(n).value = std::move(v);
    for (const NodePtr& i : n->inputs) {
      Entry& e = entries.at(i.get());
      if (--e.pending == 0 && !e.root) e.value.reset();
    }
  }

  std::vector<BufferPtr> out;
  out.reserve(roots.size());
  for (const NodePtr& root : roots) out.push_back(entries.at(root.get()).value);
  return out;
}

}  // namespace kiln::reference

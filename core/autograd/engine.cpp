// The backward engine: walks the recorded functions from the outputs in
// topological order, runs each one's rule on the sum of the gradients that
// reached it, and hands the results to its inputs, summed back over
// broadcast dims and cast to each input's dtype. Rules are kiln ops, so the
// walk only builds lazy gradient nodes; the JIT fuses them when read.
#include "core/autograd/function.h"
#include "core/layout.h"
#include "core/provenance.h"
#include "core/ops_common.h"
#include "core/ptr_map.h"

namespace kiln::autograd {

namespace {
// A full node of zeros: the state of a gradient after grad().zero_().
bool is_zero_fill(const kiln::Node& n) {
  if (n.op != Op::Full) return false;
  if (n.attrs.ints.size() > 1 && n.attrs.ints[1] != 0) return false;
  return n.attrs.ints[0] == 0 && n.attrs.reals[0] == 0.0;
}

// PyTorch's AccumulateGrad: the first gradient is stored (in a storage of
// its own), later ones are added; in place unless the graph is recorded.
void accumulate(TensorImpl& t, const Tensor& g) {
  Tensor& grad = t.grad;
  if (!grad.defined()) {
    if (GradMode::is_enabled()) {
      grad = g;
      return;
    }
    // PyTorch's layout contract: a leaf in a dense permuted layout (a
    // detached x.t(), zeros_like of one) gets its gradient in that layout.
    const Shape p = storage_permutation(t);
    grad = p.empty() ? make_tensor(g.impl()->node()) : make_tensor(permute_node(g.impl()->node(), p), t.sizes, t.strides);
    return;
  }
  if (GradMode::is_enabled()) {
    grad = grad + g;
    return;
  }
  TensorImpl& gi = *grad.impl();
  if (gi.covers_storage() && is_zero_fill(*gi.storage->node) && g.sizes() == gi.sizes &&
      g.dtype() == gi.dtype()) {
    write_storage(*gi.storage, reshape_node(g.impl()->node(), gi.storage->node->shape));
    return;
  }
  grad.add_(g);
}

Tensor sum_to(const Tensor& g, const Shape& sizes) {
  if (g.sizes() == sizes) return g;
  const int64_t lead = g.dim() - static_cast<int64_t>(sizes.size());
  KILN_INTERNAL_ASSERT(lead >= 0, "gradient of shape ", g.sizes(), " for an input of shape ", sizes);
  Shape dims;
  for (int64_t d = 0; d < g.dim(); ++d)
    if (d < lead || (sizes[d - lead] == 1 && g.sizes()[d] != 1)) dims.push_back(d);
  Tensor r = dims.empty() ? g : g.sum(dims, true);
  return r.reshape(sizes);
}

struct Task {
  bool keep_graph = false;
  bool accumulate_leaves = true;
  PtrMap<size_t> capture;  // grad(): function -> input index + 1
  std::vector<Tensor> captured;
};

// After f's rule ran: its saved tensors go unless the graph is kept.
void release(Function& f, const Task& task) {
  if (task.keep_graph) return;
  f.released = true;
  f.saved.clear();
}

// Functions reachable from the roots, parents before children.
std::vector<Function*> topological_order(const std::vector<FunctionPtr>& roots) {
  std::vector<Function*> post;
  // Per-thread scratch: rules never start another backward on this thread.
  thread_local PtrMap<bool> seen;
  thread_local std::vector<std::pair<Function*, size_t>> stack;
  seen.reset(16);
  stack.clear();
  for (const FunctionPtr& r : roots) {
    if (!r || !seen.insert(r.get(), true)) continue;
    stack.push_back({r.get(), 0});
    while (!stack.empty()) {
      auto& [f, i] = stack.back();
      if (i < f->next.size()) {
        Function* c = f->next[i++].get();
        if (c && seen.insert(c, true)) stack.push_back({c, 0});
      } else {
        post.push_back(f);
        stack.pop_back();
      }
    }
  }
  return {post.rbegin(), post.rend()};
}

void run(const std::vector<FunctionPtr>& roots, const std::vector<Tensor>& root_grads, Task& task) {
  std::vector<Function*> order = topological_order(roots);
  // grad(): only functions on a path to a captured one need to run.
  const bool capturing = task.capture.size() > 0;
  thread_local PtrMap<bool> needed;
  needed.reset(capturing ? order.size() : 0);
  if (capturing) {
    for (size_t k = order.size(); k-- > 0;) {
      Function* f = order[k];
      bool need = task.capture.contains(f);
      for (const FunctionPtr& c : f->next) need = need || (c && needed.contains(c.get()));
      if (need) needed[f] = true;
    }
  }
  // A function's gradient so far: a dense sum, and the runs that views of
  // its result give it (gradient_run), placed together when it runs.
  struct Pending {
    Tensor dense;
    std::vector<GradRun> runs;
    Shape sizes;     // the runs' whole
    SourceLoc loc;   // the first run's view, for the nodes that place them
  };
  thread_local PtrMap<Pending> buffers;
  buffers.reset(order.size());
  auto add_to = [&](const Function* f, Tensor g) {
    Tensor& b = buffers[f].dense;
    if (b.defined()) b = b + g;
    else b = std::move(g);
  };
  for (size_t i = 0; i < roots.size(); ++i) add_to(roots[i].get(), root_grads[i]);

  for (Function* f : order) {
    Pending* slot = buffers.find(f);
    if (!slot || (!slot->dense.defined() && slot->runs.empty())) continue;
    Tensor g = std::move(slot->dense);
    if (!slot->runs.empty()) {
      const LocScope at(slot->loc, kForceLoc);
      Tensor placed = place_runs(std::move(slot->runs), slot->sizes);
      g = g.defined() ? g + placed : placed;
    }
    *slot = Pending();
    if (const size_t* c = task.capture.find(f)) task.captured[*c - 1] = g;
    if (capturing) {
      bool feeds = false;
      for (const FunctionPtr& c : f->next) feeds = feeds || (c && needed.contains(c.get()));
      if (!feeds) continue;
    }
    if (f->kind == GradFn::AccumulateGrad) {
      if (task.accumulate_leaves)
        if (auto leaf = f->leaf.lock()) accumulate(*leaf, g);
      continue;
    }
    if (task.accumulate_leaves)
      for (auto& w : f->retained)
        if (auto t = w.lock())
          if (t->retains_grad && t->grad_fn.get() == f) accumulate(*t, g);
    const LocScope at(f->loc, kForceLoc);
    if (f->next[0] && f->inputs[0].dtype == g.dtype() && f->inputs[0].device == g.device())
      if (std::optional<GradRun> run = gradient_run(*f, g)) {
        Pending& p = buffers[f->next[0].get()];
        if (p.runs.empty()) p.loc = f->loc;
        p.sizes = f->inputs[0].sizes;
        p.runs.push_back(std::move(*run));
        release(*f, task);
        continue;
      }
    std::vector<Tensor> grads = apply_rule(*f, g);
    KILN_INTERNAL_ASSERT(grads.size() == f->next.size(), f->name(), " returned ", grads.size(),
                         " gradients for ", f->next.size(), " inputs");
    for (size_t i = 0; i < grads.size(); ++i) {
      if (!f->next[i] || !grads[i].defined()) continue;
      add_to(f->next[i].get(), to_input(std::move(grads[i]), f->inputs[i]));
    }
    release(*f, task);
  }
  buffers.reset(0);  // drop any gradient still held
}

// The root edges and their initial gradients, with PyTorch's checks.
void prepare_roots(const std::vector<Tensor>& outputs, const std::vector<Tensor>& grads,
                   const char* op, std::vector<FunctionPtr>& roots, std::vector<Tensor>& root_grads) {
  KILN_CHECK(grads.empty() || grads.size() == outputs.size(), op, "got ", grads.size(),
             " gradients for ", outputs.size(), " tensors");
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& t = outputs[i];
    KILN_CHECK(t.defined(), op, "element ", i, " of tensors is undefined");
    FunctionPtr e = gradient_edge(t);
    KILN_CHECK(e, op, "element ", i,
               " of tensors does not require grad and does not have a grad_fn (shape ",
               t.sizes(), "; set requires_grad on the leaves it is computed from)");
    Tensor g = i < grads.size() ? grads[i] : Tensor();
    if (!g.defined()) {
      KILN_CHECK(t.numel() == 1, op,
                 "grad can be implicitly created only for scalar outputs (output ", i,
                 " has shape ", t.sizes(), "; reduce it with sum() or mean(), or pass a gradient)");
      g = ones_like(t);
    } else {
      KILN_CHECK(g.sizes() == t.sizes(), op, "Mismatch in shape: grad_output[", i,
                 "] has a shape of ", g.sizes(), " and output[", i, "] has a shape of ",
                 t.sizes(), ".");
      KILN_CHECK(g.device() == t.device(), op, "invalid gradient at index ", i,
                 " - expected device ", t.device(), " but got ", g.device());
      if (g.dtype() != t.dtype()) g = g.to(t.dtype());
    }
    roots.push_back(std::move(e));
    root_grads.push_back(std::move(g));
  }
}
}  // namespace

Tensor to_input(Tensor grad, const InputMeta& m) {
  Tensor g = grad.sizes() == m.sizes ? std::move(grad) : sum_to(grad, m.sizes);
  if (g.dtype() != m.dtype) g = g.to(m.dtype);
  if (g.device() != m.device) g = g.to(m.device);
  return g;
}

void backward(const std::vector<Tensor>& tensors, const std::vector<Tensor>& grad_tensors,
              std::optional<bool> retain_graph, bool create_graph) {
  std::vector<FunctionPtr> roots;
  std::vector<Tensor> root_grads;
  prepare_roots(tensors, grad_tensors, "backward", roots, root_grads);
  AutoGradMode mode(create_graph);
  Task task;
  task.keep_graph = retain_graph.value_or(create_graph);
  run(roots, root_grads, task);
}

std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs, std::optional<bool> retain_graph,
                         bool create_graph, bool allow_unused) {
  std::vector<FunctionPtr> roots;
  std::vector<Tensor> root_grads;
  prepare_roots(outputs, grad_outputs, "grad", roots, root_grads);
  Task task;
  task.keep_graph = retain_graph.value_or(create_graph);
  task.accumulate_leaves = false;
  task.captured.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    KILN_CHECK(inputs[i].defined() && inputs[i].requires_grad(), "grad",
               "One of the differentiated Tensors does not require grad (input ", i, ")");
    task.capture.insert(gradient_edge(inputs[i]).get(), i + 1);
  }
  {
    AutoGradMode mode(create_graph);
    run(roots, root_grads, task);
  }
  auto captured = [&](size_t i) -> Tensor& {
    return task.captured[*task.capture.find(gradient_edge(inputs[i]).get()) - 1];
  };
  for (size_t i = 0; i < inputs.size(); ++i) {
    Tensor& g = captured(i);
    KILN_CHECK(g.defined() || allow_unused, "grad",
               "One of the differentiated Tensors appears to not have been used in the graph. "
               "Set allow_unused=True if this is the desired behavior. (input ", i, ", shape ",
               inputs[i].sizes(), ")");
  }
  std::vector<Tensor> out;
  for (size_t i = 0; i < inputs.size(); ++i)
    out.push_back(captured(i));
  return out;
}

}  // namespace kiln::autograd

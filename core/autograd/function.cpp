// Recording backward functions: edges, saved tensors with version checks,
// the history of views and of in-place writes (PyTorch's CopySlices).
#include "core/autograd/function.h"

#include "core/provenance.h"

#include <algorithm>
#include <sstream>

#include "core/layout.h"
#include "core/ops_common.h"
#include "core/pool_alloc.h"
#include "core/provenance.h"

namespace kiln::autograd {

const char* grad_fn_name(GradFn f) {
  static const char* const names[] = {
#define KILN_GRAD_FN_NAME(e, name, rule) name,
      KILN_FORALL_GRAD_FNS(KILN_GRAD_FN_NAME)
#undef KILN_GRAD_FN_NAME
  };
  return names[static_cast<size_t>(f)];
}

std::vector<std::shared_ptr<Node>> Function::next_functions() const {
  return {next.begin(), next.end()};
}

// ---- edges ----
namespace {
// The accumulator of a leaf that requires grad, created on first use.
FunctionPtr accumulator_of(TensorImpl& leaf, const std::shared_ptr<TensorImpl>& owner) {
  if (!leaf.grad_accumulator) {
    auto f = make_pooled<Function>(GradFn::AccumulateGrad);
    f->leaf = owner;
    f->inputs.push_back({leaf.sizes, leaf.dtype(), leaf.device()});
    leaf.grad_accumulator = std::move(f);
  }
  return leaf.grad_accumulator;
}
}  // namespace

FunctionPtr grad_fn_of(TensorImpl& t) {
  // A view whose storage was written since its history was recorded reads
  // its gradient from its base's current history (AsStridedBackward0).
  if (t.view_base && t.view_version != t.storage->version) {
    TensorImpl& base = *t.view_base;
    t.view_version = t.storage->version;
    // (A view of a leaf keeps its own history: a leaf is only written with
    // grad mode off, which leaves its accumulator as it was.)
    if (base.requires_grad && base.grad_fn) {
      auto f = make_pooled<Function>(GradFn::AsStridedBackward0);
      f->next.push_back(base.grad_fn);
      f->inputs.push_back({base.sizes, base.dtype(), base.device()});
      f->ints = {base.storage->numel(), base.offset, static_cast<int64_t>(base.sizes.size())};
      f->ints.insert(f->ints.end(), base.strides.begin(), base.strides.end());
      f->view_sizes = t.sizes;
      f->view_strides = t.strides;
      f->view_offset = t.offset;
      t.grad_fn = std::move(f);
      t.requires_grad = true;
    }
  }
  return t.grad_fn;
}

FunctionPtr gradient_edge(const Tensor& t) {
  if (!t.defined()) return nullptr;
  TensorImpl& impl = *t.impl();
  if (FunctionPtr f = grad_fn_of(impl)) return f;
  if (impl.requires_grad) return accumulator_of(impl, t.impl_ptr());
  return nullptr;
}

// ---- recording ----
bool should_record(std::initializer_list<const Tensor*> inputs) {
  if (!GradMode::is_enabled()) return false;
  for (const Tensor* t : inputs)
    if (t && t->requires_grad()) return true;
  return false;
}

namespace {
FunctionPtr make_function(GradFn kind, const Tensor* const* inputs, size_t count) {
  if (!GradMode::is_enabled()) return nullptr;
  bool any = false;
  for (size_t i = 0; i < count; ++i) any = any || (inputs[i] && inputs[i]->requires_grad());
  if (!any) return nullptr;
  auto f = make_pooled<Function>(kind);
  f->loc = current_loc();
  f->next.reserve(count);
  f->inputs.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    const Tensor* t = inputs[i];
    if (t && t->defined()) {
      f->next.push_back(t->requires_grad() ? gradient_edge(*t) : nullptr);
      f->inputs.push_back({t->sizes(), t->dtype(), t->device()});
    } else {
      f->next.push_back(nullptr);
      f->inputs.push_back({});
    }
  }
  return f;
}
}  // namespace

FunctionPtr make_function(GradFn kind, const std::vector<const Tensor*>& inputs) {
  return make_function(kind, inputs.data(), inputs.size());
}

FunctionPtr make_function(GradFn kind, std::initializer_list<const Tensor*> inputs) {
  return make_function(kind, inputs.begin(), inputs.size());
}

void attach(const FunctionPtr& f, const Tensor& out) {
  if (!f) return;
  TensorImpl& o = *out.impl();
  o.grad_fn = f;
  o.requires_grad = true;
  o.view_version = o.storage->version;
}

FunctionPtr record(GradFn kind, const Tensor& out, const std::vector<const Tensor*>& inputs) {
  FunctionPtr f = make_function(kind, inputs);
  attach(f, out);
  return f;
}

FunctionPtr record(GradFn kind, const Tensor& out, std::initializer_list<const Tensor*> inputs) {
  FunctionPtr f = make_function(kind, inputs);
  attach(f, out);
  return f;
}

void relabel(const Tensor& t, GradFn kind) {
  if (t.impl()->grad_fn) t.impl()->grad_fn->kind = kind;
}

// ---- saved tensors ----
namespace {
// t's value now, and the version to check it against at backward time.
SavedTensor snapshot(const TensorImpl& t) {
  SavedTensor s;
  s.defined = true;
  s.value = t.node();
  s.sizes = t.sizes;
  s.storage = t.storage;
  s.version = t.storage->version;
  return s;
}
}  // namespace

void Function::save(const Tensor& t, bool keep) {
  if (!keep || !t.defined()) {
    saved.emplace_back();
    return;
  }
  SavedTensor s = snapshot(*t.impl());
  s.requires_grad = t.requires_grad();
  s.grad_fn = grad_fn_of(*t.impl());
  if (!s.grad_fn && s.requires_grad) s.leaf = t.impl_ptr();
  saved.push_back(std::move(s));
}

void Function::save_output(const Tensor& out) {
  SavedTensor s = snapshot(*out.impl());
  s.is_output = true;
  s.requires_grad = true;
  saved.push_back(std::move(s));
}

namespace {
[[noreturn]] void fail_version(const Function& f, const SavedTensor& s) {
  std::ostringstream what;
  what << "[torch." << scalar_type_name(s.value->dtype) << "Tensor " << s.sizes << "]";
  if (s.is_output)
    what << ", which is output 0 of " << f.name() << ",";
  else if (s.grad_fn)
    what << ", which is output 0 of " << s.grad_fn->name() << ",";
  KILN_FAIL("backward",
            "one of the variables needed for gradient computation has been modified by an "
            "inplace operation: ",
            what.str(), " is at version ", s.storage->version, "; expected version ", s.version,
            " instead. Hint: the tensor was written in place (e.g. add_, copy_, an indexed "
            "assignment) after the op that saved it for backward; clone() it before the write.");
}
}  // namespace

Tensor Function::saved_tensor(size_t i) {
  KILN_CHECK(!released, "backward",
             "Trying to backward through the graph a second time (or directly access saved "
             "tensors after they have already been freed). Saved intermediate values of the "
             "graph are freed when you call .backward() or autograd.grad(). Specify "
             "retain_graph=True if you need to backward through the graph a second time or if "
             "you need to access saved tensors after calling backward. (function ",
             name(), ")");
  KILN_INTERNAL_ASSERT(i < saved.size() && saved[i].defined, name(), ": saved tensor ", i,
                       " was not saved");
  const SavedTensor& s = saved[i];
  if (s.check_version && s.storage->version != s.version) fail_version(*this, s);
  // Without grad mode the rule only needs the value.
  if (!GradMode::is_enabled() || !s.requires_grad) return make_tensor(s.value);
  if (std::shared_ptr<TensorImpl> leaf = s.leaf.lock()) return Tensor(std::move(leaf));
  if (!s.grad_fn && !s.is_output) return make_tensor(s.value);  // a leaf that died
  if (s.is_output) return tensor_with_history(s.value, shared_from_this());
  return tensor_with_history(s.value, s.grad_fn);
}

Tensor tensor_with_history(NodePtr value, const FunctionPtr& fn) {
  Tensor t = make_tensor(std::move(value));
  if (fn) {
    t.impl()->grad_fn = fn;
    t.impl()->requires_grad = true;
  }
  return t;
}

// ---- in-place writes ----
void check_inplace(const Tensor& self, const char* op) {
  if (!GradMode::is_enabled()) return;
  const TensorImpl& t = *self.impl();
  if (t.view_base) {
    const TensorImpl& b = *t.view_base;
    KILN_CHECK(!(b.requires_grad && !b.grad_fn), op,
               "a view of a leaf Variable that requires grad is being used in an in-place "
               "operation. (view ", t.sizes, " of a leaf ", b.sizes,
               "; write to the leaf inside a kiln::NoGradGuard, or clone() it first)");
    return;
  }
  KILN_CHECK(!(t.requires_grad && !t.grad_fn), op,
             "a leaf Variable that requires grad is being used in an in-place operation. (leaf ",
             t.sizes, "; update parameters inside a kiln::NoGradGuard)");
}

void rebase_history(const Tensor& self, const FunctionPtr& fn) {
  if (!fn) return;
  TensorImpl& t = *self.impl();
  // The op read self's old value: that value is saved as it was, so the
  // write itself does not trip the version check (PyTorch's original self).
  for (SavedTensor& s : fn->saved)
    if (s.defined && s.storage == t.storage && !s.is_output) s.check_version = false;
  if (!t.view_base) {
    t.grad_fn = fn;
    t.requires_grad = true;
    return;
  }
  TensorImpl& base = *t.view_base;
  // A base is row-major or another dense order of its whole storage (an
  // elementwise result in a permuted layout); from_blob's strided memory is
  // neither.
  KILN_CHECK(covers_storage_densely(base), "backward",
             "an in-place write through a view of a base that does not cover its memory densely is "
             "not differentiable (base ", base.sizes, " with strides ", base.strides, "); clone() the base first");
  auto cs = make_pooled<Function>(GradFn::CopySlices);
  Tensor base_handle(t.view_base);
  cs->next.push_back(base.requires_grad ? gradient_edge(base_handle) : nullptr);
  cs->inputs.push_back({base.sizes, base.dtype(), base.device()});
  for (size_t i = 1; i < fn->next.size(); ++i) {
    cs->next.push_back(fn->next[i]);
    cs->inputs.push_back(fn->inputs[i]);
  }
  cs->inner = fn;
  cs->ints.assign(base.strides.begin(), base.strides.end());  // the base's layout
  cs->view_sizes = t.sizes;
  cs->view_strides = t.strides;
  cs->view_offset = t.offset;
  attach(cs, base_handle);
  // The view's own history is regenerated from the base's on next use.
  t.requires_grad = true;
  t.grad_fn.reset();
  t.view_version = t.storage->version - 1;
}

}  // namespace kiln::autograd

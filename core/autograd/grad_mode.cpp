// Grad mode (thread-local) and NoGradGuard's step boundary.
//
// A training step ends with parameter updates under NoGradGuard. If nothing
// evaluated them, every step's graph would hang off the previous one and the
// loop would grow one graph until kAutoEvalDepth. So the leaves written in
// place while grad mode is off are remembered, and when the outermost guard
// closes they are evaluated together: one fused evaluation per step, the
// same graph (hence the same cached schedule and kernels) every step.
#include <algorithm>

#include "core/autograd/function.h"
#include "core/eval_reason.h"

namespace kiln {

namespace {
thread_local bool grad_enabled = true;
thread_local int no_grad_depth = 0;
thread_local std::vector<std::weak_ptr<TensorImpl>> pending_updates;
// Side updates (note_step_update) join the next step end that updates
// parameters; a guard closing inside kiln (backward's) does not end a step.
thread_local std::vector<std::weak_ptr<TensorImpl>> side_updates;

void evaluate_pending_updates() {
  std::vector<std::shared_ptr<TensorImpl>> keep;
  std::vector<const TensorImpl*> impls;
  for (auto* list : {&pending_updates, &side_updates})
    for (auto& w : *list)
      if (auto t = w.lock()) {
        impls.push_back(t.get());
        keep.push_back(std::move(t));
      }
  pending_updates.clear();
  side_updates.clear();
  if (impls.empty()) return;
  // A failure leaves the values lazy: reading them raises it again, where
  // the user reads them. A destructor must not throw.
  try {
    EvalReasonScope reason(EvalReason::StepEnd);
    realize(impls);
  } catch (...) {
  }
}
}  // namespace

bool GradMode::is_enabled() { return grad_enabled; }
void GradMode::set_enabled(bool enabled) { grad_enabled = enabled; }

AutoGradMode::AutoGradMode(bool enabled) : prev_(grad_enabled) { grad_enabled = enabled; }
AutoGradMode::~AutoGradMode() { grad_enabled = prev_; }

NoGradGuard::NoGradGuard() : prev_(grad_enabled) {
  grad_enabled = false;
  ++no_grad_depth;
}

NoGradGuard::~NoGradGuard() {
  grad_enabled = prev_;
  if (--no_grad_depth == 0 && !pending_updates.empty()) evaluate_pending_updates();
}

namespace autograd {
void note_leaf_update(const Tensor& leaf) {
  if (no_grad_depth == 0) return;
  const TensorImpl* impl = leaf.impl();
  for (const auto& w : pending_updates)
    if (w.lock().get() == impl) return;
  pending_updates.push_back(leaf.impl_ptr());
}
void note_step_update(const Tensor& t) {
  const TensorImpl* impl = t.impl();
  for (const auto& w : side_updates)
    if (w.lock().get() == impl) return;
  side_updates.push_back(t.impl_ptr());
}
}  // namespace autograd

}  // namespace kiln

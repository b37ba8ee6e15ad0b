// Autograd: grad mode, backward functions, kiln::grad and gradcheck.
//
// Gradients are derived symbolically: each differentiable op records a
// backward function (PyTorch's names: AddBackward0, MmBackward0, ...), and
// backward() runs those functions' rules, which are themselves kiln tensor
// ops. Nothing is computed by backward(): it only adds gradient nodes to the
// lazy graph, which the JIT then fuses with the forward work.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "kiln/tensor.h"

namespace kiln {

// Whether ops record backward functions (per thread, on by default).
struct GradMode {
  static bool is_enabled();
  static void set_enabled(bool enabled);
};

// Sets grad mode for a scope and restores it after (nests).
class AutoGradMode {
 public:
  explicit AutoGradMode(bool enabled);
  ~AutoGradMode();
  AutoGradMode(const AutoGradMode&) = delete;
  AutoGradMode& operator=(const AutoGradMode&) = delete;

 private:
  bool prev_;
};

// torch.no_grad(). When the outermost guard of a thread closes, the leaves
// requiring grad that were updated in place inside it (an optimizer step:
// `w -= lr * w.grad()`) are evaluated together, so each training step is one
// fused evaluation and the graph does not grow from step to step.
class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool prev_;
};

namespace autograd {

// A recorded backward function, as LibTorch's torch::autograd::Node.
class Node {
 public:
  virtual ~Node() = default;
  // "AddBackward0", "AccumulateGrad", "CopySlices", ...
  virtual std::string name() const = 0;
  // The functions this one sends gradients to (null where an input needs none).
  virtual std::vector<std::shared_ptr<Node>> next_functions() const = 0;
};

// Computes the gradients of `tensors` (weighted by grad_tensors; omitted for
// scalars) and accumulates them into the .grad() of the leaves.
void backward(const std::vector<Tensor>& tensors, const std::vector<Tensor>& grad_tensors = {},
              std::optional<bool> retain_graph = std::nullopt, bool create_graph = false);

// torch.autograd.grad: the gradients of outputs with respect to inputs,
// returned rather than accumulated. create_graph=true records the gradient
// computation so it can be differentiated again.
std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs = {},
                         std::optional<bool> retain_graph = std::nullopt,
                         bool create_graph = false, bool allow_unused = false);

}  // namespace autograd

using autograd::grad;

// torch.autograd.gradcheck: compares the analytic Jacobian (from backward)
// with central finite differences, for every floating input that requires
// grad. Inputs should be float64. Returns true, or raises kiln::Error naming
// the output, the input and both Jacobians.
struct GradcheckOptions {
  double eps = 1e-6;
  double atol = 1e-5;
  double rtol = 1e-3;
};
using GradcheckFn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;
bool gradcheck(const GradcheckFn& fn, const std::vector<Tensor>& inputs,
               const GradcheckOptions& options = {});
// Second order: gradcheck of the first-order gradients (taken with
// create_graph=true and fixed random grad_outputs) with respect to the inputs.
bool gradgradcheck(const GradcheckFn& fn, const std::vector<Tensor>& inputs,
                   const GradcheckOptions& options = {});

// Overloads for functions returning one Tensor.
template <typename F, typename = std::enable_if_t<std::is_invocable_r_v<
                          Tensor, F, const std::vector<Tensor>&>>>
bool gradcheck(F&& fn, const std::vector<Tensor>& inputs, const GradcheckOptions& options = {}) {
  return gradcheck(GradcheckFn([f = std::forward<F>(fn)](const std::vector<Tensor>& in) {
                     return std::vector<Tensor>{f(in)};
                   }),
                   inputs, options);
}
template <typename F, typename = std::enable_if_t<std::is_invocable_r_v<
                          Tensor, F, const std::vector<Tensor>&>>>
bool gradgradcheck(F&& fn, const std::vector<Tensor>& inputs,
                   const GradcheckOptions& options = {}) {
  return gradgradcheck(GradcheckFn([f = std::forward<F>(fn)](const std::vector<Tensor>& in) {
                         return std::vector<Tensor>{f(in)};
                       }),
                       inputs, options);
}

}  // namespace kiln

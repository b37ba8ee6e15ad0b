// torch.nn.functional's batch_norm, instance_norm and group_norm
// (include/kiln/nn_functional.h) as compositions of kiln's reductions:
// statistics per channel (batch_norm), per sample and channel
// (instance_norm) or per sample and channel group (group_norm), the biased
// variance for the normalization, and PyTorch's running-statistics update
// (momentum, unbiased variance) written in place into running_mean /
// running_var outside autograd. layer_norm lives with the other layers
// (core/nn_functional.cpp).
#include <string>

#include "core/ops_common.h"
#include "core/provenance.h"
#include "kiln/autograd.h"
#include "kiln/nn_functional.h"

namespace kiln {

namespace {

// [1, C, 1, ...]: a per-channel vector laid along dim 1 of a rank-r tensor.
Shape channel_view(int64_t c, int64_t rank) {
  Shape s(static_cast<size_t>(rank), 1);
  s[1] = c;
  return s;
}

// The per-channel running statistics, weight and bias, each optional.
void check_channel_vectors(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                           const Tensor& weight, const Tensor& bias, const char* op) {
  const Tensor* ts[] = {&running_mean, &running_var, &weight, &bias};
  const char* names[] = {"running_mean", "running_var", "weight", "bias"};
  for (int i = 0; i < 4; ++i) {
    if (!ts[i]->defined()) continue;
    KILN_CHECK(ts[i]->numel() == input.size(1), op, names[i], " should contain ", input.size(1), " elements not ",
               ts[i]->numel(), " (", names[i], " ", ts[i]->sizes(), ", input ", input.sizes(), ")");
    check_same_device(op, {&input, ts[i]});
  }
}

void check_norm_input(const Tensor& input, const char* op) {
  check_defined(input, op);
  KILN_CHECK(input.dim() >= 2, op, "expected an input of at least 2 dims [N, C, *], but got input of size ",
             input.sizes());
  check_floating(input, op);
}

// out * weight + bias, each per channel when given.
Tensor affine(Tensor out, const Tensor& weight, const Tensor& bias) {
  const Shape along = channel_view(out.size(1), out.dim());
  if (weight.defined()) out = out * weight.reshape(along);
  if (bias.defined()) out = out + bias.reshape(along);
  return out;
}

// running = (1 - momentum) * running + momentum * value, in place and
// outside autograd (PyTorch's update of a module's buffers). Evaluated with
// the step (autograd::note_step_update): otherwise only the next read of
// the statistics would, after every step's forward pass had piled up.
void update_running(Tensor& running, const Tensor& value, double momentum) {
  if (!running.defined()) return;
  const AutoGradMode no_grad(false);  // not a NoGradGuard: closing one ends a step
  running.mul_(1 - momentum).add_(value.detach().to(running.dtype()) * momentum);
  autograd::note_step_update(running);
}

}  // namespace

// The biased variance from the mean itself, in two passes (var() takes
// one for float32 columns, core/reduce.cpp; here autograd differentiates
// this graph, and a shifted one pass would route gradients through the
// shift): x - mean serves the variance and the output alike.
Normalized normalize_over(const Tensor& x, const Shape& dims, double eps) {
  const Tensor mean = x.mean(dims, true), dev = x - mean, var = (dev * dev).mean(dims, true);
  return {dev * (var + eps).rsqrt(), mean, var};
}

Tensor batch_norm(const Tensor& input, Tensor running_mean, Tensor running_var, const Tensor& weight,
                  const Tensor& bias, bool training, double momentum, double eps, SourceLoc loc) {
  const LocScope at(loc);
  check_norm_input(input, "batch_norm");
  const int64_t c = input.size(1);
  check_channel_vectors(input, running_mean, running_var, weight, bias, "batch_norm");
  const Shape along = channel_view(c, input.dim());
  if (!training) {
    KILN_CHECK(running_mean.defined() && running_var.defined(), "batch_norm", "running_",
               running_mean.defined() ? "var" : "mean", " must be defined in evaluation mode");
    const Tensor mean = running_mean.reshape(along).to(input.dtype());
    const Tensor inv_std = (running_var.reshape(along).to(input.dtype()) + eps).rsqrt();
    return affine((input - mean) * inv_std, weight, bias);
  }
  const int64_t per_channel = c == 0 ? 0 : input.numel() / c;
  KILN_CHECK(per_channel > 1, "batch_norm", "Expected more than 1 value per channel when training, got input size ",
             input.sizes());
  Shape dims{0};
  for (int64_t d = 2; d < input.dim(); ++d) dims.push_back(d);
  const Normalized z = normalize_over(input, dims, eps);
  update_running(running_mean, z.mean.reshape({c}), momentum);
  update_running(running_var, z.var.reshape({c}) * (static_cast<double>(per_channel) / (per_channel - 1)), momentum);
  return affine(z.out, weight, bias);
}

Tensor instance_norm(const Tensor& input, Tensor running_mean, Tensor running_var, const Tensor& weight,
                     const Tensor& bias, bool use_input_stats, double momentum, double eps, SourceLoc loc) {
  const LocScope at(loc);
  check_norm_input(input, "instance_norm");
  KILN_CHECK(input.dim() >= 3, "instance_norm", "expected an input of at least 3 dims [N, C, *], but got input of size ",
             input.sizes());
  const int64_t c = input.size(1);
  check_channel_vectors(input, running_mean, running_var, weight, bias, "instance_norm");
  if (!use_input_stats) {
    KILN_CHECK(running_mean.defined() && running_var.defined(), "instance_norm",
               "Expected running_mean and running_var to be defined when use_input_stats is false");
    return batch_norm(input, running_mean, running_var, weight, bias, false, momentum, eps);
  }
  const int64_t spatial = c == 0 || input.size(0) == 0 ? 0 : input.numel() / (c * input.size(0));
  KILN_CHECK(spatial > 1, "instance_norm",
             "Expected more than 1 spatial element when training, got input size ", input.sizes());
  Shape dims;
  for (int64_t d = 2; d < input.dim(); ++d) dims.push_back(d);
  const Normalized z = normalize_over(input, dims, eps);
  // PyTorch averages the per-sample statistics' updates over the batch
  update_running(running_mean, z.mean.reshape({input.size(0), c}).mean(0), momentum);
  update_running(running_var,
                 (z.var * (static_cast<double>(spatial) / (spatial - 1))).reshape({input.size(0), c}).mean(0),
                 momentum);
  return affine(z.out, weight, bias);
}

Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight, const Tensor& bias, double eps,
                  SourceLoc loc) {
  const LocScope at(loc);
  check_norm_input(input, "group_norm");
  KILN_CHECK(num_groups > 0, "group_norm", "num_groups must be positive, but got num_groups=", num_groups);
  const int64_t n = input.size(0), c = input.size(1);
  KILN_CHECK(c % num_groups == 0, "group_norm",
             "Expected number of channels in input to be divisible by num_groups, but got input of shape ",
             input.sizes(), " and num_groups=", num_groups);
  for (const Tensor* t : {&weight, &bias}) {
    if (!t->defined()) continue;
    check_same_device("group_norm", {&input, t});
    KILN_CHECK(t->dim() == 1 && t->numel() == c, "group_norm", "Expected ", t == &weight ? "weight" : "bias",
               " to be a vector of size equal to the number of channels in input, but got ",
               t == &weight ? "weight" : "bias", " of shape ", t->sizes(), " and input of shape ", input.sizes());
  }
  // [N, G, C/G, spatial...], the group's dims reduced: only the channel
  // dim splits, so the per-channel weight and the gradient's reads index
  // their elements by multiplication (one merged dim of C/G * H * W made
  // each read of the weight in the backward row kernel divide by H * W:
  // [16, 64, 56, 56] forward and both gradients 67 -> 5.5 ms with
  // jit/lower_views.cpp's grouped_reshape)
  Shape xs{n, num_groups, c / num_groups}, dims;
  for (int64_t d = 2; d < input.dim(); ++d) xs.push_back(input.size(d));
  for (int64_t d = 2; d < static_cast<int64_t>(xs.size()); ++d) dims.push_back(d);
  const Tensor x = input.reshape(xs);
  return affine(normalize_over(x, dims, eps).out.reshape(input.sizes()), weight, bias);
}

}  // namespace kiln

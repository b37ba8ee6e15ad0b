// torch.nn.functional's layers and losses: linear, dropout, layer_norm,
// one_hot, pad, conv1d/2d/3d, conv_transpose1d/2d/3d, max / avg /
// adaptive_avg pooling, interpolate, batch_norm,
// instance_norm, group_norm, and the losses mse / l1 / smooth_l1 / huber, nll / cross_entropy,
// binary_cross_entropy (with logits). Each is a composition of kiln ops
// (core/nn_functional.cpp), so it fuses with the work around it and autograd
// differentiates it through those ops' rules. Values, defaults and errors
// follow PyTorch 1.13. Index arguments (one_hot's labels, nll_loss's targets)
// and binary_cross_entropy's probabilities are checked eagerly, as PyTorch
// does: those calls evaluate that argument.
#pragma once

#include <cstdint>
#include <optional>
#include <tuple>
#include <vector>

#include "kiln/shape.h"
#include "kiln/tensor.h"

namespace kiln {

// How a loss reduces its per-element values (PyTorch's reduction=).
enum class Reduction : uint8_t { None, Mean, Sum };

// x W^T + b (b optional), the matmul's consumers fused after BLAS.
Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(), KILN_LOC);
// Zeroes each element with probability p and scales the rest by 1 / (1 - p)
// while training (kiln's Philox stream: manual_seed makes it repeatable);
// the input itself when not training.
Tensor dropout(const Tensor& input, double p = 0.5, bool training = true, KILN_LOC);
// Normalizes over the trailing dims `normalized_shape` (biased variance),
// then scales by weight and shifts by bias when given.
Tensor layer_norm(const Tensor& input, const Shape& normalized_shape, const Tensor& weight = Tensor(),
                  const Tensor& bias = Tensor(), double eps = 1e-5, KILN_LOC);
// weight's rows at the int64 ids: [*input, embedding_dim] (an index_select).
Tensor embedding(const Tensor& input, const Tensor& weight, KILN_LOC);
// int64 labels -> int64 [..., num_classes] with a 1 at each label;
// num_classes = -1 takes max(labels) + 1.
Tensor one_hot(const Tensor& labels, int64_t num_classes = -1, KILN_LOC);

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean, KILN_LOC);
Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean, KILN_LOC);
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean,
                      double beta = 1.0, KILN_LOC);
Tensor huber_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean,
                  double delta = 1.0, KILN_LOC);
// input: log-probabilities [C], [N, C] or [N, C, d1, ...]; target: int64
// class indices of the input's shape without C. weight: one per class.
// Targets equal to ignore_index contribute nothing (and are not counted by
// the mean, which divides by the summed weights of the targets).
Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight = Tensor(),
                int64_t ignore_index = -100, Reduction reduction = Reduction::Mean, KILN_LOC);
// nll_loss of log_softmax over dim 1 (dim 0 for a 1-D input); a floating
// target of the input's shape is read as class probabilities instead.
// label_smoothing in (0, 1] mixes the target with the uniform distribution
// over the classes, as PyTorch's.
Tensor cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight = Tensor(),
                     int64_t ignore_index = -100, Reduction reduction = Reduction::Mean,
                     double label_smoothing = 0.0, KILN_LOC);
// input: probabilities in [0, 1]; the logs are clamped at -100, as PyTorch's.
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight = Tensor(),
                            Reduction reduction = Reduction::Mean, KILN_LOC);
// The numerically stable form on logits; pos_weight weighs the positive term.
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const Tensor& weight = Tensor(), const Tensor& pos_weight = Tensor(),
                                        Reduction reduction = Reduction::Mean, KILN_LOC);

// log(sigmoid(x)), without overflow; softmax(-x); a * sigmoid(b) of x's two
// halves along dim.
Tensor logsigmoid(const Tensor& x, KILN_LOC);
Tensor softmin(const Tensor& x, int64_t dim, KILN_LOC);
Tensor glu(const Tensor& x, int64_t dim = -1, KILN_LOC);
// x divided by its p-norm along dim (at least eps).
Tensor normalize(const Tensor& x, double p = 2.0, int64_t dim = 1, double eps = 1e-12, KILN_LOC);
// The cosine of the angle between x1 and x2 (broadcast) along dim.
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim = 1, double eps = 1e-8, KILN_LOC);
// The p-norm of x1 - x2 + eps along the last dim.
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p = 2.0, double eps = 1e-6,
                         bool keepdim = false, KILN_LOC);
// [*, C r^2, H, W] -> [*, C, H r, W r] and back (sub-pixel convolution's
// rearrangement): a view, a permutation and one copy.
Tensor pixel_shuffle(const Tensor& x, int64_t upscale_factor, KILN_LOC);
Tensor pixel_unshuffle(const Tensor& x, int64_t downscale_factor, KILN_LOC);

// ---- padding, convolution, pooling, normalization (core/padding.cpp,
// convolution.cpp, pooling.cpp, normalization.cpp) ----
// Per-dim arguments (stride, padding, dilation, kernel_size) take one value
// for every spatial dim or one per dim, as PyTorch's int-or-tuple; inputs
// are batched [N, C, spatial...] or unbatched [C, spatial...].

enum class PadMode : uint8_t { Constant, Reflect, Replicate, Circular };
// Pads the trailing dims: pad = {last_before, last_after, prev_before, ...}.
// Negative pads crop. Reflect / replicate / circular pad the last 1-3 dims of
// an input with one or two more dims (PyTorch 1.13's rule).
Tensor pad(const Tensor& input, const Shape& pad, PadMode mode = PadMode::Constant, double value = 0, KILN_LOC);

// padding="valid" (none) or "same" (the output as large as the input; stride 1).
enum class ConvPadding : uint8_t { Valid, Same };
// input [N, C_in, L...], weight [C_out, C_in / groups, K...], bias [C_out].
Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(), const Shape& stride = {1},
              const Shape& padding = {0}, const Shape& dilation = {1}, int64_t groups = 1, KILN_LOC);
Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, const Shape& stride,
              ConvPadding padding, const Shape& dilation = {1}, int64_t groups = 1, KILN_LOC);
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(), const Shape& stride = {1},
              const Shape& padding = {0}, const Shape& dilation = {1}, int64_t groups = 1, KILN_LOC);
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, const Shape& stride,
              ConvPadding padding, const Shape& dilation = {1}, int64_t groups = 1, KILN_LOC);
Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(), const Shape& stride = {1},
              const Shape& padding = {0}, const Shape& dilation = {1}, int64_t groups = 1, KILN_LOC);
Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias, const Shape& stride,
              ConvPadding padding, const Shape& dilation = {1}, int64_t groups = 1, KILN_LOC);
// The transposed convolution (conv's adjoint; "deconvolution"): input [N,
// C_in, L...], weight [C_in, C_out / groups, K...]; output size (L - 1) *
// stride - 2 padding + dilation (K - 1) + output_padding + 1. Note
// PyTorch's argument order: groups before dilation.
Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(),
                        const Shape& stride = {1}, const Shape& padding = {0}, const Shape& output_padding = {0},
                        int64_t groups = 1, const Shape& dilation = {1}, KILN_LOC);
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(),
                        const Shape& stride = {1}, const Shape& padding = {0}, const Shape& output_padding = {0},
                        int64_t groups = 1, const Shape& dilation = {1}, KILN_LOC);
Tensor conv_transpose3d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(),
                        const Shape& stride = {1}, const Shape& padding = {0}, const Shape& output_padding = {0},
                        int64_t groups = 1, const Shape& dilation = {1}, KILN_LOC);

// stride {} (the default) is kernel_size. Floating inputs; padding at most
// half the kernel; ceil_mode rounds the output size up (a window must
// start inside the input or its left padding).
Tensor max_pool1d(const Tensor& input, const Shape& kernel_size, const Shape& stride = {}, const Shape& padding = {0},
                  const Shape& dilation = {1}, bool ceil_mode = false, KILN_LOC);
Tensor max_pool2d(const Tensor& input, const Shape& kernel_size, const Shape& stride = {}, const Shape& padding = {0},
                  const Shape& dilation = {1}, bool ceil_mode = false, KILN_LOC);
Tensor max_pool3d(const Tensor& input, const Shape& kernel_size, const Shape& stride = {}, const Shape& padding = {0},
                  const Shape& dilation = {1}, bool ceil_mode = false, KILN_LOC);
// Also the int64 position of each maximum, flat over the input's pooled dims
// (PyTorch's return_indices=True); the first of equal maxima.
std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& input, const Shape& kernel_size,
                                                   const Shape& stride = {}, const Shape& padding = {0},
                                                   const Shape& dilation = {1}, bool ceil_mode = false, KILN_LOC);
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, const Shape& kernel_size,
                                                   const Shape& stride = {}, const Shape& padding = {0},
                                                   const Shape& dilation = {1}, bool ceil_mode = false, KILN_LOC);
std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& input, const Shape& kernel_size,
                                                   const Shape& stride = {}, const Shape& padding = {0},
                                                   const Shape& dilation = {1}, bool ceil_mode = false, KILN_LOC);
// count_include_pad counts the zero padding in a window's divisor;
// divisor_override replaces it. Integer inputs divide with truncation.
Tensor avg_pool1d(const Tensor& input, const Shape& kernel_size, const Shape& stride = {}, const Shape& padding = {0},
                  bool ceil_mode = false, bool count_include_pad = true, KILN_LOC);
Tensor avg_pool2d(const Tensor& input, const Shape& kernel_size, const Shape& stride = {}, const Shape& padding = {0},
                  bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt, KILN_LOC);
Tensor avg_pool3d(const Tensor& input, const Shape& kernel_size, const Shape& stride = {}, const Shape& padding = {0},
                  bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt, KILN_LOC);
// Output position o of a dim of size I averages [floor(o I / O), ceil((o + 1) I / O)).
Tensor adaptive_avg_pool1d(const Tensor& input, const Shape& output_size, KILN_LOC);
Tensor adaptive_avg_pool2d(const Tensor& input, const Shape& output_size, KILN_LOC);
Tensor adaptive_avg_pool3d(const Tensor& input, const Shape& output_size, KILN_LOC);

// Resizing the trailing 1-3 dims (torch.nn.functional.interpolate), with
// LibTorch's options style:
//   interpolate(x, InterpolateOptions().size({64, 64}).mode(InterpolateMode::Bilinear))
//   interpolate(x, InterpolateOptions().scale_factor({2.0}))
// One size or scale factor for every dim, or one per dim. Linear modes take
// align_corners (default false); a scale factor is used as given unless
// recompute_scale_factor, as PyTorch's. Floating inputs.
enum class InterpolateMode : uint8_t { Nearest, NearestExact, Linear, Bilinear, Trilinear };
struct InterpolateOptions {
  InterpolateOptions& size(const Shape& v) { size_ = v; return *this; }
  InterpolateOptions& scale_factor(const std::vector<double>& v) { scale_factor_ = v; return *this; }
  InterpolateOptions& mode(InterpolateMode v) { mode_ = v; return *this; }
  InterpolateOptions& align_corners(bool v) { align_corners_ = v; return *this; }
  InterpolateOptions& recompute_scale_factor(bool v) { recompute_scale_factor_ = v; return *this; }
  std::optional<Shape> size_;
  std::optional<std::vector<double>> scale_factor_;
  InterpolateMode mode_ = InterpolateMode::Nearest;
  std::optional<bool> align_corners_;
  std::optional<bool> recompute_scale_factor_;
};
Tensor interpolate(const Tensor& input, const InterpolateOptions& options, KILN_LOC);

// Normalizes each channel over the batch and spatial dims. Training: the
// batch's statistics (biased variance), and running_mean / running_var
// (when given) updated in place with momentum and the unbiased variance;
// otherwise the running statistics.
Tensor batch_norm(const Tensor& input, Tensor running_mean, Tensor running_var, const Tensor& weight = Tensor(),
                  const Tensor& bias = Tensor(), bool training = false, double momentum = 0.1, double eps = 1e-5,
                  KILN_LOC);
// Normalizes each sample's channels over their spatial dims.
Tensor instance_norm(const Tensor& input, Tensor running_mean = Tensor(), Tensor running_var = Tensor(),
                     const Tensor& weight = Tensor(), const Tensor& bias = Tensor(), bool use_input_stats = true,
                     double momentum = 0.1, double eps = 1e-5, KILN_LOC);
// Normalizes each sample over groups of C / num_groups channels.
Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight = Tensor(),
                  const Tensor& bias = Tensor(), double eps = 1e-5, KILN_LOC);

}  // namespace kiln

// torch.nn.functional's layers and losses: linear, dropout, layer_norm,
// one_hot, and the losses mse / l1 / smooth_l1 / huber, nll / cross_entropy,
// binary_cross_entropy (with logits). Each is a composition of kiln ops
// (core/nn_functional.cpp), so it fuses with the work around it and autograd
// differentiates it through those ops' rules. Values, defaults and errors
// follow PyTorch 1.13. Index arguments (one_hot's labels, nll_loss's targets)
// and binary_cross_entropy's probabilities are checked eagerly, as PyTorch
// does: those calls evaluate that argument.
#pragma once

#include <cstdint>

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

}  // namespace kiln

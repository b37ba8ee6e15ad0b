// What the convolution files share (convolution.cpp: im2col and BLAS;
// depthwise_conv.cpp: one input channel per group, its taps folded).
#pragma once

#include <vector>

#include "kiln/tensor.h"

namespace kiln {

struct ConvArgs {
  Shape stride, dilation;
  Shape pad_before, pad_after;  // per spatial dim
};

// The windows a convolution of `kernel` reads from x [N, C, L...]:
// [N, C, O..., K...], a view (pad's gathers, unfold per spatial dim, the
// dilation's step) that computes nothing by itself, or, store_padded, a
// view of the padded input stored first (stored_copy). outs: the O sizes.
Tensor conv_windows(const Tensor& x, const Shape& kernel, const ConvArgs& a, Shape& outs, bool store_padded = false);

// Whether a convolution of x by weight with these groups takes the
// depthwise fold: one input channel per group, at most kFoldedConvTaps taps
// in one kernel, or up to kStagedConvTaps in stages of whole rows.
bool depthwise_folds(const Tensor& x, const Tensor& weight, int64_t groups);

// The depthwise convolution of x [N, C, L...] (batched) by weight [OC, 1,
// K...], without the bias: [N, OC, O...], recording ConvolutionBackward0.
Tensor depthwise_conv(const Tensor& x, const Tensor& weight, const ConvArgs& a, int64_t groups);

// Its gradients for the output gradient g (ConvolutionBackward0's rule):
// ints as depthwise_conv records them, {groups, stride..., dilation...,
// pad_before..., pad_after...}; an input not needed gets an undefined tensor.
std::vector<Tensor> depthwise_conv_backward(const Tensor& g, const Tensor& x, const Tensor& weight,
                                            const std::vector<int64_t>& ints, bool need_x, bool need_weight);

}  // namespace kiln

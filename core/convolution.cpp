// torch.nn.functional.conv1d / conv2d / conv3d and conv_transpose1d / 2d / 3d
// (include/kiln/nn_functional.h)
// as im2col and one batched matmul, the way PyTorch's CPU kernels compute a
// convolution:
//
//   windows = pad(x).unfold(...) per spatial dim   a view: [N, C, O..., K...]
//   cols    = windows as [N, G, C/G * K..., O...]  one copy kernel (it reads x
//                                                  through the pad's gathers)
//   out     = weight as [G, OC/G, C/G * K...] @ cols   BLAS, batched over N, G
//
// so the output comes out contiguous in [N, OC, O...] order, the bias add
// fuses after the BLAS call, and autograd derives the backward from the
// view, gather and matmul rules (the input's gradient sums overlapping
// windows back through unfold's rule: PyTorch's transposed convolution).
#include <string>

#include "core/convolution.h"
#include "core/ops_common.h"
#include "core/provenance.h"
#include "kiln/nn_functional.h"

namespace kiln {

namespace {

// "(2 x 2)", as PyTorch's convolution messages print per-dim sizes.
std::string dims_text(const Shape& s) {
  std::string t = "(";
  for (size_t i = 0; i < s.size(); ++i) t += (i ? " x " : "") + std::to_string(s[i]);
  return t + ")";
}

// A per-dim argument given as one value or one per spatial dim.
Shape expand_arg(const Shape& v, int64_t k, const char* what, const char* op) {
  KILN_CHECK(v.size() == 1 || static_cast<int64_t>(v.size()) == k, op, "expected ", what,
             " to be a single integer value or a list of ", k,
             " values to match the convolution dimensions, but got ", what, "=", v);
  return v.size() == 1 ? Shape(static_cast<size_t>(k), v[0]) : v;
}

// out [N, C_out, O...] plus the per-channel bias (when given), without the
// batch dim for an unbatched input.
Tensor with_bias(Tensor out, const Tensor& bias, bool unbatched) {
  if (bias.defined()) {
    Shape along(static_cast<size_t>(out.dim() - 1), 1);
    along[0] = out.size(1);
    out = out + bias.reshape(along);
  }
  return unbatched ? out.squeeze(0) : out;
}

}  // namespace

Tensor conv_windows(const Tensor& x, const Shape& kernel, const ConvArgs& a, Shape& outs, bool store_padded) {
  const int64_t k = static_cast<int64_t>(kernel.size());
  Shape pads;  // pad()'s order: the last dim's (before, after) first
  bool any_pad = false;
  for (int64_t j = k - 1; j >= 0; --j) {
    pads.push_back(a.pad_before[j]);
    pads.push_back(a.pad_after[j]);
    any_pad = any_pad || a.pad_before[j] != 0 || a.pad_after[j] != 0;
  }
  Tensor win = any_pad ? pad(x, pads) : x;
  if (any_pad && store_padded) win = stored_copy(win);
  outs = Shape(static_cast<size_t>(k), 0);
  for (int64_t j = 0; j < k; ++j) {
    win = win.unfold(2 + j, a.dilation[j] * (kernel[j] - 1) + 1, a.stride[j]);
    if (a.dilation[j] > 1) win = win.slice(-1, 0, std::nullopt, a.dilation[j]);
    outs[j] = win.size(2 + j);
  }
  return win;
}

namespace {

Tensor conv_nd(const Tensor& input, const Tensor& weight, const Tensor& bias, const ConvArgs& a, int64_t groups,
               int64_t k, const char* op) {
  const Tensor x = input.dim() == k + 1 ? input.unsqueeze(0) : input;
  const int64_t n = x.size(0), c = x.size(1), oc = weight.size(0), cg = c / groups;
  Shape kernel(weight.sizes().begin() + 2, weight.sizes().end());
  Shape padded(static_cast<size_t>(k)), dilated(static_cast<size_t>(k)), outs;
  for (int64_t j = 0; j < k; ++j) {
    padded[j] = x.size(2 + j) + a.pad_before[j] + a.pad_after[j];
    dilated[j] = a.dilation[j] * (kernel[j] - 1) + 1;
  }
  KILN_CHECK([&] {
    for (int64_t j = 0; j < k; ++j)
      if (padded[j] < dilated[j]) return false;
    return true;
  }(), op, "Calculated padded input size per channel: ", dims_text(padded), ". Kernel size: ", dims_text(dilated),
             ". Kernel size can't be greater than actual input size (input ", input.sizes(), ", weight ",
             weight.sizes(), ")");
  if (depthwise_folds(x, weight, groups))
    return with_bias(depthwise_conv(x, weight, a, groups), bias, input.dim() == k + 1);
  const Tensor win = conv_windows(x, kernel, a, outs);
  // [N, C, O..., K...] -> [N, G, C/G, K..., O...] -> [N, G, C/G * K..., O...]
  Shape split{n, groups, cg};
  for (int64_t j = 0; j < 2 * k; ++j) split.push_back(win.size(2 + j));
  Shape order{0, 1, 2};
  for (int64_t j = 0; j < k; ++j) order.push_back(3 + k + j);
  for (int64_t j = 0; j < k; ++j) order.push_back(3 + j);
  const int64_t taps = cg * Shape(kernel).numel();
  // contiguous() first: its copy walks the window view's own dims, where a
  // reshape of the view would unravel each flat position by division
  const Tensor cols = win.reshape(split).permute(order).contiguous().reshape({n, groups, taps, outs.numel()});
  Tensor out = weight.reshape({groups, oc / groups, taps}).matmul(cols);
  Shape out_shape{n, oc};
  for (int64_t o : outs) out_shape.push_back(o);
  return with_bias(out.reshape(out_shape), bias, input.dim() == k + 1);
}

// The checks a convolution and a transposed one share: ranks, stride,
// dilation, groups, device, dtype; the arguments expanded to one per dim.
ConvArgs check_common(const Tensor& input, const Tensor& weight, const Shape& stride, const Shape& dilation,
                      int64_t groups, int64_t k, const char* weight_layout, const char* op) {
  KILN_CHECK(input.defined() && weight.defined(), op, "expected defined input and weight but got an undefined one");
  KILN_CHECK(input.dim() == k + 1 || input.dim() == k + 2, op, "Expected ", k + 1, "D (unbatched) or ", k + 2,
             "D (batched) input to ", op, ", but got input of size: ", input.sizes());
  KILN_CHECK(weight.dim() == k + 2, op, "expected a ", k + 2, "-D weight [", weight_layout, ", ",
             k == 1 ? "kW" : k == 2 ? "kH, kW" : "kD, kH, kW", "], but got weight of size ", weight.sizes());
  ConvArgs a;
  a.stride = expand_arg(stride, k, "stride", op);
  a.dilation = expand_arg(dilation, k, "dilation", op);
  for (int64_t s : a.stride) KILN_CHECK(s > 0, op, "non-positive stride is not supported (stride ", stride, ")");
  for (int64_t d : a.dilation)
    KILN_CHECK(d > 0, op, "dilation should be greater than zero, but got ", a.dilation);
  KILN_CHECK(groups > 0, op, "non-positive groups is not supported (groups ", groups, ")");
  check_same_device(op, {&input, &weight});
  KILN_CHECK(input.dtype() == weight.dtype(), op, "expected input and weight of one dtype, but got input ",
             scalar_type_name(input.dtype()), " and weight ", scalar_type_name(weight.dtype()));
  KILN_CHECK(input.dtype() != DType::Bool, op, "not implemented for Bool (input ", input.sizes(), ")");
  return a;
}

// PyTorch's checks, in its order.
ConvArgs check_conv(const Tensor& input, const Tensor& weight, const Tensor& bias, const Shape& stride,
                    const Shape& dilation, int64_t groups, int64_t k, const char* op) {
  ConvArgs a = check_common(input, weight, stride, dilation, groups, k, "out_channels, in_channels / groups", op);
  KILN_CHECK(weight.size(0) >= groups, op, "Given groups=", groups, ", expected weight to be at least ", groups,
             " at dimension 0, but got weight of size ", weight.sizes(), " instead");
  KILN_CHECK(weight.size(0) % groups == 0, op, "Given groups=", groups, ", expected weight to be divisible by ",
             groups, " at dimension 0, but got weight of size ", weight.sizes(), " instead");
  const int64_t c = input.size(input.dim() - k - 1);
  KILN_CHECK(c == weight.size(1) * groups, op, "Given groups=", groups, ", weight of size ", weight.sizes(),
             ", expected input", input.sizes(), " to have ", weight.size(1) * groups, " channels, but got ", c,
             " channels instead");
  if (bias.defined()) {
    check_same_device(op, {&input, &bias});
    KILN_CHECK(bias.dim() == 1 && bias.size(0) == weight.size(0), op, "Given weight of size ", weight.sizes(),
               ", expected bias to be 1-dimensional with ", weight.size(0), " elements, but got bias of size ",
               bias.sizes(), " instead");
    KILN_CHECK(bias.dtype() == input.dtype(), op, "Input type (", dtype_name(input.dtype()), ") and bias type (",
               dtype_name(bias.dtype()), ") should be the same");
  }
  return a;
}

Tensor conv(const Tensor& input, const Tensor& weight, const Tensor& bias, const Shape& stride,
            const Shape& padding, const Shape& dilation, int64_t groups, int64_t k, const char* op) {
  ConvArgs a = check_conv(input, weight, bias, stride, dilation, groups, k, op);
  a.pad_before = expand_arg(padding, k, "padding", op);
  for (int64_t p : a.pad_before) KILN_CHECK(p >= 0, op, "negative padding is not supported (padding ", padding, ")");
  a.pad_after = a.pad_before;
  return conv_nd(input, weight, bias, a, groups, k, op);
}

Tensor conv(const Tensor& input, const Tensor& weight, const Tensor& bias, const Shape& stride,
            ConvPadding padding, const Shape& dilation, int64_t groups, int64_t k, const char* op) {
  ConvArgs a = check_conv(input, weight, bias, stride, dilation, groups, k, op);
  a.pad_before = a.pad_after = Shape(static_cast<size_t>(k), 0);
  if (padding == ConvPadding::Same) {
    for (int64_t s : a.stride)
      KILN_CHECK(s == 1, op, "padding='same' is not supported for strided convolutions (stride ", stride, ")");
    for (int64_t j = 0; j < k; ++j) {  // the odd one of an even total goes after, as PyTorch's
      const int64_t total = a.dilation[j] * (weight.size(2 + j) - 1);
      a.pad_before[j] = total / 2;
      a.pad_after[j] = total - total / 2;
    }
  }
  return conv_nd(input, weight, bias, a, groups, k, op);
}

// The transposed convolution (the adjoint of conv_nd with the same
// arguments), as PyTorch's CPU kernel computes it: columns = weight^T @ x,
// one batched BLAS call ([N, G, C_out/G * K..., I...]), then col2im: each
// window added back where conv_nd's window would have read it
// (fold_windows, masked gathers summed in one kernel), and the padding
// cropped off.
Tensor conv_transpose_nd(const Tensor& input, const Tensor& weight, const Tensor& bias, const ConvArgs& a,
                         const Shape& output_padding, int64_t groups, int64_t k, const char* op) {
  const Tensor x = input.dim() == k + 1 ? input.unsqueeze(0) : input;
  const int64_t n = x.size(0), c = x.size(1), ocg = weight.size(1), oc = ocg * groups;
  const Shape kernel(weight.sizes().begin() + 2, weight.sizes().end());
  const Shape in(x.sizes().begin() + 2, x.sizes().end());
  Shape out(static_cast<size_t>(k)), padded(static_cast<size_t>(k));
  for (int64_t j = 0; j < k; ++j) {
    padded[j] = (in[j] - 1) * a.stride[j] + a.dilation[j] * (kernel[j] - 1) + 1 + output_padding[j];
    out[j] = padded[j] - 2 * a.pad_before[j];
  }
  bool positive = true;
  for (int64_t o : out) positive = positive && o > 0;
  KILN_CHECK(positive, op, "Given input size per channel: ", dims_text(in), ". Calculated output size per channel: ",
             dims_text(out), ". Output size is too small (weight ", weight.sizes(), ")");
  const int64_t taps = ocg * Shape(kernel).numel();
  const Tensor w = weight.reshape({groups, c / groups, taps}).transpose(1, 2);
  Tensor cols = w.matmul(x.reshape({n, groups, c / groups, Shape(in).numel()}));  // [N, G, taps, I]
  Shape split{n, oc};
  for (int64_t kk : kernel) split.push_back(kk);
  for (int64_t i : in) split.push_back(i);
  Shape order{0, 1};
  for (int64_t j = 0; j < k; ++j) order.push_back(2 + k + j);
  for (int64_t j = 0; j < k; ++j) order.push_back(2 + j);
  Tensor y = cols.reshape(split).permute(order);  // [N, C_out, I..., K...]: conv_nd's window layout
  for (int64_t j = k - 1; j >= 0; --j) y = fold_windows(y, 2 + j, padded[j], a.stride[j], a.dilation[j]);
  for (int64_t j = 0; j < k; ++j)
    if (a.pad_before[j] > 0) y = y.narrow(2 + j, a.pad_before[j], out[j]);
  return with_bias(y, bias, input.dim() == k + 1);
}

Tensor conv_transpose(const Tensor& input, const Tensor& weight, const Tensor& bias, const Shape& stride,
                      const Shape& padding, const Shape& output_padding, int64_t groups, const Shape& dilation,
                      int64_t k, const char* op) {
  ConvArgs a = check_common(input, weight, stride, dilation, groups, k, "in_channels, out_channels / groups", op);
  a.pad_before = a.pad_after = expand_arg(padding, k, "padding", op);
  const Shape extra = expand_arg(output_padding, k, "output_padding", op);
  for (int64_t p : a.pad_before) KILN_CHECK(p >= 0, op, "negative padding is not supported (padding ", padding, ")");
  for (int64_t j = 0; j < k; ++j) {
    KILN_CHECK(extra[j] >= 0, op, "negative output_padding is not supported (output_padding ", output_padding, ")");
    KILN_CHECK(extra[j] < a.stride[j] || extra[j] < a.dilation[j], op,
               "output padding must be smaller than either stride or dilation, but got output_padding ", extra,
               ", stride ", a.stride, ", dilation ", a.dilation);
  }
  KILN_CHECK(weight.size(0) >= groups && weight.size(0) % groups == 0, op, "Given groups=", groups,
             ", expected weight to be divisible by ", groups, " at dimension 0, but got weight of size ",
             weight.sizes(), " instead");
  const int64_t c = input.size(input.dim() - k - 1);
  KILN_CHECK(c == weight.size(0), op, "Given transposed=1, weight of size ", weight.sizes(), ", expected input",
             input.sizes(), " to have ", weight.size(0), " channels, but got ", c, " channels instead");
  if (bias.defined()) {
    check_same_device(op, {&input, &bias});
    KILN_CHECK(bias.dim() == 1 && bias.size(0) == weight.size(1) * groups, op, "Given transposed=1, weight of size ",
               weight.sizes(), ", expected bias to be 1-dimensional with ", weight.size(1) * groups,
               " elements, but got bias of size ", bias.sizes(), " instead");
    KILN_CHECK(bias.dtype() == input.dtype(), op, "Input type (", dtype_name(input.dtype()), ") and bias type (",
               dtype_name(bias.dtype()), ") should be the same");
  }
  return conv_transpose_nd(input, weight, bias, a, extra, groups, k, op);
}

}  // namespace

// conv1d / conv2d / conv3d, with explicit padding or ConvPadding.
#define KILN_CONV(N)                                                                                            \
  Tensor conv##N##d(const Tensor& input, const Tensor& weight, const Tensor& bias, const Shape& stride,         \
                    const Shape& padding, const Shape& dilation, int64_t groups, SourceLoc loc) {               \
    const LocScope at(loc);                                                                                     \
    return conv(input, weight, bias, stride, padding, dilation, groups, N, "conv" #N "d");                      \
  }                                                                                                             \
  Tensor conv##N##d(const Tensor& input, const Tensor& weight, const Tensor& bias, const Shape& stride,         \
                    ConvPadding padding, const Shape& dilation, int64_t groups, SourceLoc loc) {                \
    const LocScope at(loc);                                                                                     \
    return conv(input, weight, bias, stride, padding, dilation, groups, N, "conv" #N "d");                      \
  }                                                                                                             \
  Tensor conv_transpose##N##d(const Tensor& input, const Tensor& weight, const Tensor& bias, const Shape& stride,   \
                              const Shape& padding, const Shape& output_padding, int64_t groups,                 \
                              const Shape& dilation, SourceLoc loc) {                                            \
    const LocScope at(loc);                                                                                     \
    return conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, N,            \
                          "conv_transpose" #N "d");                                                             \
  }
KILN_CONV(1)
KILN_CONV(2)
KILN_CONV(3)
#undef KILN_CONV

}  // namespace kiln

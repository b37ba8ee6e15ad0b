// torch.nn.functional.pad: constant, reflect, replicate and circular
// padding of the trailing dims (include/kiln/nn_functional.h).
//
// Each padded dim is one gather along it: output position j reads input
// position f(j - before), where f folds [-before, n + after) back into
// [0, n) as the mode says (clamp, mirror, wrap). The positions are arange
// arithmetic, not host data, so the gathers of all padded dims and the
// constant mode's mask fuse into the kernel that reads the padded tensor
// (a convolution's im2col copy, a pooling reduction), and autograd
// differentiates them through the gather's rule: a position read twice
// (replicate's edges, reflect's mirrors) gets both gradients, as PyTorch's
// ReplicationPad / ReflectionPad backward.
#include <string>

#include "core/ops_common.h"
#include "core/provenance.h"
#include "kiln/autograd.h"
#include "kiln/nn_functional.h"

namespace kiln {

namespace {

const char* mode_name(PadMode m) {
  switch (m) {
    case PadMode::Constant: return "constant";
    case PadMode::Reflect: return "reflect";
    case PadMode::Replicate: return "replicate";
    case PadMode::Circular: return "circular";
  }
  return "?";
}

// The input positions read at i = arange(-before, n + after), positions
// relative to a dim of size n (n > 0). The shape enters only through
// `last` = n - 1, a shape scalar (shape_scalar_node: a runtime param of the
// kernel), so a new image size compiles nothing; the constant mode's mask
// (pad()) compares against the same node.
Tensor source_positions(const Tensor& i, const Tensor& last, PadMode mode) {
  switch (mode) {
    case PadMode::Constant:  // the clamped read is masked out (pad())
    case PadMode::Replicate: return i.maximum(zeros_like(last)).minimum(last);
    case PadMode::Reflect: return -(i.abs() - last).abs() + last;  // |i| mirrored at n - 1
    case PadMode::Circular: {
      // i wraps at most once (pad_impl refuses more): two selects, not an
      // integer division by a runtime n
      const Tensor n = last + 1;
      return where(i < 0, i + n, where(i > last, i - n, i));
    }
  }
  KILN_INTERNAL_ASSERT(false, "unknown pad mode ", static_cast<int>(mode));
  return i;
}

// PyTorch 1.13 pads n trailing dims in the non-constant modes of inputs
// with one or two leading (batch, channel) dims only.
void check_mode_rank(const Tensor& input, int64_t padded, PadMode mode) {
  KILN_CHECK(padded >= 1 && padded <= 3 && (input.dim() == padded + 1 || input.dim() == padded + 2), "pad",
             mode_name(mode), " padding of the last ", padded, " dim(s) needs a ", padded + 1, "-D or ", padded + 2,
             "-D input, but got input ", input.sizes(),
             " (PyTorch: Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now)");
}

// pad() without its autograd record (checked: input defined).
Tensor pad_impl(const Tensor& input, const Shape& pad, PadMode mode, double value) {
  KILN_CHECK(pad.size() % 2 == 0, "pad", "Padding length must be divisible by 2 (pad ", pad, ")");
  const int64_t padded = static_cast<int64_t>(pad.size()) / 2;
  KILN_CHECK(padded <= input.dim(), "pad", "Padding length too large: pad ", pad, " pads ", padded,
             " dims of input ", input.sizes());
  if (mode != PadMode::Constant) check_mode_rank(input, padded, mode);
  const int64_t first = input.dim() - padded;  // the first padded dim
  Shape out_shape = input.sizes();
  for (int64_t k = 0; k < padded; ++k) {
    const int64_t d = input.dim() - 1 - k, n = input.size(d), before = pad[2 * k], after = pad[2 * k + 1];
    out_shape[d] = n + before + after;
    switch (mode) {
      case PadMode::Constant:
        KILN_CHECK(out_shape[d] >= 0, "pad", "padding (", before, ", ", after, ") of dim ", d, " of input ",
                   input.sizes(), " leaves ", out_shape[d], " elements");
        break;
      case PadMode::Reflect:
        KILN_CHECK(before < n && after < n, "pad",
                   "Argument #4: Padding size should be less than the corresponding input dimension, but got: "
                   "padding (", before, ", ", after, ") at dimension ", d, " of input ", input.sizes());
        break;
      case PadMode::Circular:
        // PyTorch wraps the input left after negative pads crop it, and
        // reads memory it never wrote when a pad exceeds what is left:
        // refused here
        KILN_CHECK(before <= n && after <= n && (before <= n + std::min<int64_t>(after, 0)) &&
                       (after <= n + std::min<int64_t>(before, 0)),
                   "pad", "Padding value causes wrapping around more than once (padding (", before, ", ", after,
                   ") at dimension ", d, " of input ", input.sizes(), ")");
        KILN_CHECK(out_shape[d] >= 0, "pad", "Negative padding value is resulting in an empty dimension (padding (",
                   before, ", ", after, ") at dimension ", d, " of input ", input.sizes(), ")");
        break;
      case PadMode::Replicate: break;
    }
  }
  if (mode == PadMode::Reflect || mode == PadMode::Replicate)
    for (int64_t d = input.dim() == padded + 2 ? 1 : 0; d < input.dim(); ++d)
      KILN_CHECK(input.size(d) > 0, "pad", mode_name(mode),
                 " padding expects non-zero sizes apart from the batch dim, but got input ", input.sizes());
  bool all_zero = true;
  for (int64_t p : pad) all_zero = all_zero && p == 0;
  if (all_zero) return input.clone();  // a new tensor, as PyTorch's
  // The fill value converted as PyTorch converts it (truncated for integers).
  const Tensor fill = full({}, value, TensorOptions(DType::Float64).device(input.device())).to(input.dtype());
  bool empty = out_shape.numel() == 0;
  for (int64_t d = first; d < input.dim(); ++d) empty = empty || input.size(d) == 0;
  if (empty) return fill.expand(out_shape).clone();
  Tensor out = input;
  Tensor keep;  // constant mode: where the output reads the input
  for (int64_t k = 0; k < padded; ++k) {
    const int64_t d = input.dim() - 1 - k, before = pad[2 * k], after = pad[2 * k + 1];
    if (before == 0 && after == 0) continue;
    int64_t n = input.size(d), from = 0;
    if (mode == PadMode::Circular) {  // PyTorch wraps the input cropped by negative pads
      from = std::max<int64_t>(-before, 0);
      n -= from + std::max<int64_t>(-after, 0);
    }
    const int64_t b = mode == PadMode::Circular ? std::max<int64_t>(before, 0) : before;
    const int64_t a = mode == PadMode::Circular ? std::max<int64_t>(after, 0) : after;
    Shape shape = out.sizes();
    shape[d] = out_shape[d];
    const TensorOptions index_options = TensorOptions(DType::Int64).device(input.device());
    const Tensor i = arange(-b, n + a, index_options);
    const Tensor last = shape_scalar(n - 1, input.device());
    out = gather_node(out, d, laid_along(source_positions(i, last, mode) + from, d, shape), "pad");
    if (mode == PadMode::Constant && (before > 0 || after > 0)) {
      Shape along(static_cast<size_t>(input.dim()), 1);
      along[d] = out_shape[d];
      // the clamp's own bounds (0, last): under this mask the lowering
      // reads at i itself (jit/lower_guard.cpp)
      const Tensor inside = (i >= 0).logical_and(i <= last).reshape(along);
      keep = keep.defined() ? keep.logical_and(inside) : inside;
    }
  }
  return keep.defined() ? where(keep, out, fill) : out;
}

}  // namespace

Tensor pad(const Tensor& input, const Shape& pad, PadMode mode, double value, SourceLoc loc) {
  const LocScope at(loc);
  check_defined(input, "pad");
  // The constant mode's gradient is a crop of the output's (PyTorch's
  // ConstantPadNdBackward0), not the scatter its gathers would give.
  if (mode != PadMode::Constant || !autograd::should_record({&input})) return pad_impl(input, pad, mode, value);
  Tensor out;
  {
    const NoGradGuard no_grad;
    out = pad_impl(input, pad, mode, value);
  }
  if (auto f = record(GradFn::ConstantPadNdBackward0, out, {&input})) f->ints.assign(pad.begin(), pad.end());
  return out;
}

}  // namespace kiln

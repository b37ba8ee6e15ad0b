// PyTorch ops that are compositions of kiln's own: masked_fill, lerp,
// outer, tril / triu, repeat, addcmul / addcdiv, and the activations silu, leaky_relu,
// hardtanh, relu6, gelu, softplus, elu / selu / celu, mish, hardsigmoid and
// hardswish. Built from where, arange comparisons,
// broadcasting views and arithmetic, they fuse into the kernels around them
// (x.tril() is one kernel: the mask is computed from the loop indices) and
// autograd differentiates them through those ops' rules, which give
// PyTorch's gradients. Values, dtypes and errors follow PyTorch 1.13
// (tests/test_ops_composite.cpp holds its numbers).
#include <cmath>
#include <limits>
#include <string>

#include "core/ops_common.h"
#include "core/provenance.h"
#include "core/tensor_impl.h"
#include "kiln/functions.h"

namespace kiln {

namespace {

// A 0-dim tensor of v in x's dtype and device (2.7 in int64 is 2); a value
// the dtype cannot hold is refused, as PyTorch's checked conversion (300 in
// uint8 is an error, not 44).
Tensor scalar_like(const Tensor& x, Scalar v, const char* op) {
  check_fill_value(v, x.dtype(), op);
  return full({}, v, TensorOptions(wrapped_scalar_dtype(v)).device(x.device())).to(x.dtype());
}

void check_mask(const Tensor& self, const Tensor& mask, const char* op) {
  check_same_device(op, {&self, &mask});
  // PyTorch 1.13 read a float mask as all false; later versions refuse it.
  KILN_CHECK(mask.dtype() == DType::Bool, op, "only boolean masks are supported, but got mask with dtype ",
             scalar_type_name(mask.dtype()), " (self ", self.sizes(), ", mask ", mask.sizes(),
             "); compare to get one, e.g. mask != 0");
}

}  // namespace

// ---- masked_fill: where(mask, value, self) in self's dtype ----
// The value is cast to self's dtype first, as PyTorch (an int64 tensor
// filled with 2.7 holds 2); the mask broadcasts with self.
Tensor Tensor::masked_fill(const Tensor& mask, Scalar value, SourceLoc loc) const {
  const LocScope at(loc);
  check_mask(*this, mask, "masked_fill");
  return where(mask, scalar_like(*this, value, "masked_fill"), *this);
}
Tensor Tensor::masked_fill(const Tensor& mask, const Tensor& value, SourceLoc loc) const {
  const LocScope at(loc);
  check_mask(*this, mask, "masked_fill");
  KILN_CHECK(value.dim() == 0, "masked_fill", "only supports a 0-dimensional value tensor, but got tensor with ",
             value.dim(), " dimension(s) (shape ", value.sizes(), ")");
  check_same_device("masked_fill", {this, &value});
  return where(mask, value.to(dtype()), *this);
}

// ---- lerp: self + weight * (end - self), PyTorch's two-sided formula ----
// For |weight| < 0.5 self + w (end - self), else end - (end - self)(1 - w):
// exact at both ends. A float32 / float16 / bfloat16 lerp takes the scalar
// weight in float, as PyTorch's opmath (1 - w is computed in float). Each
// operation is rounded: PyTorch's CPU kernel fuses the multiply and the
// add where the CPU has FMA (its last bit can differ from kiln's, which is
// the same on every machine).
namespace {
void check_lerp(const Tensor& self, const Tensor& end, const Tensor* weight) {
  check_same_device("lerp", {&self, &end});
  KILN_CHECK(is_floating_point(self.dtype()), "lerp", "not implemented for ", scalar_type_name(self.dtype()),
             ": self must be a floating point tensor (shape ", self.sizes(), ")");
  KILN_CHECK(end.dtype() == self.dtype(), "lerp", "expected dtype ", scalar_type_name(self.dtype()),
             " for `end` but got dtype ", scalar_type_name(end.dtype()));
  if (!weight) return;
  check_same_device("lerp", {&self, weight});
  KILN_CHECK(weight->dtype() == self.dtype(), "lerp", "expected dtype ", scalar_type_name(self.dtype()),
             " for `weight` but got dtype ", scalar_type_name(weight->dtype()));
}
}  // namespace

Tensor Tensor::lerp(const Tensor& end, Scalar weight, SourceLoc loc) const {
  const LocScope at(loc);
  check_lerp(*this, end, nullptr);
  const bool in_double = dtype() == DType::Float64;
  const double w = in_double ? weight.to_double() : static_cast<float>(weight.to_double());
  const Tensor d = end - *this;
  if (std::abs(w) < 0.5) return *this + d * w;
  const double one_minus = in_double ? 1.0 - w : static_cast<double>(1.0f - static_cast<float>(w));
  return end - d * one_minus;
}
Tensor Tensor::lerp(const Tensor& end, const Tensor& weight, SourceLoc loc) const {
  const LocScope at(loc);
  check_lerp(*this, end, &weight);
  const Tensor d = end - *this;
  return where(weight.abs() < 0.5, *this + weight * d, end - d * (1 - weight));
}

// ---- addcmul / addcdiv: self + value * t1 * t2, self + value * t1 / t2 ----
// PyTorch's order: (value * t1) * t2 and (value * t1) / t2, then the add.
// As PyTorch, addcdiv refuses integer tensors (its old integer division is
// gone) and addcmul a floating value with integer tensors.
// The logical ops on nonzero-ness (a comparison with zero: bool stays
// bool), combined with where; NaN is nonzero, as in PyTorch.
namespace {
Tensor truth(const Tensor& t, const char* op) {
  KILN_CHECK(t.defined(), op, "expected a defined tensor but got an undefined one");
  return t.dtype() == DType::Bool ? t : t.ne(0);
}
}  // namespace
Tensor Tensor::logical_and(const Tensor& other, SourceLoc loc) const {
  const LocScope at(loc);
  return where(truth(*this, "logical_and"), truth(other, "logical_and"), false);
}
Tensor Tensor::logical_or(const Tensor& other, SourceLoc loc) const {
  const LocScope at(loc);
  return where(truth(*this, "logical_or"), true, truth(other, "logical_or"));
}
Tensor Tensor::logical_xor(const Tensor& other, SourceLoc loc) const {
  const LocScope at(loc);
  return truth(*this, "logical_xor").ne(truth(other, "logical_xor"));
}
Tensor Tensor::isnan(SourceLoc loc) const {
  const LocScope at(loc);
  KILN_CHECK(defined(), "isnan", "expected a defined tensor but got an undefined one");
  return ne(*this);
}
Tensor Tensor::isinf(SourceLoc loc) const {
  const LocScope at(loc);
  KILN_CHECK(defined(), "isinf", "expected a defined tensor but got an undefined one");
  if (!is_floating_point()) return zeros(sizes(), TensorOptions(DType::Bool).device(device()));
  return abs().eq(std::numeric_limits<double>::infinity());
}
Tensor Tensor::isfinite(SourceLoc loc) const {
  const LocScope at(loc);
  KILN_CHECK(defined(), "isfinite", "expected a defined tensor but got an undefined one");
  if (!is_floating_point()) return ones(sizes(), TensorOptions(DType::Bool).device(device()));
  return abs().lt(std::numeric_limits<double>::infinity());
}

Tensor Tensor::isclose(const Tensor& other, double rtol, double atol, bool equal_nan, SourceLoc loc) const {
  const LocScope at(loc);
  KILN_CHECK(defined() && other.defined(), "isclose", "expected defined tensors but got an undefined one");
  KILN_CHECK(dtype() == other.dtype(), "isclose", "expected both inputs to have same dtype, but input has ",
             scalar_type_name(dtype()), " and other has ", scalar_type_name(other.dtype()));
  KILN_CHECK(rtol >= 0 && atol >= 0, "isclose", "rtol and atol must be non-negative (rtol ", rtol, ", atol ", atol,
             ")");
  if (!is_floating_point()) {
    if (rtol == 0 && atol == 0) return eq(other);
    const Tensor a = to(DType::Float64), b = other.to(DType::Float64);
    return where(a == b, true, (a - b).abs() <= atol + rtol * b.abs());
  }
  // equal values (infinities too), else a finite difference within the bound
  const Tensor diff = (*this - other).abs();
  Tensor close = where(eq(other), true, where(diff.isfinite(), diff <= (other.abs() * rtol + atol), false));
  if (equal_nan) close = where(isnan().logical_and(other.isnan()), true, close);
  return close;
}
bool Tensor::allclose(const Tensor& other, double rtol, double atol, bool equal_nan, SourceLoc loc) const {
  const LocScope at(loc);
  return isclose(other, rtol, atol, equal_nan).all().item<bool>();
}
bool Tensor::equal(const Tensor& other, SourceLoc loc) const {
  const LocScope at(loc);
  KILN_CHECK(defined() && other.defined(), "equal", "expected defined tensors but got an undefined one");
  check_same_device("equal", {this, &other});
  return sizes() == other.sizes() && eq(other).all().item<bool>();
}

Tensor Tensor::addcmul(const Tensor& tensor1, const Tensor& tensor2, Scalar value, SourceLoc loc) const {
  const LocScope at(loc);
  check_same_device("addcmul", {this, &tensor1, &tensor2});
  (void)broadcast_shapes(broadcast_shapes(sizes(), tensor1.sizes(), "addcmul"), tensor2.sizes(), "addcmul");
  const bool any_float = is_floating_point() || tensor1.is_floating_point() || tensor2.is_floating_point();
  KILN_CHECK(any_float || !value.is_floating_point(), "addcmul",
             "for integral input tensors, argument value must not be a floating point number (value ",
             value.to_double(), ")");
  return *this + (tensor1 * value) * tensor2;
}
Tensor Tensor::addcdiv(const Tensor& tensor1, const Tensor& tensor2, Scalar value, SourceLoc loc) const {
  const LocScope at(loc);
  check_same_device("addcdiv", {this, &tensor1, &tensor2});
  (void)broadcast_shapes(broadcast_shapes(sizes(), tensor1.sizes(), "addcdiv"), tensor2.sizes(), "addcdiv");
  KILN_CHECK(tensor1.is_floating_point() || tensor2.is_floating_point(), "addcdiv",
             "integer division with addcdiv is no longer supported (tensor1 ", scalar_type_name(tensor1.dtype()),
             ", tensor2 ", scalar_type_name(tensor2.dtype()), "); for the true quotient write self + value * tensor1 / tensor2");
  return *this + (tensor1 * value) / tensor2;
}

// ---- outer: a[:, None] * b[None, :] of two vectors ----
Tensor Tensor::outer(const Tensor& vec2, SourceLoc loc) const {
  const LocScope at(loc);
  KILN_CHECK(dim() == 1, "outer", "expected 1-D argument self, but got ", dim(), "-D (shape ", sizes(), ")");
  KILN_CHECK(vec2.dim() == 1, "outer", "expected 1-D argument vec2, but got ", vec2.dim(), "-D (shape ",
             vec2.sizes(), ")");
  return unsqueeze(1) * vec2.unsqueeze(0);
}

// ---- tril / triu: zero the elements above / below a diagonal ----
// Over the last two dims (batched over the others): element (i, j) is
// kept where j - i <= diagonal (tril) or >= diagonal (triu).
namespace {
Tensor triangle(const Tensor& x, int64_t diagonal, bool lower, const char* op) {
  KILN_CHECK(x.dim() >= 2, op, "input tensor must have at least 2 dimensions (shape ", x.sizes(), ")");
  const auto idx = TensorOptions(DType::Int64).device(x.device());
  const Tensor offset = arange(x.size(-1), idx) - arange(x.size(-2), idx).unsqueeze(1);  // j - i
  const Tensor keep = lower ? offset <= diagonal : offset >= diagonal;
  return where(keep, x, zeros({}, TensorOptions(x.dtype()).device(x.device())));
}
}  // namespace

Tensor Tensor::tril(int64_t diagonal, SourceLoc loc) const {
  const LocScope at(loc);
  return triangle(*this, diagonal, true, "tril");
}
Tensor Tensor::triu(int64_t diagonal, SourceLoc loc) const {
  const LocScope at(loc);
  return triangle(*this, diagonal, false, "triu");
}

// ---- repeat: tile the tensor repeats[d] times along each dim ----
// Leading repeats add dims, as PyTorch. A view [1, s0, 1, s1, ...] expanded
// to [r0, s0, r1, s1, ...] and reshaped to [r0 s0, r1 s1, ...]: the copy is
// that reshape's, and the gradient sums over the copies (expand's rule).
// Where reshape can return a view (every repeat 1, or tiles of a single
// element: stride 0) the result is copied all the same: repeat's result is
// a new row-major tensor, as PyTorch's, never an alias of self.
Tensor Tensor::repeat(const Shape& repeats, SourceLoc loc) const {
  const LocScope at(loc);
  KILN_CHECK(repeats.size() >= static_cast<size_t>(dim()), "repeat",
             "number of dimensions of repeat dims can not be smaller than number of dimensions of tensor "
             "(repeats ", repeats, ", shape ", sizes(), ")");
  for (int64_t r : repeats)
    KILN_CHECK(r >= 0, "repeat", "repeats must be non-negative, got ", r, " (repeats ", repeats, ")");
  Tensor x = *this;
  while (static_cast<size_t>(x.dim()) < repeats.size()) x = x.unsqueeze(0);
  Shape expanded, result;
  for (size_t d = 0; d < repeats.size(); ++d) {
    x = x.unsqueeze(static_cast<int64_t>(2 * d));
    expanded.push_back(repeats[d]);
    expanded.push_back(x.size(static_cast<int64_t>(2 * d + 1)));
    result.push_back(repeats[d] * x.size(static_cast<int64_t>(2 * d + 1)));
  }
  Tensor out = x.expand(expanded).reshape(result);
  if (out.impl()->storage == impl()->storage) out = out.clone().contiguous();
  return out;
}

// ---- activations (torch.nn.functional) ----

// x / (1 + exp(-x)), PyTorch's formula (not x * sigmoid(x)).
Tensor silu(const Tensor& x, SourceLoc loc) {
  const LocScope at(loc);
  check_floating(x, "silu");
  return x / ((-x).exp() + 1);
}
// x > 0 ? x : x * slope; the gradient at 0 is the slope, as PyTorch's.
Tensor leaky_relu(const Tensor& x, double negative_slope, SourceLoc loc) {
  const LocScope at(loc);
  check_floating(x, "leaky_relu");
  return where(x > 0, x, x * negative_slope);
}
// Clamped to [min, max] in x's dtype; unlike clamp, whose gradient passes
// at the bounds, hardtanh's is zero there (PyTorch's hardtanh_backward).
Tensor hardtanh(const Tensor& x, Scalar min_val, Scalar max_val, SourceLoc loc) {
  const LocScope at(loc);
  KILN_CHECK(x.dtype() != DType::Bool, "hardtanh", "not implemented for Bool (shape ", x.sizes(), ")");
  KILN_CHECK(min_val.to_double() <= max_val.to_double(), "hardtanh", "min_val (", min_val.to_double(),
             ") cannot be greater than max_val (", max_val.to_double(), ")");
  return where(x <= min_val, scalar_like(x, min_val, "hardtanh"), where(x >= max_val, scalar_like(x, max_val, "hardtanh"), x));
}
Tensor relu6(const Tensor& x, SourceLoc loc) {
  const LocScope at(loc);
  return hardtanh(x, 0, 6);
}
// PyTorch's formulas: x / 2 (1 + erf(x / sqrt 2)), or with "tanh"
// x / 2 (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
Tensor gelu(const Tensor& x, const char* approximate, SourceLoc loc) {
  const LocScope at(loc);
  const std::string mode = approximate ? approximate : "";
  KILN_CHECK(mode == "none" || mode == "tanh", "gelu", "approximate argument must be either none or tanh, not '",
             mode, "'");
  check_floating(x, "gelu");
  if (mode == "none") return x * 0.5 * ((x * M_SQRT1_2).erf() + 1);
  const double beta = M_SQRT2 * M_2_SQRTPI * 0.5;
  Tensor inner = (x + x * x * x * 0.044715) * beta;
  return x * 0.5 * (inner.tanh() + 1);
}
// x beta > threshold ? x : log1p(exp(x beta)) / beta: linear where exp
// would overflow, as PyTorch's.
Tensor softplus(const Tensor& x, double beta, double threshold, SourceLoc loc) {
  const LocScope at(loc);
  check_floating(x, "softplus");
  Tensor xb = x * beta;
  return where(xb > threshold, x, xb.exp().log1p() / beta);
}
namespace {
// x > 0 ? x * scale : alpha * scale * expm1(x * input_scale), PyTorch's elu kernel.
Tensor elu_like(const Tensor& x, double alpha, double scale, double input_scale, const char* op) {
  check_floating(x, op);
  Tensor neg = (x * input_scale).expm1() * (alpha * scale);
  return where(x > 0, scale == 1.0 ? x : x * scale, neg);
}
}  // namespace
Tensor elu(const Tensor& x, double alpha, SourceLoc loc) {
  const LocScope at(loc);
  return elu_like(x, alpha, 1.0, 1.0, "elu");
}
Tensor selu(const Tensor& x, SourceLoc loc) {
  const LocScope at(loc);
  return elu_like(x, 1.6732632423543772848170429916717, 1.0507009873554804934193349852946, 1.0, "selu");
}
Tensor celu(const Tensor& x, double alpha, SourceLoc loc) {
  const LocScope at(loc);
  KILN_CHECK(alpha != 0.0, "celu", "ZeroDivisionError: alpha cannot be 0 for CELU (input ", x.sizes(), ")");
  return elu_like(x, alpha, 1.0, 1.0 / alpha, "celu");
}
// x tanh(softplus(x)).
Tensor mish(const Tensor& x, SourceLoc loc) {
  const LocScope at(loc);
  check_floating(x, "mish");
  return x * softplus(x).tanh();
}
// relu6(x + 3) / 6: zero gradient outside (-3, 3), as PyTorch's.
Tensor hardsigmoid(const Tensor& x, SourceLoc loc) {
  const LocScope at(loc);
  check_floating(x, "hardsigmoid");
  return hardtanh(x + 3, 0, 6) / 6;
}
// x relu6(x + 3) / 6, written piecewise so that the gradient is PyTorch's
// at the joins too: 0 below -3, x / 3 + 1/2 on [-3, 3], 1 above.
Tensor hardswish(const Tensor& x, SourceLoc loc) {
  const LocScope at(loc);
  check_floating(x, "hardswish");
  return where(x < -3, x * 0, where(x <= 3, x * (x + 3) / 6, x));  // x * 0: -0 and NaN as PyTorch's
}

// ---- functional forms ----
Tensor masked_fill(const Tensor& t, const Tensor& mask, Scalar value, SourceLoc loc) {
  return t.masked_fill(mask, value, loc);
}
Tensor lerp(const Tensor& start, const Tensor& end, Scalar weight, SourceLoc loc) {
  return start.lerp(end, weight, loc);
}
Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight, SourceLoc loc) {
  return start.lerp(end, weight, loc);
}
Tensor outer(const Tensor& a, const Tensor& b, SourceLoc loc) { return a.outer(b, loc); }
Tensor addcmul(const Tensor& t, const Tensor& tensor1, const Tensor& tensor2, Scalar value, SourceLoc loc) {
  return t.addcmul(tensor1, tensor2, value, loc);
}
Tensor addcdiv(const Tensor& t, const Tensor& tensor1, const Tensor& tensor2, Scalar value, SourceLoc loc) {
  return t.addcdiv(tensor1, tensor2, value, loc);
}
Tensor tril(const Tensor& t, int64_t diagonal, SourceLoc loc) { return t.tril(diagonal, loc); }
Tensor triu(const Tensor& t, int64_t diagonal, SourceLoc loc) { return t.triu(diagonal, loc); }

}  // namespace kiln

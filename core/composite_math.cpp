// Elementwise math written with kiln's own ops, each PyTorch's CPU formula
// (so the values are its values, and the ops fuse and differentiate like
// their parts): hypot, logaddexp / logaddexp2, xlogy, deg2rad / rad2deg,
// sinc, logit, heaviside, nan_to_num, float_power, diff; logspace.
#include <cmath>
#include <limits>

#include "core/ops_common.h"
#include "core/provenance.h"

namespace kiln {

namespace {
// Both operands in their promoted dtype, which must be floating (PyTorch
// has no integer kernels for these).
std::pair<Tensor, Tensor> floating_pair(const Tensor& a, const Tensor& b, const char* op) {
  check_defined(a, op);
  check_defined(b, op);
  broadcast_shapes(a.sizes(), b.sizes(), op);  // a mismatch is reported under op's name
  const DType dt = result_type(a, b);
  KILN_CHECK(kiln::is_floating_point(dt), op, "\"", op, "\" not implemented for '", scalar_type_name(dt),
             "' (shapes ", a.sizes(), " and ", b.sizes(), "); convert the inputs with .to(kFloat32)");
  return {a.to(dt), b.to(dt)};
}

// x's value in the floating dtype PyTorch computes it in (integers: the default float dtype).
Tensor as_floating(const Tensor& x, const char* op) {
  check_defined(x, op);
  return x.to(floating_compute_type(x.dtype()));
}
}  // namespace

// C's hypot: an infinite operand gives +inf even beside a NaN. float32 and
// the 16-bit floats square in double (no overflow, one rounding); float64
// scales by the larger magnitude.
Tensor Tensor::hypot(const Tensor& other, SourceLoc loc) const {
  const LocScope at(loc);
  auto [a, b] = floating_pair(*this, other, "hypot");
  const DType dt = a.dtype();
  Tensor r;
  if (dt == DType::Float64) {
    Tensor m = a.abs().maximum(b.abs());
    Tensor safe = where(m == 0, 1.0, m);
    r = where(m == 0, 0.0, m * ((a / safe).square() + (b / safe).square()).sqrt());
  } else {
    Tensor ad = a.to(DType::Float64), bd = b.to(DType::Float64);
    r = (ad * ad + bd * bd).sqrt().to(dt);
  }
  return where(a.isinf().logical_or(b.isinf()), std::numeric_limits<double>::infinity(), r);
}

// PyTorch: a when a and b are the same infinity, else max + log1p(exp(-|a - b|)).
Tensor Tensor::logaddexp(const Tensor& other, SourceLoc loc) const {
  const LocScope at(loc);
  auto [a, b] = floating_pair(*this, other, "logaddexp");
  Tensor m = a.maximum(b);
  return where(a.isinf().logical_and(a == b), a, m + (-(a - b).abs()).exp().log1p());
}
Tensor Tensor::logaddexp2(const Tensor& other, SourceLoc loc) const {
  const LocScope at(loc);
  auto [a, b] = floating_pair(*this, other, "logaddexp2");
  Tensor m = a.maximum(b);
  return where(a.isinf().logical_and(a == b), a, m + (-(a - b).abs()).exp2().log1p() * (1.0 / M_LN2));
}

// PyTorch: NaN where y is NaN, 0 where x is 0, else x * log(y).
Tensor Tensor::xlogy(const Tensor& other, SourceLoc loc) const {
  const LocScope at(loc);
  check_defined(*this, "xlogy");
  check_defined(other, "xlogy");
  broadcast_shapes(sizes(), other.sizes(), "xlogy");
  const DType rt = result_type(*this, other);
  const DType dt = floating_compute_type(rt);
  Tensor x = to(dt), y = other.to(dt);
  return where(y.isnan(), std::numeric_limits<double>::quiet_NaN(), where(x == 0, 0.0, x * y.log()));
}
Tensor Tensor::xlogy(Scalar other, SourceLoc loc) const {
  const LocScope at(loc);
  check_defined(*this, "xlogy");
  return xlogy(full({}, other, TensorOptions(wrapped_scalar_dtype(other)).device(device())));
}

Tensor Tensor::deg2rad(SourceLoc loc) const {
  const LocScope at(loc);
  return as_floating(*this, "deg2rad") * (M_PI / 180.0);
}
Tensor Tensor::rad2deg(SourceLoc loc) const {
  const LocScope at(loc);
  return as_floating(*this, "rad2deg") * (180.0 / M_PI);
}

// PyTorch: 1 at 0, else sin(pi x) / (pi x), the product in the dtype.
Tensor Tensor::sinc(SourceLoc loc) const {
  const LocScope at(loc);
  Tensor x = as_floating(*this, "sinc");
  // the product at 0 replaced by 1 in the branch not taken, so its gradient
  // there is 0, not 0 * NaN
  Tensor p = where(x == 0, 1.0, x * M_PI);
  return where(x == 0, 1.0, p.sin() / p);
}

Tensor Tensor::logit(std::optional<double> eps, SourceLoc loc) const {
  const LocScope at(loc);
  Tensor x = as_floating(*this, "logit");
  if (eps) x = where(x < *eps, *eps, where(x > 1.0 - *eps, 1.0 - *eps, x));  // NaN stays NaN
  return (x / (1 - x)).log();
}

Tensor Tensor::heaviside(const Tensor& values, SourceLoc loc) const {
  const LocScope at(loc);
  check_defined(*this, "heaviside");
  check_defined(values, "heaviside");
  KILN_CHECK(dtype() == values.dtype(), "heaviside",
             "heaviside is not yet implemented for tensors with different dtypes (", scalar_type_name(dtype()),
             " and ", scalar_type_name(values.dtype()), ")");
  broadcast_shapes(sizes(), values.sizes(), "heaviside");
  return where(*this == 0, values, gt(0).to(dtype()));
}

Tensor Tensor::nan_to_num(std::optional<double> nan, std::optional<double> posinf, std::optional<double> neginf,
                          SourceLoc loc) const {
  const LocScope at(loc);
  check_defined(*this, "nan_to_num");
  if (!is_floating_point()) return clone();
  const double big = largest_finite(dtype());
  Tensor r = where(isnan(), nan.value_or(0.0), *this);
  r = where(*this == std::numeric_limits<double>::infinity(), posinf.value_or(big), r);
  return where(*this == -std::numeric_limits<double>::infinity(), neginf.value_or(-big), r);
}

Tensor Tensor::float_power(const Tensor& exponent, SourceLoc loc) const {
  const LocScope at(loc);
  check_defined(*this, "float_power");
  check_defined(exponent, "float_power");
  return to(DType::Float64).pow(exponent.to(DType::Float64));
}
Tensor Tensor::float_power(Scalar exponent, SourceLoc loc) const {
  const LocScope at(loc);
  check_defined(*this, "float_power");
  return to(DType::Float64).pow(exponent.to_double());
}

Tensor Tensor::diff(int64_t n, int64_t dim, const Tensor& prepend, const Tensor& append, SourceLoc loc) const {
  const LocScope at(loc);
  check_defined(*this, "diff");
  KILN_CHECK(this->dim() >= 1, "diff", "diff expects input to be at least one-dimensional");
  KILN_CHECK(n >= 0, "diff", "order must be non-negative but got ", n);
  const int64_t d = wrap_dim(dim, this->dim(), "diff");
  Tensor x = *this;
  for (const Tensor* t : {&prepend, &append})
    KILN_CHECK(!t->defined() || t->dim() == this->dim(), "diff",
               "diff expects prepend or append to be the same dimension as input (input ", sizes(), ", got ",
               t->sizes(), ")");
  if (prepend.defined() || append.defined()) {
    std::vector<Tensor> parts;
    if (prepend.defined()) parts.push_back(prepend);
    parts.push_back(x);
    if (append.defined()) parts.push_back(append);
    x = cat(parts, d);
  }
  for (int64_t i = 0; i < n; ++i) {
    const int64_t len = x.sizes()[d];
    if (len == 0) break;
    Tensor hi = x.narrow(d, 1, len - 1), lo = x.narrow(d, 0, len - 1);
    x = x.dtype() == DType::Bool ? hi.logical_xor(lo) : hi - lo;  // PyTorch: bool differences are xor
  }
  return x;
}

// PyTorch's kernel: pow(base, exponent) in double, the exponent by
// linspace's two-sided formula in the dtype (in double for integers).
Tensor logspace(Scalar start, Scalar end, int64_t steps, double base, const TensorOptions& options, SourceLoc loc) {
  const LocScope at(loc);
  KILN_CHECK(steps >= 0, "logspace", "number of steps must be non-negative (got ", steps, ")");
  const DType dt = options.dtype_or(default_dtype());
  const DType et = kiln::is_floating_point(dt) ? dt : DType::Float64;
  Tensor e = linspace(start, end, steps, TensorOptions(et).device(options.device()));
  Tensor b = full({}, base, TensorOptions(DType::Float64).device(options.device()));
  Tensor r = b.pow(e.to(DType::Float64)).to(dt);
  if (options.requires_grad()) r.requires_grad_();
  return r;
}

}  // namespace kiln

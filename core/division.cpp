// Division with rounding, as PyTorch: fmod (Op::Fmod: C's fmod / %, the
// dividend's sign), remainder (the divisor's sign: fmod, then the divisor
// added where the signs differ, as ATen computes it), and div with
// rounding_mode "trunc" (floats: trunc(a / b), as ATen; integers: a
// truncated Div node) or "floor" (floats: ATen's div_floor formula built on
// fmod, exact where a / b would round to the next integer; integers: the
// truncated quotient less one where the remainder's sign differs from the
// divisor's). An integer divisor of zero is refused when the op is written,
// as PyTorch raises ZeroDivisionError (a tensor divisor is evaluated for
// it). The rounded quotients are piecewise constant: their gradient is zero,
// so they are computed from detached inputs.
#include <string>
#include <string_view>

#include "core/ops_common.h"
#include "core/provenance.h"

namespace kiln {

namespace {

Tensor operand(const Tensor& a, Scalar s) {
  return full({}, s, TensorOptions(wrapped_scalar_dtype(s)).device(a.device()));
}

// PyTorch's checks: defined operands, no bool, no integer zero divisor (a
// scalar divisor, given as `scalar`, is checked without evaluating b).
void check_division(const Tensor& a, const Tensor& b, const char* op, const Scalar* scalar = nullptr) {
  KILN_CHECK(a.defined() && b.defined(), op, "expected defined tensors but got an undefined one");
  check_same_device(op, {&a, &b});
  const DType common = result_type(a, b);
  KILN_CHECK(common != DType::Bool, op, "\"", op, "\" not implemented for 'Bool'");
  if (is_floating_point(common)) return;
  const bool zero = scalar ? scalar->to_long() == 0 : b.eq(0).any().item<bool>();
  KILN_CHECK(!zero, op, "ZeroDivisionError: an integer division by zero (divisor ", b.sizes(), ")");
}

Tensor signs_differ(const Tensor& r, const Tensor& b) { return where(r.ne(0), r.lt(0).ne(b.lt(0)), false); }

// r = fmod(a, b) moved to b's sign
Tensor remainder_of(const Tensor& b, const Tensor& r) { return where(signs_differ(r, b), r + b, r); }

Tensor rounded_division(const Tensor& x, const Tensor& y, std::string_view mode, const Scalar* scalar = nullptr) {
  const char* op = "div";
  KILN_CHECK(mode == "trunc" || mode == "floor", op,
             "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '", std::string(mode), "'");
  check_division(x, y, op, scalar);
  const Tensor a = x.detach(), b = y.detach();
  const bool fp = is_floating_point(result_type(a, b));
  if (mode == "trunc") return fp ? (a / b).trunc() : binary_op(Op::Div, a, b, op, true);
  // fmod without fmod()'s own check: checked above (a tensor divisor's
  // check evaluates it once, not twice; a scalar's evaluates nothing)
  const Tensor mod = binary_op(Op::Fmod, a, b, "fmod", false);
  if (!fp) {
    const Tensor q = binary_op(Op::Div, a, b, op, true);
    return where(signs_differ(mod, b), q - 1, q);
  }
  // ATen's div_floor_floating
  Tensor q = (a - mod) / b;
  q = where(signs_differ(mod, b), q - 1, q);
  Tensor fl = q.floor();
  fl = where((q - fl).gt(0.5), fl + 1, fl);
  const Tensor ratio = a / b;
  const Tensor negative = where(ratio.lt(0), true, where(ratio.eq(0), ratio.reciprocal().lt(0), false));
  const Tensor signed_zero = where(negative, -0.0, 0.0).to(fl.dtype());
  return where(b.eq(0), ratio, where(q.ne(0), fl, signed_zero));
}

}  // namespace

Tensor Tensor::fmod(const Tensor& other, SourceLoc loc) const {
  const LocScope at(loc);
  check_division(*this, other, "fmod");
  return binary_op(Op::Fmod, *this, other, "fmod");
}
Tensor Tensor::fmod(Scalar other, SourceLoc loc) const {
  const LocScope at(loc);
  KILN_CHECK(defined(), "fmod", "expected a defined tensor but got an undefined one");
  check_division(*this, operand(*this, other), "fmod", &other);
  return binary_op(Op::Fmod, *this, other, "fmod");
}
Tensor Tensor::remainder(const Tensor& other, SourceLoc loc) const {
  const LocScope at(loc);
  check_division(*this, other, "remainder");
  return remainder_of(other, binary_op(Op::Fmod, *this, other, "remainder"));
}
Tensor Tensor::remainder(Scalar other, SourceLoc loc) const {
  const LocScope at(loc);
  KILN_CHECK(defined(), "remainder", "expected a defined tensor but got an undefined one");
  const Tensor b = operand(*this, other);
  check_division(*this, b, "remainder", &other);
  return remainder_of(b, binary_op(Op::Fmod, *this, other, "remainder"));
}
Tensor Tensor::div(const Tensor& other, std::string_view rounding_mode, SourceLoc loc) const {
  const LocScope at(loc);
  return rounded_division(*this, other, rounding_mode);
}
Tensor Tensor::div(Scalar other, std::string_view rounding_mode, SourceLoc loc) const {
  const LocScope at(loc);
  KILN_CHECK(defined(), "div", "expected a defined tensor but got an undefined one");
  return rounded_division(*this, operand(*this, other), rounding_mode, &other);
}

}  // namespace kiln

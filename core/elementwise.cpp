// Elementwise ops: arithmetic, unary math, comparisons, where, clamp, pow,
// with PyTorch's type promotion and NumPy broadcasting. Each builds one node
// whose inputs are cast to the compute dtype and expanded to the output shape,
// in the memory order of PyTorch's output layout (core/layout.h).
#include <cmath>

#include "core/layout.h"
#include "core/ops_common.h"
#include "core/provenance.h"

namespace kiln {

// ---- promotion (torch.result_type: dim tensors > 0-dim tensors > scalars) ----
namespace {
struct ResultTypeState {
  std::optional<DType> dim, zero, wrapped;
  void add(const Tensor& t) {
    auto& slot = t.dim() > 0 ? dim : zero;
    slot = slot ? promote_types(*slot, t.dtype()) : t.dtype();
  }
  void add(const Scalar& s) {
    DType d = wrapped_scalar_dtype(s);
    wrapped = wrapped ? promote_types(*wrapped, d) : d;
  }
  static std::optional<DType> combine(std::optional<DType> higher, std::optional<DType> lower) {
    if (!higher) return lower;
    if (!lower) return higher;
    if (is_floating_point(*higher)) return higher;
    if (*higher == DType::Bool || is_floating_point(*lower)) return promote_types(*higher, *lower);
    return higher;
  }
  DType result() const { return *combine(dim, combine(zero, wrapped)); }
};



}  // namespace

DType floating_compute_type(DType t) { return is_floating_point(t) ? t : default_dtype(); }

namespace {
DType binary_compute_type(Op op, DType promoted) {
  if (op == Op::Div || op == Op::Atan2) return floating_compute_type(promoted);
  return promoted;
}

void check_binary_dtypes(Op op, DType a, DType b, const char* name) {
  if (op == Op::Sub)
    KILN_CHECK(!(a == DType::Bool && b == DType::Bool), name,
               "Subtraction, the `-` operator, with two bool tensors is not supported. Use the "
               "`^` or `logical_xor()` operator instead.");
  if (op == Op::Sub)
    KILN_CHECK(a != DType::Bool && b != DType::Bool, name,
               "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
               "trying to invert a mask, use the `~` or `logical_not()` operator instead.");
}

// The result of op over `ins` (each of the layout's value shape), with the
// layout's strides (core/layout.h: PyTorch's, computed in memory order).
Tensor finish(Op op, DType compute, const OutputLayout& layout, Device dev, NodeList ins) {
  DType out = is_comparison(op) ? DType::Bool : compute;
  return layout.make(make_node(op, out, dev, layout.value_shape(), std::move(ins)));
}

// The backward functions of the elementwise ops; each saves what its rule
// reads and nothing more (what PyTorch saves, so the same in-place writes
// are refused).
void record_binary(Op op, const Tensor& out, const Tensor& a, const Tensor& b) {
  if (!autograd::should_record({&a, &b})) return;
  autograd::FunctionPtr f;
  switch (op) {
    case Op::Add: record(GradFn::AddBackward0, out, {&a, &b}); return;
    case Op::Sub: record(GradFn::SubBackward0, out, {&a, &b}); return;
    case Op::Mul:
      f = record(GradFn::MulBackward0, out, {&a, &b});
      f->save(b, f->needs(0));
      f->save(a, f->needs(1));
      return;
    case Op::Div:
      f = record(GradFn::DivBackward0, out, {&a, &b});
      f->save(b);
      f->save(a, f->needs(1));
      return;
    case Op::Pow:
      f = record(GradFn::PowBackward1, out, {&a, &b});
      f->save(a);
      f->save(b);
      f->save_output(out);
      return;
    case Op::Atan2:
      f = record(GradFn::Atan2Backward0, out, {&a, &b});
      f->save(a);
      f->save(b);
      return;
    case Op::Fmod:
      f = record(GradFn::FmodBackward0, out, {&a, &b});
      f->save(a, f->needs(1));
      f->save(b, f->needs(1));
      return;
    case Op::Maximum:
    case Op::Minimum:
      f = record(op == Op::Maximum ? GradFn::MaximumBackward0 : GradFn::MinimumBackward0, out, {&a, &b});
      f->save(a);
      f->save(b);
      return;
    default: return;  // comparisons: not differentiable
  }
}

void record_scalar(Op op, const Tensor& out, const Tensor& a, const Scalar& s, bool scalar_first) {
  if (!autograd::should_record({&a})) return;
  autograd::FunctionPtr f;
  switch (op) {
    case Op::Add: f = record(GradFn::AddBackward0, out, {&a}); break;
    case Op::Sub: f = record(scalar_first ? GradFn::RsubBackward1 : GradFn::SubBackward0, out, {&a}); break;
    case Op::Mul: f = record(GradFn::MulBackward0, out, {&a}); break;
    case Op::Fmod: f = record(GradFn::FmodBackward1, out, {&a}); break;
    case Op::Div:
      f = record(scalar_first ? GradFn::RdivBackward0 : GradFn::DivBackward0, out, {&a});
      if (scalar_first) f->save(a);
      break;
    case Op::Pow:
      if (scalar_first) {
        f = record(GradFn::RpowBackward1, out, {&a});
        f->save_output(out);
        f->save(a);
      } else {
        f = record(GradFn::PowBackward0, out, {&a});
        f->save(a);
      }
      break;
    default: return;  // comparisons; maximum/minimum with a scalar are clamp's
  }
  f->reals.push_back(s.to_double());
}

void record_unary(Op op, const Tensor& out, const Tensor& in) {
  if (!autograd::should_record({&in})) return;
  enum { kNothing, kInput, kOutput } save = kNothing;
  GradFn kind;
  switch (op) {
    case Op::Neg: kind = GradFn::NegBackward0; break;
    case Op::Exp: kind = GradFn::ExpBackward0; save = kOutput; break;
    case Op::Log: kind = GradFn::LogBackward0; save = kInput; break;
    case Op::Sqrt: kind = GradFn::SqrtBackward0; save = kOutput; break;
    case Op::Rsqrt: kind = GradFn::RsqrtBackward0; save = kOutput; break;
    case Op::Abs: kind = GradFn::AbsBackward0; save = kInput; break;
    case Op::Sin: kind = GradFn::SinBackward0; save = kInput; break;
    case Op::Cos: kind = GradFn::CosBackward0; save = kInput; break;
    case Op::Tanh: kind = GradFn::TanhBackward0; save = kOutput; break;
    case Op::Sigmoid: kind = GradFn::SigmoidBackward0; save = kOutput; break;
    case Op::Relu: kind = GradFn::ReluBackward0; save = kOutput; break;
    case Op::Log1p: kind = GradFn::Log1pBackward0; save = kInput; break;
    case Op::Expm1: kind = GradFn::Expm1Backward0; save = kOutput; break;
    case Op::Erf: kind = GradFn::ErfBackward0; save = kInput; break;
    case Op::Tan: kind = GradFn::TanBackward0; save = kOutput; break;
    case Op::Asin: kind = GradFn::AsinBackward0; save = kInput; break;
    case Op::Acos: kind = GradFn::AcosBackward0; save = kInput; break;
    case Op::Atan: kind = GradFn::AtanBackward0; save = kInput; break;
    case Op::Sinh: kind = GradFn::SinhBackward0; save = kInput; break;
    case Op::Cosh: kind = GradFn::CoshBackward0; save = kInput; break;
    case Op::Asinh: kind = GradFn::AsinhBackward0; save = kInput; break;
    case Op::Acosh: kind = GradFn::AcoshBackward0; save = kInput; break;
    case Op::Atanh: kind = GradFn::AtanhBackward0; save = kInput; break;
    case Op::Log2: kind = GradFn::Log2Backward0; save = kInput; break;
    case Op::Log10: kind = GradFn::Log10Backward0; save = kInput; break;
    case Op::Exp2: kind = GradFn::Exp2Backward0; save = kOutput; break;
    case Op::Floor: kind = GradFn::FloorBackward0; break;
    case Op::Ceil: kind = GradFn::CeilBackward0; break;
    case Op::Round: kind = GradFn::RoundBackward0; break;
    case Op::Trunc: kind = GradFn::TruncBackward0; break;
    case Op::Sign: kind = GradFn::SignBackward0; break;
    default: return;
  }
  autograd::FunctionPtr f = record(kind, out, {&in});
  if (save == kInput) f->save(in);
  if (save == kOutput) f->save_output(out);
}
}  // namespace

DType result_type(const Tensor& a, const Tensor& b) {
  ResultTypeState s;
  s.add(a);
  s.add(b);
  return s.result();
}

DType result_type(const Tensor& a, Scalar b) {
  ResultTypeState s;
  s.add(a);
  s.add(b);
  return s.result();
}

Tensor binary_op(Op op, const Tensor& a, const Tensor& b, const char* name, bool integer_division) {
  check_same_device(name, {&a, &b});
  check_binary_dtypes(op, a.dtype(), b.dtype(), name);
  DType ct = integer_division ? result_type(a, b) : binary_compute_type(op, result_type(a, b));
  const OutputLayout layout({&a, &b}, broadcast_shapes(a.sizes(), b.sizes(), name));
  Tensor out = finish(op, ct, layout, a.device(), node_list(layout.read(a, ct, name), layout.read(b, ct, name)));
  record_binary(op, out, a, b);
  return out;
}

Tensor binary_op(Op op, const Tensor& a, const Scalar& b, const char* name, bool scalar_first) {
  KILN_CHECK(a.defined(), name, "expected a defined tensor but got an undefined one");
  check_binary_dtypes(op, a.dtype(), wrapped_scalar_dtype(b), name);
  DType ct = binary_compute_type(op, result_type(a, b));
  const OutputLayout layout(a);
  NodePtr x = layout.read(a, ct, name);
  NodePtr y = full_node(layout.value_shape(), b, ct, a.device());  // one node, computed in the kernel
  NodeList ins = scalar_first ? node_list(std::move(y), std::move(x)) : node_list(std::move(x), std::move(y));
  Tensor out = finish(op, ct, layout, a.device(), std::move(ins));
  record_scalar(op, out, a, b, scalar_first);
  return out;
}

namespace {
// op over t (defined) read as dtype `in`, producing `out`, in t's layout.
Tensor unary_node(Op op, const Tensor& t, DType in, DType out, const char* name) {
  const OutputLayout layout(t);
  return layout.make(make_node(op, out, t.device(), layout.value_shape(), node_list(layout.read(t, in, name))));
}
Tensor unary_float(Op op, const Tensor& t, const char* name) {
  node_of(t, name);  // first: an undefined t is refused under the op's name
  const DType ct = floating_compute_type(t.dtype());
  Tensor out = unary_node(op, t, ct, ct, name);
  record_unary(op, out, t);
  return out;
}
Tensor unary_same(Op op, const Tensor& t, const char* name) {
  node_of(t, name);
  Tensor out = unary_node(op, t, t.dtype(), t.dtype(), name);
  record_unary(op, out, t);
  return out;
}
// alpha * b for a + alpha * b: checked against, and computed in, the dtype
// of the whole op (PyTorch's common dtype of a and b), not b's alone.
Tensor scaled(const Tensor& a, const Tensor& b, const Scalar& alpha, const char* name) {
  KILN_CHECK(a.defined() && b.defined(), name, "expected a defined tensor but got an undefined one");
  DType common = result_type(a, b);
  KILN_CHECK(!(alpha.is_floating_point() && is_integral(common, true)), name,
             "For integral input tensors, argument alpha must not be a floating point number.");
  if (!alpha.is_floating_point() && alpha.to_long() == 1) return b;
  return binary_op(Op::Mul, b.to(common), alpha, name);
}
}  // namespace

// ---- methods ----
Tensor Tensor::add(const Tensor& o, Scalar alpha, SourceLoc loc) const {
  const LocScope at(loc);
  return binary_op(Op::Add, *this, scaled(*this, o, alpha, "add"), "add");
}
// o * alpha as one scalar, keeping it integral when both are. As for
// tensors, a floating alpha is refused when the op's dtype is integral.
static Scalar scaled_scalar(const Tensor& t, const Scalar& o, const Scalar& alpha, const char* name) {
  KILN_CHECK(t.defined(), name, "expected a defined tensor but got an undefined one");
  KILN_CHECK(!(alpha.is_floating_point() && is_integral(result_type(t, o), true)), name,
             "For integral input tensors, argument alpha must not be a floating point number.");
  if (!alpha.is_floating_point() && alpha.to_long() == 1) return o;
  if (!o.is_floating_point() && !alpha.is_floating_point())  // wraps as PyTorch's (no signed-overflow UB)
    return Scalar(static_cast<int64_t>(static_cast<uint64_t>(o.to_long()) * static_cast<uint64_t>(alpha.to_long())));
  return Scalar(o.to_double() * alpha.to_double());
}
Tensor Tensor::add(Scalar o, Scalar alpha, SourceLoc loc) const {
  const LocScope at(loc);
  return binary_op(Op::Add, *this, scaled_scalar(*this, o, alpha, "add"), "add");
}
Tensor Tensor::sub(const Tensor& o, Scalar alpha, SourceLoc loc) const {
  const LocScope at(loc);
  return binary_op(Op::Sub, *this, scaled(*this, o, alpha, "sub"), "sub");
}
Tensor Tensor::sub(Scalar o, Scalar alpha, SourceLoc loc) const {
  const LocScope at(loc);
  return binary_op(Op::Sub, *this, scaled_scalar(*this, o, alpha, "sub"), "sub");
}
Tensor Tensor::mul(const Tensor& o, SourceLoc loc) const {
  const LocScope at(loc);
  return binary_op(Op::Mul, *this, o, "mul");
}
Tensor Tensor::mul(Scalar o, SourceLoc loc) const {
  const LocScope at(loc);
  return binary_op(Op::Mul, *this, o, "mul");
}
Tensor Tensor::div(const Tensor& o, SourceLoc loc) const {
  const LocScope at(loc);
  return binary_op(Op::Div, *this, o, "div");
}
Tensor Tensor::div(Scalar o, SourceLoc loc) const {
  const LocScope at(loc);
  return binary_op(Op::Div, *this, o, "div");
}
Tensor Tensor::maximum(const Tensor& o, SourceLoc loc) const {
  const LocScope at(loc);
  return binary_op(Op::Maximum, *this, o, "maximum");
}
Tensor Tensor::minimum(const Tensor& o, SourceLoc loc) const {
  const LocScope at(loc);
  return binary_op(Op::Minimum, *this, o, "minimum");
}

Tensor Tensor::pow(const Tensor& e, SourceLoc loc) const {
  const LocScope at(loc);
  return binary_op(Op::Pow, *this, e, "pow");
}
// PyTorch's shortcuts for a tensor to a scalar power, computed as it
// computes them (bit for bit its values, and a multiply, a square root or a
// division instead of the general pow): its pow_out fills 0 and copies 1 for
// every dtype; its CPU kernel squares floating tensors for 2, and for
// float32, float64 and bfloat16 computes 3 as x * x * x, -2 as 1 / (x * x),
// 0.5, -0.5 and -1 as sqrt, rsqrt and reciprocal (float16 takes the general
// pow for those, as in PyTorch). Recorded as one PowBackward0, whose rule
// (e * x ** (e - 1)) comes back through these shortcuts.
static std::optional<Tensor> pow_shortcut(const Tensor& x, const Scalar& s) {
  const double e = s.to_double();
  const DType rt = result_type(x, s);
  const bool floating = is_floating_point(rt);
  const bool fast = rt == DType::Float32 || rt == DType::Float64 || rt == DType::BFloat16;
  Tensor out;
  {
    AutoGradMode no_grad(false);
    const Tensor y = x.to(rt);
    if (e == 0.0) out = ones_like(y);  // in y's layout, as PyTorch's fill of its output
    else if (e == 1.0) out = y.clone();
    else if (e == 2.0 && floating) out = y * y;
    else if (e == 3.0 && fast) out = y * y * y;
    else if (e == -2.0 && fast) out = (y * y).reciprocal();
    else if (e == 0.5 && fast) out = y.sqrt();
    else if (e == -0.5 && fast) out = y.rsqrt();
    else if (e == -1.0 && fast) out = y.reciprocal();
    else return std::nullopt;
  }
  if (auto f = record(GradFn::PowBackward0, out, {&x})) {
    f->save(x);
    f->reals.push_back(e);
  }
  return out;
}

Tensor Tensor::pow(Scalar e, SourceLoc loc) const {
  const LocScope at(loc);
  KILN_CHECK(!(is_integral(dtype(), true) && !e.is_floating_point() && e.to_long() < 0), "pow",
             "Integers to negative integer powers are not allowed.");
  if (defined())
    if (std::optional<Tensor> out = pow_shortcut(*this, e)) return *out;
  return binary_op(Op::Pow, *this, e, "pow");
}

Tensor Tensor::neg(SourceLoc loc) const {
  const LocScope at(loc);
  KILN_CHECK(dtype() != DType::Bool, "neg",
             "Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
             "to invert a mask, use the `~` or `logical_not()` operator instead.");
  return unary_same(Op::Neg, *this, "neg");
}
Tensor Tensor::abs(SourceLoc loc) const {
  const LocScope at(loc);
  return unary_same(Op::Abs, *this, "abs");
}
Tensor Tensor::relu(SourceLoc loc) const {
  const LocScope at(loc);
  return unary_same(Op::Relu, *this, "relu");
}
Tensor Tensor::exp(SourceLoc loc) const {
  const LocScope at(loc);
  return unary_float(Op::Exp, *this, "exp");
}
Tensor Tensor::log(SourceLoc loc) const {
  const LocScope at(loc);
  return unary_float(Op::Log, *this, "log");
}
Tensor Tensor::sqrt(SourceLoc loc) const {
  const LocScope at(loc);
  return unary_float(Op::Sqrt, *this, "sqrt");
}
Tensor Tensor::rsqrt(SourceLoc loc) const {
  const LocScope at(loc);
  return unary_float(Op::Rsqrt, *this, "rsqrt");
}
// 1 / x as a division by the tensor (integers promote to float, as PyTorch's
// reciprocal); its gradient is the division's.
Tensor Tensor::reciprocal(SourceLoc loc) const {
  const LocScope at(loc);
  return binary_op(Op::Div, *this, Scalar(1), "reciprocal", true);
}
Tensor Tensor::sin(SourceLoc loc) const {
  const LocScope at(loc);
  return unary_float(Op::Sin, *this, "sin");
}
Tensor Tensor::cos(SourceLoc loc) const {
  const LocScope at(loc);
  return unary_float(Op::Cos, *this, "cos");
}
Tensor Tensor::tanh(SourceLoc loc) const {
  const LocScope at(loc);
  return unary_float(Op::Tanh, *this, "tanh");
}
Tensor Tensor::sigmoid(SourceLoc loc) const {
  const LocScope at(loc);
  return unary_float(Op::Sigmoid, *this, "sigmoid");
}
Tensor Tensor::log1p(SourceLoc loc) const {
  const LocScope at(loc);
  return unary_float(Op::Log1p, *this, "log1p");
}
Tensor Tensor::expm1(SourceLoc loc) const {
  const LocScope at(loc);
  return unary_float(Op::Expm1, *this, "expm1");
}
Tensor Tensor::erf(SourceLoc loc) const {
  const LocScope at(loc);
  return unary_float(Op::Erf, *this, "erf");
}
Tensor Tensor::tan(SourceLoc loc) const {
  const LocScope at(loc);
  return unary_float(Op::Tan, *this, "tan");
}
Tensor Tensor::asin(SourceLoc loc) const {
  const LocScope at(loc);
  return unary_float(Op::Asin, *this, "asin");
}
Tensor Tensor::acos(SourceLoc loc) const {
  const LocScope at(loc);
  return unary_float(Op::Acos, *this, "acos");
}
Tensor Tensor::atan(SourceLoc loc) const {
  const LocScope at(loc);
  return unary_float(Op::Atan, *this, "atan");
}
Tensor Tensor::sinh(SourceLoc loc) const {
  const LocScope at(loc);
  return unary_float(Op::Sinh, *this, "sinh");
}
Tensor Tensor::cosh(SourceLoc loc) const {
  const LocScope at(loc);
  return unary_float(Op::Cosh, *this, "cosh");
}
Tensor Tensor::asinh(SourceLoc loc) const {
  const LocScope at(loc);
  return unary_float(Op::Asinh, *this, "asinh");
}
Tensor Tensor::acosh(SourceLoc loc) const {
  const LocScope at(loc);
  return unary_float(Op::Acosh, *this, "acosh");
}
Tensor Tensor::atanh(SourceLoc loc) const {
  const LocScope at(loc);
  return unary_float(Op::Atanh, *this, "atanh");
}
Tensor Tensor::log2(SourceLoc loc) const {
  const LocScope at(loc);
  return unary_float(Op::Log2, *this, "log2");
}
Tensor Tensor::log10(SourceLoc loc) const {
  const LocScope at(loc);
  return unary_float(Op::Log10, *this, "log10");
}
Tensor Tensor::exp2(SourceLoc loc) const {
  const LocScope at(loc);
  return unary_float(Op::Exp2, *this, "exp2");
}
Tensor Tensor::atan2(const Tensor& other, SourceLoc loc) const {
  const LocScope at(loc);
  return binary_op(Op::Atan2, *this, other, "atan2");
}

namespace {
// floor / ceil / round / trunc: an integer tensor comes back as a copy, as
// PyTorch's (its values are whole already); bool has no kernel there either.
Tensor rounding(Op op, const Tensor& t, const char* name) {
  node_of(t, name);
  KILN_CHECK(t.dtype() != DType::Bool, name, "\"", name, "\" not implemented for 'Bool' (shape ", t.sizes(), ")");
  if (is_integral(t.dtype(), false)) return t.clone();
  return unary_same(op, t, name);
}
}  // namespace

Tensor Tensor::floor(SourceLoc loc) const {
  const LocScope at(loc);
  return rounding(Op::Floor, *this, "floor");
}
Tensor Tensor::ceil(SourceLoc loc) const {
  const LocScope at(loc);
  return rounding(Op::Ceil, *this, "ceil");
}
Tensor Tensor::trunc(SourceLoc loc) const {
  const LocScope at(loc);
  return rounding(Op::Trunc, *this, "trunc");
}
// Half to even; with decimals, PyTorch's round(x * 10^d) / 10^d (d > 0) or
// round(x / 10^-d) * 10^-d (d < 0), with 10^|d| in x's dtype.
Tensor Tensor::round(int64_t decimals, SourceLoc loc) const {
  const LocScope at(loc);
  if (decimals == 0) return rounding(Op::Round, *this, "round");
  node_of(*this, "round");
  KILN_CHECK(kiln::is_floating_point(dtype()), "round", "\"round\" with decimals=", decimals,
             " not implemented for '", scalar_type_name(dtype()), "' (shape ", sizes(),
             "): decimals needs a floating point tensor");
  KILN_CHECK(decimals >= -308 && decimals <= 308, "round", "decimals=", decimals, " is out of range [-308, 308]");
  const Scalar ten_pow(std::pow(10.0, static_cast<double>(decimals > 0 ? decimals : -decimals)));
  if (decimals > 0) return rounding(Op::Round, *this * ten_pow, "round") / ten_pow;
  return rounding(Op::Round, *this / ten_pow, "round") * ten_pow;
}
// (0 < x) - (x < 0) in x's dtype (NaN gives 0); bool is its own sign.
Tensor Tensor::sign(SourceLoc loc) const {
  const LocScope at(loc);
  node_of(*this, "sign");
  if (dtype() == DType::Bool) return clone();
  return unary_same(Op::Sign, *this, "sign");
}
// x - trunc(x), floating tensors only (PyTorch has no integer kernel).
Tensor Tensor::frac(SourceLoc loc) const {
  const LocScope at(loc);
  node_of(*this, "frac");
  KILN_CHECK(kiln::is_floating_point(dtype()), "frac", "\"frac\" not implemented for '", scalar_type_name(dtype()),
             "' (shape ", sizes(), ")");
  return *this - trunc();
}
// PyTorch's square is pow(x, 2) (a bool tensor squares to int64).
Tensor Tensor::square(SourceLoc loc) const { return pow(Scalar(int64_t{2}), loc); }
Tensor Tensor::logical_not(SourceLoc loc) const {
  const LocScope at(loc);
  node_of(*this, "logical_not");
  return unary_node(Op::LogicalNot, *this, dtype(), DType::Bool, "logical_not");
}

Tensor Tensor::clamp(std::optional<Scalar> lo, std::optional<Scalar> hi, SourceLoc loc) const {
  const LocScope at(loc);
  KILN_CHECK(lo || hi, "clamp", "At least one of 'min' or 'max' must not be None");
  ResultTypeState s;
  s.add(*this);
  if (lo) s.add(*lo);
  if (hi) s.add(*hi);
  DType ct = s.result();
  Tensor x = to(ct);
  Tensor out = x;
  {
    AutoGradMode no_grad(false);
    if (lo) out = binary_op(Op::Maximum, out, *lo, "clamp");
    if (hi) out = binary_op(Op::Minimum, out, *hi, "clamp");
  }
  if (auto f = record(GradFn::ClampBackward1, out, {&x})) {
    f->save(x);
    f->ints = {lo.has_value(), hi.has_value()};
    f->reals = {lo ? lo->to_double() : 0.0, hi ? hi->to_double() : 0.0};
  }
  return out;
}

#define KILN_COMPARISON(method, OP)                          \
  Tensor Tensor::method(const Tensor& o, SourceLoc loc) const { \
    const LocScope at(loc);                                    \
    return binary_op(Op::OP, *this, o, #method);               \
  }                                                            \
  Tensor Tensor::method(Scalar o, SourceLoc loc) const {        \
    const LocScope at(loc);                                    \
    return binary_op(Op::OP, *this, o, #method);               \
  }
KILN_COMPARISON(eq, Eq)
KILN_COMPARISON(ne, Ne)
KILN_COMPARISON(lt, Lt)
KILN_COMPARISON(le, Le)
KILN_COMPARISON(gt, Gt)
KILN_COMPARISON(ge, Ge)
#undef KILN_COMPARISON

// ---- where ----
Tensor where(const Tensor& c, const Tensor& a, const Tensor& b, SourceLoc loc) {
  const LocScope at(loc);
  check_same_device("where", {&c, &a, &b});
  KILN_CHECK(c.dtype() == DType::Bool, "where",
             "where expected condition to be a boolean tensor, but got a tensor with dtype ",
             scalar_type_name(c.dtype()));
  DType ct = result_type(a, b);
  const OutputLayout layout({&c, &a, &b}, broadcast_shapes(broadcast_shapes(c.sizes(), a.sizes(), "where"), b.sizes(), "where"));
  Tensor out = layout.make(make_node(Op::Where, ct, a.device(), layout.value_shape(),
                                     node_list(layout.read(c, DType::Bool, "where"), layout.read(a, ct, "where"),
                                               layout.read(b, ct, "where"))));
  if (auto f = record(GradFn::WhereBackward0, out, {&c, &a, &b})) f->save(c);
  return out;
}
Tensor where(const Tensor& c, const Tensor& a, Scalar b, SourceLoc loc) {
  const LocScope at(loc);
  DType ct = result_type(a, b);
  return where(c, a.to(ct), full({}, b, TensorOptions(ct).device(a.device())));
}
Tensor where(const Tensor& c, Scalar a, const Tensor& b, SourceLoc loc) {
  const LocScope at(loc);
  DType ct = result_type(b, a);
  return where(c, full({}, a, TensorOptions(ct).device(b.device())), b.to(ct));
}
Tensor where(const Tensor& c, Scalar a, Scalar b, SourceLoc loc) {
  const LocScope at(loc);
  ResultTypeState s;
  s.add(a);
  s.add(b);
  DType ct = s.result();
  auto o = TensorOptions(ct).device(c.device());
  return where(c, full({}, a, o), full({}, b, o));
}

// ---- functional forms ----
Tensor maximum(const Tensor& a, const Tensor& b, SourceLoc loc) {
  const LocScope at(loc);
  return a.maximum(b);
}
Tensor minimum(const Tensor& a, const Tensor& b, SourceLoc loc) {
  const LocScope at(loc);
  return a.minimum(b);
}
Tensor clamp(const Tensor& t, std::optional<Scalar> lo, std::optional<Scalar> hi, SourceLoc loc) {
  const LocScope at(loc);
  return t.clamp(lo, hi);
}
Tensor pow(const Tensor& t, Scalar e, SourceLoc loc) {
  const LocScope at(loc);
  return t.pow(e);
}
Tensor pow(const Tensor& t, const Tensor& e, SourceLoc loc) {
  const LocScope at(loc);
  return t.pow(e);
}
Tensor pow(Scalar base, const Tensor& e, SourceLoc loc) {
  const LocScope at(loc);
  return binary_op(Op::Pow, e, base, "pow", true);
}

// ---- operators: the Located operand carries the expression's location ----
Tensor operator+(Located a, const Tensor& b) { return a.tensor.add(b, 1, a.loc); }
Tensor operator+(Located a, Scalar b) { return a.tensor.add(b, 1, a.loc); }
Tensor operator+(Scalar a, Located b) {
  const LocScope at(b.loc);
  return binary_op(Op::Add, b.tensor, a, "add", true);
}
Tensor operator-(Located a, const Tensor& b) { return a.tensor.sub(b, 1, a.loc); }
Tensor operator-(Located a, Scalar b) { return a.tensor.sub(b, 1, a.loc); }
Tensor operator-(Scalar a, Located b) {
  const LocScope at(b.loc);
  return binary_op(Op::Sub, b.tensor, a, "sub", true);
}
Tensor operator*(Located a, const Tensor& b) { return a.tensor.mul(b, a.loc); }
Tensor operator*(Located a, Scalar b) { return a.tensor.mul(b, a.loc); }
Tensor operator*(Scalar a, Located b) {
  const LocScope at(b.loc);
  return binary_op(Op::Mul, b.tensor, a, "mul", true);
}
Tensor operator/(Located a, const Tensor& b) { return a.tensor.div(b, a.loc); }
Tensor operator/(Located a, Scalar b) { return a.tensor.div(b, a.loc); }
Tensor operator/(Scalar a, Located b) {
  const LocScope at(b.loc);
  return binary_op(Op::Div, b.tensor, a, "div", true);
}
Tensor operator-(Located a) { return a.tensor.neg(a.loc); }
Tensor operator!(Located a) { return a.tensor.logical_not(a.loc); }
#define KILN_CMP_OPERATOR(sym, method)                                                           \
  Tensor operator sym(Located a, const Tensor& b) { return a.tensor.method(b, a.loc); } \
  Tensor operator sym(Located a, Scalar b) { return a.tensor.method(b, a.loc); }
KILN_CMP_OPERATOR(==, eq)
KILN_CMP_OPERATOR(!=, ne)
KILN_CMP_OPERATOR(<, lt)
KILN_CMP_OPERATOR(<=, le)
KILN_CMP_OPERATOR(>, gt)
KILN_CMP_OPERATOR(>=, ge)
#undef KILN_CMP_OPERATOR

}  // namespace kiln

// The LLVM CPU backend (codegen/llvm): kernels written by hand in the kernel
// IR (jit/kernel_ir.h), compiled, and run on plain buffers. Values are checked
// against hand-worked numbers and against a model of the reference evaluator
// built from core/reference/kernels.h (cast_value, compute_t) and
// core/philox.h, so agreement is bit-exact except for the float32
// transcendentals (checked in ulps against libm).
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <thread>

#include "codegen/backend.h"
#include "core/philox.h"
#include "core/reference/kernels.h"
#include "jit/kernel_ir.h"
#include "kernel_builder.h"

using namespace kiln;
using namespace kiln::test;
using reference::cast_value;
using reference::compute_t;
using reference::int_pow;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ---- ulp distances ----
int64_t ord32(float f) {
  int32_t i;
  std::memcpy(&i, &f, 4);
  return i < 0 ? int64_t{INT32_MIN} - i : i;
}
int64_t ulp32(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : 1'000'000'000;
  return std::llabs(ord32(a) - ord32(b));
}
int64_t ord64(double d) {
  int64_t i;
  std::memcpy(&i, &d, 8);
  return i < 0 ? INT64_MIN - i : i;
}
int64_t ord16(uint16_t bits) {
  return (bits & 0x8000) ? -static_cast<int64_t>(bits & 0x7FFF) : static_cast<int64_t>(bits);
}

// Distance in units in the last place of dtype t between element i of a and b
// (0 for equal values or two NaNs; 0/1 compare for non-floats).
int64_t distance(Buf& a, Buf& b, size_t i) {
  switch (a.dt) {
    case DType::Bool: return (a.as<uint8_t>()[i] != 0) != (b.as<uint8_t>()[i] != 0);
    case DType::UInt8: return a.as<uint8_t>()[i] != b.as<uint8_t>()[i];
    case DType::Int32: return a.as<int32_t>()[i] != b.as<int32_t>()[i];
    case DType::Int64: return a.as<int64_t>()[i] != b.as<int64_t>()[i];
    case DType::Float16:
    case DType::BFloat16: {
      uint16_t x = a.as<uint16_t>()[i], y = b.as<uint16_t>()[i];
      const bool bf = a.dt == DType::BFloat16;
      const float fx = bf ? float(BFloat16::from_bits(x)) : float(Half::from_bits(x));
      const float fy = bf ? float(BFloat16::from_bits(y)) : float(Half::from_bits(y));
      if (std::isnan(fx) || std::isnan(fy)) return std::isnan(fx) && std::isnan(fy) ? 0 : 1 << 20;
      return fx == fy ? 0 : std::llabs(ord16(x) - ord16(y));
    }
    case DType::Float32: {
      float x = a.as<float>()[i], y = b.as<float>()[i];
      return x == y ? 0 : ulp32(x, y);
    }
    case DType::Float64: {
      double x = a.as<double>()[i], y = b.as<double>()[i];
      if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y) ? 0 : 1 << 20;
      return x == y ? 0 : std::llabs(ord64(x) - ord64(y));
    }
  }
  return 1 << 20;
}

double as_double(Buf& b, size_t i) {
  double r = 0;
  reference::visit_dtype(b.dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    r = static_cast<double>(cast_value<double>(b.as<T>()[i]));
  });
  return r;
}

// ---- the reference model (core/reference semantics) ----
template <typename T> std::vector<T> samples() {
  if constexpr (std::is_same_v<T, bool>) {
    return {false, true};
  } else if constexpr (std::is_same_v<T, uint8_t>) {
    return {0, 1, 2, 3, 7, 100, 200, 250, 255};
  } else if constexpr (std::is_same_v<T, int32_t>) {
    return {0, 1, -1, 2, -3, 7, 1000, -100000, 65536, INT32_MAX, INT32_MIN};
  } else if constexpr (std::is_same_v<T, int64_t>) {
    return {0, 1, -1, 3, -7, int64_t{1} << 40, 123456789012, INT64_MAX, INT64_MIN};
  } else {
    std::vector<T> v;
    for (double d : {0.0, -0.0, 1.0, -1.0, 0.5, 2.5, -3.75, 1e-3, 100.0, 3.0, -2.0, 65504.0, 7e4,
                     1e30, 1.0 + 1.0 / 2048, 1.0 + 3.0 / 2048, 1e-40, 0.1, kInf, -kInf, kNaN})
      v.push_back(cast_value<T>(d));
    return v;
  }
}

int64_t wrap_neg(int64_t x) { return static_cast<int64_t>(uint64_t{0} - static_cast<uint64_t>(x)); }

// op(x [, y]) for dtype T, stored as T (or bool for comparisons / LogicalNot).
template <typename T> void model(VOp op, const T* x, const T* y, const bool* c, Buf& out, size_t n) {
  using C = compute_t<T>;
  constexpr bool fp = reference::kIsFloat<T>;
  for (size_t i = 0; i < n; ++i) {
    const C a = static_cast<C>(x[i]);
    const C b = y ? static_cast<C>(y[i]) : C(0);
    auto u = [](C v) { return static_cast<uint64_t>(v); };
    auto s = [](uint64_t v) { return static_cast<C>(static_cast<int64_t>(v)); };
    auto set = [&](auto r) { out.as<T>()[i] = cast_value<T>(r); };
    auto setb = [&](bool r) { out.as<bool>()[i] = r; };
    switch (op) {
      case VOp::Add: if constexpr (fp) set(a + b); else set(s(u(a) + u(b))); break;
      case VOp::Sub: if constexpr (fp) set(a - b); else set(s(u(a) - u(b))); break;
      case VOp::Mul: if constexpr (fp) set(a * b); else set(s(u(a) * u(b))); break;
      case VOp::Div: if constexpr (fp) set(a / b); else set(a / b); break;
      case VOp::Mod: if constexpr (!fp) set(a % b); break;
      case VOp::Pow:
        if constexpr (fp) set(std::pow(a, b)); else set(int_pow(a, b));
        break;
      case VOp::Max:
        set(reference::is_nan(a) ? a : reference::is_nan(b) ? b : a > b ? a : b);
        break;
      case VOp::Min:
        set(reference::is_nan(a) ? a : reference::is_nan(b) ? b : a < b ? a : b);
        break;
      case VOp::Neg: if constexpr (fp) set(-a); else set(wrap_neg(a)); break;
      case VOp::Abs: if constexpr (fp) set(std::fabs(a)); else set(a < 0 ? wrap_neg(a) : a); break;
      case VOp::Relu: set((a > 0 || reference::is_nan(a)) ? a : C(0)); break;
      case VOp::Exp: if constexpr (fp) set(std::exp(a)); break;
      case VOp::Log: if constexpr (fp) set(std::log(a)); break;
      case VOp::Sqrt: if constexpr (fp) set(std::sqrt(a)); break;
      case VOp::Rsqrt: if constexpr (fp) set(C(1) / std::sqrt(a)); break;
      case VOp::Sin: if constexpr (fp) set(std::sin(a)); break;
      case VOp::Cos: if constexpr (fp) set(std::cos(a)); break;
      case VOp::Tanh: if constexpr (fp) set(std::tanh(a)); break;
      case VOp::Sigmoid: if constexpr (fp) set(C(1) / (C(1) + std::exp(-a))); break;
      case VOp::Expm1: if constexpr (fp) set(std::expm1(a)); break;
      case VOp::Log1p: if constexpr (fp) set(std::log1p(a)); break;
      case VOp::Erf: if constexpr (fp) set(std::erf(a)); break;
      case VOp::Tan: if constexpr (fp) set(std::tan(a)); break;
      case VOp::Asin: if constexpr (fp) set(std::asin(a)); break;
      case VOp::Acos: if constexpr (fp) set(std::acos(a)); break;
      case VOp::Atan: if constexpr (fp) set(std::atan(a)); break;
      case VOp::Sinh: if constexpr (fp) set(std::sinh(a)); break;
      case VOp::Cosh: if constexpr (fp) set(std::cosh(a)); break;
      case VOp::Asinh: if constexpr (fp) set(std::asinh(a)); break;
      case VOp::Acosh: if constexpr (fp) set(std::acosh(a)); break;
      case VOp::Atanh: if constexpr (fp) set(std::atanh(a)); break;
      case VOp::Log2: if constexpr (fp) set(std::log2(a)); break;
      case VOp::Log10: if constexpr (fp) set(std::log10(a)); break;
      case VOp::Exp2: if constexpr (fp) set(std::exp2(a)); break;
      case VOp::Atan2: if constexpr (fp) set(std::atan2(a, b)); break;
      case VOp::Floor: if constexpr (fp) set(std::floor(a)); break;
      case VOp::Ceil: if constexpr (fp) set(std::ceil(a)); break;
      case VOp::Round: if constexpr (fp) set(std::nearbyint(a)); break;
      case VOp::Trunc: if constexpr (fp) set(std::trunc(a)); break;
      case VOp::Sign: set(static_cast<C>((C(0) < a) - (a < C(0)))); break;
      case VOp::LogicalNot: setb(!cast_value<bool>(x[i])); break;
      case VOp::Eq: setb(a == b); break;
      case VOp::Ne: setb(a != b); break;
      case VOp::Lt: setb(a < b); break;
      case VOp::Le: setb(a <= b); break;
      case VOp::Gt: setb(a > b); break;
      case VOp::Ge: setb(a >= b); break;
      case VOp::Where: out.as<T>()[i] = c[i] ? x[i] : y[i]; break;
      default: FAIL("no model for VOp ", static_cast<int>(op));
    }
  }
}

bool is_transcendental(VOp op) {
  return op == VOp::Exp || op == VOp::Log || op == VOp::Sin || op == VOp::Cos ||
         op == VOp::Tanh || op == VOp::Sigmoid || op == VOp::Pow || op == VOp::Expm1 ||
         op == VOp::Log1p || op == VOp::Erf || (op >= VOp::Tan && op <= VOp::Exp2) || op == VOp::Atan2;
}
bool is_binary(VOp op) {
  switch (op) {
    case VOp::Add: case VOp::Sub: case VOp::Mul: case VOp::Div: case VOp::Mod: case VOp::Pow: case VOp::Atan2:
    case VOp::Max: case VOp::Min: case VOp::Eq: case VOp::Ne: case VOp::Lt: case VOp::Le:
    case VOp::Gt: case VOp::Ge: return true;
    default: return false;
  }
}
bool gives_bool(VOp op) {
  return op == VOp::LogicalNot || op == VOp::Eq || op == VOp::Ne || op == VOp::Lt ||
         op == VOp::Le || op == VOp::Gt || op == VOp::Ge;
}

// Compiles out[i] = op(in[i]...) over n = params[0] elements.
jit::KernelFn compile_map(VOp op, DType in_dt, DType out_dt, int arity, bool where = false) {
  KB kb("map");
  std::vector<int> ins;
  if (where) ins.push_back(kb.buffer(kBool, false));
  for (int j = 0; j < arity; ++j) ins.push_back(kb.buffer(in_dt, false));
  const int out = kb.buffer(out_dt, true);
  const ValueId n = kb.param(0);
  const ValueId i = kb.idx(0);
  std::vector<ValueId> args;
  for (int b : ins) args.push_back(kb.load(b, i));
  jit::Value v{op, out_dt};
  for (size_t j = 0; j < args.size(); ++j) v.args[j] = args[j];
  const ValueId r = kb.k.add(v);
  kb.k.body.push_back(loop(0, n, true, {store(out, i, r)}));
  return be().compile(kb.k).fn;
}

template <typename T> void check_ops_for() {
  const DType dt = dtype_of<T>::value;
  constexpr bool fp = reference::kIsFloat<T>;
  const std::vector<T> s = samples<T>();
  const std::vector<VOp> ops = {
      VOp::Add, VOp::Sub, VOp::Mul, VOp::Div, VOp::Mod, VOp::Pow, VOp::Max, VOp::Min,
      VOp::Neg, VOp::Abs, VOp::Exp, VOp::Log, VOp::Sqrt, VOp::Rsqrt, VOp::Sin, VOp::Cos,
      VOp::Tanh, VOp::Sigmoid, VOp::Relu, VOp::LogicalNot, VOp::Eq, VOp::Ne, VOp::Lt,
      VOp::Le, VOp::Gt, VOp::Ge, VOp::Where, VOp::Expm1, VOp::Log1p, VOp::Erf, VOp::Floor,
      VOp::Ceil, VOp::Round, VOp::Trunc, VOp::Sign, VOp::Atan2, VOp::Tan, VOp::Asin, VOp::Acos,
      VOp::Atan, VOp::Sinh, VOp::Cosh, VOp::Asinh, VOp::Acosh, VOp::Atanh, VOp::Log2, VOp::Log10, VOp::Exp2};
  for (VOp op : ops) {
    const bool float_only = (op >= VOp::Exp && op <= VOp::Sigmoid) ||  // Exp .. Sigmoid
                            (op >= VOp::Floor && op <= VOp::Trunc) || (op >= VOp::Tan && op <= VOp::Exp2) ||
                            op == VOp::Atan2;
    if (float_only && !fp) continue;
    if (op == VOp::Div && !fp && dt != DType::Int64) continue;  // index arithmetic only
    if (op == VOp::Mod && fp) continue;
    CAPTURE(dt);
    CAPTURE(static_cast<int>(op));
    // operands: all pairs for binary ops (non-negative, non-zero divisors for Div / Mod on ints)
    std::vector<T> xs, ys;
    std::vector<uint8_t> cs;
    const bool bin = is_binary(op) || op == VOp::Where;
    for (size_t p = 0; p < s.size(); ++p)
      for (size_t q = 0; q < (bin ? s.size() : 1); ++q) {
        if constexpr (!fp) {
          if ((op == VOp::Mod || op == VOp::Div) && (s[p] < T(0) || !(s[q] > T(0)))) continue;
        }
        xs.push_back(s[p]);
        ys.push_back(s[q]);
        cs.push_back(static_cast<uint8_t>((p + q) % 2));
      }
    const size_t n = xs.size();
    Buf a(dt, n), b(dt, n), c(kBool, n);
    for (size_t i = 0; i < n; ++i) {
      a.as<T>()[i] = xs[i];
      b.as<T>()[i] = ys[i];
    }
    std::memcpy(c.ptr(), cs.data(), n);
    const DType out_dt = gives_bool(op) ? kBool : dt;
    Buf got(out_dt, n), want(out_dt, n);
    const int arity = bin ? 2 : 1;
    jit::KernelFn fn = compile_map(op, dt, out_dt, arity, op == VOp::Where);
    if (op == VOp::Where) run(fn, {&c, &a, &b, &got}, {static_cast<int64_t>(n)}, 0, n);
    else if (arity == 2) run(fn, {&a, &b, &got}, {static_cast<int64_t>(n)}, 0, n);
    else run(fn, {&a, &got}, {static_cast<int64_t>(n)}, 0, n);
    model<T>(op, a.as<T>(), arity == 2 || op == VOp::Where ? b.as<T>() : nullptr,
             c.as<bool>(), want, n);
    const int64_t tol = (is_transcendental(op) && dt != DType::Float64) ? 2 : 0;
    for (size_t i = 0; i < n; ++i) {
      CAPTURE(i);
      CAPTURE(as_double(a, i));
      CAPTURE(as_double(b, i));
      CAPTURE(as_double(got, i));
      CAPTURE(as_double(want, i));
      CHECK(distance(got, want, i) <= tol);
    }
  }
  // Cast to every dtype
  for (DType to : {kBool, kUInt8, kInt32, kInt64, kFloat16, kBFloat16, kFloat32, kFloat64}) {
    CAPTURE(dt);
    CAPTURE(to);
    const size_t n = s.size();
    Buf a(dt, n), got(to, n), want(to, n);
    for (size_t i = 0; i < n; ++i) a.as<T>()[i] = s[i];
    run(compile_map(VOp::Cast, dt, to, 1), {&a, &got}, {static_cast<int64_t>(n)}, 0, n);
    reference::visit_dtype(to, [&](auto tag) {
      using To = typename decltype(tag)::type;
      for (size_t i = 0; i < n; ++i) want.as<To>()[i] = cast_value<To>(s[i]);
    });
    for (size_t i = 0; i < n; ++i) {
      CAPTURE(as_double(a, i));
      CHECK(distance(got, want, i) == 0);
    }
  }
}

}  // namespace

TEST_CASE("llvm: the backend is available and names its target") {
  if (!be().available()) {  // the stub: compile() must throw kiln::Error, not abort
    KB kb("k");
    CHECK_THROWS_AS(be().compile(kb.k), Error);
    return;
  }
  CHECK(std::string(be().name()) == "llvm");
  const std::string id = be().target_id();
  CHECK(id.rfind("llvm-19.", 0) == 0);
  CHECK(id.find('/') != std::string::npos);
  MESSAGE("target id: ", id.substr(0, 60), "...");
}

TEST_CASE("llvm: strided 2-D add with runtime params, one kernel for two shapes, begin/end") {
  KILN_SKIP_WITHOUT_LLVM();
  // out[i*p2 + j] = a[i*p3 + j*p4] + b[i*p5 + j], i < p0 (parallel), j < p1
  KB kb("add2d");
  const int a = kb.buffer(kFloat32, false), b = kb.buffer(kFloat32, false);
  const int out = kb.buffer(kFloat32, true);
  const ValueId rows = kb.param(0), cols = kb.param(1);
  const ValueId i = kb.idx(0), j = kb.idx(1);
  const ValueId ia = kb.add(kb.mul(i, kb.param(3)), kb.mul(j, kb.param(4)));
  const ValueId ib = kb.add(kb.mul(i, kb.param(5)), j);
  const ValueId io = kb.add(kb.mul(i, kb.param(2)), j);
  const ValueId sum = kb.add(kb.load(a, ia), kb.load(b, ib));
  kb.k.body.push_back(loop(0, rows, true, {loop(1, cols, false, {store(out, io, sum)})}));
  jit::KernelFn fn = be().compile(kb.k).fn;
  REQUIRE(static_cast<bool>(fn));

  // shape (2, 3): a is the transpose of a (3, 2) row-major buffer, b row-major
  Buf A(kFloat32, 6), B(kFloat32, 6), O(kFloat32, 6);
  for (int x = 0; x < 6; ++x) {
    A.as<float>()[x] = static_cast<float>(x);        // [[0,1],[2,3],[4,5]] -> a^T = [[0,2,4],[1,3,5]]
    B.as<float>()[x] = static_cast<float>(10 * x);   // [[0,10,20],[30,40,50]]
  }
  run(fn, {&A, &B, &O}, {2, 3, 3, 1, 2, 3}, 0, 2);
  const float want1[6] = {0, 12, 24, 31, 43, 55};
  for (int x = 0; x < 6; ++x) CHECK(O.as<float>()[x] == want1[x]);

  // shape (3, 2), all row-major, into an output with row stride 4
  Buf O2(kFloat32, 12);
  run(fn, {&A, &B, &O2}, {3, 2, 4, 2, 1, 2}, 0, 3);
  const float want2[12] = {0, 11, 0, 0, 22, 33, 0, 0, 44, 55, 0, 0};
  for (int x = 0; x < 12; ++x) CHECK(O2.as<float>()[x] == want2[x]);

  // begin / end: only row 1; an end past the extent is clamped to it
  Buf O3(kFloat32, 12);
  run(fn, {&A, &B, &O3}, {3, 2, 4, 2, 1, 2}, 1, 2);
  for (int x = 0; x < 12; ++x) CHECK(O3.as<float>()[x] == (x == 4 || x == 5 ? want2[x] : 0.0f));
  Buf O4(kFloat32, 12);
  run(fn, {&A, &B, &O4}, {3, 2, 4, 2, 1, 2}, 2, 100);
  for (int x = 0; x < 12; ++x) CHECK(O4.as<float>()[x] == (x >= 8 ? want2[x] : 0.0f));
  run(fn, {&A, &B, &O4}, {3, 2, 4, 2, 1, 2}, 2, 2);  // empty slice: nothing happens
}

TEST_CASE("llvm: loop strength reduction runs on loops that step by a runtime stride, only there") {
  KILN_SKIP_WITHOUT_LLVM();
  // out[i*p1 + j] = 2 a[i*p2 + j*p3]: the inner loop reads with stride p3
  // (x[:, ::2] * 2), an address that strength reduction turns into a pointer
  // bump (LSR's phis are named lsr.iv); a contiguous row (a[i*p2 + j]) is one
  // addressing mode already and is left alone
  for (bool strided : {true, false}) {
    CAPTURE(strided);
    KB kb(strided ? "strided" : "rows");
    const int a = kb.buffer(kFloat32, false), out = kb.buffer(kFloat32, true);
    const ValueId i = kb.idx(0), j = kb.idx(1);
    const ValueId ia = kb.add(kb.mul(i, kb.param(2)), strided ? kb.mul(j, kb.param(3)) : j);
    const ValueId io = kb.add(kb.mul(i, kb.param(1)), j);
    const ValueId v = kb.load(a, ia);
    kb.k.body.push_back(loop(0, kb.param(0), true, {loop(1, kb.param(1), false, {store(out, io, kb.add(v, v))})}));
    const codegen::CompiledKernel ck = be().compile(kb.k, true, false);
    REQUIRE(static_cast<bool>(ck.fn));
    CHECK((ck.llvm_ir.find("%lsr.iv") != std::string::npos) == strided);
    // and it computes: 3 rows of 37, from a [3, 111] buffer read with step 3
    // (strided) or a [3, 40] one read row by row
    Buf A(kFloat32, 333), O(kFloat32, 111);
    for (int x = 0; x < 333; ++x) A.as<float>()[x] = static_cast<float>(x);
    const int64_t row = strided ? 111 : 40;
    run(ck.fn, {&A, &O}, {3, 37, row, strided ? 3 : 1}, 0, 3);
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 37; ++c) {
        const int64_t from = r * row + c * (strided ? 3 : 1);
        CHECK(O.as<float>()[r * 37 + c] == 2.0f * static_cast<float>(from));
      }
  }
}

TEST_CASE("llvm: a Float64 Param reads the slot's 64 bits as a double") {
  KILN_SKIP_WITHOUT_LLVM();
  // out[i] = x[i] / p1 (p1 holds a double's bits), over p0 elements
  KB kb("div_param");
  const int in = kb.buffer(kFloat64, false), out = kb.buffer(kFloat32, true);
  const ValueId i = kb.idx(0);
  const ValueId n = kb.param(0);
  kb.param(1);
  const ValueId d = kb.val(VOp::Param, kFloat64, {}, 1);
  const ValueId q = kb.val(VOp::Div, kFloat64, {kb.load(in, i), d});
  kb.k.body.push_back(loop(0, n, true, {store(out, i, q)}));
  const double divisor = 4.0;
  int64_t bits;
  std::memcpy(&bits, &divisor, 8);
  Buf x(kFloat64, 3), o(kFloat32, 3);
  for (int j = 0; j < 3; ++j) x.as<double>()[j] = j + 1;
  run(be().compile(kb.k).fn, {&x, &o}, {3, bits}, 0, 3);
  CHECK(o.as<float>()[0] == 0.25f);
  CHECK(o.as<float>()[2] == 0.75f);
}

TEST_CASE("llvm: hand-worked wrapping, rounding and casts") {
  KILN_SKIP_WITHOUT_LLVM();
  auto one = [](VOp op, DType dt, DType out_dt, std::vector<double> x, std::vector<double> y) {
    const size_t n = x.size();
    Buf a(dt, n), b(dt, n), o(out_dt, n);
    reference::visit_dtype(dt, [&](auto tag) {
      using T = typename decltype(tag)::type;
      for (size_t i = 0; i < n; ++i) {
        a.as<T>()[i] = cast_value<T>(x[i]);
        if (!y.empty()) b.as<T>()[i] = cast_value<T>(y[i]);
      }
    });
    if (y.empty()) run(compile_map(op, dt, out_dt, 1), {&a, &o}, {static_cast<int64_t>(n)}, 0, n);
    else run(compile_map(op, dt, out_dt, 2), {&a, &b, &o}, {static_cast<int64_t>(n)}, 0, n);
    std::vector<double> r;
    for (size_t i = 0; i < n; ++i) r.push_back(as_double(o, i));
    return r;
  };
  using V = std::vector<double>;
  // int32 and uint8 wrap
  CHECK(one(VOp::Add, kInt32, kInt32, {2147483647, -2147483648.0}, {1, -1}) ==
        V{-2147483648.0, 2147483647});
  CHECK(one(VOp::Mul, kInt32, kInt32, {65536}, {65536}) == V{0});
  CHECK(one(VOp::Add, kUInt8, kUInt8, {250, 0}, {10, 0}) == V{4, 0});
  CHECK(one(VOp::Sub, kUInt8, kUInt8, {3}, {5}) == V{254});
  CHECK(one(VOp::Neg, kUInt8, kUInt8, {1}, {}) == V{255});
  CHECK(one(VOp::Pow, kInt64, kInt64, {3, 2, -1, -1, 2, 1}, {4, 62, -3, -2, -1, -5}) ==
        V{81, 4611686018427387904.0, -1, 1, 0, 1});
  CHECK(one(VOp::Pow, kInt32, kInt32, {2}, {31}) == V{-2147483648.0});
  // float16: 1 + 2^-11 is a tie -> 1 (even); 1 + 3*2^-11 -> 1 + 2^-9; 65504 + 16 -> inf
  CHECK(one(VOp::Add, kFloat16, kFloat16, {1, 1, 65504, 1e-4}, {1.0 / 2048, 3.0 / 2048, 16, 0}) ==
        V{1, 1 + 1.0 / 512, kInf, 0.00010001659393310547});
  // bfloat16: 1 + 2^-8 is a tie -> 1; 1 + 3*2^-8 -> 1 + 2^-6
  CHECK(one(VOp::Add, kBFloat16, kBFloat16, {1, 1}, {1.0 / 256, 3.0 / 256}) ==
        V{1, 1 + 1.0 / 64});
  // casts: NaN / inf / out of range -> INT64_MIN then wrap; truncation toward zero
  CHECK(one(VOp::Cast, kFloat32, kInt64, {kNaN, kInf, -2.9, 2.9, 1e19}, {}) ==
        V{-9223372036854775808.0, -9223372036854775808.0, -2, 2, -9223372036854775808.0});
  CHECK(one(VOp::Cast, kFloat64, kInt32, {kNaN, 3e9, -1.5}, {}) == V{0, -1294967296.0, -1});
  CHECK(one(VOp::Cast, kFloat32, kUInt8, {300.7, -1, kNaN}, {}) == V{44, 255, 0});
  CHECK(one(VOp::Cast, kFloat32, kBool, {kNaN, 0.0, -0.0, 1e-40}, {}) == V{1, 0, 0, 1});
  CHECK(one(VOp::Cast, kInt64, kFloat32, {16777217}, {}) == V{16777216});
  CHECK(one(VOp::Cast, kFloat64, kFloat16, {1.0 + 1.0 / 2048 + 1e-12, 1e-8}, {}) ==
        V{1, 0});  // double -> float -> half: the tiny excess is lost in the first rounding
  CHECK(one(VOp::Cast, kInt32, kUInt8, {-1, 256, 511}, {}) == V{255, 0, 255});
  // Max / Min propagate NaN; Relu keeps NaN
  const V mx = one(VOp::Max, kFloat32, kFloat32, {1, kNaN, 2}, {kNaN, 1, -kInf});
  CHECK(std::isnan(mx[0]));
  CHECK(std::isnan(mx[1]));
  CHECK(mx[2] == 2);
  const V relu = one(VOp::Relu, kFloat32, kFloat32, {kNaN, -1, 2}, {});
  CHECK(std::isnan(relu[0]));
  CHECK(relu[1] == 0);
  CHECK(relu[2] == 2);
  CHECK(one(VOp::Ne, kFloat32, kBool, {kNaN, 1}, {kNaN, 1}) == V{1, 0});
  CHECK(one(VOp::Lt, kBool, kBool, {0, 1}, {1, 0}) == V{1, 0});
}

TEST_CASE("llvm: every VOp on every dtype matches the reference model") {
  KILN_SKIP_WITHOUT_LLVM();
  check_ops_for<bool>();
  check_ops_for<uint8_t>();
  check_ops_for<int32_t>();
  check_ops_for<int64_t>();
  check_ops_for<Half>();
  check_ops_for<BFloat16>();
  check_ops_for<float>();
  check_ops_for<double>();
}

namespace {

// A row reduction: out[i] = combine_j in[i*cols + j] (i < p0 parallel, j < p1).
jit::KernelFn compile_reduce(jit::Combiner c, DType in_dt, DType acc_dt, DType out_dt) {
  KB kb("reduce");
  const int in = kb.buffer(in_dt, false), out = kb.buffer(out_dt, true);
  const int acc = kb.acc(c, acc_dt);
  const ValueId rows = kb.param(0), cols = kb.param(1);
  const ValueId i = kb.idx(0), j = kb.idx(1);
  const ValueId x = kb.load(in, kb.add(kb.mul(i, cols), j));
  const bool arg = c == jit::Combiner::ArgMax || c == jit::Combiner::ArgMin;
  const DType read_dt = arg ? kInt64 : acc_dt;
  const ValueId r = kb.val(VOp::AccRead, read_dt, {}, acc);
  const ValueId res = read_dt == out_dt ? r : kb.val(VOp::Cast, out_dt, {r});
  kb.k.body.push_back(loop(0, rows, true,
                           {acc_init(acc), loop(1, cols, false, {acc_update(acc, x, arg ? j : -1)}),
                            store(out, i, res)}));
  return be().compile(kb.k).fn;
}

std::vector<double> reduce_rows(jit::Combiner c, DType in_dt, DType acc_dt, DType out_dt,
                                const std::vector<double>& v, int64_t rows, int64_t cols) {
  Buf in(in_dt, v.size()), out(out_dt, rows);
  reference::visit_dtype(in_dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (size_t i = 0; i < v.size(); ++i) in.as<T>()[i] = cast_value<T>(v[i]);
  });
  run(compile_reduce(c, in_dt, acc_dt, out_dt), {&in, &out}, {rows, cols}, 0, rows);
  std::vector<double> r;
  for (int64_t i = 0; i < rows; ++i) r.push_back(as_double(out, i));
  return r;
}

}  // namespace

TEST_CASE("llvm: reductions") {
  KILN_SKIP_WITHOUT_LLVM();
  using C = jit::Combiner;
  using V = std::vector<double>;
  // float32 summed in float64: in float32, 1e8 + 1 would lose the 1
  CHECK(reduce_rows(C::Sum, kFloat32, kFloat64, kFloat32, {1e8, 1, -1e8, 1, 0.5, 0.25, 0, 0}, 2,
                    4) == V{2, 0.75});
  // large sum to exercise the vectorized loop: 0..999
  {
    V v(1000);
    for (int x = 0; x < 1000; ++x) v[x] = x;
    CHECK(reduce_rows(C::Sum, kFloat32, kFloat64, kFloat64, v, 1, 1000) == V{499500});
    CHECK(reduce_rows(C::Sum, kInt32, kInt64, kInt64, v, 2, 500) == V{124750, 374750});
  }
  CHECK(reduce_rows(C::Prod, kInt64, kInt64, kInt64, {4294967296.0, 4294967296.0, 3, 5}, 2, 2) ==
        V{0, 15});
  CHECK(reduce_rows(C::Prod, kFloat16, kFloat64, kFloat16, {300, 300}, 1, 2) == V{kInf});
  // Max with NaN and -inf; Min on int32
  const V mx = reduce_rows(C::Max, kFloat32, kFloat32, kFloat32,
                           {1, kNaN, 3, -kInf, -kInf, -kInf, 2, 5, 1}, 3, 3);
  CHECK(std::isnan(mx[0]));
  CHECK(mx[1] == -kInf);
  CHECK(mx[2] == 5);
  CHECK(reduce_rows(C::Min, kInt32, kInt32, kInt32, {5, -7, 3, 2147483647.0}, 2, 2) ==
        V{-7, 3});
  CHECK(reduce_rows(C::Max, kUInt8, kUInt8, kUInt8, {5, 255, 0, 0}, 2, 2) == V{255, 0});
  // -0 orders below +0 (IEEE maximum / minimum): a zero's sign does not
  // depend on where it sits.
  for (const V& z : {V{-0.0, 0.0, 0.0, -0.0}}) {
    const V hi = reduce_rows(C::Max, kFloat32, kFloat32, kFloat32, z, 2, 2);
    const V lo = reduce_rows(C::Min, kFloat64, kFloat64, kFloat64, z, 2, 2);
    CHECK((!std::signbit(hi[0]) && !std::signbit(hi[1])));
    CHECK((std::signbit(lo[0]) && std::signbit(lo[1])));
  }
  // Long rows run the vectorized loop (llvm.maximum / llvm.minimum lanes):
  // a NaN anywhere wins, else the extreme wherever it sits.
  for (DType dt : {kFloat32, kFloat64}) {
    V v(3 * 1000);
    for (int x = 0; x < 3000; ++x) v[x] = std::sin(0.37 * x);
    v[1000 + 517] = kNaN;   // row 1
    v[2000 + 999] = 7.5;    // row 2: the max is the last element
    v[2000 + 3] = -9.25;    // and the min an early one
    const V hi = reduce_rows(C::Max, dt, dt, dt, v, 3, 1000);
    const V lo = reduce_rows(C::Min, dt, dt, dt, v, 3, 1000);
    double want_hi = -kInf, want_lo = kInf;
    for (int x = 0; x < 1000; ++x) {
      want_hi = std::max(want_hi, dt == kFloat32 ? double(float(v[x])) : v[x]);
      want_lo = std::min(want_lo, dt == kFloat32 ? double(float(v[x])) : v[x]);
    }
    CHECK(hi[0] == want_hi);
    CHECK(lo[0] == want_lo);
    CHECK(std::isnan(hi[1]));
    CHECK(std::isnan(lo[1]));
    CHECK(hi[2] == 7.5);
    CHECK(lo[2] == -9.25);
  }
  // ArgMax / ArgMin: first index of the extreme; NaN is the extreme; all -inf -> 0
  CHECK(reduce_rows(C::ArgMax, kFloat32, kFloat32, kInt64,
                    {1, 5, 5, 2, 1, kNaN, 7, kNaN, -kInf, -kInf, -kInf, -kInf}, 3, 4) ==
        V{1, 1, 0});
  CHECK(reduce_rows(C::ArgMin, kFloat64, kFloat64, kInt64, {3, 1, 1, kNaN, 2, kInf, kInf, 0}, 2,
                    4) == V{3, 3});
  CHECK(reduce_rows(C::ArgMax, kInt64, kInt64, kInt64, {-9, -9, -9, 4, 4, 1}, 2, 3) == V{0, 0});
  CHECK(reduce_rows(C::ArgMin, kBool, kBool, kInt64, {1, 0, 0, 1, 1, 1}, 2, 3) == V{1, 0});
  // All / Any: NaN is true, zero false; empty rows give the identities
  CHECK(reduce_rows(C::All, kFloat32, kBool, kBool, {1, kNaN, -1, 0, 2, 3}, 2, 3) == V{1, 0});
  CHECK(reduce_rows(C::Any, kFloat32, kBool, kBool, {0, -0.0, 0, 0, kNaN, 0}, 2, 3) == V{0, 1});
  CHECK(reduce_rows(C::All, kInt32, kBool, kBool, {}, 2, 0) == V{1, 1});
  CHECK(reduce_rows(C::Any, kInt32, kBool, kBool, {}, 2, 0) == V{0, 0});
  CHECK(reduce_rows(C::Sum, kFloat32, kFloat64, kFloat32, {}, 2, 0) == V{0, 0});
}

namespace {

// out[i] = Philox(i + p2) with seed p0, offset p1, as dtype dt.
// A kernel storing values start + x of a Philox op for x < n (params: seed,
// offset, start, n).
jit::Kernel philox_kernel(Op op, DType dt, double f0, double f1, int64_t i0, int64_t i1) {
  KB kb("rand");
  const int out = kb.buffer(dt, true);
  const ValueId i = kb.idx(0);
  kb.param(0);
  kb.param(1);
  jit::Value v{VOp::Philox, dt};
  v.a = 0;
  v.b = 1;
  v.args[0] = kb.add(i, kb.param(2));
  v.random_op = op;
  v.f = f0;
  v.f1 = f1;
  v.i = i0;
  v.i1 = i1;
  const ValueId r = kb.k.add(v);
  kb.k.body.push_back(loop(0, kb.param(3), true, {store(out, i, r)}));
  return kb.k;
}

std::vector<double> philox_values(Op op, DType dt, double f0, double f1, int64_t i0, int64_t i1,
                                  uint64_t seed, uint64_t offset, int64_t start, int64_t n) {
  Buf o(dt, n);
  run(be().compile(philox_kernel(op, dt, f0, f1, i0, i1)).fn, {&o},
      {static_cast<int64_t>(seed), static_cast<int64_t>(offset), start, n}, 0, n);
  std::vector<double> res;
  for (int64_t x = 0; x < n; ++x) res.push_back(as_double(o, x));
  return res;
}

}  // namespace

TEST_CASE("llvm: Philox values equal core/philox.h") {
  KILN_SKIP_WITHOUT_LLVM();
  const uint64_t seed = 0x9E3779B97F4A7C15ull, offset = 0xFFFFFFFFFFFFFF00ull;  // counter wraps
  const int64_t start = 200, n = 301;
  auto blk = [&](int64_t x) { return philox_element(seed, offset, static_cast<uint64_t>(start + x)); };
  {
    const auto got = philox_values(Op::RandUniform, kFloat32, -2, 3, 0, 0, seed, offset, start, n);
    for (int64_t x = 0; x < n; ++x) {
      const float low = -2.0f, high = 3.0f;
      CHECK(got[x] == static_cast<double>(low + (high - low) * philox_uniform_float(blk(x))));
    }
  }
  {
    const auto got = philox_values(Op::RandUniform, kFloat16, 0, 1, 0, 0, seed, offset, start, n);
    for (int64_t x = 0; x < n; ++x)
      CHECK(got[x] == static_cast<double>(float(Half(0.0f + 1.0f * philox_uniform_float(blk(x))))));
  }
  {
    const auto got = philox_values(Op::RandUniform, kFloat64, -1, 5, 0, 0, seed, offset, start, n);
    for (int64_t x = 0; x < n; ++x) CHECK(got[x] == -1.0 + 6.0 * philox_uniform_double(blk(x)));
  }
  {
    const auto got = philox_values(Op::RandNormal, kFloat64, 1, 2, 0, 0, seed, offset, start, n);
    for (int64_t x = 0; x < n; ++x) CHECK(got[x] == 1.0 + 2.0 * philox_normal_double(blk(x)));
    const auto gotf = philox_values(Op::RandNormal, kFloat32, 0, 1, 0, 0, seed, offset, start, n);
    for (int64_t x = 0; x < n; ++x)
      CHECK(gotf[x] == static_cast<double>(static_cast<float>(0.0 + 1.0 * philox_normal_double(blk(x)))));
  }
  {
    const auto got = philox_values(Op::RandInt, kInt64, 0, 0, -5, 17, seed, offset, start, n);
    for (int64_t x = 0; x < n; ++x) CHECK(got[x] == static_cast<double>(philox_randint(blk(x), -5, 17)));
    const auto got32 = philox_values(Op::RandInt, kInt32, 0, 0, 0, int64_t{1} << 40, seed, offset,
                                     start, n);
    for (int64_t x = 0; x < n; ++x)
      CHECK(got32[x] == static_cast<double>(static_cast<int32_t>(philox_randint(blk(x), 0, int64_t{1} << 40))));
  }
}

// The compile-time shape of a random kernel's loop (philox.cpp): the
// generator is a lane function whose vector variant the vectorized loop
// inlined (no call of it remains), its first round inline and the other
// nine one round in a loop of their own: the optimized IR multiplies by kM0
// twice, both times a vector, and the round's block branches back to
// itself. The loop's tail is folded (lower_kernel.cpp): the last partial
// vector stores through a mask, and no scalar remainder repeats the round.
TEST_CASE("llvm: a compiled random loop runs Philox's rounds as a loop of one round") {
  KILN_SKIP_WITHOUT_LLVM();
  const std::string m0 = std::to_string(philox_detail::kM0);
  for (Op op : {Op::RandUniform, Op::RandNormal}) {
    const std::string name = op_name(op);
    CAPTURE(name);
    const codegen::CompiledKernel ck = be().compile(philox_kernel(op, kFloat32, 0, 1, 0, 0), true, true);
    int vector_rounds = 0, scalar_rounds = 0;
    bool round_loops = false;
    std::istringstream ir(ck.llvm_ir);
    for (std::string line; std::getline(ir, line);) {
      if (line.find(" mul ") != std::string::npos && line.find(m0) != std::string::npos)
        ++(line.find(" x i64> ") != std::string::npos ? vector_rounds : scalar_rounds);
      if (line.find("br i1") != std::string::npos && line.find("label %philox.round") != std::string::npos)
        round_loops = true;
    }
    CHECK(vector_rounds == 2);
    CHECK(scalar_rounds == 0);
    CHECK(round_loops);
    CHECK(ck.llvm_ir.find("@kiln.philox.v") == std::string::npos);  // inlined
    CHECK(ck.llvm_ir.find("@llvm.masked.store") != std::string::npos);
  }
  // and the values are still Philox's (the full check is the test above),
  // for a loop shorter than one vector too: all of it in the masked tail
  for (int64_t n : {40, 5}) {
    const auto got = philox_values(Op::RandUniform, kFloat32, 0, 1, 0, 0, 7, 0, 3, n);
    for (int64_t x = 0; x < n; ++x)
      CHECK(got[x] == static_cast<double>(philox_uniform_float(philox_element(7, 0, 3 + x))));
  }
}

namespace {

struct Accuracy {
  int64_t vs_libm = 0;     // max ulp vs std:: in float
  int64_t vs_double = 0;   // max ulp vs the double libm function rounded to float
};

std::vector<float> accuracy_inputs(float lo, float hi) {
  std::vector<float> v;
  // every float's neighbourhood: a sweep of the whole bit space (denormals, inf, NaN included)
  for (uint64_t bits = 0; bits < (uint64_t{1} << 32); bits += 40009) {
    float f;
    const uint32_t b32 = static_cast<uint32_t>(bits);
    std::memcpy(&f, &b32, 4);
    v.push_back(f);
  }
  std::mt19937 g(42);
  std::uniform_real_distribution<float> u(lo, hi), s(-1.0f, 1.0f);
  for (int x = 0; x < 60000; ++x) v.push_back(u(g));
  for (int x = 0; x < 20000; ++x) v.push_back(s(g) * 1e-3f);
  const float inf = std::numeric_limits<float>::infinity();
  for (float f : {0.0f, -0.0f, 1.0f, -1.0f, inf, -inf, std::numeric_limits<float>::quiet_NaN(),
                  1e-45f, -1e-45f, 1.17549435e-38f, 88.72283f, 88.72284f, -87.33655f, -103.97208f,
                  -104.0f, 3.4028235e38f, -3.4028235e38f, 1.5707964f, 3.1415927f, 6.2831855f,
                  1e10f, 1.6263033e25f, 9.0f, 10.0f, 20.0f, -20.0f, 1e-8f, 0.5f})
    v.push_back(f);
  return v;
}

template <typename F, typename D>
Accuracy measure_unary(VOp op, float lo, float hi, F libm, D dbl) {
  const std::vector<float> in = accuracy_inputs(lo, hi);
  const size_t n = in.size();
  Buf a(kFloat32, n), o(kFloat32, n);
  std::memcpy(a.ptr(), in.data(), n * 4);
  run(compile_map(op, kFloat32, kFloat32, 1), {&a, &o}, {static_cast<int64_t>(n)}, 0, n);
  Accuracy acc;
  for (size_t i = 0; i < n; ++i) {
    const float got = o.as<float>()[i];
    const int64_t u1 = ulp32(got, libm(in[i]));
    const int64_t u2 = ulp32(got, static_cast<float>(dbl(static_cast<double>(in[i]))));
    if (u1 > 2) {
      CAPTURE(in[i]);
      CAPTURE(got);
      CHECK(u1 <= 2);
    }
    acc.vs_libm = std::max(acc.vs_libm, u1);
    acc.vs_double = std::max(acc.vs_double, u2);
  }
  CHECK(n >= 100000);
  return acc;
}

// A binary function on pairs (xs[i], ys[i]): within 2 ulp of libm's float
// function, with its sign (zeros included).
template <typename F, typename D>
Accuracy measure_binary(VOp op, const std::vector<float>& xs, const std::vector<float>& ys, F libm, D dbl) {
  const size_t n = xs.size();
  Buf a(kFloat32, n), b(kFloat32, n), o(kFloat32, n);
  std::memcpy(a.ptr(), xs.data(), n * 4);
  std::memcpy(b.ptr(), ys.data(), n * 4);
  run(compile_map(op, kFloat32, kFloat32, 2), {&a, &b, &o}, {static_cast<int64_t>(n)}, 0, n);
  Accuracy acc;
  for (size_t i = 0; i < n; ++i) {
    const float got = o.as<float>()[i], want = libm(xs[i], ys[i]);
    const int64_t u1 = ulp32(got, want);
    if (u1 > 2 || (!std::isnan(want) && std::signbit(got) != std::signbit(want))) {
      CAPTURE(xs[i]);
      CAPTURE(ys[i]);
      CAPTURE(got);
      CHECK(u1 <= 2);
      CHECK(std::signbit(got) == std::signbit(want));
    }
    acc.vs_libm = std::max(acc.vs_libm, u1);
    acc.vs_double = std::max(
        acc.vs_double, ulp32(got, static_cast<float>(dbl(static_cast<double>(xs[i]), static_cast<double>(ys[i])))));
  }
  return acc;
}

}  // namespace

TEST_CASE("llvm: float32 math accuracy against libm (<= 2 ulp)") {
  KILN_SKIP_WITHOUT_LLVM();
  auto report = [](const char* name, Accuracy a) {
    MESSAGE(std::string(name), ": max ulp vs std:: ", a.vs_libm, ", vs double libm rounded ", a.vs_double);
    CHECK(a.vs_libm <= 2);
  };
  report("exp", measure_unary(VOp::Exp, -110.0f, 90.0f, [](float x) { return std::exp(x); },
                              [](double x) { return std::exp(x); }));
  report("log", measure_unary(VOp::Log, 0.0f, 1000.0f, [](float x) { return std::log(x); },
                              [](double x) { return std::log(x); }));
  report("sin", measure_unary(VOp::Sin, -100.0f, 100.0f, [](float x) { return std::sin(x); },
                              [](double x) { return std::sin(x); }));
  report("cos", measure_unary(VOp::Cos, -100.0f, 100.0f, [](float x) { return std::cos(x); },
                              [](double x) { return std::cos(x); }));
  report("tanh", measure_unary(VOp::Tanh, -10.0f, 10.0f, [](float x) { return std::tanh(x); },
                               [](double x) { return std::tanh(x); }));
  report("expm1", measure_unary(VOp::Expm1, -30.0f, 90.0f, [](float x) { return std::expm1(x); },
                                [](double x) { return std::expm1(x); }));
  report("log1p", measure_unary(VOp::Log1p, -1.0f, 1000.0f, [](float x) { return std::log1p(x); },
                                [](double x) { return std::log1p(x); }));
  report("erf", measure_unary(VOp::Erf, -5.0f, 5.0f, [](float x) { return std::erf(x); },
                              [](double x) { return std::erf(x); }));
#define KILN_ACCURACY(OP, fn, lo, hi)                                                     \
  report(#fn, measure_unary(VOp::OP, lo, hi, [](float x) { return std::fn(x); }, \
                            [](double x) { return std::fn(x); }))
  KILN_ACCURACY(Tan, tan, -100.0f, 100.0f);
  KILN_ACCURACY(Asin, asin, -1.0f, 1.0f);
  KILN_ACCURACY(Acos, acos, -1.0f, 1.0f);
  KILN_ACCURACY(Atan, atan, -100.0f, 100.0f);
  KILN_ACCURACY(Sinh, sinh, -95.0f, 95.0f);
  KILN_ACCURACY(Cosh, cosh, -95.0f, 95.0f);
  KILN_ACCURACY(Asinh, asinh, -1000.0f, 1000.0f);
  KILN_ACCURACY(Acosh, acosh, 1.0f, 1000.0f);
  KILN_ACCURACY(Atanh, atanh, -1.0f, 1.0f);
  KILN_ACCURACY(Log2, log2, 0.0f, 1000.0f);
  KILN_ACCURACY(Log10, log10, 0.0f, 1000.0f);
  KILN_ACCURACY(Exp2, exp2, -160.0f, 130.0f);
#undef KILN_ACCURACY
  report("sigmoid", measure_unary(
                        VOp::Sigmoid, -30.0f, 30.0f,
                        [](float x) { return 1.0f / (1.0f + std::exp(-x)); },
                        // the same float formula, with a correctly rounded exp
                        [](double x) {
                          return static_cast<double>(
                              1.0f / (1.0f + static_cast<float>(std::exp(-x))));
                        }));
  // pow: random pairs over several regimes plus the C99 special cases
  std::vector<float> xs, ys;
  std::mt19937 g(7);
  std::uniform_real_distribution<float> ux(0.0f, 4.0f), uy(-60.0f, 60.0f), ui(-40.0f, 40.0f);
  std::uniform_int_distribution<uint32_t> bits;
  for (int x = 0; x < 60000; ++x) {
    xs.push_back(ux(g));
    ys.push_back(uy(g));
  }
  for (int x = 0; x < 20000; ++x) {  // negative bases with integer exponents
    xs.push_back(-ux(g) * 3.0f);
    ys.push_back(std::trunc(ui(g)));
  }
  for (int x = 0; x < 30000; ++x) {  // anything (no signaling NaNs)
    uint32_t bx = bits(g), by = bits(g);
    float fx, fy;
    std::memcpy(&fx, &bx, 4);
    std::memcpy(&fy, &by, 4);
    if (std::isnan(fx)) fx = NAN;
    if (std::isnan(fy)) fy = NAN;
    xs.push_back(fx);
    ys.push_back(fy);
  }
  const float inf = std::numeric_limits<float>::infinity();
  const float sp[] = {0.0f, -0.0f, 1.0f, -1.0f, inf, -inf, NAN, 0.5f, -0.5f, 2.0f, -2.0f, 3.0f,
                      -3.0f, 1e-45f, -1e-45f, 1e10f};
  for (float x : sp)
    for (float y : sp) {
      xs.push_back(x);
      ys.push_back(y);
    }
  report("pow", measure_binary(VOp::Pow, xs, ys, [](float x, float y) { return std::pow(x, y); },
                               [](double x, double y) { return std::pow(x, y); }));
  // atan2: random pairs of every sign and scale, and the C99 special cases
  // (signed zeros, infinities, NaN) against each other
  std::vector<float> ay, ax;
  std::uniform_real_distribution<float> uc(-100.0f, 100.0f);
  for (int x = 0; x < 60000; ++x) {
    ay.push_back(uc(g) * (x % 3 == 0 ? 1e-20f : 1.0f));
    ax.push_back(uc(g) * (x % 5 == 0 ? 1e20f : 1.0f));
  }
  for (float y : sp)
    for (float x : sp) {
      ay.push_back(y);
      ax.push_back(x);
    }
  report("atan2", measure_binary(VOp::Atan2, ay, ax, [](float y, float x) { return std::atan2(y, x); },
                                 [](double y, double x) { return std::atan2(y, x); }));
}

// The float32 functions are inline IR in a vectorized loop and calls of
// their scalar twins (codegen/llvm/runtime_math.h) elsewhere: in the
// remainder after the last full vector, in loops that stay scalar. Both must
// give the same bits. The same kernel runs over all the inputs at once (all
// but the last few in vector lanes) and over one element per call (a loop of
// one element never enters the vector loop: all of it is the remainder).
TEST_CASE("llvm: float32 math in vector lanes and in the scalar remainder agree bit for bit") {
  KILN_SKIP_WITHOUT_LLVM();
  auto same_bits = [](float a, float b) {
    uint32_t x, y;
    std::memcpy(&x, &a, 4);
    std::memcpy(&y, &b, 4);
    return x == y;
  };
  for (VOp op : {VOp::Exp, VOp::Log, VOp::Sin, VOp::Cos, VOp::Tanh, VOp::Sigmoid, VOp::Pow,
                 VOp::Expm1, VOp::Log1p, VOp::Erf, VOp::Tan, VOp::Asin, VOp::Acos, VOp::Atan, VOp::Sinh,
                 VOp::Cosh, VOp::Asinh, VOp::Acosh, VOp::Atanh, VOp::Log2, VOp::Log10, VOp::Exp2, VOp::Atan2}) {
    CAPTURE(static_cast<int>(op));
    const int arity = op == VOp::Pow || op == VOp::Atan2 ? 2 : 1;
    std::vector<float> xs = accuracy_inputs(-100.0f, 100.0f);
    xs.resize(40000);  // the bit-space sweep and random values, in one loop
    const size_t n = xs.size();
    Buf a(kFloat32, n), b(kFloat32, n), lanes(kFloat32, n), one(kFloat32, n);
    std::memcpy(a.ptr(), xs.data(), n * 4);
    std::mt19937 g(3);
    std::uniform_real_distribution<float> uy(-8.0f, 8.0f);
    for (size_t x = 0; x < n; ++x) b.as<float>()[x] = x % 3 == 0 ? std::trunc(uy(g)) : uy(g);
    const jit::KernelFn fn = compile_map(op, kFloat32, kFloat32, arity);
    std::vector<Buf*> whole = {&a}, single = {&a};
    if (arity == 2) {
      whole.push_back(&b);
      single.push_back(&b);
    }
    whole.push_back(&lanes);
    single.push_back(&one);
    run(fn, whole, {static_cast<int64_t>(n)}, 0, static_cast<int64_t>(n));
    for (size_t x = 0; x < n; ++x) run(fn, single, {static_cast<int64_t>(n)}, x, x + 1);
    size_t differ = 0;
    for (size_t x = 0; x < n; ++x)
      if (!same_bits(lanes.as<float>()[x], one.as<float>()[x]) && differ++ < 5) {
        CAPTURE(xs[x]);
        CAPTURE(b.as<float>()[x]);
        CAPTURE(lanes.as<float>()[x]);
        CAPTURE(one.as<float>()[x]);
        CHECK(same_bits(lanes.as<float>()[x], one.as<float>()[x]));
      }
    CHECK(differ == 0);
  }
}

TEST_CASE("llvm: a float32 exp loop vectorizes, IR and asm dumps") {
  KILN_SKIP_WITHOUT_LLVM();
  KB kb("vexp");
  const int in = kb.buffer(kFloat32, false), out = kb.buffer(kFloat32, true);
  const ValueId i = kb.idx(0);
  const ValueId e = kb.val(VOp::Exp, kFloat32, {kb.load(in, i)});
  kb.k.body.push_back(loop(0, kb.param(0), true, {store(out, i, e)}));
  // (compile times are bench/compile's: tests never time anything)
  codegen::CompiledKernel ck = be().compile(kb.k, true, true);
  REQUIRE(static_cast<bool>(ck.fn));
  CHECK(ck.llvm_ir.find("define") != std::string::npos);
  CHECK(ck.llvm_ir.find(" x float>") != std::string::npos);  // vector types in the IR
  // the vector loop inlined exp's vector variant (no call of one remains, no
  // declaration either); the scalar remainder calls the twin, unless the
  // row's last vector is masked instead (16 lanes where 512-bit vectors run
  // at full clock: test_llvm_vector_width.cpp)
  CHECK(ck.llvm_ir.find("kiln.exp.f32.v") == std::string::npos);
  CHECK((ck.llvm_ir.find("call float @kiln_rt_expf(") != std::string::npos) !=
        (ck.llvm_ir.find("@llvm.masked.load") != std::string::npos));
  CHECK(ck.llvm_ir.find("x float> @llvm.fma.") != std::string::npos);
  const bool wide = ck.assembly.find("zmm") != std::string::npos ||
                    ck.assembly.find("ymm") != std::string::npos;
  CHECK(wide);
  // and it computes
  Buf a(kFloat32, 37), o(kFloat32, 37);
  for (int x = 0; x < 37; ++x) a.as<float>()[x] = static_cast<float>(x) * 0.25f - 4.0f;
  run(ck.fn, {&a, &o}, {37}, 0, 37);
  for (int x = 0; x < 37; ++x) CHECK(ulp32(o.as<float>()[x], std::exp(a.as<float>()[x])) <= 1);
}

TEST_CASE("llvm: malformed kernels throw kiln::Error, compiles are thread-safe") {
  KILN_SKIP_WITHOUT_LLVM();
  {
    KB kb("bad_forward_ref");
    const int out = kb.buffer(kFloat32, true);
    jit::Value v{VOp::Neg, kFloat32};
    v.args[0] = 5;  // not defined yet
    const ValueId r = kb.k.add(v);
    kb.k.body.push_back(store(out, kb.iconst(0), r));
    CHECK_THROWS_AS(be().compile(kb.k), Error);
  }
  {
    KB kb("bad_dtype_mix");
    const int out = kb.buffer(kFloat32, true);
    const ValueId x = kb.val(VOp::Add, kFloat32, {kb.iconst(1), kb.iconst(2)});  // int operands
    kb.k.body.push_back(store(out, kb.iconst(0), x));
    CHECK_THROWS_AS(be().compile(kb.k), Error);
  }
  {
    KB kb("bad_loop_index");
    const int out = kb.buffer(kInt64, true);
    kb.k.body.push_back(store(out, kb.iconst(0), kb.idx(0)));  // outside its loop
    CHECK_THROWS_AS(be().compile(kb.k), Error);
  }
  // concurrent compiles
  std::vector<std::thread> threads;
  std::vector<jit::KernelFn> fns(4);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] { fns[t] = compile_map(VOp::Mul, kInt64, kInt64, 2); });
  for (auto& th : threads) th.join();
  for (jit::KernelFn fn : fns) {
    Buf a(kInt64, 3), b(kInt64, 3), o(kInt64, 3);
    for (int x = 0; x < 3; ++x) {
      a.as<int64_t>()[x] = x + 1;
      b.as<int64_t>()[x] = 10;
    }
    run(fn, {&a, &b, &o}, {3}, 0, 3);
    CHECK(o.as<int64_t>()[2] == 30);
  }
}

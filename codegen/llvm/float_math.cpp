// float32 exp, log, sin, cos, tanh, pow, expm1, log1p, erf, tan, asin, acos,
// atan, atan2, sinh, cosh, asinh, acosh, atanh, log2, log10 and exp2 as
// inline, branch-free LLVM IR, so that loops using them vectorize (no libm
// calls, no tables, no gathers).
// Each is a lane function (vector_variants.cpp): its body is built once per
// vector width the vectorizer picks, and scalar code calls its twin in
// runtime_math.cpp, the same steps in C++.
//
// Method: each function widens its float argument to double and evaluates
// there (range reduction plus a Taylor polynomial accurate to ~1e-14), then
// rounds once to float. The double result's relative error is far below
// float's half ulp, so the float result is the correctly rounded one except
// within ~1e-14 of a rounding midpoint: at most 1 ulp from glibc's libm
// (tanh: within 1 ulp of the correctly rounded value, 2 of glibc's tanhf,
// itself 1 ulp off; see the llvm: accuracy test). Special cases (inf, NaN, zeros, denormals, overflow,
// C99 pow rules) are selects.
//
//   exp   k = round(x / ln2), r = x - k ln2 (two-part ln2), e^x = 2^k (1 + expm1(r))
//   log   (in float arithmetic, as exp) x = 2^k (1 + f), s = f / (2 + f),
//         log(1 + f) = f - f^2/2 + s (f^2/2 + R(s^2)); log2 and log10 in double:
//         x = 2^e m, m in [sqrt(1/2), sqrt(2)), log m = 2 atanh(s), s = (m-1)/(m+1)
//   sin, cos  |x| < 2^24: n = round(|x| 2/pi), r = |x| - n pi/2 by two FMAs
//         with a two-part pi/2 (the first exact); larger |x| (and inf, NaN) in
//         a branch only vectors holding such a lane take, through the twin:
//         a Payne-Hanek-style reduction, x * 2/pi mod 4 from eight 24-bit
//         pieces of 2/pi (each product exact in double, reduced mod 4
//         exactly), summed after removing the quadrant; then Taylor sin /
//         cos on [-pi/4, pi/4]
//   tanh  (in float arithmetic, as exp) x + x^3 P(x^2) below 0.625, else
//         1 - 2 sigmoid(-2|x|), with the sign of x
//   pow   2^(y log2|x|) in double, then the sign / NaN / zero / inf rules
//   expm1 tanh's expm1 in double; log1p log(1 + x) plus the rounding's term;
//   erf   (in float arithmetic, as exp) x + x Q(x^2) for |x| < 1, else
//         1 - e^(-x^2) times a fitted polynomial
//   tan   sin r / cos r, or -cos r / sin r in odd quadrants, after sin's reductions
//   atan, atan2, asin, acos  atan of the smaller leg over the larger (one
//         division to within tan(pi/16) of 0, tan(pi/8) or 1, then Taylor),
//         mirrored by quadrant; asin / acos are
//         atan2 with the other leg sqrt((1 - x)(1 + x)), exact in double
//   sinh, cosh, asinh, acosh, atanh  from expm1 / exp / log1p in double
//   log2, log10  log's parts rescaled; exp2  2^k (1 + expm1((x - k) ln2))
// 2^k is built from the exponent bits (k + 1.5 * 2^52 trick), so no
// float <-> int conversion instructions are needed.
#include <iterator>
#include <limits>
#include <vector>

#include <llvm/IR/Intrinsics.h>

#include "codegen/llvm/emitter.h"
#include "codegen/llvm/runtime_math.h"

namespace kiln::codegen::llvmcg {

namespace {

constexpr double kMagic = 6755399441055744.0;  // 1.5 * 2^52: adding it rounds to an integer
constexpr double kLog2e = 1.4426950408889634;
constexpr double kLn2 = 0.6931471805599453;
constexpr double kLn2Hi = 6.93147180369123816490e-01;  // 32 bits: k * kLn2Hi is exact
constexpr double kLn2Lo = 1.90821492927058770002e-10;

template <typename Coeffs> llvm::Value* horner(Emitter& e, llvm::Value* x, const Coeffs& coeffs) {
  llvm::Value* p = nullptr;
  for (double c : coeffs) p = p ? e.b.CreateFAdd(e.b.CreateFMul(p, x), e.cd(c)) : e.cd(c);
  return p;
}
llvm::Value* horner(Emitter& e, llvm::Value* x, std::initializer_list<double> coeffs) {
  return horner<std::initializer_list<double>>(e, x, coeffs);
}
// The same, each step one FMA: p = fma(p, x, c).
template <typename Coeffs> llvm::Value* horner_fma(Emitter& e, llvm::Value* x, const Coeffs& coeffs) {
  llvm::Value* p = nullptr;
  for (double c : coeffs) p = p ? e.intrinsic(llvm::Intrinsic::fma, {p, x, e.cd(c)}) : e.cd(c);
  return p;
}

// expm1(r) for |r| <= 0.36: Taylor to r^11.
llvm::Value* expm1_core(Emitter& e, llvm::Value* r) {
  llvm::Value* p = horner(e, r,
                          {1.0 / 39916800, 1.0 / 3628800, 1.0 / 362880, 1.0 / 40320, 1.0 / 5040,
                           1.0 / 720, 1.0 / 120, 1.0 / 24, 1.0 / 6, 0.5, 1.0});
  return e.b.CreateFMul(p, r);
}

// 2^k for t = k + kMagic (|k| < 1023): k sits in t's low mantissa bits.
llvm::Value* pow2_from_magic(Emitter& e, llvm::Value* t) {
  llvm::Value* bits = e.b.CreateBitCast(t, e.i64());
  return e.b.CreateBitCast(e.b.CreateShl(e.b.CreateAdd(bits, e.c64(1023)), 52), e.f64());
}

llvm::Value* clamp(Emitter& e, llvm::Value* x, double lo, double hi) {
  auto& b = e.b;
  x = b.CreateSelect(b.CreateFCmpOGT(x, e.cd(hi)), e.cd(hi), x);
  return b.CreateSelect(b.CreateFCmpOLT(x, e.cd(lo)), e.cd(lo), x);
}

// d = k ln2 + r with k = round(d / ln2) (two-part ln2): {k + kMagic, r}.
std::pair<llvm::Value*, llvm::Value*> reduce_ln2(Emitter& e, llvm::Value* d) {
  auto& b = e.b;
  llvm::Value* t = b.CreateFAdd(b.CreateFMul(d, e.cd(kLog2e)), e.cd(kMagic));
  llvm::Value* k = b.CreateFSub(t, e.cd(kMagic));
  llvm::Value* r = b.CreateFSub(b.CreateFSub(d, b.CreateFMul(k, e.cd(kLn2Hi))),
                                b.CreateFMul(k, e.cd(kLn2Lo)));
  return {t, r};
}

// e^d for a double d in [-700, 700] (callers clamp), relative error ~1e-16.
llvm::Value* exp_double(Emitter& e, llvm::Value* d) {
  auto [t, r] = reduce_ln2(e, d);
  return e.b.CreateFMul(e.b.CreateFAdd(e.cd(1.0), expm1_core(e, r)), pow2_from_magic(e, t));
}

// e^y - 1 for a double y in [-700, 700]: 2^k expm1(r) + (2^k - 1), exact
// for k = 0 and without cancellation otherwise.
llvm::Value* expm1_double(Emitter& e, llvm::Value* y) {
  auto& b = e.b;
  auto [t, r] = reduce_ln2(e, y);
  llvm::Value* scale = pow2_from_magic(e, t);
  return b.CreateFAdd(b.CreateFMul(scale, expm1_core(e, r)), b.CreateFSub(scale, e.cd(1.0)));
}

// For a positive, finite, normal double d: {log(m), e} with d = 2^e m,
// m in [sqrt(1/2), sqrt(2)); log(m) to ~1e-16 relative.
std::pair<llvm::Value*, llvm::Value*> log_parts(Emitter& e, llvm::Value* d) {
  auto& b = e.b;
  llvm::Value* bits = b.CreateBitCast(d, e.i64());
  // the biased exponent as a double: (2^52 + biased) - (2^52 + 1023)
  llvm::Value* ebits = b.CreateOr(b.CreateLShr(bits, 52), e.c64(0x4330000000000000LL));
  llvm::Value* ex =
      b.CreateFSub(b.CreateBitCast(ebits, e.f64()), e.cd(4503599627370496.0 + 1023.0));
  llvm::Value* m = b.CreateBitCast(
      b.CreateOr(b.CreateAnd(bits, e.c64(0x000FFFFFFFFFFFFFLL)), e.c64(0x3FF0000000000000LL)),
      e.f64());
  llvm::Value* big = b.CreateFCmpOGT(m, e.cd(1.4142135623730951));
  m = b.CreateSelect(big, b.CreateFMul(m, e.cd(0.5)), m);
  ex = b.CreateSelect(big, b.CreateFAdd(ex, e.cd(1.0)), ex);
  llvm::Value* f = b.CreateFSub(m, e.cd(1.0));
  llvm::Value* s = b.CreateFDiv(f, b.CreateFAdd(f, e.cd(2.0)));
  llvm::Value* z = b.CreateFMul(s, s);
  llvm::Value* p = horner(e, z,
                          {2.0 / 21, 2.0 / 19, 2.0 / 17, 2.0 / 15, 2.0 / 13, 2.0 / 11, 2.0 / 9,
                           2.0 / 7, 2.0 / 5, 2.0 / 3, 2.0});
  return {b.CreateFMul(s, p), ex};
}

llvm::Value* is_nan(Emitter& e, llvm::Value* x) { return e.b.CreateFCmpUNO(x, x); }

llvm::Value* abs_double(Emitter& e, llvm::Value* v) {  // |v| widened to double
  return e.intrinsic(llvm::Intrinsic::fabs, {e.b.CreateFPExt(v, e.f64())});
}

llvm::Value* sign_bit(Emitter& e, llvm::Value* x) {  // float x: true for -0 and negatives
  return e.b.CreateICmpSLT(e.b.CreateBitCast(x, e.i32()), e.c32(0));
}

// v itself where v is NaN (its payload kept), else r.
llvm::Value* nan_to_itself(Emitter& e, llvm::Value* v, llvm::Value* r) {
  return e.b.CreateSelect(is_nan(e, v), v, r);
}
llvm::Value* odd_in(Emitter& e, llvm::Value* v, llvm::Value* f) {  // f(|v|) with v's sign
  return e.b.CreateSelect(sign_bit(e, v), e.b.CreateFNeg(f), f);
}

// Below kShortReductionBelow (runtime_math.h) sin, cos and tan reduce by
// reduce_quadrant_short; a vector with a lane at or above it (or inf, NaN)
// computes every lane again through the twin, which reduces those lanes the
// long way (runtime_math.cpp's reduce_quadrant: Payne-Hanek in double).

// |x| = q pi/2 + r, r in [-pi/4, pi/4] (double), q the quadrant (i64, low
// two bits), for |x| < 2^24, in a few operations (Cody-Waite with FMA):
// n = round(|x| 2/pi); |x| - n P1 is exact (both are multiples of 2^-52 and
// their difference is below 2), n P2 is then subtracted with one rounding,
// and what is left out, n (pi/2 - P1 - P2), is below 2^-85. The
// nearest a float below 2^24 comes to a multiple of pi/2 is ~2^-29 away, so r
// keeps more than 50 correct bits.
std::pair<llvm::Value*, llvm::Value*> reduce_quadrant_short(Emitter& e, llvm::Value* x) {
  auto& b = e.b;
  llvm::Value* a = abs_double(e, x);
  llvm::Value* t = b.CreateFAdd(b.CreateFMul(a, e.cd(kTwoOverPi)), e.cd(kMagic));
  llvm::Value* minus_n = b.CreateFSub(e.cd(kMagic), t);
  llvm::Value* quadrant = b.CreateAnd(b.CreateBitCast(t, e.i64()), e.c64(3));
  llvm::Value* r = e.intrinsic(llvm::Intrinsic::fma, {minus_n, e.cd(kHalfPiHi), a});
  r = e.intrinsic(llvm::Intrinsic::fma, {minus_n, e.cd(kHalfPiLo), r});
  return {r, quadrant};
}

// f's value for x: `fast(x)` where |x| < kShortReductionBelow, the twin's
// elsewhere (see above).
llvm::Value* short_or_twin(Emitter& e, const char* twin, llvm::Value* x, llvm::Value* fast) {
  llvm::Value* rare = e.b.CreateFCmpUGE(e.intrinsic(llvm::Intrinsic::fabs, {x}), e.cf(kShortReductionBelow));
  return twin_where(e, twin, x, rare, fast);
}

// {sin r, cos r} for a double r in [-pi/4, pi/4]: Taylor to r^13 / r^14
// (truncation below 3e-14 relative), Horner's steps as FMAs.
std::pair<llvm::Value*, llvm::Value*> sin_cos_poly(Emitter& e, llvm::Value* r) {
  auto& b = e.b;
  llvm::Value* z = b.CreateFMul(r, r);
  llvm::Value* s = e.intrinsic(llvm::Intrinsic::fma, {b.CreateFMul(r, z), horner_fma(e, z, kSinTaylor), r});
  llvm::Value* c = e.intrinsic(llvm::Intrinsic::fma, {z, horner_fma(e, z, kCosTaylor), e.cd(1.0)});
  return {s, c};
}

// sin / cos of a float, by the polynomial for `want_sin`.
llvm::Value* sincos(Emitter& e, llvm::Value* x, bool want_sin) {
  auto& b = e.b;
  auto [r, quadrant] = reduce_quadrant_short(e, x);
  auto [s, c] = sin_cos_poly(e, r);
  // sin(|x|): q=0 sin r, 1 cos r, 2 -sin r, 3 -cos r; cos(|x|): q=0 cos, 1 -sin, 2 -cos, 3 sin
  llvm::Value* odd = b.CreateICmpNE(b.CreateAnd(quadrant, e.c64(1)), e.c64(0));
  llvm::Value* v = want_sin ? b.CreateSelect(odd, c, s) : b.CreateSelect(odd, s, c);
  llvm::Value* qn = want_sin ? quadrant : b.CreateAdd(quadrant, e.c64(1));
  llvm::Value* negate = b.CreateICmpNE(b.CreateAnd(qn, e.c64(2)), e.c64(0));
  v = b.CreateSelect(negate, b.CreateFNeg(v), v);
  llvm::Value* f = b.CreateFPTrunc(v, e.f32());
  return want_sin ? odd_in(e, x, f) : f;  // sin is odd; inf and NaN go to the twin
}

llvm::FunctionType* float_to_float(Emitter& e) {
  return llvm::FunctionType::get(e.f32(), {e.f32()}, false);
}

// e^v in float arithmetic for a float v clamped to [-104, 89] (so that k
// stays in [-150, 128]: below -104 the result is 0, above 89 inf), as
// (1 + q) 2^k1 2^k2. k = round(v log2 e) from the magic-number sum's bits;
// r = v - k ln2 with a two-part ln2 (k * kLn2HiF is exact: 16 + 8 bits);
// q = e^r - 1 by Taylor to r^7 (|r| <= 0.347: truncation < 0.1 ulp); 2^k as
// two exact power-of-two factors so results down to the denormals round once.
struct ExpfParts {
  llvm::Value* q;
  llvm::Value* scale1;
  llvm::Value* scale2;
};
ExpfParts expf_parts(Emitter& e, llvm::Value* v) {
  auto& b = e.b;
  constexpr float kMagicF = 12582912.0f;  // 1.5 * 2^23
  constexpr float kLn2HiF = 0.693145751953125f;
  constexpr float kLn2LoF = 1.428606765330187045e-06f;
  auto cf = [&](float c) { return e.cf(c); };
  auto fma = [&](llvm::Value* a, llvm::Value* m, llvm::Value* c) {
    return e.intrinsic(llvm::Intrinsic::fma, {a, m, c});
  };
  llvm::Value* xc = b.CreateSelect(b.CreateFCmpOGT(v, cf(89.0f)), cf(89.0f), v);
  xc = b.CreateSelect(b.CreateFCmpOLT(xc, cf(-104.0f)), cf(-104.0f), xc);
  llvm::Value* t = fma(xc, cf(1.44269504088896341f), cf(kMagicF));
  llvm::Value* k = b.CreateFSub(t, cf(kMagicF));
  llvm::Value* ki = b.CreateSub(b.CreateBitCast(t, e.i32()), e.c32(0x4B400000u));
  llvm::Value* r = fma(k, cf(-kLn2HiF), xc);
  r = fma(k, cf(-kLn2LoF), r);
  llvm::Value* u = cf(1.0f / 5040.0f);
  for (float c : {1.0f / 720.0f, 1.0f / 120.0f, 1.0f / 24.0f, 1.0f / 6.0f, 0.5f}) u = fma(u, r, cf(c));
  llvm::Value* q = fma(b.CreateFMul(r, r), u, r);
  llvm::Value* k1 = b.CreateAShr(ki, e.c32(1));
  llvm::Value* k2 = b.CreateSub(ki, k1);
  auto pow2 = [&](llvm::Value* kk) {
    return b.CreateBitCast(b.CreateShl(b.CreateAdd(kk, e.c32(127)), e.c32(23)), e.f32());
  };
  return {q, pow2(k1), pow2(k2)};
}

llvm::Value* expf_body(Emitter& e, llvm::ArrayRef<llvm::Value*> args) {
  // In float arithmetic (16 lanes per AVX-512 vector, not 8): the widening
  // to double of the other functions made a float exp loop compute-bound at
  // ~1 ns per element.
  llvm::Value* v = args[0];
  auto& b = e.b;
  const ExpfParts x = expf_parts(e, v);
  llvm::Value* p = b.CreateFAdd(e.cf(1.0f), x.q);
  llvm::Value* res = b.CreateFMul(b.CreateFMul(p, x.scale1), x.scale2);
  return nan_to_itself(e, v, res);
}

// 1 / (1 + e^-v) in float arithmetic (the double exp it took ran at half
// the lanes, 2x PyTorch's time): e^-v as hi + lo (1 + q split exactly:
// Fast2Sum), 1 + e^-v as hi + lo (TwoSum), the reciprocal of the hi part
// refined by one Newton step that takes the lo part in. Within 2 ulp of the
// reference's float formula with libm's expf (which itself rounds three
// times); 0 where e^-v overflows, as that formula gives.
llvm::Value* sigmoid_core(Emitter& e, llvm::Value* v) {
  auto& b = e.b;
  auto fma = [&](llvm::Value* a, llvm::Value* m, llvm::Value* c) {
    return e.intrinsic(llvm::Intrinsic::fma, {a, m, c});
  };
  llvm::Value* one = e.cf(1.0f);
  const ExpfParts x = expf_parts(e, b.CreateFNeg(v));
  llvm::Value* ph = b.CreateFAdd(one, x.q);
  llvm::Value* pl = b.CreateFAdd(b.CreateFSub(one, ph), x.q);
  llvm::Value* eh = b.CreateFMul(b.CreateFMul(ph, x.scale1), x.scale2);
  llvm::Value* el = b.CreateFMul(b.CreateFMul(pl, x.scale1), x.scale2);
  llvm::Value* dh = b.CreateFAdd(one, eh);
  llvm::Value* bb = b.CreateFSub(dh, one);
  llvm::Value* dl = b.CreateFAdd(b.CreateFAdd(b.CreateFSub(one, b.CreateFSub(dh, bb)), b.CreateFSub(eh, bb)), el);
  llvm::Value* s = b.CreateFDiv(one, dh);
  llvm::Value* err = b.CreateFSub(fma(b.CreateFNeg(dh), s, one), b.CreateFMul(dl, s));
  s = fma(s, err, s);
  return b.CreateSelect(b.CreateFCmpOEQ(dh, e.cf(std::numeric_limits<float>::infinity())), e.cf(0.0f), s);
}

llvm::Value* sigmoidf_body(Emitter& e, llvm::ArrayRef<llvm::Value*> args) {
  return nan_to_itself(e, args[0], sigmoid_core(e, args[0]));
}

// log, log2, log10 of a float: e a + log(m) b from log_parts (a factor 1
// multiplies nothing), rounded once; 0 gives -inf, inf inf, a negative or a
// NaN NaN (the NaN itself).
llvm::Value* log_base(Emitter& e, llvm::Value* v, double a, double b_) {
  auto& b = e.b;
  auto [lm, ex] = log_parts(e, b.CreateFPExt(v, e.f64()));
  auto scaled = [&](llvm::Value* x, double f) { return f == 1.0 ? x : b.CreateFMul(x, e.cd(f)); };
  llvm::Value* r = b.CreateFPTrunc(b.CreateFAdd(scaled(ex, a), scaled(lm, b_)), e.f32());
  const float inf = std::numeric_limits<float>::infinity();
  r = b.CreateSelect(b.CreateFCmpOEQ(v, e.cf(0.0f)), e.cf(-inf), r);
  r = b.CreateSelect(b.CreateFCmpOEQ(v, e.cf(inf)), v, r);
  llvm::Value* nan = nan_to_itself(e, v, e.cf(std::numeric_limits<float>::quiet_NaN()));
  return b.CreateSelect(b.CreateFCmpOGE(v, e.cf(0.0f)), r, nan);
}

// log in float arithmetic, 16 lanes (the double form ran 1.5x PyTorch's):
// x = 2^k (1 + f), 1 + f in [sqrt(1/2), sqrt(2)) from the bits (denormals
// scaled by 2^23 first), log(1 + f) = f - f^2/2 + s (f^2/2 + R(s^2)) with
// s = f / (2 + f), ln 2 in two parts (FreeBSD's e_logf.c method and
// constants). At most 1 ulp from glibc's logf on every positive float
// (checked exhaustively).
llvm::Value* logf_body(Emitter& e, llvm::ArrayRef<llvm::Value*> args) {
  llvm::Value* v = args[0];
  auto& b = e.b;
  llvm::Value* sub = b.CreateFCmpOLT(v, e.cf(kMinNormalF));
  llvm::Value* xs = b.CreateSelect(sub, b.CreateFMul(v, e.cf(8388608.0f)), v);
  llvm::Value* ix = b.CreateSub(b.CreateBitCast(xs, e.i32()), e.c32(kSqrtHalfBits));
  llvm::Value* k = b.CreateSub(b.CreateAShr(ix, e.c32(23)), b.CreateSelect(sub, e.c32(23), e.c32(0)));
  llvm::Value* m = b.CreateBitCast(b.CreateAdd(b.CreateAnd(ix, e.c32(0x007fffffu)), e.c32(kSqrtHalfBits)), e.f32());
  llvm::Value* f = b.CreateFSub(m, e.cf(1.0f));
  llvm::Value* s = b.CreateFDiv(f, b.CreateFAdd(e.cf(2.0f), f));
  llvm::Value* z = b.CreateFMul(s, s);
  llvm::Value* w = b.CreateFMul(z, z);
  llvm::Value* t1 = b.CreateFMul(w, b.CreateFAdd(e.cf(kLogLg[1]), b.CreateFMul(w, e.cf(kLogLg[3]))));
  llvm::Value* t2 = b.CreateFMul(z, b.CreateFAdd(e.cf(kLogLg[0]), b.CreateFMul(w, e.cf(kLogLg[2]))));
  llvm::Value* hfsq = b.CreateFMul(b.CreateFMul(e.cf(0.5f), f), f);
  llvm::Value* dk = b.CreateSIToFP(k, e.f32());
  llvm::Value* r = b.CreateFMul(s, b.CreateFAdd(hfsq, b.CreateFAdd(t2, t1)));
  r = b.CreateFAdd(r, b.CreateFMul(dk, e.cf(kLn2LoLogF)));
  r = b.CreateFAdd(b.CreateFSub(r, hfsq), f);
  r = b.CreateFAdd(r, b.CreateFMul(dk, e.cf(kLn2HiLogF)));
  const float inf = std::numeric_limits<float>::infinity();
  r = b.CreateSelect(b.CreateFCmpOEQ(v, e.cf(0.0f)), e.cf(-inf), r);
  r = b.CreateSelect(b.CreateFCmpOEQ(v, e.cf(inf)), v, r);
  llvm::Value* nan = nan_to_itself(e, v, e.cf(std::numeric_limits<float>::quiet_NaN()));
  return b.CreateSelect(b.CreateFCmpOGE(v, e.cf(0.0f)), r, nan);
}

llvm::Value* sinf_body(Emitter& e, llvm::ArrayRef<llvm::Value*> args) {
  return short_or_twin(e, "kiln_rt_sinf", args[0], sincos(e, args[0], true));
}

llvm::Value* cosf_body(Emitter& e, llvm::ArrayRef<llvm::Value*> args) {
  return short_or_twin(e, "kiln_rt_cosf", args[0], sincos(e, args[0], false));
}

// tanh in float arithmetic, 16 lanes (the double expm1 form it replaced ran
// at 4x exp's time): |x| < kTanhSmallF: x + x^3 P(x^2) (Cephes' tanhf
// polynomial, by FMA); above: 1 - 2 sigmoid(-2|x|), sigmoid's compensated
// reciprocal, the last step one FMA; the sign of x. Within 1 ulp of the
// correctly rounded tanh on every float, 2 of glibc's tanhf (checked
// exhaustively).
llvm::Value* tanhf_body(Emitter& e, llvm::ArrayRef<llvm::Value*> args) {
  llvm::Value* v = args[0];
  auto& b = e.b;
  auto fma = [&](llvm::Value* x, llvm::Value* m, llvm::Value* c) {
    return e.intrinsic(llvm::Intrinsic::fma, {x, m, c});
  };
  llvm::Value* a = e.intrinsic(llvm::Intrinsic::fabs, {v});
  llvm::Value* z = b.CreateFMul(a, a);
  llvm::Value* p = e.cf(kTanhPolyF[0]);
  for (size_t i = 1; i < std::size(kTanhPolyF); ++i) p = fma(p, z, e.cf(kTanhPolyF[i]));
  llvm::Value* small = fma(b.CreateFMul(a, z), p, a);
  llvm::Value* large = fma(e.cf(-2.0f), sigmoid_core(e, b.CreateFMul(e.cf(-2.0f), a)), e.cf(1.0f));
  llvm::Value* res = b.CreateSelect(b.CreateFCmpOLT(a, e.cf(kTanhSmallF)), small, large);
  return nan_to_itself(e, v, odd_in(e, v, res));
}

llvm::Value* expm1f_body(Emitter& e, llvm::ArrayRef<llvm::Value*> args) {
  llvm::Value* v = args[0];
  auto& b = e.b;
  // below -40 the float result is -1, above 89 inf
  llvm::Value* d = clamp(e, b.CreateFPExt(v, e.f64()), -40.0, 89.0);
  llvm::Value* res = b.CreateFPTrunc(expm1_double(e, d), e.f32());
  res = b.CreateSelect(b.CreateFCmpOEQ(v, e.cf(0.0f)), v, res);  // keeps -0
  return nan_to_itself(e, v, res);
}

// log(1 + y) for a double y > -1 (finite): log(u) for u = 1 + y rounded
// to double, plus the first-order term of what the rounding dropped,
// (y - (u - 1)) / u: exact enough for the tiny y whose bits fall off 1 + y.
llvm::Value* log1p_double(Emitter& e, llvm::Value* y) {
  auto& b = e.b;
  llvm::Value* u = b.CreateFAdd(y, e.cd(1.0));
  auto [lm, ex] = log_parts(e, u);
  llvm::Value* l = b.CreateFAdd(b.CreateFMul(ex, e.cd(kLn2)), lm);
  return b.CreateFAdd(l, b.CreateFDiv(b.CreateFSub(y, b.CreateFSub(u, e.cd(1.0))), u));
}

llvm::Value* log1pf_body(Emitter& e, llvm::ArrayRef<llvm::Value*> args) {
  llvm::Value* v = args[0];
  auto& b = e.b;
  const float inf = std::numeric_limits<float>::infinity();
  llvm::Value* r = b.CreateFPTrunc(log1p_double(e, b.CreateFPExt(v, e.f64())), e.f32());
  r = b.CreateSelect(b.CreateFCmpOEQ(v, e.cf(-1.0f)), e.cf(-inf), r);
  r = b.CreateSelect(b.CreateFCmpOEQ(v, e.cf(inf)), v, r);
  r = b.CreateSelect(b.CreateFCmpOEQ(v, e.cf(0.0f)), v, r);  // keeps -0
  llvm::Value* nan = nan_to_itself(e, v, e.cf(std::numeric_limits<float>::quiet_NaN()));
  return b.CreateSelect(b.CreateFCmpOGE(v, e.cf(-1.0f)), r, nan);
}

// In float arithmetic, 16 lanes per AVX-512 vector (the double form with
// both branches' long polynomials made GELU 7x slower than PyTorch's).
// |x| < 1: x + x Q(x^2); beyond: 1 - e^(-x^2) erfcx(|x|) with the sign of x,
// |x| clamped to 3.92 where erf rounds to 1.0f. x^2 as hi + lo (lo exact by
// fma), e^(-x^2) = e^(-hi) (1 - lo); e^(-hi) is expf's body.
// Coefficients and accuracy: runtime_math.h.
llvm::Value* erff_body(Emitter& e, llvm::ArrayRef<llvm::Value*> args) {
  llvm::Value* v = args[0];
  auto& b = e.b;
  auto fma = [&](llvm::Value* x, llvm::Value* m, llvm::Value* c) {
    return e.intrinsic(llvm::Intrinsic::fma, {x, m, c});
  };
  auto horner_f = [&](llvm::Value* x, const auto& coeffs) {
    llvm::Value* p = e.cf(coeffs[0]);
    for (size_t i = 1; i < std::size(coeffs); ++i) p = fma(p, x, e.cf(coeffs[i]));
    return p;
  };
  llvm::Value* a = e.intrinsic(llvm::Intrinsic::fabs, {v});
  llvm::Value* small = fma(v, horner_f(b.CreateFMul(v, v), kErfSmallF), v);
  llvm::Value* ac = b.CreateSelect(b.CreateFCmpOGT(a, e.cf(3.92f)), e.cf(3.92f), a);
  llvm::Value* r = horner_f(b.CreateFSub(ac, e.cf(2.5f)), kErfcxF);
  llvm::Value* hi = b.CreateFMul(ac, ac);
  llvm::Value* lo = fma(ac, ac, b.CreateFNeg(hi));
  llvm::Value* ex = expf_body(e, {b.CreateFNeg(hi)});
  llvm::Value* em = fma(b.CreateFNeg(ex), lo, ex);
  llvm::Value* big = b.CreateFSub(e.cf(1.0f), b.CreateFMul(em, r));
  big = e.intrinsic(llvm::Intrinsic::copysign, {big, v});
  return nan_to_itself(e, v, b.CreateSelect(b.CreateFCmpOLT(a, e.cf(1.0f)), small, big));
}

llvm::FunctionType* floats_to_float(Emitter& e) {
  return llvm::FunctionType::get(e.f32(), {e.f32(), e.f32()}, false);
}

llvm::Value* powf_body(Emitter& e, llvm::ArrayRef<llvm::Value*> args) {
  auto& b = e.b;
  llvm::Value* xv = args[0];
  llvm::Value* yv = args[1];
  const double dinf = std::numeric_limits<double>::infinity();
  const float nanf = std::numeric_limits<float>::quiet_NaN();
  llvm::Value* ax = e.intrinsic(llvm::Intrinsic::fabs, {b.CreateFPExt(xv, e.f64())});
  llvm::Value* yd = b.CreateFPExt(yv, e.f64());
  auto [lm, ex] = log_parts(e, ax);
  llvm::Value* l2 = b.CreateFAdd(b.CreateFMul(lm, e.cd(kLog2e)), ex);
  l2 = b.CreateSelect(b.CreateFCmpOEQ(ax, e.cd(0.0)), e.cd(-dinf), l2);
  l2 = b.CreateSelect(b.CreateFCmpOEQ(ax, e.cd(dinf)), e.cd(dinf), l2);
  llvm::Value* z = clamp(e, b.CreateFMul(yd, l2), -300.0, 300.0);
  llvm::Value* t = b.CreateFAdd(z, e.cd(kMagic));
  llvm::Value* k = b.CreateFSub(t, e.cd(kMagic));
  llvm::Value* r = b.CreateFMul(b.CreateFSub(z, k), e.cd(kLn2));
  llvm::Value* p = b.CreateFMul(b.CreateFAdd(e.cd(1.0), expm1_core(e, r)), pow2_from_magic(e, t));
  // y integer / odd integer (infinities count as even integers)
  auto is_int = [&](llvm::Value* d) {
    return b.CreateFCmpOEQ(e.intrinsic(llvm::Intrinsic::floor, {d}), d);
  };
  llvm::Value* y_int = is_int(yd);
  llvm::Value* y_odd = b.CreateAnd(y_int, b.CreateNot(is_int(b.CreateFMul(yd, e.cd(0.5)))));
  llvm::Value* res = b.CreateFPTrunc(p, e.f32());
  res = b.CreateSelect(b.CreateAnd(sign_bit(e, xv), y_odd), b.CreateFNeg(res), res);
  llvm::Value* x_fin = b.CreateFCmpOLT(ax, e.cd(dinf));
  llvm::Value* y_fin = b.CreateFCmpOLT(e.intrinsic(llvm::Intrinsic::fabs, {yd}), e.cd(dinf));
  llvm::Value* neg_frac = b.CreateAnd(b.CreateAnd(b.CreateFCmpOLT(xv, e.cf(0.0f)), x_fin),
                                      b.CreateAnd(y_fin, b.CreateNot(y_int)));
  res = b.CreateSelect(neg_frac, e.cf(nanf), res);
  res = b.CreateSelect(b.CreateOr(is_nan(e, xv), is_nan(e, yv)), e.cf(nanf), res);
  llvm::Value* m1_inf = b.CreateAnd(b.CreateFCmpOEQ(xv, e.cf(-1.0f)), b.CreateNot(y_fin));
  res = b.CreateSelect(b.CreateAnd(m1_inf, b.CreateNot(is_nan(e, yv))), e.cf(1.0f), res);
  llvm::Value* one = b.CreateOr(b.CreateFCmpOEQ(xv, e.cf(1.0f)), b.CreateFCmpOEQ(yv, e.cf(0.0f)));
  return b.CreateSelect(one, e.cf(1.0f), res);
}

// ---- tan, the inverse and hyperbolic functions, log2, log10, exp2 ----
// Each in double as the functions above, rounded once to float.

constexpr double kPi = 3.141592653589793;
constexpr double kHalfPi = 1.5707963267948966;
constexpr double kLog10of2 = 0.30102999566398120;
constexpr double kLog10e = 0.43429448190325182;


// atan(t) for a double t in [0, 1]: atan(c) + atan((t - c) / (1 + t c))
// with c = 0, tan(pi/8) or 1 (atan(c) = 0, pi/8, pi/4) for t below
// tan(pi/16), below tan(3pi/16), or above, so that the argument u stays
// within tan(pi/16) = 0.199, where Taylor to u^21 is within 2e-17 (one
// division for every lane, exact for c = 0; no square roots: divisions and
// roots are what a vector of doubles waits for). Horner's steps as FMAs.
llvm::Value* atan_unit(Emitter& e, llvm::Value* t) {
  auto& b = e.b;
  llvm::Value* mid = b.CreateFCmpOGT(t, e.cd(kTanPi16));
  llvm::Value* high = b.CreateFCmpOGT(t, e.cd(kTan3Pi16));
  llvm::Value* c = b.CreateSelect(high, e.cd(1.0), b.CreateSelect(mid, e.cd(kTanPi8), e.cd(0.0)));
  llvm::Value* base = b.CreateSelect(high, e.cd(kPi / 4), b.CreateSelect(mid, e.cd(kPi / 8), e.cd(0.0)));
  llvm::Value* u = b.CreateFDiv(b.CreateFSub(t, c), e.intrinsic(llvm::Intrinsic::fma, {t, c, e.cd(1.0)}));
  llvm::Value* z = b.CreateFMul(u, u);
  llvm::Value* r = e.intrinsic(llvm::Intrinsic::fma, {b.CreateFMul(u, z), horner_fma(e, z, kAtanTaylor), u});
  return b.CreateFAdd(base, r);
}

// atan2(y, x) in [0, pi/2] for doubles y, x >= 0 (not NaN): the smaller
// over the larger, two zeros giving 0 and two infinities 1.
llvm::Value* angle(Emitter& e, llvm::Value* y, llvm::Value* x) {
  auto& b = e.b;
  const double inf = std::numeric_limits<double>::infinity();
  llvm::Value* steep = b.CreateFCmpOGT(y, x);
  llvm::Value* big = b.CreateSelect(steep, y, x);
  llvm::Value* ratio = b.CreateFDiv(b.CreateSelect(steep, x, y), big);
  ratio = b.CreateSelect(b.CreateFCmpOEQ(big, e.cd(0.0)), e.cd(0.0), ratio);
  ratio = b.CreateSelect(b.CreateAnd(b.CreateFCmpOEQ(x, e.cd(inf)), b.CreateFCmpOEQ(y, e.cd(inf))), e.cd(1.0), ratio);
  llvm::Value* r = atan_unit(e, ratio);
  return b.CreateSelect(steep, b.CreateFSub(e.cd(kHalfPi), r), r);
}

llvm::Value* tanf_body(Emitter& e, llvm::ArrayRef<llvm::Value*> args) {
  llvm::Value* v = args[0];
  auto& b = e.b;
  auto [r, quadrant] = reduce_quadrant_short(e, v);
  auto [s, c] = sin_cos_poly(e, r);
  // tan has period pi: tan r in even quadrants, -cot r in odd ones
  llvm::Value* odd = b.CreateICmpNE(b.CreateAnd(quadrant, e.c64(1)), e.c64(0));
  llvm::Value* t = b.CreateSelect(odd, b.CreateFNeg(b.CreateFDiv(c, s)), b.CreateFDiv(s, c));
  return short_or_twin(e, "kiln_rt_tanf", v, odd_in(e, v, b.CreateFPTrunc(t, e.f32())));
}

// asin x = atan2(x, sqrt(1 - x^2)), acos x = atan2(sqrt(1 - x^2), x), with
// (1 - x)(1 + x) exact in double.
llvm::Value* one_minus_square_root(Emitter& e, llvm::Value* d) {
  auto& b = e.b;
  return e.intrinsic(llvm::Intrinsic::sqrt, {b.CreateFMul(b.CreateFSub(e.cd(1.0), d), b.CreateFAdd(e.cd(1.0), d))});
}
llvm::Value* in_unit_range(Emitter& e, llvm::Value* v, llvm::Value* r) {  // NaN outside [-1, 1]
  llvm::Value* inside = e.b.CreateFCmpOLE(e.intrinsic(llvm::Intrinsic::fabs, {v}), e.cf(1.0f));
  return e.b.CreateSelect(inside, r, e.cf(std::numeric_limits<float>::quiet_NaN()));
}

llvm::Value* asinf_body(Emitter& e, llvm::ArrayRef<llvm::Value*> args) {
  llvm::Value* v = args[0];
  auto& b = e.b;
  llvm::Value* d = b.CreateFPExt(v, e.f64());
  llvm::Value* a = angle(e, e.intrinsic(llvm::Intrinsic::fabs, {d}), one_minus_square_root(e, d));
  return nan_to_itself(e, v, in_unit_range(e, v, odd_in(e, v, b.CreateFPTrunc(a, e.f32()))));
}

llvm::Value* acosf_body(Emitter& e, llvm::ArrayRef<llvm::Value*> args) {
  llvm::Value* v = args[0];
  auto& b = e.b;
  llvm::Value* d = b.CreateFPExt(v, e.f64());
  llvm::Value* a = angle(e, one_minus_square_root(e, d), e.intrinsic(llvm::Intrinsic::fabs, {d}));
  a = b.CreateSelect(b.CreateFCmpOLT(d, e.cd(0.0)), b.CreateFSub(e.cd(kPi), a), a);
  return nan_to_itself(e, v, in_unit_range(e, v, b.CreateFPTrunc(a, e.f32())));
}

llvm::Value* atanf_body(Emitter& e, llvm::ArrayRef<llvm::Value*> args) {
  llvm::Value* v = args[0];
  auto& b = e.b;
  llvm::Value* a = angle(e, abs_double(e, v), e.cd(1.0));
  return nan_to_itself(e, v, odd_in(e, v, b.CreateFPTrunc(a, e.f32())));
}

llvm::Value* atan2f_body(Emitter& e, llvm::ArrayRef<llvm::Value*> args) {
  auto& b = e.b;
  llvm::Value* y = args[0];
  llvm::Value* x = args[1];
  llvm::Value* a = angle(e, abs_double(e, y), abs_double(e, x));
  a = b.CreateSelect(sign_bit(e, x), b.CreateFSub(e.cd(kPi), a), a);  // -0 counts as negative
  llvm::Value* r = odd_in(e, y, b.CreateFPTrunc(a, e.f32()));
  return nan_to_itself(e, y, nan_to_itself(e, x, r));
}

// sinh |x| = (E + E / (E + 1)) / 2 with E = expm1|x| (no cancellation);
// |x| clamped to 100, where both overflow float.
llvm::Value* sinhf_body(Emitter& e, llvm::ArrayRef<llvm::Value*> args) {
  llvm::Value* v = args[0];
  auto& b = e.b;
  llvm::Value* em1 = expm1_double(e, clamp(e, abs_double(e, v), 0.0, 100.0));
  llvm::Value* sh = b.CreateFMul(b.CreateFAdd(em1, b.CreateFDiv(em1, b.CreateFAdd(em1, e.cd(1.0)))), e.cd(0.5));
  return nan_to_itself(e, v, odd_in(e, v, b.CreateFPTrunc(sh, e.f32())));
}

llvm::Value* coshf_body(Emitter& e, llvm::ArrayRef<llvm::Value*> args) {
  llvm::Value* v = args[0];
  auto& b = e.b;
  llvm::Value* ex = exp_double(e, clamp(e, abs_double(e, v), 0.0, 100.0));
  llvm::Value* ch = b.CreateFMul(b.CreateFAdd(ex, b.CreateFDiv(e.cd(1.0), ex)), e.cd(0.5));
  return nan_to_itself(e, v, b.CreateFPTrunc(ch, e.f32()));
}

// asinh |x| = log1p(|x| + x^2 / (1 + sqrt(1 + x^2))) (x^2 stays finite in double).
llvm::Value* asinhf_body(Emitter& e, llvm::ArrayRef<llvm::Value*> args) {
  llvm::Value* v = args[0];
  auto& b = e.b;
  const float inf = std::numeric_limits<float>::infinity();
  llvm::Value* a = abs_double(e, v);
  llvm::Value* sq = b.CreateFMul(a, a);
  llvm::Value* root = e.intrinsic(llvm::Intrinsic::sqrt, {b.CreateFAdd(e.cd(1.0), sq)});
  llvm::Value* y = b.CreateFAdd(a, b.CreateFDiv(sq, b.CreateFAdd(e.cd(1.0), root)));
  llvm::Value* r = b.CreateFPTrunc(log1p_double(e, y), e.f32());
  r = b.CreateSelect(b.CreateFCmpOEQ(a, e.cd(inf)), e.cf(inf), r);
  return nan_to_itself(e, v, odd_in(e, v, r));
}

// acosh x = log1p((x - 1) + sqrt((x - 1)(x + 1))), x - 1 exact in double.
llvm::Value* acoshf_body(Emitter& e, llvm::ArrayRef<llvm::Value*> args) {
  llvm::Value* v = args[0];
  auto& b = e.b;
  const float inf = std::numeric_limits<float>::infinity();
  llvm::Value* d = b.CreateFPExt(v, e.f64());
  llvm::Value* y = b.CreateFSub(d, e.cd(1.0));
  llvm::Value* root = e.intrinsic(llvm::Intrinsic::sqrt, {b.CreateFMul(y, b.CreateFAdd(d, e.cd(1.0)))});
  llvm::Value* r = b.CreateFPTrunc(log1p_double(e, b.CreateFAdd(y, root)), e.f32());
  r = b.CreateSelect(b.CreateFCmpOEQ(v, e.cf(inf)), v, r);
  r = b.CreateSelect(b.CreateFCmpOGE(v, e.cf(1.0f)), r, e.cf(std::numeric_limits<float>::quiet_NaN()));
  return nan_to_itself(e, v, r);
}

// atanh |x| = log1p(2|x| / (1 - |x|)) / 2.
llvm::Value* atanhf_body(Emitter& e, llvm::ArrayRef<llvm::Value*> args) {
  llvm::Value* v = args[0];
  auto& b = e.b;
  const float inf = std::numeric_limits<float>::infinity();
  llvm::Value* a = abs_double(e, v);
  llvm::Value* a1 = b.CreateSelect(b.CreateFCmpOLT(a, e.cd(1.0)), a, e.cd(0.0));  // keeps log1p's argument finite
  llvm::Value* y = b.CreateFDiv(b.CreateFAdd(a1, a1), b.CreateFSub(e.cd(1.0), a1));
  llvm::Value* r = b.CreateFPTrunc(b.CreateFMul(log1p_double(e, y), e.cd(0.5)), e.f32());
  r = b.CreateSelect(b.CreateFCmpOEQ(a, e.cd(1.0)), e.cf(inf), r);
  r = in_unit_range(e, v, odd_in(e, v, r));
  return nan_to_itself(e, v, r);
}

// log2 / log10: exact for powers of two, and of ten up to the float's rounding.
llvm::Value* log2f_body(Emitter& e, llvm::ArrayRef<llvm::Value*> args) { return log_base(e, args[0], 1.0, kLog2e); }
llvm::Value* log10f_body(Emitter& e, llvm::ArrayRef<llvm::Value*> args) {
  return log_base(e, args[0], kLog10of2, kLog10e);
}

// 2^x = 2^k (1 + expm1((x - k) ln2)), k = round(x): exact for integer x.
llvm::Value* exp2f_body(Emitter& e, llvm::ArrayRef<llvm::Value*> args) {
  llvm::Value* v = args[0];
  auto& b = e.b;
  llvm::Value* d = clamp(e, b.CreateFPExt(v, e.f64()), -300.0, 300.0);
  llvm::Value* t = b.CreateFAdd(d, e.cd(kMagic));
  llvm::Value* k = b.CreateFSub(t, e.cd(kMagic));
  llvm::Value* r = b.CreateFMul(b.CreateFSub(d, k), e.cd(kLn2));
  llvm::Value* p = b.CreateFMul(b.CreateFAdd(e.cd(1.0), expm1_core(e, r)), pow2_from_magic(e, t));
  return nan_to_itself(e, v, b.CreateFPTrunc(p, e.f32()));
}

const LaneFn kExpF{"kiln.exp.f32", "kiln_rt_expf", reinterpret_cast<void*>(&kiln_rt_expf),
                   float_to_float, expf_body};
const LaneFn kSigmoidF{"kiln.sigmoid.f32", "kiln_rt_sigmoidf", reinterpret_cast<void*>(&kiln_rt_sigmoidf),
                       float_to_float, sigmoidf_body};
const LaneFn kLogF{"kiln.log.f32", "kiln_rt_logf", reinterpret_cast<void*>(&kiln_rt_logf),
                   float_to_float, logf_body};
const LaneFn kSinF{"kiln.sin.f32", "kiln_rt_sinf", reinterpret_cast<void*>(&kiln_rt_sinf),
                   float_to_float, sinf_body};
const LaneFn kCosF{"kiln.cos.f32", "kiln_rt_cosf", reinterpret_cast<void*>(&kiln_rt_cosf),
                   float_to_float, cosf_body};
const LaneFn kTanhF{"kiln.tanh.f32", "kiln_rt_tanhf", reinterpret_cast<void*>(&kiln_rt_tanhf),
                    float_to_float, tanhf_body};
const LaneFn kExpm1F{"kiln.expm1.f32", "kiln_rt_expm1f", reinterpret_cast<void*>(&kiln_rt_expm1f),
                     float_to_float, expm1f_body};
const LaneFn kLog1pF{"kiln.log1p.f32", "kiln_rt_log1pf", reinterpret_cast<void*>(&kiln_rt_log1pf),
                     float_to_float, log1pf_body};
const LaneFn kErfF{"kiln.erf.f32", "kiln_rt_erff", reinterpret_cast<void*>(&kiln_rt_erff),
                   float_to_float, erff_body};
const LaneFn kPowF{"kiln.pow.f32", "kiln_rt_powf", reinterpret_cast<void*>(&kiln_rt_powf),
                   floats_to_float, powf_body};

const LaneFn kTanF{"kiln.tan.f32", "kiln_rt_tanf", reinterpret_cast<void*>(&kiln_rt_tanf), float_to_float,
               tanf_body};
const LaneFn kAsinF{"kiln.asin.f32", "kiln_rt_asinf", reinterpret_cast<void*>(&kiln_rt_asinf), float_to_float,
                asinf_body};
const LaneFn kAcosF{"kiln.acos.f32", "kiln_rt_acosf", reinterpret_cast<void*>(&kiln_rt_acosf), float_to_float,
                acosf_body};
const LaneFn kAtanF{"kiln.atan.f32", "kiln_rt_atanf", reinterpret_cast<void*>(&kiln_rt_atanf), float_to_float,
                atanf_body};
const LaneFn kSinhF{"kiln.sinh.f32", "kiln_rt_sinhf", reinterpret_cast<void*>(&kiln_rt_sinhf), float_to_float,
                sinhf_body};
const LaneFn kCoshF{"kiln.cosh.f32", "kiln_rt_coshf", reinterpret_cast<void*>(&kiln_rt_coshf), float_to_float,
                coshf_body};
const LaneFn kAsinhF{"kiln.asinh.f32", "kiln_rt_asinhf", reinterpret_cast<void*>(&kiln_rt_asinhf), float_to_float,
                 asinhf_body};
const LaneFn kAcoshF{"kiln.acosh.f32", "kiln_rt_acoshf", reinterpret_cast<void*>(&kiln_rt_acoshf), float_to_float,
                 acoshf_body};
const LaneFn kAtanhF{"kiln.atanh.f32", "kiln_rt_atanhf", reinterpret_cast<void*>(&kiln_rt_atanhf), float_to_float,
                 atanhf_body};
const LaneFn kLog2F{"kiln.log2.f32", "kiln_rt_log2f", reinterpret_cast<void*>(&kiln_rt_log2f), float_to_float,
                log2f_body};
const LaneFn kLog10F{"kiln.log10.f32", "kiln_rt_log10f", reinterpret_cast<void*>(&kiln_rt_log10f), float_to_float,
                 log10f_body};
const LaneFn kExp2F{"kiln.exp2.f32", "kiln_rt_exp2f", reinterpret_cast<void*>(&kiln_rt_exp2f), float_to_float,
                exp2f_body};
const LaneFn kAtan2F{"kiln.atan2.f32", "kiln_rt_atan2f", reinterpret_cast<void*>(&kiln_rt_atan2f),
                     floats_to_float, atan2f_body};
}  // namespace

std::vector<const LaneFn*> float_math_lane_fns() {
  return {&kExpF,  &kSigmoidF, &kLogF,   &kSinF,   &kCosF,   &kTanhF,  &kPowF,   &kExpm1F, &kLog1pF,
          &kErfF,  &kTanF,          &kAsinF,  &kAcosF,  &kAtanF,  &kSinhF,  &kCoshF,  &kAsinhF, &kAcoshF,
          &kAtanhF, &kLog2F,        &kLog10F, &kExp2F,  &kAtan2F};
}

llvm::Value* emit_expf(Emitter& e, llvm::Value* x) { return call_lane_fn(e, kExpF, {x}); }
llvm::Value* emit_sigmoidf(Emitter& e, llvm::Value* x) { return call_lane_fn(e, kSigmoidF, {x}); }
llvm::Value* emit_logf(Emitter& e, llvm::Value* x) { return call_lane_fn(e, kLogF, {x}); }
llvm::Value* emit_sinf(Emitter& e, llvm::Value* x) { return call_lane_fn(e, kSinF, {x}); }
llvm::Value* emit_cosf(Emitter& e, llvm::Value* x) { return call_lane_fn(e, kCosF, {x}); }
llvm::Value* emit_tanhf(Emitter& e, llvm::Value* x) { return call_lane_fn(e, kTanhF, {x}); }
llvm::Value* emit_expm1f(Emitter& e, llvm::Value* x) { return call_lane_fn(e, kExpm1F, {x}); }
llvm::Value* emit_log1pf(Emitter& e, llvm::Value* x) { return call_lane_fn(e, kLog1pF, {x}); }
llvm::Value* emit_erff(Emitter& e, llvm::Value* x) { return call_lane_fn(e, kErfF, {x}); }
llvm::Value* emit_powf(Emitter& e, llvm::Value* x, llvm::Value* y) { return call_lane_fn(e, kPowF, {x, y}); }
llvm::Value* emit_tanf(Emitter& e, llvm::Value* x) { return call_lane_fn(e, kTanF, {x}); }
llvm::Value* emit_asinf(Emitter& e, llvm::Value* x) { return call_lane_fn(e, kAsinF, {x}); }
llvm::Value* emit_acosf(Emitter& e, llvm::Value* x) { return call_lane_fn(e, kAcosF, {x}); }
llvm::Value* emit_atanf(Emitter& e, llvm::Value* x) { return call_lane_fn(e, kAtanF, {x}); }
llvm::Value* emit_sinhf(Emitter& e, llvm::Value* x) { return call_lane_fn(e, kSinhF, {x}); }
llvm::Value* emit_coshf(Emitter& e, llvm::Value* x) { return call_lane_fn(e, kCoshF, {x}); }
llvm::Value* emit_asinhf(Emitter& e, llvm::Value* x) { return call_lane_fn(e, kAsinhF, {x}); }
llvm::Value* emit_acoshf(Emitter& e, llvm::Value* x) { return call_lane_fn(e, kAcoshF, {x}); }
llvm::Value* emit_atanhf(Emitter& e, llvm::Value* x) { return call_lane_fn(e, kAtanhF, {x}); }
llvm::Value* emit_log2f(Emitter& e, llvm::Value* x) { return call_lane_fn(e, kLog2F, {x}); }
llvm::Value* emit_log10f(Emitter& e, llvm::Value* x) { return call_lane_fn(e, kLog10F, {x}); }
llvm::Value* emit_exp2f(Emitter& e, llvm::Value* x) { return call_lane_fn(e, kExp2F, {x}); }
llvm::Value* emit_atan2f(Emitter& e, llvm::Value* y, llvm::Value* x) { return call_lane_fn(e, kAtan2F, {y, x}); }

}  // namespace kiln::codegen::llvmcg

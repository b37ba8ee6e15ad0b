// The elementwise VOps of kernel_ir.h as LLVM IR, following
// core/reference/{unary,binary}.cpp: integers compute in i64 with wrapping
// (then wrap to UInt8 / Int32), Bool arithmetic computes in int64 and turns
// back into bool with != 0, floating ops use plain IEEE instructions (no
// fast-math flags, no FMA contraction, so results match the reference bit for
// bit) and Float16 / BFloat16 results are rounded after every op. float32
// transcendentals come from float_math.cpp; float64 ones call libm.
#include <llvm/IR/Intrinsics.h>

#include "codegen/llvm/emitter.h"
#include "core/op.h"
#include "kiln/error.h"

namespace kiln::codegen::llvmcg {

using jit::VOp;

namespace {

// The reference's int_pow: repeated squaring; a negative exponent gives 1 for
// base 1, +-1 for base -1 (by parity) and 0 otherwise.
llvm::Value* int_pow(Emitter& e, llvm::Value* base, llvm::Value* exp) {
  llvm::FunctionType* type = llvm::FunctionType::get(e.i64(), {e.i64(), e.i64()}, false);
  llvm::Function* f = e.helper("kiln.ipow.i64", type, [&](llvm::Function* fn) {
    auto& b = e.b;
    llvm::Value* x = fn->getArg(0);
    llvm::Value* n = fn->getArg(1);
    llvm::BasicBlock* entry = b.GetInsertBlock();
    llvm::BasicBlock* neg = llvm::BasicBlock::Create(e.ctx, "neg", fn);
    llvm::BasicBlock* head = llvm::BasicBlock::Create(e.ctx, "head", fn);
    llvm::BasicBlock* body = llvm::BasicBlock::Create(e.ctx, "body", fn);
    llvm::BasicBlock* done = llvm::BasicBlock::Create(e.ctx, "done", fn);
    b.CreateCondBr(b.CreateICmpSLT(n, e.c64(0)), neg, head);
    b.SetInsertPoint(neg);
    llvm::Value* odd = b.CreateICmpNE(b.CreateAnd(n, e.c64(1)), e.c64(0));
    llvm::Value* m1 = b.CreateSelect(odd, e.c64(-1), e.c64(1));
    llvm::Value* r = b.CreateSelect(b.CreateICmpEQ(x, e.c64(-1)), m1, e.c64(0));
    b.CreateRet(b.CreateSelect(b.CreateICmpEQ(x, e.c64(1)), e.c64(1), r));
    b.SetInsertPoint(head);
    llvm::PHINode* acc = b.CreatePHI(e.i64(), 2);
    llvm::PHINode* sq = b.CreatePHI(e.i64(), 2);
    llvm::PHINode* left = b.CreatePHI(e.i64(), 2);
    acc->addIncoming(e.c64(1), entry);
    sq->addIncoming(x, entry);
    left->addIncoming(n, entry);
    b.CreateCondBr(b.CreateICmpNE(left, e.c64(0)), body, done);
    b.SetInsertPoint(body);
    llvm::Value* bit = b.CreateICmpNE(b.CreateAnd(left, e.c64(1)), e.c64(0));
    acc->addIncoming(b.CreateSelect(bit, b.CreateMul(acc, sq), acc), body);
    sq->addIncoming(b.CreateMul(sq, sq), body);
    left->addIncoming(b.CreateLShr(left, 1), body);
    b.CreateBr(head);
    b.SetInsertPoint(done);
    b.CreateRet(acc);
  });
  return e.b.CreateCall(f, {base, exp});
}

llvm::Value* compare(Emitter& e, VOp op, DType t, llvm::Value* x, llvm::Value* y) {
  auto& b = e.b;
  if (is_float_dtype(t)) {
    switch (op) {
      case VOp::Eq: return b.CreateFCmpOEQ(x, y);
      case VOp::Ne: return b.CreateFCmpUNE(x, y);
      case VOp::Lt: return b.CreateFCmpOLT(x, y);
      case VOp::Le: return b.CreateFCmpOLE(x, y);
      case VOp::Gt: return b.CreateFCmpOGT(x, y);
      default: return b.CreateFCmpOGE(x, y);
    }
  }
  const bool u = t == DType::Bool;  // false < true
  switch (op) {
    case VOp::Eq: return b.CreateICmpEQ(x, y);
    case VOp::Ne: return b.CreateICmpNE(x, y);
    case VOp::Lt: return u ? b.CreateICmpULT(x, y) : b.CreateICmpSLT(x, y);
    case VOp::Le: return u ? b.CreateICmpULE(x, y) : b.CreateICmpSLE(x, y);
    case VOp::Gt: return u ? b.CreateICmpUGT(x, y) : b.CreateICmpSGT(x, y);
    default: return u ? b.CreateICmpUGE(x, y) : b.CreateICmpSGE(x, y);
  }
}

// Float math on float (Float16 / BFloat16 / Float32) or double (Float64).
llvm::Value* float_op(Emitter& e, VOp op, llvm::ArrayRef<llvm::Value*> a) {
  auto& b = e.b;
  const bool dbl = a[0]->getType()->isDoubleTy();
  llvm::Value* one = llvm::ConstantFP::get(a[0]->getType(), 1.0);
  llvm::Value* zero = llvm::ConstantFP::get(a[0]->getType(), 0.0);
  switch (op) {
    case VOp::Add: return b.CreateFAdd(a[0], a[1]);
    case VOp::Sub: return b.CreateFSub(a[0], a[1]);
    case VOp::Mul: return b.CreateFMul(a[0], a[1]);
    case VOp::Div: return b.CreateFDiv(a[0], a[1]);
    case VOp::Mod: return b.CreateFRem(a[0], a[1]);
    case VOp::Pow: return dbl ? e.intrinsic(llvm::Intrinsic::pow, a) : emit_powf(e, a[0], a[1]);
    case VOp::Atan2: return dbl ? e.libcall("atan2", a) : emit_atan2f(e, a[0], a[1]);
    case VOp::Neg: return b.CreateFNeg(a[0]);
    case VOp::Abs: return e.intrinsic(llvm::Intrinsic::fabs, {a[0]});
    case VOp::Relu: return b.CreateSelect(b.CreateFCmpUGT(a[0], zero), a[0], zero);
    case VOp::Sqrt: return e.intrinsic(llvm::Intrinsic::sqrt, {a[0]});
    case VOp::Rsqrt: return b.CreateFDiv(one, e.intrinsic(llvm::Intrinsic::sqrt, {a[0]}));
    case VOp::Exp: return dbl ? e.intrinsic(llvm::Intrinsic::exp, {a[0]}) : emit_expf(e, a[0]);
    case VOp::Log: return dbl ? e.intrinsic(llvm::Intrinsic::log, {a[0]}) : emit_logf(e, a[0]);
    case VOp::Sin: return dbl ? e.intrinsic(llvm::Intrinsic::sin, {a[0]}) : emit_sinf(e, a[0]);
    case VOp::Cos: return dbl ? e.intrinsic(llvm::Intrinsic::cos, {a[0]}) : emit_cosf(e, a[0]);
    case VOp::Tanh: return dbl ? e.libcall("tanh", {a[0]}) : emit_tanhf(e, a[0]);
    case VOp::Expm1: return dbl ? e.libcall("expm1", {a[0]}) : emit_expm1f(e, a[0]);
    case VOp::Log1p: return dbl ? e.libcall("log1p", {a[0]}) : emit_log1pf(e, a[0]);
    case VOp::Erf: return dbl ? e.libcall("erf", {a[0]}) : emit_erff(e, a[0]);
    case VOp::Tan: return dbl ? e.libcall("tan", {a[0]}) : emit_tanf(e, a[0]);
    case VOp::Asin: return dbl ? e.libcall("asin", {a[0]}) : emit_asinf(e, a[0]);
    case VOp::Acos: return dbl ? e.libcall("acos", {a[0]}) : emit_acosf(e, a[0]);
    case VOp::Atan: return dbl ? e.libcall("atan", {a[0]}) : emit_atanf(e, a[0]);
    case VOp::Sinh: return dbl ? e.libcall("sinh", {a[0]}) : emit_sinhf(e, a[0]);
    case VOp::Cosh: return dbl ? e.libcall("cosh", {a[0]}) : emit_coshf(e, a[0]);
    case VOp::Asinh: return dbl ? e.libcall("asinh", {a[0]}) : emit_asinhf(e, a[0]);
    case VOp::Acosh: return dbl ? e.libcall("acosh", {a[0]}) : emit_acoshf(e, a[0]);
    case VOp::Atanh: return dbl ? e.libcall("atanh", {a[0]}) : emit_atanhf(e, a[0]);
    case VOp::Log2: return dbl ? e.libcall("log2", {a[0]}) : emit_log2f(e, a[0]);
    case VOp::Log10: return dbl ? e.libcall("log10", {a[0]}) : emit_log10f(e, a[0]);
    case VOp::Exp2: return dbl ? e.libcall("exp2", {a[0]}) : emit_exp2f(e, a[0]);
    case VOp::Floor: return e.intrinsic(llvm::Intrinsic::floor, {a[0]});
    case VOp::Ceil: return e.intrinsic(llvm::Intrinsic::ceil, {a[0]});
    case VOp::Trunc: return e.intrinsic(llvm::Intrinsic::trunc, {a[0]});
    case VOp::Round: return e.intrinsic(llvm::Intrinsic::roundeven, {a[0]});
    case VOp::Sign: {  // (0 < x) - (x < 0): NaN and -0 give +0
      llvm::Value* neg = b.CreateSelect(b.CreateFCmpOLT(a[0], zero), llvm::ConstantFP::get(a[0]->getType(), -1.0), zero);
      return b.CreateSelect(b.CreateFCmpOGT(a[0], zero), one, neg);
    }
    case VOp::Sigmoid: {  // 1 / (1 + exp(-x)), in the compute type as the reference
      if (!dbl) return emit_sigmoidf(e, a[0]);
      return b.CreateFDiv(one, b.CreateFAdd(one, e.intrinsic(llvm::Intrinsic::exp, {b.CreateFNeg(a[0])})));
    }
    default: break;
  }
  KILN_INTERNAL_ASSERT(false, "VOp ", static_cast<int>(op), " is not a floating op");
}

// Integer math in i64 (wrapping); the caller wraps to the dtype.
llvm::Value* int_op(Emitter& e, VOp op, llvm::ArrayRef<llvm::Value*> a) {
  auto& b = e.b;
  switch (op) {
    case VOp::Add: return b.CreateAdd(a[0], a[1]);
    case VOp::Sub: return b.CreateSub(a[0], a[1]);
    case VOp::Mul: return b.CreateMul(a[0], a[1]);
    case VOp::Div: return b.CreateSDiv(a[0], a[1]);  // index values only (non-negative)
    case VOp::Mod: return b.CreateSRem(a[0], a[1]);
    case VOp::Pow: return int_pow(e, a[0], a[1]);
    case VOp::Neg: return b.CreateSub(e.c64(0), a[0]);
    case VOp::Abs: return b.CreateIntrinsic(llvm::Intrinsic::abs, {e.i64()}, {a[0], b.getFalse()});
    case VOp::Relu: return e.intrinsic(llvm::Intrinsic::smax, {a[0], e.c64(0)});
    case VOp::Sign:
      return b.CreateSub(b.CreateZExt(b.CreateICmpSGT(a[0], e.c64(0)), e.i64()),
                         b.CreateZExt(b.CreateICmpSLT(a[0], e.c64(0)), e.i64()));
    default: break;
  }
  KILN_INTERNAL_ASSERT(false, "VOp ", static_cast<int>(op), " needs a floating dtype");
}

}  // namespace

llvm::Value* emit_max_min(Emitter& e, bool is_max, DType t, llvm::Value* x, llvm::Value* y) {
  auto& b = e.b;
  if (is_float_dtype(t)) {
    llvm::Value* pick = is_max ? b.CreateFCmpOGT(x, y) : b.CreateFCmpOLT(x, y);
    llvm::Value* r = b.CreateSelect(pick, x, y);
    r = b.CreateSelect(b.CreateFCmpUNO(y, y), y, r);
    return b.CreateSelect(b.CreateFCmpUNO(x, x), x, r);
  }
  if (t == DType::Bool) return is_max ? b.CreateOr(x, y) : b.CreateAnd(x, y);
  return e.intrinsic(is_max ? llvm::Intrinsic::smax : llvm::Intrinsic::smin, {x, y});
}

llvm::Value* emit_elementwise(Emitter& e, const jit::Value& v, DType operand,
                              llvm::ArrayRef<llvm::Value*> args) {
  auto& b = e.b;
  const DType t = v.dtype;
  switch (v.op) {
    case VOp::LogicalNot: return b.CreateNot(cast_value(e, args[0], operand, DType::Bool));
    case VOp::Eq: case VOp::Ne: case VOp::Lt: case VOp::Le: case VOp::Gt: case VOp::Ge:
      return compare(e, v.op, operand, args[0], args[1]);
    case VOp::Where: {
      llvm::Value* cond = cast_value(e, args[0], operand, DType::Bool);
      return b.CreateSelect(cond, args[1], args[2]);
    }
    case VOp::Cast: return cast_value(e, args[0], operand, t);
    case VOp::Max:
    case VOp::Min: return emit_max_min(e, v.op == VOp::Max, t, args[0], args[1]);
    default: break;
  }
  KILN_INTERNAL_ASSERT(operand == t, "VOp ", static_cast<int>(v.op), " operand dtype ", operand,
                       " differs from its result dtype ", t);
  if (is_float_dtype(t)) {
    llvm::Value* r = float_op(e, v.op, args);
    // results a float16 / bfloat16 holds exactly need no rounding
    const bool exact = v.op == VOp::Neg || v.op == VOp::Abs || v.op == VOp::Relu ||
                       v.op == VOp::Floor || v.op == VOp::Ceil || v.op == VOp::Round ||
                       v.op == VOp::Trunc || v.op == VOp::Sign;
    return exact ? r : canonicalize(e, r, t);
  }
  if (t == DType::Bool) {  // computed in int64, then != 0
    std::vector<llvm::Value*> wide;
    for (llvm::Value* a : args) wide.push_back(b.CreateZExt(a, e.i64()));
    return b.CreateICmpNE(int_op(e, v.op, wide), e.c64(0));
  }
  return canonicalize(e, int_op(e, v.op, args), t);
}

}  // namespace kiln::codegen::llvmcg

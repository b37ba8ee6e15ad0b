// VOp::Philox as LLVM IR: Philox4x32-10 on the counter offset + index and the
// key seed (core/philox.h), then the op's map to a value, computed exactly as
// core/reference/sources.cpp does so results agree bit for bit:
//   RandUniform  float32 / float16 / bfloat16: low + (high - low) * u24 in float;
//                float64: low + (high - low) * u53 in double
//   RandNormal   mean + std * sqrt(-2 ln u1) cos(2 pi u2) in double, with
//                core/philox.h's own ln and cos, step for step (fma for fma)
//   RandInt      low + (x1:x0 mod (high - low)) in wrapping uint64
// and finally cast_value to the Value's dtype. The generator is a lane
// function (vector_variants.cpp): the vectorizer widens a call, whose body,
// plain 32x32->64 multiplies and xors in vector lanes, comes after it.
#include <vector>

#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Intrinsics.h>

#include "codegen/llvm/emitter.h"
#include "codegen/llvm/runtime_math.h"
#include "core/philox.h"
#include "kiln/error.h"

namespace kiln::codegen::llvmcg {

namespace {

struct Block {
  llvm::Value* x[4];
};

// One Philox round (core/philox.h) on ctr with the round's key.
Block philox_round(Emitter& e, const Block& ctr, llvm::Value* k0, llvm::Value* k1) {
  auto& b = e.b;
  auto mul_hi_lo = [&](uint32_t m, llvm::Value* x, llvm::Value*& hi, llvm::Value*& lo) {
    llvm::Value* p = b.CreateMul(e.c64(m), b.CreateZExt(x, e.i64()));
    hi = b.CreateTrunc(b.CreateLShr(p, 32), e.i32());
    lo = b.CreateTrunc(p, e.i32());
  };
  llvm::Value *hi0, *lo0, *hi1, *lo1;
  mul_hi_lo(philox_detail::kM0, ctr.x[0], hi0, lo0);
  mul_hi_lo(philox_detail::kM1, ctr.x[2], hi1, lo1);
  return Block{{b.CreateXor(b.CreateXor(hi1, ctr.x[1]), k0), lo1,
                b.CreateXor(b.CreateXor(hi0, ctr.x[3]), k1), lo0}};
}

// The lane function kiln.philox(counter, seed) = x1 << 32 | x0 of
// philox4x32_10({lo32(counter), hi32(counter), 0, 0}, {lo32(seed), hi32(seed)}):
// the first round inline (its zero words fold away), the other nine as a
// loop of one round. Code generation then selects one round, not ten: its
// DAG combines ask for the known and demanded bits of every multiply and
// mask, walking six operands deep through the xor chains of the rounds
// before, and ten unrolled rounds were most of a random kernel's compile.
// The rounds are a serial chain either way; out-of-order execution overlaps
// the next vector's rounds with these, unrolled or not.
llvm::FunctionType* philox_type(Emitter& e) {
  return llvm::FunctionType::get(e.i64(), {e.i64(), e.i64()}, false);
}

llvm::Value* philox_body(Emitter& e, llvm::ArrayRef<llvm::Value*> args) {
  auto& b = e.b;
  llvm::Value* c = args[0];
  llvm::Value* seed = args[1];
  llvm::Value* k0 = b.CreateTrunc(seed, e.i32());
  llvm::Value* k1 = b.CreateTrunc(b.CreateLShr(seed, 32), e.i32());
  Block ctr = philox_round(
      e, Block{{b.CreateTrunc(c, e.i32()), b.CreateTrunc(b.CreateLShr(c, 32), e.i32()), e.c32(0), e.c32(0)}},
      k0, k1);
  llvm::BasicBlock* entry = b.GetInsertBlock();
  llvm::Function* f = entry->getParent();
  llvm::BasicBlock* loop = llvm::BasicBlock::Create(e.ctx, "philox.round", f);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(e.ctx, "philox.done", f);
  b.CreateBr(loop);
  b.SetInsertPoint(loop);
  // loop-carried: the round number, the two key words, the four counter words
  llvm::PHINode* round = b.CreatePHI(b.getInt32Ty(), 2, "round");
  llvm::PHINode* carried[6];
  for (llvm::PHINode*& p : carried) p = b.CreatePHI(e.i32(), 2);
  llvm::Value* nk0 = b.CreateAdd(carried[0], e.c32(philox_detail::kW0));
  llvm::Value* nk1 = b.CreateAdd(carried[1], e.c32(philox_detail::kW1));
  const Block next =
      philox_round(e, Block{{carried[2], carried[3], carried[4], carried[5]}}, nk0, nk1);
  llvm::Value* next_round = b.CreateAdd(round, b.getInt32(1));
  round->addIncoming(b.getInt32(1), entry);
  round->addIncoming(next_round, loop);
  llvm::Value* first[6] = {k0, k1, ctr.x[0], ctr.x[1], ctr.x[2], ctr.x[3]};
  llvm::Value* again[6] = {nk0, nk1, next.x[0], next.x[1], next.x[2], next.x[3]};
  for (int j = 0; j < 6; ++j) {
    carried[j]->addIncoming(first[j], entry);
    carried[j]->addIncoming(again[j], loop);
  }
  llvm::BranchInst* latch = b.CreateCondBr(b.CreateICmpULT(next_round, b.getInt32(10)), loop, done);
  // Kept rolled: nothing in kiln's pipeline unrolls loops, but say so.
  llvm::Metadata* disable[] = {llvm::MDString::get(e.ctx, "llvm.loop.unroll.disable")};
  llvm::Metadata* ops[] = {nullptr, llvm::MDNode::get(e.ctx, disable)};
  llvm::MDNode* md = llvm::MDNode::getDistinct(e.ctx, ops);
  md->replaceOperandWith(0, md);
  latch->setMetadata(llvm::LLVMContext::MD_loop, md);
  b.SetInsertPoint(done);
  return b.CreateOr(b.CreateShl(b.CreateZExt(next.x[1], e.i64()), 32), b.CreateZExt(next.x[0], e.i64()));
}

const LaneFn kPhilox{"kiln.philox", "kiln_rt_philox", reinterpret_cast<void*>(&kiln_rt_philox),
                     philox_type, philox_body};

// philox_detail::horner: c[0] + x (c[1] + x (... c[n-1])) with fmas.
template <int N>
llvm::Value* horner(Emitter& e, const double (&c)[N], llvm::Value* x) {
  llvm::Value* r = e.cd(c[N - 1]);
  for (int i = N - 2; i >= 0; --i) r = e.intrinsic(llvm::Intrinsic::fma, {r, x, e.cd(c[i])});
  return r;
}

// philox_log (core/philox.h) for a positive normal double.
llvm::Value* emit_philox_log(Emitter& e, llvm::Value* u) {
  using namespace philox_detail;
  auto& b = e.b;
  llvm::Value* bits = b.CreateBitCast(u, e.i64());
  llvm::Value* ex = b.CreateSIToFP(
      b.CreateSub(b.CreateTrunc(b.CreateLShr(bits, 52), e.i32()), e.c32(1023)), e.f64());
  llvm::Value* m = b.CreateBitCast(
      b.CreateOr(b.CreateAnd(bits, e.c64(0x000fffffffffffffll)), e.c64(0x3ff0000000000000ll)),
      e.f64());
  llvm::Value* big = b.CreateFCmpOGE(m, e.cd(kSqrt2));
  m = b.CreateSelect(big, b.CreateFMul(m, e.cd(0.5)), m);
  ex = b.CreateSelect(big, b.CreateFAdd(ex, e.cd(1.0)), ex);
  llvm::Value* f = b.CreateFSub(m, e.cd(1.0));
  llvm::Value* s = b.CreateFDiv(f, b.CreateFAdd(e.cd(2.0), f));
  llvm::Value* two_s = b.CreateFAdd(s, s);
  llvm::Value* z = b.CreateFMul(s, s);
  llvm::Value* ln1pf =
      e.intrinsic(llvm::Intrinsic::fma, {b.CreateFMul(two_s, z), horner(e, kAtanhCoef, z), two_s});
  return e.intrinsic(llvm::Intrinsic::fma,
                     {ex, e.cd(kLn2Hi), e.intrinsic(llvm::Intrinsic::fma, {ex, e.cd(kLn2Lo), ln1pf})});
}

// philox_cos_2pi (core/philox.h) of a 32-bit x.
llvm::Value* emit_philox_cos_2pi(Emitter& e, llvm::Value* x) {
  using namespace philox_detail;
  auto& b = e.b;
  llvm::Value* q = b.CreateLShr(b.CreateAdd(x, e.c32(0x20000000)), 30);
  llvm::Value* t = b.CreateFMul(b.CreateSIToFP(b.CreateSub(x, b.CreateShl(q, 30)), e.f64()),
                                e.cd(0x1p-32));
  llvm::Value* t2 = b.CreateFMul(t, t);
  llvm::Value* odd = b.CreateICmpNE(b.CreateAnd(q, e.c32(1)), e.c32(0));
  llvm::Value* v = b.CreateSelect(odd, b.CreateFMul(t, horner(e, kSin2PiCoef, t2)),
                                  horner(e, kCos2PiCoef, t2));
  llvm::Value* neg = b.CreateICmpNE(b.CreateAnd(b.CreateAdd(q, e.c32(1)), e.c32(2)), e.c32(0));
  return b.CreateSelect(neg, b.CreateFNeg(v), v);
}

}  // namespace

std::vector<const LaneFn*> philox_lane_fns() { return {&kPhilox}; }

llvm::Value* emit_philox(Emitter& e, const jit::Value& v, llvm::Value* index, llvm::Value* seed,
                         llvm::Value* offset) {
  auto& b = e.b;
  llvm::Value* x10 = call_lane_fn(e, kPhilox, {b.CreateAdd(offset, index), seed});  // wraps mod 2^64
  llvm::Value* x0 = b.CreateAnd(x10, e.c64(0xffffffff));
  llvm::Value* x1 = b.CreateLShr(x10, 32);
  switch (v.random_op) {
    case Op::RandUniform: {
      if (v.dtype == DType::Float64) {
        llvm::Value* bits = b.CreateOr(b.CreateShl(x0, 21), b.CreateLShr(x1, 11));
        llvm::Value* u = b.CreateFMul(b.CreateSIToFP(bits, e.f64()), e.cd(0x1p-53));
        return b.CreateFAdd(e.cd(v.f), b.CreateFMul(e.cd(v.f1 - v.f), u));
      }
      KILN_INTERNAL_ASSERT(computes_in_float(v.dtype), "RandUniform needs a floating dtype, got ",
                           v.dtype);
      const float low = static_cast<float>(v.f), high = static_cast<float>(v.f1);
      llvm::Value* u = b.CreateFMul(b.CreateSIToFP(b.CreateLShr(x0, 8), e.f32()), e.cf(0x1p-24f));
      llvm::Value* r = b.CreateFAdd(e.cf(low), b.CreateFMul(e.cf(high - low), u));
      return cast_value(e, r, DType::Float32, v.dtype);
    }
    case Op::RandNormal: {
      llvm::Value* u1 = b.CreateFMul(b.CreateFAdd(b.CreateSIToFP(x0, e.f64()), e.cd(1.0)),
                                     e.cd(0x1p-32));
      llvm::Value* rad = e.intrinsic(llvm::Intrinsic::sqrt,
                                     {b.CreateFMul(e.cd(-2.0), emit_philox_log(e, u1))});
      llvm::Value* ang = emit_philox_cos_2pi(e, b.CreateTrunc(x1, e.i32()));
      llvm::Value* z = b.CreateFMul(rad, ang);
      llvm::Value* r = b.CreateFAdd(e.cd(v.f), b.CreateFMul(e.cd(v.f1), z));
      return cast_value(e, r, DType::Float64, v.dtype);
    }
    case Op::RandInt: {
      const uint64_t range = static_cast<uint64_t>(v.i1) - static_cast<uint64_t>(v.i);
      KILN_INTERNAL_ASSERT(range != 0, "RandInt needs low < high, got ", v.i, ", ", v.i1);
      llvm::Value* val = b.CreateAdd(e.c64(v.i), b.CreateURem(x10, e.c64(static_cast<int64_t>(range))));
      return cast_value(e, val, DType::Int64, v.dtype);
    }
    default: break;
  }
  KILN_INTERNAL_ASSERT(false, "Philox value with non-random op ", op_name(v.random_op));
}

}  // namespace kiln::codegen::llvmcg

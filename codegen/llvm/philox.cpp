// VOp::Philox as LLVM IR: Philox4x32-10 on the counter offset + index and the
// key seed (core/philox.h), then the op's map to a value, computed exactly as
// core/reference/sources.cpp does so results agree bit for bit:
//   RandUniform  float32 / float16 / bfloat16: low + (high - low) * u24 in float;
//                float64: low + (high - low) * u53 in double
//   RandNormal   mean + std * sqrt(-2 ln u1) cos(2 pi u2) in double, with
//                core/philox.h's own ln and cos, step for step (fma for fma)
//   RandInt      low + (x1:x0 mod (high - low)) in wrapping uint64
// and finally cast_value to the Value's dtype. The rounds are plain 32x32->64
// multiplies and xors, so loops of random values vectorize.
//
// split_philox_rounds, run on the optimized module, gives each round of the
// vectorized loop a basic block of its own, for code generation's sake (below).
#include <vector>

#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>

#include "codegen/llvm/emitter.h"
#include "core/philox.h"
#include "kiln/error.h"

namespace kiln::codegen::llvmcg {

namespace {

struct Block {
  llvm::Value* x[4];
};

Block philox_block(Emitter& e, llvm::Value* seed, llvm::Value* offset, llvm::Value* index) {
  auto& b = e.b;
  llvm::Value* c = b.CreateAdd(offset, index);  // wraps mod 2^64
  Block ctr{{b.CreateTrunc(c, e.i32()), b.CreateTrunc(b.CreateLShr(c, 32), e.i32()), e.c32(0),
             e.c32(0)}};
  llvm::Value* k0 = b.CreateTrunc(seed, e.i32());
  llvm::Value* k1 = b.CreateTrunc(b.CreateLShr(seed, 32), e.i32());
  auto mul_hi_lo = [&](uint32_t m, llvm::Value* x, llvm::Value*& hi, llvm::Value*& lo) {
    llvm::Value* p = b.CreateMul(e.c64(m), b.CreateZExt(x, e.i64()));
    hi = b.CreateTrunc(b.CreateLShr(p, 32), e.i32());
    lo = b.CreateTrunc(p, e.i32());
  };
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 = b.CreateAdd(k0, e.c32(philox_detail::kW0));
      k1 = b.CreateAdd(k1, e.c32(philox_detail::kW1));
    }
    llvm::Value *hi0, *lo0, *hi1, *lo1;
    mul_hi_lo(philox_detail::kM0, ctr.x[0], hi0, lo0);
    mul_hi_lo(philox_detail::kM1, ctr.x[2], hi1, lo1);
    ctr = Block{{b.CreateXor(b.CreateXor(hi1, ctr.x[1]), k0), lo1,
                 b.CreateXor(b.CreateXor(hi0, ctr.x[3]), k1), lo0}};
  }
  return ctr;
}

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

// A round's first multiply: a mul by kM0 (as a constant or a splat), the
// constant that InstCombine and the vectorizer leave in place.
bool is_round_multiply(const llvm::Instruction& inst) {
  if (inst.getOpcode() != llvm::Instruction::Mul) return false;
  const auto* c = llvm::dyn_cast<llvm::Constant>(inst.getOperand(1));
  if (c && c->getType()->isVectorTy()) c = c->getSplatValue();
  const auto* ci = llvm::dyn_cast_or_null<llvm::ConstantInt>(c);
  return ci && ci->getBitWidth() <= 64 && ci->getZExtValue() == philox_detail::kM0;
}

}  // namespace

// SelectionDAG selects one basic block at a time, and its DAG combines ask
// for the known and demanded bits of every multiply and mask, walking up to
// six operands deep through the xor chains of the rounds before: the ten
// rounds of a 16-lane loop cost more than half a random kernel's compile.
// A round per block bounds each walk to its round (values from another
// block are opaque registers) and keeps the code the same: the blocks fall
// through into one another, and the instructions chosen are the same
// (callgrind, Ice Lake: rand compiles in 121 M instructions instead of
// 159 M, randn in 146 M instead of 177 M; the loops run as fast; a block per
// multiply or per two rounds gains no more). CodeGenPrepare would merge
// the blocks back into one; it leaves a block whose address is taken alone,
// so each block that starts with a round gets a BlockAddress that nothing
// uses. Idempotent: on a function split before it only takes the addresses
// again (CloneModule, for the assembly dump, drops the unused constants).
void split_philox_rounds(llvm::Function& f) {
  std::vector<llvm::Instruction*> cuts;
  for (llvm::BasicBlock& bb : f) {
    bool first = true;
    for (llvm::Instruction& inst : bb) {
      if (!is_round_multiply(inst)) continue;
      if (!first) cuts.push_back(&inst);
      first = false;
    }
  }
  for (llvm::Instruction* cut : cuts) llvm::SplitBlock(cut->getParent(), cut);
  for (llvm::BasicBlock& bb : f)
    if (&bb != &f.getEntryBlock() && is_round_multiply(*bb.getFirstNonPHI()))
      (void)llvm::BlockAddress::get(&bb);
}

llvm::Value* emit_philox(Emitter& e, const jit::Value& v, llvm::Value* index, llvm::Value* seed,
                         llvm::Value* offset) {
  auto& b = e.b;
  const Block blk = philox_block(e, seed, offset, index);
  llvm::Value* x0 = b.CreateZExt(blk.x[0], e.i64());
  llvm::Value* x1 = b.CreateZExt(blk.x[1], e.i64());
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
      llvm::Value* ang = emit_philox_cos_2pi(e, blk.x[1]);
      llvm::Value* z = b.CreateFMul(rad, ang);
      llvm::Value* r = b.CreateFAdd(e.cd(v.f), b.CreateFMul(e.cd(v.f1), z));
      return cast_value(e, r, DType::Float64, v.dtype);
    }
    case Op::RandInt: {
      const uint64_t range = static_cast<uint64_t>(v.i1) - static_cast<uint64_t>(v.i);
      KILN_INTERNAL_ASSERT(range != 0, "RandInt needs low < high, got ", v.i, ", ", v.i1);
      llvm::Value* r = b.CreateOr(b.CreateShl(x1, 32), x0);
      llvm::Value* val = b.CreateAdd(e.c64(v.i), b.CreateURem(r, e.c64(static_cast<int64_t>(range))));
      return cast_value(e, val, DType::Int64, v.dtype);
    }
    default: break;
  }
  KILN_INTERNAL_ASSERT(false, "Philox value with non-random op ", op_name(v.random_op));
}

}  // namespace kiln::codegen::llvmcg

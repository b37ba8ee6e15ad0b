// The optimization pipeline every kernel module runs before code generation.
//
// Kernels are one function of guarded, rotated loops over runtime extents
// (lower_kernel.cpp), so they need few of O2's passes: inline the body (its
// noalias parameters become alias scopes), promote accumulators, clean up,
// hoist loop invariants (params, broadcast loads, row statistics), vectorize
// the innermost loops (float32 math and the Philox generator as calls with
// vector variants, vector_variants.cpp, whose bodies are defined and
// inlined right after), clean up again, rebuild interleaved stores of 3,
// 5, 6 or 7 vectors from native shuffles (wide_shuffles.h), strength-reduce
// the loops that step by a runtime stride, make a large one-pass kernel's
// stores non-temporal (stream_stores.h). O2's remaining passes (the CGSCC inliner walk,
// induction variable simplification, loop unrolling of outer loops, loop
// load elimination, jump threading, SLP...) cost compile time and found
// nothing in these kernels.
// Then code generation (emit_code): the target's standard pipeline, less
// its loop strength reduction of every loop, less early machine LICM for row
// kernels that evaluate math polynomials, the machine scheduler for long
// loops only, fast instruction selection for the scalar blocks of vectorized
// kernels; its pass manager is kept per thread and reused.
#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ScalarEvolutionExpressions.h>
#include <llvm/Analysis/VectorUtils.h>
#include <llvm/CodeGen/MachineModuleInfo.h>
#include <llvm/CodeGen/Passes.h>
#include <llvm/CodeGen/TargetPassConfig.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/IPO/AlwaysInliner.h>
#include <llvm/Transforms/InstCombine/InstCombine.h>
#include <llvm/Transforms/Scalar/EarlyCSE.h>
#include <llvm/Transforms/Scalar/GVN.h>
#include <llvm/Transforms/Scalar/LICM.h>
#include <llvm/Transforms/Scalar/LoopIdiomRecognize.h>
#include <llvm/Transforms/Scalar/LoopPassManager.h>
#include <llvm/Transforms/Scalar/LoopRotation.h>
#include <llvm/Transforms/Scalar/LoopStrengthReduce.h>
#include <llvm/Transforms/Scalar/LoopUnrollPass.h>
#include <llvm/Transforms/Scalar/SROA.h>
#include <llvm/Transforms/Scalar/SimplifyCFG.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>
#include <llvm/Transforms/Vectorize/LoopVectorize.h>

#include <algorithm>
#include <memory>
#include <optional>

#include "codegen/llvm/emitter.h"
#include "codegen/llvm/pipeline.h"
#include "codegen/llvm/prefetch_streams.h"
#include "codegen/llvm/stream_stores.h"
#include "codegen/llvm/wide_shuffles.h"
#include "kiln/error.h"

namespace kiln::codegen::llvmcg {

namespace {

// An induction variable of l that steps by a constant: a phi of its header
// whose value from the latch is phi + c.
bool constant_step_iv(const llvm::Loop& l, const llvm::Value* v) {
  const auto* phi = llvm::dyn_cast<llvm::PHINode>(v);
  if (!phi || phi->getParent() != l.getHeader() || phi->getNumIncomingValues() != 2) return false;
  const llvm::BasicBlock* latch = l.getLoopLatch();
  if (!latch || phi->getBasicBlockIndex(latch) < 0) return false;
  const auto* next = llvm::dyn_cast<llvm::BinaryOperator>(phi->getIncomingValueForBlock(latch));
  return next && next->getOpcode() == llvm::Instruction::Add && next->getOperand(0) == phi &&
         llvm::isa<llvm::ConstantInt>(next->getOperand(1));
}

// Whether address p moves by a constant (or not at all) per iteration of l,
// seen from its form alone: invariant, or getelementptrs whose indices are
// invariant or such induction variables (the loops kiln emits and the
// vectorizer's: a[i], a + 32 bytes). Cheaper than asking scalar evolution,
// which the other addresses go to.
bool steps_by_constant(const llvm::Loop& l, const llvm::Value* p) {
  if (l.isLoopInvariant(p)) return true;
  const auto* gep = llvm::dyn_cast<llvm::GetElementPtrInst>(p);
  if (!gep || !steps_by_constant(l, gep->getPointerOperand())) return false;
  for (const llvm::Use& idx : gep->indices())
    if (!l.isLoopInvariant(idx.get()) && !constant_step_iv(l, idx.get())) return false;
  return true;
}

// True when some scalar load or store in l steps through memory by a stride
// known only at run time: its address is base + i * stride, a multiply per
// iteration unless loop strength reduction turns it into a pointer bump.
// A unit or constant step is an addressing mode already ([base + i*4]).
bool steps_by_runtime_stride(llvm::Loop& l, llvm::ScalarEvolution& se) {
  for (llvm::BasicBlock* bb : l.blocks())
    for (llvm::Instruction& i : *bb) {
      llvm::Value* p = llvm::getLoadStorePointerOperand(&i);
      if (!p || !p->getType()->isPointerTy()) continue;  // a gather: no scalar address to reduce
      // a vector load or store is the vectorizer's, of consecutive elements
      if (llvm::getLoadStoreType(&i)->isVectorTy()) continue;
      if (steps_by_constant(l, p)) continue;
      const auto* rec = llvm::dyn_cast<llvm::SCEVAddRecExpr>(se.getSCEV(p));
      if (rec && rec->getLoop() == &l && !llvm::isa<llvm::SCEVConstant>(rec->getStepRecurrence(se)))
        return true;
    }
  return false;
}

// LLVM's loop strength reduction, for the innermost loops that step by a
// runtime stride only. Code generation runs it on every loop (the backend
// turns that off: llvm_backend.cpp, -disable-lsr), where it was a fifth of a
// kernel's compile (softmax 13 of 68 M instructions, the staged column sum
// 54 of 111 M) and changed nothing in loops over contiguous rows: their
// addresses are base + index * size already, one addressing mode. An outer
// loop's strided address costs one multiply per inner loop run. A kernel
// without such a loop does not even put its loops in LCSSA form for it.
struct StrengthReduceStridedLoop : llvm::PassInfoMixin<StrengthReduceStridedLoop> {
  llvm::PreservedAnalyses run(llvm::Loop& l, llvm::LoopAnalysisManager& am,
                              llvm::LoopStandardAnalysisResults& ar, llvm::LPMUpdater& u) {
    if (!l.isInnermost() || !steps_by_runtime_stride(l, ar.SE)) return llvm::PreservedAnalyses::all();
    return llvm::LoopStrengthReducePass().run(l, am, ar, u);
  }
};

struct StrengthReduceStridedLoops : llvm::PassInfoMixin<StrengthReduceStridedLoops> {
  llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& fam) {
    auto& loops = fam.getResult<llvm::LoopAnalysis>(f);
    auto& se = fam.getResult<llvm::ScalarEvolutionAnalysis>(f);
    bool any = false;
    for (llvm::Loop* l : loops.getLoopsInPreorder())
      any = any || (l->isInnermost() && steps_by_runtime_stride(*l, se));
    if (!any) return llvm::PreservedAnalyses::all();
    return llvm::createFunctionToLoopPassAdaptor(StrengthReduceStridedLoop()).run(f, fam);
  }
};

// After vectorization: the lane functions' variants get their bodies
// (vector_variants.cpp). A scalar call left in a loop that steps by a
// runtime stride is in the loop that runs when the stride is not 1 (the
// vectorizer's version for stride 1 is the vector loop): every element
// comes through it, so it evaluates the function inline, not by a call of
// the twin (x[:, ::2].exp(): 1.5-1.9x slower through calls). Elsewhere a
// scalar call finishes a row after its last full vector, or runs once per
// row.
struct DefineVectorVariants : llvm::PassInfoMixin<DefineVectorVariants> {
  llvm::PreservedAnalyses run(llvm::Module& m, llvm::ModuleAnalysisManager& mam) {
    auto& fam = mam.getResult<llvm::FunctionAnalysisManagerModuleProxy>(m).getManager();
    define_vector_variants(m, [&](llvm::CallInst& call) {
      llvm::Function& f = *call.getFunction();
      llvm::Loop* l = fam.getResult<llvm::LoopAnalysis>(f).getLoopFor(call.getParent());
      return l && steps_by_runtime_stride(*l, fam.getResult<llvm::ScalarEvolutionAnalysis>(f));
    });
    return llvm::PreservedAnalyses::none();
  }
};

// The vectorizer's mask of a folded tail: lane k is active where
// i + steps[k] <=u bound (or <u), i and bound scalars (icmp of
// `splat(i) + steps` or `splat(i) | steps` with disjoint bits, against
// splat(bound)). The steps ascend and the sums never wrap (loop counters of
// element counts), so the active lanes are a prefix: the first lane tells
// whether any is active, the last whether all are: one scalar compare each,
// where a reduction of the vector mask went through the DAG selector
// (about 1 M instructions of a compile per masked access, callgrind; with
// the loads' page test below: x.exp() 17.6 -> 15.8 M, the chain 24.8 ->
// 22.9 M).
struct TailMask {
  llvm::Value* i = nullptr;
  llvm::Value* bound = nullptr;
  llvm::CmpInst::Predicate pred{};
  llvm::Constant* steps = nullptr;

  static std::optional<TailMask> match(llvm::Value* mask) {
    auto* cmp = llvm::dyn_cast<llvm::ICmpInst>(mask);
    if (!cmp || (cmp->getPredicate() != llvm::CmpInst::ICMP_ULE && cmp->getPredicate() != llvm::CmpInst::ICMP_ULT))
      return std::nullopt;
    auto* iv = llvm::dyn_cast<llvm::BinaryOperator>(cmp->getOperand(0));
    if (!iv || !(iv->getOpcode() == llvm::Instruction::Add ||
                 (iv->getOpcode() == llvm::Instruction::Or && llvm::cast<llvm::PossiblyDisjointInst>(iv)->isDisjoint())))
      return std::nullopt;
    TailMask t;
    t.pred = cmp->getPredicate();
    t.i = llvm::getSplatValue(iv->getOperand(0));
    t.bound = llvm::getSplatValue(cmp->getOperand(1));
    t.steps = llvm::dyn_cast<llvm::Constant>(iv->getOperand(1));
    if (!t.i || !t.bound || !t.steps) return std::nullopt;
    const unsigned lanes = llvm::cast<llvm::FixedVectorType>(iv->getType())->getNumElements();
    for (unsigned k = 0; k < lanes; ++k) {
      auto* c = llvm::dyn_cast_or_null<llvm::ConstantInt>(t.steps->getAggregateElement(k));
      auto* before = k ? llvm::dyn_cast_or_null<llvm::ConstantInt>(t.steps->getAggregateElement(k - 1)) : nullptr;
      if (!c || c->isNegative() || (k && (!before || !before->getValue().slt(c->getValue())))) return std::nullopt;
    }
    return t;
  }
  // Whether lane k is active (the first: some lane is; the last: all are).
  llvm::Value* lane(llvm::IRBuilder<>& b, unsigned k) const {
    auto* step = llvm::cast<llvm::ConstantInt>(steps->getAggregateElement(k));
    llvm::Value* at = step->isZero() ? i : b.CreateAdd(i, step);
    return b.CreateICmp(pred, at, bound);
  }
  unsigned last() const { return llvm::cast<llvm::FixedVectorType>(steps->getType())->getNumElements() - 1; }
};

// A loop whose tail is folded into masked loads and stores (a 16-lane
// float32 exp loop, a Philox loop: lower_kernel.cpp) accesses every vector
// through a mask, the full ones too. On AMD's Zen 5 that runs streams of
// memory at a third of their speed (x.exp() of [4096, 1024]: 3.0-3.9 ms,
// 1.0 ms unmasked), and a masked load whose 64 bytes cross a cache line
// costs about 6 ns more than a plain one, whatever its mask (bench/README.md:
// 2^20 rows of 12 floats summed in 9.5-9.8 ms through masked loads,
// 1.9-2.5 ms through plain ones). So each masked access becomes a branch:
// - a store: plain where every lane is active, masked for a row's last,
//   partial vector (the lanes past it belong to someone else);
// - a load: plain (its inactive lanes replaced by the masked load's
//   passthru where it has one) where some lane is active and the vector's
//   bytes lie in one 4 KiB page. An active lane's address is mapped, so its
//   whole page is, and the load cannot fault: the bytes past a row's end
//   (another row, the end of a buffer, a from_blob array's neighbour) are
//   read but never used. Masked only where a vector crosses a page (a
//   sixty-fourth of unaligned ones, never an aligned one) or no lane is
//   active (a padded row's guard, whose addresses may not be mapped).
// This holds for the tail loop of a split sum (loop_hints.cpp: one partial
// vector a row) too; it has no stores. There the branch is new, and costs
// compile time (callgrind, instructions of a compile: x.sum(1) 19.1 ->
// 21.1 M, softmax 59.2 -> 64.1 M); a form without a branch (a plain load
// of a readable stand-in where the test fails, and the masked load with no
// lane active where it holds: cheap to run) cost more (24.4 M, 66.2 M).
struct UnmaskFullVectors : llvm::PassInfoMixin<UnmaskFullVectors> {
  static constexpr uint64_t kPage = 4096;

  // The page test's scalar instructions (the address's offset in its page,
  // its compare, the and with the lanes' test) are tagged kKilnPageTest: a
  // loop's length for code generation (module_traits) leaves them out, so
  // that the test does not turn the machine scheduler on for a loop it did
  // not run on before (gelu_tanh's, 97 -> 101 instructions: 8 -> 10.5 ms).

  llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager&) {
    std::vector<llvm::IntrinsicInst*> masked;
    for (llvm::BasicBlock& bb : f)
      for (llvm::Instruction& i : bb)
        if (auto* ii = llvm::dyn_cast<llvm::IntrinsicInst>(&i);
            ii && (ii->getIntrinsicID() == llvm::Intrinsic::masked_store ||
                   ii->getIntrinsicID() == llvm::Intrinsic::masked_load))
          masked.push_back(ii);
    const llvm::DataLayout& dl = f.getParent()->getDataLayout();
    for (llvm::IntrinsicInst* m : masked) {
      const bool is_store = m->getIntrinsicID() == llvm::Intrinsic::masked_store;
      const unsigned first = is_store ? 1 : 0;  // store(value, ptr, align, mask), load(ptr, align, mask, passthru)
      llvm::Value* ptr = m->getArgOperand(first);
      const llvm::Align align(llvm::cast<llvm::ConstantInt>(m->getArgOperand(first + 1))->getZExtValue());
      llvm::Value* mask = m->getArgOperand(first + 2);
      llvm::IRBuilder<> at(m);
      const std::optional<TailMask> lanes = TailMask::match(mask);
      llvm::Value* plain_ok = nullptr;
      if (is_store) {
        plain_ok = lanes ? lanes->lane(at, lanes->last()) : at.CreateAndReduce(mask);
      } else {
        const uint64_t bytes = dl.getTypeStoreSize(m->getType()).getFixedValue();
        if (bytes > kPage) continue;
        llvm::Value* address = at.CreatePtrToInt(ptr, at.getInt64Ty());
        llvm::Value* offset = at.CreateAnd(address, at.getInt64(kPage - 1));
        llvm::Value* in_page = at.CreateICmpULE(offset, at.getInt64(kPage - bytes));
        plain_ok = at.CreateAnd(in_page, lanes ? lanes->lane(at, 0) : at.CreateOrReduce(mask));
        tag_instructions({address, offset, in_page, plain_ok}, kKilnPageTest);
      }
      llvm::Instruction* then_term = nullptr;
      llvm::Instruction* else_term = nullptr;
      llvm::SplitBlockAndInsertIfThenElse(plain_ok, m, &then_term, &else_term,
                                          llvm::MDBuilder(f.getContext()).createLikelyBranchWeights());
      llvm::IRBuilder<> plain(then_term);
      llvm::Instruction* unmasked = is_store
          ? static_cast<llvm::Instruction*>(plain.CreateAlignedStore(m->getArgOperand(0), ptr, align))
          : plain.CreateAlignedLoad(m->getType(), ptr, align);
      unmasked->copyMetadata(*m);
      llvm::BasicBlock* tail = then_term->getSuccessor(0);
      m->moveBefore(else_term);
      if (!is_store) {
        llvm::Value* passthru = m->getArgOperand(3);
        llvm::Value* value = llvm::isa<llvm::UndefValue>(passthru)  // (poison too)
                                 ? static_cast<llvm::Value*>(unmasked)
                                 : plain.CreateSelect(mask, unmasked, passthru);
        llvm::PHINode* phi = llvm::PHINode::Create(m->getType(), 2, "", &tail->front());
        m->replaceAllUsesWith(phi);
        phi->addIncoming(value, then_term->getParent());
        phi->addIncoming(m, else_term->getParent());
      }
    }
    return masked.empty() ? llvm::PreservedAnalyses::all() : llvm::PreservedAnalyses::none();
  }
};

}  // namespace

void optimize_kernel(llvm::Module& m, llvm::TargetMachine* tm, bool unroll_constant_loops, int32_t footprint_slot) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions pto;
  pto.LoopVectorization = true;
  pto.LoopInterleaving = true;
  pto.SLPVectorization = false;
  pto.LoopUnrolling = false;
  llvm::PassBuilder pb(tm, pto);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::FunctionPassManager fpm;
  fpm.addPass(llvm::SROAPass(llvm::SROAOptions::ModifyCFG));
  fpm.addPass(llvm::EarlyCSEPass(/*UseMemorySSA=*/true));
  fpm.addPass(llvm::InstCombinePass());
  fpm.addPass(llvm::SimplifyCFGPass());
  {
    llvm::LoopPassManager lpm;
    lpm.addPass(llvm::LoopRotatePass());
    lpm.addPass(llvm::LICMPass(llvm::LICMOptions()));
    fpm.addPass(llvm::createFunctionToLoopPassAdaptor(std::move(lpm), /*UseMemorySSA=*/true));
  }
  fpm.addPass(llvm::GVNPass());
  // No IndVarSimplify: kiln's loops count up by one in i64 from 0 already;
  // it only turned their exit tests from < into == and cost a twentieth of
  // a kernel's compile (callgrind: x * 2 15.1 M -> 14.2 M, softmax 53.6 M
  // -> 52.4 M; the same vector loops).
  {
    llvm::LoopPassManager lpm;
    // Not where stores may stream (a footprint param): a tile's rows copied
    // out as memcpy calls would store through the cache (4096² transposed
    // copy 0.88x, NHWC -> NCHW [32, 56, 56, 64] 0.73x as vector stores).
    if (footprint_slot < 0) lpm.addPass(llvm::LoopIdiomRecognizePass());
    // a narrow side's loop of a constant trip count (jit/lower_tiles.cpp)
    // unrolled, so the vectorizer sees one position's elements as a group
    // of loads or stores (RGB NCHW <-> NHWC: 3.8-4.6x faster)
    if (unroll_constant_loops) lpm.addPass(llvm::LoopFullUnrollPass(2, false, false));
    fpm.addPass(llvm::createFunctionToLoopPassAdaptor(std::move(lpm)));
  }
  fpm.addPass(llvm::InstCombinePass());
  fpm.addPass(llvm::LoopVectorizePass(
      llvm::LoopVectorizeOptions(/*InterleaveOnlyWhenForced=*/false, /*VectorizeOnlyWhenForced=*/false)));
  // The vector variants of the lane functions the vectorizer called get
  // their bodies and are inlined (vector_variants.cpp).
  llvm::FunctionPassManager after;
  after.addPass(llvm::InstCombinePass());
  after.addPass(llvm::SimplifyCFGPass(llvm::SimplifyCFGOptions().hoistCommonInsts(true).sinkCommonInsts(true)));
  {
    llvm::LoopPassManager lpm;
    lpm.addPass(llvm::LICMPass(llvm::LICMOptions()));
    after.addPass(llvm::createFunctionToLoopPassAdaptor(std::move(lpm), /*UseMemorySSA=*/true));
  }
  after.addPass(UnmaskFullVectors());
  after.addPass(InterleaveAsNativeShuffles());
  after.addPass(StrengthReduceStridedLoops());
  after.addPass(StreamLargeStores{{}, footprint_slot});
  after.addPass(PrefetchWideningStreams());
  declare_vector_variants(m, *tm);
  llvm::ModulePassManager mpm;
  mpm.addPass(llvm::AlwaysInlinerPass());
  mpm.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(fpm)));
  mpm.addPass(DefineVectorVariants());
  mpm.addPass(llvm::AlwaysInlinerPass());
  mpm.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(after)));
  mpm.run(m, mam);
}

// Code generation: LLVMTargetMachine::addPassesToEmitFile's pipeline with
// these changes.
// - Early machine LICM is left out of kernels that evaluate math polynomials
//   in loops of a row (hoist_invariants false). It hoists every loop-invariant
//   value out of every loop it can. In a row kernel with an exp polynomial
//   (softmax) that is each coefficient, broadcast into a vector register at
//   the top of the function and held across all of the row's loops: the
//   register allocator then works at full pressure, a sixth of the kernel's
//   compile. Without it the coefficients stay memory operands of the FMAs
//   (AVX-512 broadcasts them for free): softmax compiles in 68 M instructions
//   instead of 90 M (callgrind) and runs as fast (1 thread: 0.150 against
//   0.151 ms at [64, 4096], 2.82 against 2.87 ms at [1024, 4096]). A kernel of
//   one inner loop keeps it: the chain ran 16% slower at [1024, 4096] without
//   it, its broadcasts redone every iteration; a tiled transpose twice as
//   slowly.
// - The machine instruction scheduler (before register allocation) only
//   where some innermost loop is longer than 100 IR instructions: its cost
//   grows with the loop bodies, its gain is in the long ones. llvm-mca
//   (Skylake-AVX512 model) of the vector loops with / without it, cycles an
//   iteration: atan2 + tan (192 instructions) 175 / 217, pow (119) 157 / 161,
//   erf (120) 116 / 116, sigmoid * log (104) 88 / 91; softmax's exp and sum
//   (80) 28.9 / 28.9, gelu (65) and the chain (44) the same. Softmax: 2.8 M
//   of its 52 M instructions.
// - Fast instruction selection where every innermost loop was vectorized
//   and no instruction needs the DAG's combines (ModuleTraits below): the
//   scalar blocks (set-up, row loops, the scalar remainders of vector loops)
//   are selected without building a selection DAG; a block with an
//   instruction fast selection does not handle (intrinsics such as fma and
//   maximum, shuffles, vector compares and casts) goes to the DAG selector
//   from that instruction up, so softmax's, the chain's and x * 2's vector
//   loops come out as before. Softmax: 4.5 M instructions less. A kernel
//   with a scalar innermost loop (a scan, a loop over a runtime stride, the
//   Philox rounds) keeps the DAG selector: fast selection does not fold a
//   scaled index into an address (one instruction more per element), nor a
//   zero-extended multiply into pmuludq.
// - The pass manager is built once per thread, target machine and variant,
//   and run on every module (llc -run-twice tests the same): building it was
//   2.3 M instructions of every compile. The objects are byte for byte those
//   of a fresh pass manager (1340 kernels of the jit, llvm and fusion tests
//   compared). Assembly output (dumps) builds its own.

namespace {

// What code generation needs to know of m: whether every innermost loop came
// out of the loop vectorizer (the vector loop, or the scalar loop that
// finishes its rows, both tagged llvm.loop.isvectorized), the instruction
// count of the longest, and whether some instruction needs a DAG combine to
// be cheap: an integer division or remainder by a constant (fast selection
// emits idiv where the DAG shifts or multiplies: x / 16 in a scan's tile
// count), a vector integer multiply by a constant (vpmulld where the DAG
// adds).
struct ModuleTraits {
  bool all_vectorized = true;
  size_t longest_loop = 0;
  bool needs_combines = false;
};

bool needs_combines(const llvm::Instruction& i) {
  switch (i.getOpcode()) {
    case llvm::Instruction::SDiv:
    case llvm::Instruction::UDiv:
    case llvm::Instruction::SRem:
    case llvm::Instruction::URem: return llvm::isa<llvm::Constant>(i.getOperand(1));
    case llvm::Instruction::Mul:
      return i.getType()->isVectorTy() &&
             (llvm::isa<llvm::Constant>(i.getOperand(0)) || llvm::isa<llvm::Constant>(i.getOperand(1)));
    default: return false;
  }
}

ModuleTraits module_traits(llvm::Module& m) {
  ModuleTraits r;
  for (llvm::Function& f : m) {
    if (f.isDeclaration()) continue;
    for (const llvm::BasicBlock& bb : f)
      for (const llvm::Instruction& i : bb) r.needs_combines = r.needs_combines || needs_combines(i);
    llvm::DominatorTree dt(f);
    llvm::LoopInfo li(dt);
    for (llvm::Loop* l : li.getLoopsInPreorder()) {
      if (!l->isInnermost()) continue;
      r.all_vectorized = r.all_vectorized && llvm::findOptionMDForLoop(l, "llvm.loop.isvectorized");
      size_t n = 0;
      for (const llvm::BasicBlock* bb : l->blocks())
        for (const llvm::Instruction& i : *bb)
          n += !i.hasMetadata(kKilnPageTest) && !i.hasMetadata(kKilnStreamTest);
      r.longest_loop = std::max(r.longest_loop, n);
    }
  }
  return r;
}

// Loops this long get the machine scheduler (IR instructions).
constexpr size_t kScheduleLoopsLongerThan = 100;

// A code generation pass pipeline writing into its own buffer.
struct CodegenPipeline {
  llvm::SmallVector<char, 0> out;
  llvm::raw_svector_ostream os{out};
  llvm::legacy::PassManager pm;
  const llvm::TargetMachine* tm = nullptr;
};

void build_codegen(llvm::legacy::PassManager& pm, llvm::LLVMTargetMachine& ltm, llvm::raw_pwrite_stream& os,
                   bool assembly, bool hoist_invariants, bool schedule) {
  auto* mmi = new llvm::MachineModuleInfoWrapperPass(&ltm);  // owned by pm
  llvm::TargetPassConfig* config = ltm.createPassConfig(pm);  // owned by pm
  config->setDisableVerify(true);
  pm.add(config);
  pm.add(mmi);
  if (!hoist_invariants) config->disablePass(&llvm::EarlyMachineLICMID);
  if (!schedule) config->disablePass(&llvm::MachineSchedulerID);
  KILN_INTERNAL_ASSERT(!config->addISelPasses(), "the host target has no instruction selector");
  config->addMachinePasses();
  config->setInitialized();
  const auto type = assembly ? llvm::CodeGenFileType::AssemblyFile : llvm::CodeGenFileType::ObjectFile;
  KILN_INTERNAL_ASSERT(!ltm.addAsmPrinter(pm, os, nullptr, type, mmi->getMMI().getContext()),
                       "the host target cannot emit ", assembly ? "assembly" : "object files");
  pm.add(llvm::createFreeMachineFunctionPass());
}

}  // namespace

void emit_code(llvm::Module& m, llvm::TargetMachine& tm, llvm::raw_pwrite_stream& os, bool assembly,
               bool hoist_invariants) {
  auto& ltm = static_cast<llvm::LLVMTargetMachine&>(tm);
  const ModuleTraits traits = module_traits(m);
  ltm.setFastISel(traits.all_vectorized && !traits.needs_combines);
  const bool schedule = traits.longest_loop > kScheduleLoopsLongerThan;
  if (assembly) {
    llvm::legacy::PassManager pm;
    build_codegen(pm, ltm, os, true, hoist_invariants, schedule);
    pm.run(m);
    return;
  }
  // One per variant; remade when the thread's target machine changes.
  thread_local std::unique_ptr<CodegenPipeline> cached[4];
  std::unique_ptr<CodegenPipeline>& p = cached[(hoist_invariants ? 2 : 0) + (schedule ? 1 : 0)];
  if (!p || p->tm != &tm) {
    p = std::make_unique<CodegenPipeline>();
    p->tm = &tm;
    build_codegen(p->pm, ltm, p->os, false, hoist_invariants, schedule);
  }
  std::unique_ptr<CodegenPipeline> running = std::move(p);  // not reused if run throws
  running->pm.run(m);
  os << llvm::StringRef(running->out.data(), running->out.size());
  running->out.clear();
  p = std::move(running);
}

}  // namespace kiln::codegen::llvmcg

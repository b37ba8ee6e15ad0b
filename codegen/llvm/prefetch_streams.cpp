// Software prefetch for vector loops that widen float32 to float64 as they
// read (prefetch_streams.h).
#include "codegen/llvm/prefetch_streams.h"

#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ScalarEvolution.h>
#include <llvm/Analysis/ScalarEvolutionExpressions.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>
#include <llvm/TargetParser/Triple.h>

#include <vector>

#include "codegen/llvm/emitter.h"

namespace kiln::codegen::llvmcg {

namespace {

// A vector fpext to double in l's blocks, and nothing written to memory:
// the loop sums (a scan down columns, which stores its running values,
// ran 1.1x slower prefetched: x.cumsum(0) of 4096 x 4096).
bool sums_widening(const llvm::Loop& l) {
  bool widens = false;
  for (const llvm::BasicBlock* bb : l.blocks())
    for (const llvm::Instruction& i : *bb) {
      if (i.mayWriteToMemory()) return false;
      if (const auto* e = llvm::dyn_cast<llvm::FPExtInst>(&i))
        widens = widens || (e->getType()->isVectorTy() && e->getType()->getScalarType()->isDoubleTy());
    }
  return widens;
}

struct Stream {
  const llvm::SCEV* start;  // the first load's address at the loop's entry
  llvm::LoadInst* first;    // the load at the lowest address
  int64_t step;             // bytes an iteration
};

}  // namespace

llvm::PreservedAnalyses PrefetchWideningStreams::run(llvm::Function& f, llvm::FunctionAnalysisManager& fam) {
  if (f.isDeclaration() || !llvm::Triple(f.getParent()->getTargetTriple()).isX86())
    return llvm::PreservedAnalyses::all();
  auto& loops = fam.getResult<llvm::LoopAnalysis>(f);
  std::vector<llvm::Loop*> widening;
  for (llvm::Loop* l : loops.getLoopsInPreorder())
    // (not a split sum's tail, one masked vector a row: lower_kernel.cpp)
    if (l->isInnermost() && !llvm::findOptionMDForLoop(l, kKilnTailLoop) && sums_widening(*l))
      widening.push_back(l);
  if (widening.empty()) return llvm::PreservedAnalyses::all();
  auto& se = fam.getResult<llvm::ScalarEvolutionAnalysis>(f);
  bool changed = false;
  for (llvm::Loop* l : widening) {
    std::vector<Stream> streams;
    for (llvm::BasicBlock* bb : l->blocks())
      for (llvm::Instruction& i : *bb) {
        auto* ld = llvm::dyn_cast<llvm::LoadInst>(&i);
        if (!ld || ld->isVolatile() || !ld->getType()->isVectorTy() ||
            llvm::isa<llvm::AllocaInst>(llvm::getUnderlyingObject(ld->getPointerOperand())))
          continue;  // (a local: in the cache already)
        const auto* rec = llvm::dyn_cast<llvm::SCEVAddRecExpr>(se.getSCEV(ld->getPointerOperand()));
        if (!rec || rec->getLoop() != l || !rec->isAffine()) continue;
        const auto* step = llvm::dyn_cast<llvm::SCEVConstant>(rec->getStepRecurrence(se));
        if (!step || step->getAPInt().getSExtValue() <= 0 || step->getAPInt().getSExtValue() > 256) continue;
        const int64_t bytes = step->getAPInt().getSExtValue();
        bool joined = false;
        for (Stream& s : streams) {
          // the same stream: a constant distance under one step
          const auto* d = llvm::dyn_cast<llvm::SCEVConstant>(se.getMinusSCEV(rec->getStart(), s.start));
          if (!d || s.step != bytes || d->getAPInt().abs().getZExtValue() >= static_cast<uint64_t>(bytes)) continue;
          if (d->getAPInt().isNegative()) s.start = rec->getStart(), s.first = ld;
          joined = true;
          break;
        }
        if (!joined) streams.push_back({rec->getStart(), ld, bytes});
      }
    for (const Stream& s : streams) {
      llvm::IRBuilder<> b(s.first);
      for (int64_t at = 0; at < s.step; at += 64) {
        llvm::Value* p = b.CreateConstGEP1_64(b.getInt8Ty(), s.first->getPointerOperand(), kPrefetchBytes + at);
        // read, keep in every level (prefetcht0), data
        b.CreateIntrinsic(llvm::Intrinsic::prefetch, {p->getType()},
                          {p, b.getInt32(0), b.getInt32(3), b.getInt32(1)});
        changed = true;
      }
    }
  }
  return changed ? llvm::PreservedAnalyses::none() : llvm::PreservedAnalyses::all();
}

}  // namespace kiln::codegen::llvmcg

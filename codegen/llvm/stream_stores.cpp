// Streaming stores for kernels that outgrow the caches (stream_stores.h).
#include "codegen/llvm/stream_stores.h"

#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/Module.h>
#include <llvm/TargetParser/Triple.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>

#include <utility>
#include <vector>

#include "codegen/llvm/emitter.h"

namespace kiln::codegen::llvmcg {

namespace {

// The alignment a non-temporal store of `bytes` needs, 0 where the store is
// not streamed: whole 64-byte lines (a 512-bit vector, an interleaved
// group's several), or a 256-bit vector (two of them fill a line).
uint64_t stream_alignment(uint64_t bytes) {
  if (bytes % 64 == 0) return 64;
  return bytes == 32 ? 32 : 0;
}

}  // namespace

llvm::PreservedAnalyses StreamLargeStores::run(llvm::Function& f, llvm::FunctionAnalysisManager& fam) {
  // the entry function only: (buffers, params, begin, end), exported
  if (footprint_slot < 0 || f.isDeclaration() || !f.hasExternalLinkage() || f.arg_size() != 4)
    return llvm::PreservedAnalyses::all();
  if (!llvm::Triple(f.getParent()->getTargetTriple()).isX86()) return llvm::PreservedAnalyses::all();
  const llvm::DataLayout& dl = f.getParent()->getDataLayout();
  auto& loops = fam.getResult<llvm::LoopAnalysis>(f);
  std::vector<std::pair<llvm::StoreInst*, uint64_t>> stores;  // and the alignment each needs
  for (llvm::BasicBlock& bb : f) {
    if (!loops.getLoopFor(&bb)) continue;
    for (llvm::Instruction& i : bb) {
      auto* s = llvm::dyn_cast<llvm::StoreInst>(&i);
      if (!s || s->isVolatile() || !s->getValueOperand()->getType()->isVectorTy()) continue;
      const uint64_t align = stream_alignment(dl.getTypeStoreSize(s->getValueOperand()->getType()).getFixedValue());
      // a local (a stage's tile, an accumulator row) is read again at once
      if (!align || llvm::isa<llvm::AllocaInst>(llvm::getUnderlyingObject(s->getPointerOperand()))) continue;
      stores.emplace_back(s, align);
    }
  }
  if (stores.empty()) return llvm::PreservedAnalyses::all();

  llvm::LLVMContext& ctx = f.getContext();
  llvm::IRBuilder<> entry(&*f.getEntryBlock().getFirstInsertionPt());
  llvm::Type* i64 = entry.getInt64Ty();
  llvm::Value* slot = entry.CreateConstInBoundsGEP1_64(i64, f.getArg(1), static_cast<uint64_t>(footprint_slot));
  llvm::Value* footprint = entry.CreateAlignedLoad(i64, slot, llvm::Align(8));
  // 1 below the threshold: or-ed into an address, no alignment test passes
  llvm::Value* keep = entry.CreateZExt(entry.CreateICmpULT(footprint, entry.getInt64(kStreamStoreBytes)), i64);
  llvm::MDNode* nontemporal = llvm::MDNode::get(ctx, llvm::ConstantAsMetadata::get(entry.getInt32(1)));
  for (auto [s, align] : stores) {
    llvm::IRBuilder<> at(s);
    llvm::Value* address = at.CreatePtrToInt(s->getPointerOperand(), i64);
    llvm::Value* kept = at.CreateOr(address, keep);
    llvm::Value* low = at.CreateAnd(kept, at.getInt64(align - 1));
    llvm::Value* stream = at.CreateICmpEQ(low, at.getInt64(0));
    tag_instructions({address, kept, low, stream}, kKilnStreamTest);
    llvm::Instruction* then_term = nullptr;
    llvm::Instruction* else_term = nullptr;
    llvm::SplitBlockAndInsertIfThenElse(stream, s, &then_term, &else_term);
    llvm::IRBuilder<> nt(then_term);
    llvm::StoreInst* streamed = nt.CreateAlignedStore(s->getValueOperand(), s->getPointerOperand(), llvm::Align(align));
    streamed->copyMetadata(*s);
    streamed->setMetadata(llvm::LLVMContext::MD_nontemporal, nontemporal);
    s->moveBefore(else_term);
  }
  for (llvm::BasicBlock& bb : f)
    if (auto* ret = llvm::dyn_cast<llvm::ReturnInst>(bb.getTerminator()))
      llvm::IRBuilder<>(ret).CreateIntrinsic(llvm::Intrinsic::x86_sse_sfence, {}, {});
  return llvm::PreservedAnalyses::none();
}

}  // namespace kiln::codegen::llvmcg

// A Stage statement (kernel_ir.h): a tile of a source buffer copied
// transposed into a local. The tile goes in blocks of 16 x 16 elements:
// a whole block as 16 vector loads of the source's rows, a transpose in
// registers (four rounds of two-source shuffles, 64 in all: one vpermt2
// each on AVX-512), and 16 vector stores of the local's rows; a block
// cut by the tile's edge the same way, its missing rows and columns
// standing in for nothing the body reads. The loops over blocks stay
// loops (neither unrolled nor vectorized again): the block is the vector.
#include "codegen/llvm/emitter.h"

namespace kiln::codegen::llvmcg {

namespace {

constexpr unsigned kBlock = 16;

// rows[i] (kBlock vectors of kBlock elements) transposed: rows[j][i] is the
// old rows[i][j]. Each round h swaps the off-diagonal h x h blocks of every
// 2h x 2h block; after h = 8, 4, 2, 1 every element has moved to its mirror.
void transpose_block(llvm::IRBuilder<>& b, std::vector<llvm::Value*>& rows) {
  for (unsigned h = kBlock / 2; h >= 1; h /= 2) {
    std::vector<int> lo(kBlock), hi(kBlock);
    for (unsigned j = 0; j < kBlock; ++j) {
      const bool left = (j & h) == 0;  // lane j of the pair's first row keeps its own element
      lo[j] = static_cast<int>(left ? j : kBlock + j - h);
      hi[j] = static_cast<int>(left ? j + h : kBlock + j);
    }
    for (unsigned i = 0; i < kBlock; ++i) {
      if (i & h) continue;
      llvm::Value* x = rows[i];
      llvm::Value* y = rows[i + h];
      rows[i] = b.CreateShuffleVector(x, y, lo);
      rows[i + h] = b.CreateShuffleVector(x, y, hi);
    }
  }
}

// A loop of var = 0, step, 2 step, ... while var < n (n > 0 is tested),
// body(var) emitted inside; marked neither to unroll nor to vectorize.
template <class F>
void step_loop(Emitter& e, llvm::Value* n, int64_t step, const char* tag, const F& body) {
  auto& b = e.b;
  llvm::Function* f = b.GetInsertBlock()->getParent();
  llvm::BasicBlock* pre = b.GetInsertBlock();
  llvm::BasicBlock* loop = llvm::BasicBlock::Create(e.ctx, std::string(tag) + ".body", f);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(e.ctx, std::string(tag) + ".exit", f);
  b.CreateCondBr(b.CreateICmpSGT(n, e.c64(0)), loop, exit);
  b.SetInsertPoint(loop);
  llvm::PHINode* iv = b.CreatePHI(e.i64(), 2, std::string(tag) + ".i");
  iv->addIncoming(e.c64(0), pre);
  body(iv);
  llvm::Value* next = b.CreateAdd(iv, e.c64(step), "", /*HasNUW=*/true, /*HasNSW=*/true);
  iv->addIncoming(next, b.GetInsertBlock());
  llvm::BranchInst* latch = b.CreateCondBr(b.CreateICmpSLT(next, n), loop, exit);
  llvm::LLVMContext& c = e.ctx;
  llvm::Metadata* no_unroll[] = {llvm::MDString::get(c, "llvm.loop.unroll.disable")};
  llvm::Metadata* no_vector[] = {llvm::MDString::get(c, "llvm.loop.vectorize.enable"),
                                 llvm::ConstantAsMetadata::get(b.getFalse())};
  llvm::Metadata* ops[] = {nullptr, llvm::MDNode::get(c, no_unroll), llvm::MDNode::get(c, no_vector)};
  llvm::MDNode* md = llvm::MDNode::getDistinct(c, ops);
  md->replaceOperandWith(0, md);
  latch->setMetadata(llvm::LLVMContext::MD_loop, md);
  b.SetInsertPoint(exit);
}

}  // namespace

void emit_stage(Emitter& e, const StageTile& s) {
  auto& b = e.b;
  llvm::Type* et = mem_type(e, s.dtype);
  auto* vt = llvm::FixedVectorType::get(et, kBlock);
  const llvm::Align align(element_size(s.dtype));
  const int64_t B = kBlock;
  std::vector<llvm::Constant*> lane_ids;
  for (unsigned j = 0; j < kBlock; ++j) lane_ids.push_back(e.c64(j));
  llvm::Constant* lanes = llvm::ConstantVector::get(lane_ids);
  step_loop(e, s.rows, B, "stage.r", [&](llvm::Value* r0) {
    step_loop(e, s.cols, B, "stage.c", [&](llvm::Value* c0) {
      // rows past the tile's edge read its last row again and columns past
      // it nothing (a masked load): both land in the local where the body
      // never reads (the local's sides are multiples of the block's)
      llvm::Value* last_row = b.CreateSub(b.CreateSub(s.rows, r0), e.c64(1));
      llvm::Value* col_left = b.CreateSub(s.cols, c0);
      llvm::Value* from = b.CreateAdd(s.origin, b.CreateAdd(b.CreateMul(r0, s.step), c0));
      std::vector<llvm::Value*> at(kBlock);
      for (unsigned i = 0; i < kBlock; ++i) {
        llvm::Value* r = i == 0 ? e.c64(0) : e.intrinsic(llvm::Intrinsic::smin, {e.c64(i), last_row});
        at[i] = b.CreateInBoundsGEP(et, s.src, b.CreateAdd(from, b.CreateMul(r, s.step)));
      }
      llvm::Function* f = b.GetInsertBlock()->getParent();
      llvm::BasicBlock* whole = llvm::BasicBlock::Create(e.ctx, "stage.whole", f);
      llvm::BasicBlock* part = llvm::BasicBlock::Create(e.ctx, "stage.part", f);
      llvm::BasicBlock* moved = llvm::BasicBlock::Create(e.ctx, "stage.moved", f);
      b.CreateCondBr(b.CreateICmpSGE(col_left, e.c64(B)), whole, part);
      b.SetInsertPoint(whole);  // plain loads (a masked one of bytes is a loop where AVX-512 is not)
      std::vector<llvm::Value*> full(kBlock);
      for (unsigned i = 0; i < kBlock; ++i) full[i] = b.CreateAlignedLoad(vt, at[i], align);
      b.CreateBr(moved);
      b.SetInsertPoint(part);
      llvm::Value* mask = b.CreateICmpSLT(lanes, b.CreateVectorSplat(kBlock, col_left));
      std::vector<llvm::Value*> cut(kBlock);
      llvm::Value* zero = llvm::Constant::getNullValue(vt);
      for (unsigned i = 0; i < kBlock; ++i) cut[i] = b.CreateMaskedLoad(vt, at[i], align, mask, zero);
      b.CreateBr(moved);
      b.SetInsertPoint(moved);
      std::vector<llvm::Value*> rows(kBlock);
      for (unsigned i = 0; i < kBlock; ++i) {
        llvm::PHINode* p = b.CreatePHI(vt, 2);
        p->addIncoming(full[i], whole);
        p->addIncoming(cut[i], part);
        rows[i] = p;
      }
      transpose_block(b, rows);
      llvm::Value* to = b.CreateAdd(b.CreateMul(c0, e.c64(s.row_length)), r0);
      for (unsigned j = 0; j < kBlock; ++j) {
        llvm::Value* q = b.CreateAdd(to, e.c64(static_cast<int64_t>(j) * s.row_length));
        b.CreateAlignedStore(rows[j], b.CreateInBoundsGEP(et, s.dst, q), align);
      }
    });
  });
}

}  // namespace kiln::codegen::llvmcg

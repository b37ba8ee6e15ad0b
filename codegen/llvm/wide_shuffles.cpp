// Interleaved stores as shuffles of native vectors (wide_shuffles.h).
#include "codegen/llvm/wide_shuffles.h"

#include <llvm/IR/DataLayout.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>
#include <llvm/Transforms/Utils/Local.h>

#include <algorithm>
#include <utility>
#include <vector>

namespace kiln::codegen::llvmcg {

namespace {

// A lane of a source vector (null: poison).
using Lane = std::pair<llvm::Value*, int>;

// v's lanes as lanes of the vectors it shuffles together, through every
// shufflevector, each such source of `native` lanes; false if one is not.
bool source_lanes(llvm::Value* v, unsigned native, std::vector<Lane>& out, int depth = 0) {
  auto* type = llvm::dyn_cast<llvm::FixedVectorType>(v->getType());
  if (!type || depth > 8) return false;
  auto* s = llvm::dyn_cast<llvm::ShuffleVectorInst>(v);
  if (!s) {
    if (type->getNumElements() != native) return false;
    for (unsigned i = 0; i < native; ++i) out.emplace_back(v, static_cast<int>(i));
    return true;
  }
  std::vector<Lane> a, b;
  if (!source_lanes(s->getOperand(0), native, a, depth + 1)) return false;
  if (!llvm::isa<llvm::PoisonValue>(s->getOperand(1)) && !source_lanes(s->getOperand(1), native, b, depth + 1))
    return false;
  const int n = static_cast<int>(a.size());
  for (int m : s->getShuffleMask()) {
    if (m < 0) out.emplace_back(nullptr, -1);
    else if (m < n) out.push_back(a[static_cast<size_t>(m)]);
    else if (m - n < static_cast<int>(b.size())) out.push_back(b[static_cast<size_t>(m - n)]);
    else out.emplace_back(nullptr, -1);  // a lane of a poison operand
  }
  return true;
}

// The native vector of lanes `lanes`: a shuffle of its first two sources,
// then one more shuffle for each further source.
llvm::Value* native_part(llvm::IRBuilder<>& b, const std::vector<Lane>& lanes, llvm::FixedVectorType* type) {
  const int n = static_cast<int>(lanes.size());
  std::vector<llvm::Value*> sources;
  for (const Lane& l : lanes)
    if (l.first && std::find(sources.begin(), sources.end(), l.first) == sources.end()) sources.push_back(l.first);
  if (sources.empty()) return llvm::PoisonValue::get(type);
  llvm::Value* acc = sources[0];
  std::vector<bool> have(static_cast<size_t>(n), false);
  std::vector<int> mask(static_cast<size_t>(n));
  for (size_t k = 0; k < sources.size(); ++k) {
    if (k == 1) continue;  // (taken with the first)
    llvm::Value* other = k == 0 ? (sources.size() > 1 ? sources[1] : nullptr) : sources[k];
    for (int i = 0; i < n; ++i) {
      const Lane& l = lanes[static_cast<size_t>(i)];
      if (k == 0 && l.first == sources[0]) mask[i] = l.second;
      else if (k > 0 && have[i]) mask[i] = i;
      else if (other && l.first == other) mask[i] = n + l.second;
      else mask[i] = -1;
      have[i] = mask[i] >= 0;
    }
    acc = b.CreateShuffleVector(acc, other ? other : llvm::PoisonValue::get(type), mask);
  }
  return acc;
}

}  // namespace

llvm::PreservedAnalyses InterleaveAsNativeShuffles::run(llvm::Function& f, llvm::FunctionAnalysisManager&) {
  std::vector<std::pair<llvm::StoreInst*, llvm::ShuffleVectorInst*>> found;
  for (llvm::BasicBlock& bb : f)
    for (llvm::Instruction& i : bb)
      if (auto* st = llvm::dyn_cast<llvm::StoreInst>(&i))
        if (auto* s = llvm::dyn_cast<llvm::ShuffleVectorInst>(st->getValueOperand()); s && st->isSimple())
          found.emplace_back(st, s);
  bool changed = false;
  for (auto [st, s] : found) {
    auto* wide = llvm::cast<llvm::FixedVectorType>(s->getType());
    // the sources are the vectorizer's vectors of one position each, under
    // the concatenations of the operands
    llvm::Value* leaf = s->getOperand(0);
    while (auto* c = llvm::dyn_cast<llvm::ShuffleVectorInst>(leaf)) leaf = c->getOperand(0);
    auto* src = llvm::dyn_cast<llvm::FixedVectorType>(leaf->getType());
    if (!src) continue;
    const unsigned native = src->getNumElements(), total = wide->getNumElements();
    if (total <= native || total % native != 0) continue;
    const unsigned factor = total / native;
    // x86's own lowering serves factors 2, 4 and 8 (its interleaved-access
    // pass), and those above 8 better than a chain: an output vector there
    // takes a lane or two from each of up to 16 sources (the rows of a 3 x 3
    // rotation matrix, 9 at 8 lanes: 4.2 -> 5.5 ms chained, compiled in
    // 36 -> 43 ms)
    if (factor < 3 || factor > 7 || factor == 4) continue;
    std::vector<Lane> lanes;
    if (!source_lanes(s, native, lanes)) continue;
    llvm::IRBuilder<> b(st);
    std::vector<llvm::Value*> parts;
    for (unsigned c = 0; c < factor; ++c)
      parts.push_back(native_part(b, std::vector<Lane>(lanes.begin() + c * native, lanes.begin() + (c + 1) * native), src));
    // stored as native vectors: a store of the concatenation was merged
    // back into the wide shuffle by code generation and lowered lane by lane
    const llvm::DataLayout& dl = f.getParent()->getDataLayout();
    const uint64_t bytes = dl.getTypeStoreSize(src).getFixedValue();
    for (unsigned c = 0; c < factor; ++c) {
      llvm::Value* at = b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), st->getPointerOperand(), c * bytes);
      llvm::StoreInst* part = b.CreateAlignedStore(parts[c], at, llvm::commonAlignment(st->getAlign(), c * bytes));
      part->copyMetadata(*st);
    }
    st->eraseFromParent();
    llvm::RecursivelyDeleteTriviallyDeadInstructions(s);  // and the concatenations under it
    changed = true;
  }
  return changed ? llvm::PreservedAnalyses::none() : llvm::PreservedAnalyses::all();
}

}  // namespace kiln::codegen::llvmcg

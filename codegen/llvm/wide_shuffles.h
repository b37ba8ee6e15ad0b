// Interleaved stores as shuffles of native vectors.
//
// A loop storing rows of a few elements at a constant step (jit/lower.cpp:
// a narrow row's positions, a narrow cat's) is vectorized with an
// interleaved store: the positions' vectors are concatenated and one
// shufflevector interleaves them into a vector of W x VF lanes (48 floats
// for rows of 3 at 16 lanes). x86's code generation lowers such a shuffle
// of factor 3 or 5 lane by lane (48 vinsertps and stack round trips for
// each rows-of-3 store; its interleaved-access lowering knows factors 2
// and 4 only). InterleaveAsNativeShuffles rebuilds each native vector of
// the result (one register: 16 floats with AVX-512) from the vectors it
// takes lanes from, one two-source shuffle per source past the first
// (vpermt2ps), and concatenates them, which the store splits back into
// native stores.
#pragma once

#include <llvm/IR/PassManager.h>

namespace kiln::codegen::llvmcg {

struct InterleaveAsNativeShuffles : llvm::PassInfoMixin<InterleaveAsNativeShuffles> {
  llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& fam);
};

}  // namespace kiln::codegen::llvmcg

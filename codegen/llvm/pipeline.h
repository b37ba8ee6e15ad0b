// The optimization pipeline of a kernel module (pipeline.cpp).
#pragma once

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace kiln::codegen::llvmcg {

// Runs the kernel pipeline on m, for tm's target (cost model of the
// vectorizer). m holds one exported kernel and its always-inline body.
void optimize_kernel(llvm::Module& m, llvm::TargetMachine* tm);

}  // namespace kiln::codegen::llvmcg

// The optimization pipeline every kernel module runs before code generation.
//
// Kernels are one function of guarded, rotated loops over runtime extents
// (lower_kernel.cpp), so they need few of O2's passes: inline the body (its
// noalias parameters become alias scopes), promote accumulators, clean up,
// hoist loop invariants (params, broadcast loads, row statistics), vectorize
// the innermost loops, clean up again. O2's remaining passes (the CGSCC
// inliner walk, loop unrolling of outer loops, loop load elimination, jump
// threading, SLP...) cost compile time and found nothing in these kernels.
#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Transforms/IPO/AlwaysInliner.h>
#include <llvm/Transforms/InstCombine/InstCombine.h>
#include <llvm/Transforms/Scalar/EarlyCSE.h>
#include <llvm/Transforms/Scalar/GVN.h>
#include <llvm/Transforms/Scalar/IndVarSimplify.h>
#include <llvm/Transforms/Scalar/LICM.h>
#include <llvm/Transforms/Scalar/LoopIdiomRecognize.h>
#include <llvm/Transforms/Scalar/LoopPassManager.h>
#include <llvm/Transforms/Scalar/LoopRotation.h>
#include <llvm/Transforms/Scalar/SROA.h>
#include <llvm/Transforms/Scalar/SimplifyCFG.h>
#include <llvm/Transforms/Vectorize/LoopVectorize.h>

#include "codegen/llvm/pipeline.h"

namespace kiln::codegen::llvmcg {

void optimize_kernel(llvm::Module& m, llvm::TargetMachine* tm) {
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
  {
    llvm::LoopPassManager lpm;
    lpm.addPass(llvm::IndVarSimplifyPass());
    lpm.addPass(llvm::LoopIdiomRecognizePass());
    fpm.addPass(llvm::createFunctionToLoopPassAdaptor(std::move(lpm)));
  }
  fpm.addPass(llvm::InstCombinePass());
  fpm.addPass(llvm::LoopVectorizePass(
      llvm::LoopVectorizeOptions(/*InterleaveOnlyWhenForced=*/false, /*VectorizeOnlyWhenForced=*/false)));
  fpm.addPass(llvm::InstCombinePass());
  fpm.addPass(llvm::SimplifyCFGPass(llvm::SimplifyCFGOptions().hoistCommonInsts(true).sinkCommonInsts(true)));
  {
    llvm::LoopPassManager lpm;
    lpm.addPass(llvm::LICMPass(llvm::LICMOptions()));
    fpm.addPass(llvm::createFunctionToLoopPassAdaptor(std::move(lpm), /*UseMemorySSA=*/true));
  }
  llvm::ModulePassManager mpm;
  mpm.addPass(llvm::AlwaysInlinerPass());
  mpm.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(fpm)));
  mpm.run(m, mam);
}

}  // namespace kiln::codegen::llvmcg

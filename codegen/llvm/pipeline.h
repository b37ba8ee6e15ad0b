// The optimization pipeline of a kernel module (pipeline.cpp).
#pragma once

#include <cstdint>

namespace llvm {
class Module;
class TargetMachine;
class raw_pwrite_stream;
}  // namespace llvm

namespace kiln::codegen::llvmcg {

// Runs the kernel pipeline on m, for tm's target (cost model of the
// vectorizer). m holds one exported kernel and its always-inline body.
// unroll_constant_loops: the kernel has loops of a constant trip count,
// which LLVM's full unrolling then unrolls (a pass that costs every other
// kernel 2-5% of its compile for nothing). footprint_slot: the kernel's
// footprint_param (kernel_ir.h), whose value decides at run time whether
// its stores stream past the caches (stream_stores.h).
void optimize_kernel(llvm::Module& m, llvm::TargetMachine* tm, bool unroll_constant_loops,
                     int32_t footprint_slot);

// Generates m's machine code with tm into os: a relocatable object, or
// assembly text. `hoist_invariants` false leaves out early machine LICM
// (see pipeline.cpp: kernels that evaluate math polynomials). Sets tm's
// instruction selector for m (fast selection or not, from m's loops); an
// object is made by the calling thread's pass manager for the variant,
// built on first use and reused, so tm must be this thread's alone.
void emit_code(llvm::Module& m, llvm::TargetMachine& tm, llvm::raw_pwrite_stream& os, bool assembly,
               bool hoist_invariants);

}  // namespace kiln::codegen::llvmcg

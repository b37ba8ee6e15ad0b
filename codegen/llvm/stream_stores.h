// Streaming stores: a kernel that moves more data than the caches hold
// writes its vector results with non-temporal stores (x86 MOVNT*), which go
// to memory without first reading each destination line into the cache.
// A plain store of a line that is not cached reads it first (the read for
// ownership): a copy moves three lines for two, a triad four for three.
// Measured on this project's VM (AMD EPYC, Zen 5, 1 thread, 2^24 floats):
// a copy 1.25x, a triad 1.3x, the chain of four inputs 1.1-1.3x faster with
// MOVNTPS. Where the data fit the last-level cache, the results are better
// left there: a copy of 8 MiB followed by a sum of its result ran 1.3x
// slower with MOVNTPS, one of 16 MiB (32 MiB moved) 1.05x faster; the gain
// grows from there (64 MiB: 1.23x). Where a loop computes (20 or more
// dependent FMAs a vector, an exp: the chain, softmax's last pass) the read
// for ownership hides behind the arithmetic, and streaming measured 1.1-1.25x
// slower; a row kernel's write pass (x - x.mean(1)) slower too. So lowering
// gives only kernels of one pass without transcendental math their
// footprint (kernel_ir.h, footprint_param: the bytes they read and write, a
// runtime param, so that crossing the threshold compiles nothing), and 0
// where an inner loop's rows would share lines between streamed and plain
// stores (jit/lower_footprint.cpp). Each vector store of 32 or 64
// bytes (or a multiple of 64) in a loop of the kernel's entry function,
// into an argument buffer, becomes
//   if (footprint >= kStreamStoreBytes && address aligned to the store) non-temporal store
//   else the store as it was
// (MOVNTPS needs an aligned address; a row's misaligned vectors stay plain).
// The function's returns are preceded by an SFENCE: non-temporal stores are
// weakly ordered, and the thread pool's signal that a part is done must not
// overtake them.
#pragma once

#include <cstdint>

#include <llvm/IR/PassManager.h>

namespace kiln::codegen::llvmcg {

// A kernel that moves at least this many bytes streams its stores: the last
// level cache of one Zen 5 complex (32 MiB), where the crossover above lies.
inline constexpr int64_t kStreamStoreBytes = int64_t{32} << 20;

// The instructions of a store's streaming test carry this metadata
// (pipeline.cpp leaves them out of a loop's length, as the page test's).
inline constexpr const char* kKilnStreamTest = "kiln.stream.test";

// Runs on the kernel's entry function (the wrapper, its body inlined) of an
// x86 module, whose params pointer is argument 1; footprint_slot is the
// kernel's footprint_param (a negative slot: nothing to do).
struct StreamLargeStores : llvm::PassInfoMixin<StreamLargeStores> {
  int32_t footprint_slot = -1;
  llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& fam);
};

}  // namespace kiln::codegen::llvmcg

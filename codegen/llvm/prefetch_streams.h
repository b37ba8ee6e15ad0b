// Software prefetch for vector loops that widen float32 to float64 as they
// read (a float32 tensor's sum, kept in float64: the row sums, a full sum's
// partials, a mean's or a variance's, a dot product's).
//
// Such a loop converts each element (VCVTPS2PD) before it adds: from the
// L2 cache it runs at 57 GB/s on this project's Intel VM (Xeon, rocketlake,
// 1 thread), yet from memory at half the bandwidth of a float32 sum that
// does not convert (4096 x 4096 row sums: 2.9-5.0 ms against 2.35-2.5). The
// conversions' micro-ops leave the core fewer loads in flight than the
// hardware prefetcher needs; a prefetch of each line 8 KiB ahead restores
// the float32 loop's speed (2.3 ms; 4 KiB ahead 2.4, 2 KiB 2.5-2.7, 0.5 KiB
// 3.0-3.3), and the sum keeps every bit of its float64 accuracy.
//
// The pass: in each innermost loop holding a vector fpext to double, every
// stream of vector loads (one address recurrence, a constant step of at
// most 256 bytes an iteration) gets one prefetch per 64 bytes of its step,
// kPrefetchBytes ahead of its first load. A prefetch never faults, so one
// past a row's or a buffer's end is harmless (the next row, usually read
// next).
#pragma once

#include <cstdint>

#include <llvm/IR/PassManager.h>

namespace kiln::codegen::llvmcg {

inline constexpr int64_t kPrefetchBytes = 8192;

struct PrefetchWideningStreams : llvm::PassInfoMixin<PrefetchWideningStreams> {
  llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& fam);
};

}  // namespace kiln::codegen::llvmcg

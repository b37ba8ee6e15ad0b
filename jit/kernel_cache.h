// The kernel cache: kernel IR key -> compiled function, in memory and on
// disk. A graph whose structure was seen before, at any shape, compiles
// nothing; a kernel compiled by an earlier process is loaded from its object
// file instead of compiled.
//
// The disk cache lives in $KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln, else
// $HOME/.cache/kiln (created on first write); KILN_DISK_CACHE=0 turns it off.
// One file per kernel, <32 hex digits>.kobj, the digits a 128-bit hash of the
// full key (cache format version, the backend's target_id(): LLVM version,
// host CPU and features, and Kernel::key()). File layout (native byte order):
//
//   offset  size  field
//   0       8     magic "KILNKOBJ"
//   8       4     format version (uint32, kDiskCacheVersion)
//   12      4     key length K (uint32)
//   16      8     payload length N (uint64)
//   24      8     payload checksum (uint64 hash of the N payload bytes)
//   32      K     the full key, compared with the requested one on load
//   32+K    N     payload: the relocatable object file
//
// The file size must be exactly 32 + K + N. Any mismatch (magic, version,
// size, checksum, key) or read error: the file is deleted, the kernel is
// compiled and the file rewritten. Files are written to a temporary name in
// the same directory and renamed into place, so readers never see a partial
// file; write failures (read-only dir, full disk) are ignored.
#pragma once

#include <cstdint>
#include <string>

#include "jit/kernel_ir.h"

namespace kiln::jit {

// Bumped when the file format or the code the backend generates for a given
// kernel IR changes (2: vectorized float max/min reductions; 3: float32 exp in
// float arithmetic; 4: widening sums interleaved twice; 5: O2, no epilogue
// vectorization; 6: small code model, PIC; 7: kiln's own pass pipeline; 8: no
// early machine LICM in row kernels with math, libm loops 4 wide; 9: normal
// random numbers with kiln's own ln and cos; 10: float32 math calls kiln's
// scalar twins outside vectorized loops; 11: VOps renumbered for expm1, log1p,
// erf and the rounding ops; 12: scans; 13: trigonometry; 14: atan; 15: the
// Philox generator as a lane function, no induction variable
// simplification; 16: fast instruction selection in vectorized kernels, the
// machine scheduler only for long loops; 17: not where a constant division
// or vector multiply needs the DAG's combines; 18: float32 math sums in
// 16 lanes where 512-bit vectors run at full clock; 19: float32 moves 2 x 16
// lanes there, row-invariant math not counted as a loop's; 20: float32 exp
// loops 16 lanes there; 21: their tails masked; 22: float32 erf in float
// arithmetic; 23: float32 log too; 24: and sigmoid; 25: sin / cos / tan
// reduce by Cody-Waite below 2^24, their polynomials by FMA; 26: full
// vectors of tail-folded loops load and store unmasked; 27: atan reduced to
// tan(pi/16), Taylor by FMA; 28: accumulators with lanes; 29: float32 tanh in float
// arithmetic; 30: loops reading at a constant step run one copy a step; 31, 32:
// guarded loads, params dereferenceable, no gathers without a guard; 33: loops
// reading under a guard fold their tail; 34: not at a constant step; 35: float
// max / min accumulate integer keys, their loops fold the tail; 36: float sums
// run to a multiple of 16, then one masked vector; 37: not a scan's; 38: a
// partial vector loads plain within a page; 51: loops storing at a constant
// step fold no tail, above 8 positions run 8 or 4 lanes, interleave groups
// of up to 16; exp loops reading at a constant step fold no tail; 52:
// interleaved stores of factor 3, 5, 6 or 7 as native shuffles; 53: float
// sums into float64 run 8 lanes on every AVX-512 host; 54: loops widening
// float32 to float64 prefetch their loads), so
// objects compiled by an older kiln are rebuilt, never loaded.
inline constexpr uint32_t kDiskCacheVersion = 54;
inline constexpr size_t kDiskCacheHeaderSize = 32;

// The compiled function for k: from memory, from disk, or compiled now
// (stats: cache_hits_memory, cache_hits_disk, kernels_compiled + compile time).
KernelFn compiled_kernel(const Kernel& k);
// The same with k's key (Kernel::key()) already computed.
KernelFn compiled_kernel(const Kernel& k, const std::string& key);
// The function for k if the in-memory cache holds it (a cache_hits_memory),
// else nullptr: what compiled_kernel would find without going to disk or
// compiling. Sets `key` to k's key, for a compiled_kernel that follows.
KernelFn memory_cached_kernel(const Kernel& k, std::string& key);

// For tests and tools. Forgets the in-memory cache (compiled functions stay
// callable); the next compiled_kernel() of each kernel goes to disk.
void clear_memory_kernel_cache();
// The disk cache directory in use ("" = disk cache off), and an override of
// the environment's choice ("" turns the disk cache off).
std::string disk_cache_dir();
void set_disk_cache_dir(const std::string& dir);
// The cache file path for k with the current directory and backend ("" when
// the disk cache is off or the backend cannot cache objects).
std::string disk_cache_path(const Kernel& k);

}  // namespace kiln::jit

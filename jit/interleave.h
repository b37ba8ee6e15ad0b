// A kernel and the batched matmul after it that alone reads its output (a
// convolution's im2col and its GEMM, core/convolution.cpp), run a few batch
// entries at a time: each chunk of the kernel's rows is written into a
// small scratch buffer and multiplied while it is in the cache, as a
// hand-written convolution does per image. Stored whole, the im2col of 64
// [16, 32, 32] images is 36 MiB: written to memory, then read back by 64
// GEMMs from memory.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "jit/kernel_ir.h"
#include "jit/schedule.h"

namespace kiln::jit {

// How the kernel's output lies under the matmul: `rows` batch entries of
// `row_elems` elements each, entry i written by the kernel's parallel
// iterations [i * iters, (i + 1) * iters) and read, as operand `operand`,
// by the matmul's batch entry i only.
struct Interleave {
  int64_t rows = 0;
  int64_t row_elems = 0;
  int64_t iters = 1;
  int operand = 0;
  int64_t chunk = 1;  // batch entries a chunk
};

// Whether step k (a kernel) and step m (the Matmul right after it) run
// interleaved: k's one output is m's operand, read by no other step
// (`readers` 1) and not a result, at least kInterleaveMinBytes large (below,
// it stays in the caches anyway) in batch entries of at most
// kInterleaveMaxEntryBytes, k writes it row after row (below), and, with
// several `threads`, a chunk is one of k's iterations.
inline constexpr int64_t kInterleaveMinBytes = int64_t{8} << 20;
// A batch entry larger than this does not stay in a core's L2 between its
// kernel and its GEMM: stored whole (the im2col of a [64, 56, 56] image with
// a 3 x 3 kernel, 7 MiB, ran 5-10% slower interleaved).
inline constexpr int64_t kInterleaveMaxEntryBytes = int64_t{1} << 20;
std::optional<Interleave> interleavable(const Step& k, const Step& m, int64_t readers, bool root, int threads);

// Whether kernel k's body is one parallel loop over `rows` iterations whose
// nest of loops stores into buffer `slot` at the row-major position of its
// loop indices (the loops' extents, params or constants, as the
// multipliers), so that iteration i writes exactly elements [i * n, (i + 1)
// * n) of the rows * n it writes: a plain elementwise kernel over its
// output's shape.
bool writes_rows_in_order(const Kernel& k, const std::vector<int64_t>& params, int slot, int64_t rows, int64_t n);

}  // namespace kiln::jit

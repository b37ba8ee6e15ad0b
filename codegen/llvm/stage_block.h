// The work of a Stage statement (kernel_ir.h) as C++ compiled into kiln,
// which the CPU backend's kernels call (lower_kernel.cpp emits the call): a
// tile of a source copied transposed into a local, in blocks of W x W
// elements: W vector loads of the source's rows, a transpose in registers
// (log2 W rounds of two-source shuffles), W vector stores of the local's
// rows. A block cut by the tile's edge is loaded the same way where masked
// loads exist, its rows past the edge reading the last one again and its
// columns past it zeros: both land in the local where the body never reads
// (the local's sides are multiples of 16); else element by element.
// Compiled once per instruction set (stage_avx512.cpp, stage_runtime.cpp)
// with that file's flags: everything here has internal linkage, so no
// other file ends up calling one instruction set's copy.
#pragma once

#include <cstdint>
#include <cstring>
#include <utility>

namespace kiln::codegen::llvmcg {
namespace {

// A source this large is read from memory (the transposes measured on the
// 2-core Zen 5 VM: a float32 [1024, 1024] source, 4 MiB, stays in its
// caches between calls and prefetching slowed it 1.05-1.25x; the sources
// of 25 MiB (NCHW <-> NHWC) and 64 MiB ([4096, 4096]) sped up 0.85-0.9x).
inline constexpr int64_t kStagePrefetchBytes = int64_t{8} << 20;

// No masked loads: a block cut by the tile's edge moves element by element.
struct NoMaskedLoads {
  static constexpr bool kMasked = false;
};

// Cut: a policy with kMasked and, if true, V load_first<V>(p, n) loading p's
// first n elements into a V (zeros after them).
template <class T, int W, class Cut>
struct StageBlock {
  typedef T V __attribute__((vector_size(W * sizeof(T))));

  // Round H of the transpose on the pair (x, y) = rows (i, i + H), i & H == 0:
  // the off-diagonal H x H blocks of each 2H x 2H block swap. (Vectors by
  // reference: a wide vector by value is an ABI of its own per instruction set.)
  template <int H, size_t... J>
  static void swap_blocks(V& x, V& y, std::index_sequence<J...>) {
    const V a = x, b = y;
    x = __builtin_shufflevector(a, b, ((J & H) ? W + J - H : J)...);
    y = __builtin_shufflevector(a, b, ((J & H) ? W + J : J + H)...);
  }
  template <int H>
  static void rounds(V* r) {
    if constexpr (H >= 1) {
#pragma GCC unroll 16
      for (int i = 0; i < W; ++i)
        if (!(i & H)) swap_blocks<H>(r[i], r[i + H], std::make_index_sequence<W>());
      rounds<H / 2>(r);
    }
  }

  // A block: rows of `from` (step apart; those from n_rows on read the
  // last again, columns from n_cols on read as zeros) to rows of `to`
  // (row_length apart). Whole (n_rows = n_cols = W): plain loads.
  template <bool kWhole>
  static void block(const T* from, int64_t step, int64_t n_rows, int64_t n_cols, T* to, int64_t row_length) {
    V v[W];
#pragma GCC unroll 16
    for (int i = 0; i < W; ++i) {
      if constexpr (kWhole) {
        std::memcpy(&v[i], from + i * step, sizeof(V));
      } else {
        v[i] = Cut::template load_first<V>(from + (i < n_rows ? i : n_rows - 1) * step, n_cols);
      }
    }
    rounds<W / 2>(v);
#pragma GCC unroll 16
    for (int j = 0; j < W; ++j) std::memcpy(to + j * row_length, &v[j], sizeof(V));
  }

  // kernel_ir.h's Stage: for r < rows, c < cols,
  // dst[c * row_length + r] = src[origin + r * step + c]. A source of
  // kStagePrefetchBytes or more (span elements) comes from memory, not a
  // cache: the next W rows are prefetched while these W move (the
  // prefetchers do not follow rows a page or more apart).
  static void stage(void* dst_, const void* src_, int64_t origin, int64_t step, int64_t rows, int64_t cols,
                    int64_t row_length, int64_t span) {
    T* dst = static_cast<T*>(dst_);
    const T* src = static_cast<const T*>(src_) + origin;
    const bool prefetch = span >= kStagePrefetchBytes / static_cast<int64_t>(sizeof(T));
    for (int64_t r0 = 0; r0 < rows; r0 += W) {
      const int64_t next_rows = !prefetch ? 0 : rows - r0 - W < W ? rows - r0 - W : W;
      for (int64_t i = 0; i < next_rows; ++i)
        for (int64_t c = 0; c < cols; c += 64 / static_cast<int64_t>(sizeof(T)))
          __builtin_prefetch(src + (r0 + W + i) * step + c);
      for (int64_t c0 = 0; c0 < cols; c0 += W) {
        const int64_t nr = rows - r0 < W ? rows - r0 : W, nc = cols - c0 < W ? cols - c0 : W;
        const T* from = src + r0 * step + c0;
        T* to = dst + c0 * row_length + r0;
        if (nr == W && nc == W) {
          block<true>(from, step, W, W, to, row_length);
        } else if constexpr (Cut::kMasked) {
          block<false>(from, step, nr, nc, to, row_length);
        } else {
          for (int64_t i = 0; i < nr; ++i)
            for (int64_t j = 0; j < nc; ++j) to[j * row_length + i] = from[i * step + j];
        }
      }
    }
  }
};

}  // namespace
}  // namespace kiln::codegen::llvmcg

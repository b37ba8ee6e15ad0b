// The CPU backend's Stage functions (codegen/llvm/stage_runtime.h), called
// directly: both copies (the baseline's 8 x 8 blocks, AVX-512's 16 x 16 with
// masked edges, reported skipped on a CPU without it) move every element
// size's tiles as kernel_ir.h's Stage says, element for element; the local
// is a vector of exactly its size, so a block's padding written past it
// shows under ASan.
#include <doctest/doctest.h>

#if KILN_TEST_LLVM
#include <cstdint>
#include <cstring>
#include <vector>

#include "codegen/llvm/stage_runtime.h"

namespace {

using kiln::codegen::llvmcg::StageFns;

// Runs fns on a tile of rows x cols at an origin of a source whose rows are
// `step` elements apart and checks each element of the local against the
// source. span: the source's element count as the kernel states it (a hint:
// from 8 MiB on the next rows are prefetched; the values are the same).
void check_stage(const StageFns& fns, int size_index, int64_t rows, int64_t cols, int64_t span) {
  const int64_t bytes = int64_t{1} << size_index;
  const int64_t row_length = 128, local_rows = 64;  // a float32 tile's local
  const int64_t origin = 3, step = cols + 7;
  std::vector<uint8_t> src(static_cast<size_t>((origin + rows * step + cols) * bytes));
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 131 + i / 251);
  std::vector<uint8_t> dst(static_cast<size_t>(local_rows * row_length * bytes), 0xAB);
  fns.by_size[size_index](dst.data(), src.data(), origin, step, rows, cols, row_length, span);
  int64_t bad = 0;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      bad += std::memcmp(&dst[static_cast<size_t>((c * row_length + r) * bytes)],
                         &src[static_cast<size_t>((origin + r * step + c) * bytes)], static_cast<size_t>(bytes)) != 0;
  CHECK(bad == 0);
}

void check_all(const StageFns& fns) {
  for (int size_index = 0; size_index < 4; ++size_index)
    for (int64_t rows : {1, 7, 8, 16, 17, 40, 128})
      for (int64_t cols : {1, 5, 8, 15, 16, 33, 64})
        for (int64_t span : {int64_t{1000}, int64_t{1} << 40}) {
          CAPTURE(size_index);
          CAPTURE(rows);
          CAPTURE(cols);
          CAPTURE(span);
          check_stage(fns, size_index, rows, cols, span);
        }
}

}  // namespace

TEST_CASE("stage functions: the baseline copy moves tiles of every element size") {
  check_all(kiln::codegen::llvmcg::stage_fns_baseline());
}

TEST_CASE("stage functions: the AVX-512 copy moves tiles of every element size") {
  if (!kiln::codegen::llvmcg::stage_fns_host_avx512()) {
    MESSAGE("skipped: this CPU has no AVX-512 (F, BW, VL, DQ)");
    return;
  }
  check_all(kiln::codegen::llvmcg::stage_fns_host());
}
#endif

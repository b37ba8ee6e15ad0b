// The CPU backend's Stage statements (kernel_ir.h) run as calls of C++
// compiled into kiln (stage_block.h): kiln_stage_tile_<bytes> for elements
// of 1, 2, 4 and 8 bytes, each the fastest copy this CPU runs. Emitted
// inline, the shuffles of a 16 x 16 block cost a kernel 20 ms of compile
// (a transposed add: 10.7 -> 33 ms, masked edges included); as a call,
// nothing.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace kiln::codegen::llvmcg {

// dst[c * row_length + r] = src[origin + r * step + c] for r < rows, c < cols
// (elements of one size; row_length and the local's rows multiples of 16);
// span: the source's element count (stage_block.h: when to prefetch).
using StageFn = void (*)(void* dst, const void* src, int64_t origin, int64_t step, int64_t rows, int64_t cols,
                         int64_t row_length, int64_t span);
// Per element size 1, 2, 4, 8 (indices 0..3).
struct StageFns {
  StageFn by_size[4];
};
// 16 x 16 blocks in AVX-512 registers (stage_avx512.cpp; x86-64 builds).
StageFns stage_fns_avx512();
// 8 x 8 blocks, any CPU (stage_runtime.cpp).
StageFns stage_fns_baseline();
// Those the kernels call on this CPU, and whether they are AVX-512's.
StageFns stage_fns_host();
bool stage_fns_host_avx512();
// The symbol a kernel calls for elements of `bytes` bytes.
const char* stage_symbol(int64_t bytes);
// Those symbols and the functions for this CPU: the JIT's symbol table.
std::vector<std::pair<const char*, void*>> stage_symbols();

}  // namespace kiln::codegen::llvmcg

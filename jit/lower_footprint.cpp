// A kernel's footprint param (kernel_ir.h, footprint_param): the bytes it
// reads and writes, which lets a backend stream its stores past the caches
// (codegen/llvm/stream_stores.h), and where its stores would not fill whole
// lines, a footprint of 0 that keeps them plain.
#include <limits>

#include "jit/lowerer.h"

namespace kiln::jit::lowering {

namespace {

constexpr int64_t kLineBytes = 64;
// A row this long streams whatever its length: its two shared lines are at
// most 1/24 of its lines (rows of 1000 or 1500 float32 and of 500 float64,
// 4000 bytes and more: 1.1-1.3x faster streamed; rows of 130 and 259
// float64, 1040 and 2072 bytes: 1.15-1.8x slower; 750 float32 the same).
constexpr int64_t kLongRunBytes = 48 * kLineBytes;

// Whether a store in an inner loop (rows of an output, the loop inside
// another) writes whole cache lines: the loop's extent, a param or a
// constant, times the element's size a multiple of a line, or a long row.
// A row of 10 float64 (80 bytes) is a vector, a vector and a remainder:
// lines shared by a non-temporal vector and a plain store (or by two rows,
// one aligned and streamed, one not), which the CPU writes to memory in
// parts and reads back. A blocked column sum's first level over [2^20, 10]
// float32 (float64 rows of 10) ran in 26-37 ms streamed, 6 plain; a copy of
// rows of 100 float64, 33 against 13.6 ms. Rows of whole lines stream as a
// flat loop does (rows of 16, 32, 64 or 256 elements: 1.2-2x faster than
// plain).
bool whole_lines(const Kernel& k, const std::vector<int64_t>& params, const std::vector<Stmt>& body,
                 const Stmt* loop) {
  for (const Stmt& s : body) {
    if (s.kind == StmtKind::Loop) {
      if (!whole_lines(k, params, s.body, &s)) return false;
      continue;
    }
    if (s.kind != StmtKind::Store || !loop || loop->parallel) continue;
    const BufferArg& b = k.buffers[static_cast<size_t>(s.buffer)];
    if (b.local() || k.step_along(s.index, loop->loop) != 1) continue;  // not a contiguous run in this loop
    const Value& e = k.values[static_cast<size_t>(loop->extent)];
    const int64_t extent = e.op == VOp::Param ? params[static_cast<size_t>(e.a)] : e.op == VOp::IntConst ? e.i : -1;
    const int64_t run = extent * static_cast<int64_t>(element_size(b.dtype));
    // a row of 32 bytes: two rows fill a line, each one 256-bit vector
    if (extent > 0 && run % kLineBytes != 0 && run != kLineBytes / 2 && run < kLongRunBytes) return false;
  }
  return true;
}

}  // namespace

// Only for kernels whose one pass is bound by memory: no division or
// transcendental math on elements (a tiled transpose's tile count is
// fixed), no row passes (codegen/llvm/stream_stores.h: streaming stores
// made loops with math, and row kernels, slower). A param, so that crossing
// a cache's size, or a row's width changing, compiles nothing new.
void Lowerer::add_footprint() {
  if (!k_.accs.empty() || element_math(k_)) return;
  int64_t bytes = 0;
  auto add_bytes = [&bytes](const Node* n, int64_t elems) {  // saturating: a tensor too large to allocate is still planned
    int64_t b = 0;
    if (__builtin_mul_overflow(elems, static_cast<int64_t>(element_size(n->dtype)), &b) ||
        __builtin_add_overflow(bytes, b, &bytes))
      bytes = std::numeric_limits<int64_t>::max();
  };
  // a scatter iterates its source: it reads at most that many elements
  // of each input (y[0] = z[3] * 2 reads a row of z, not z)
  for (const Node* n : inputs_) add_bytes(n, written_ >= 0 ? std::min(n->numel(), written_) : n->numel());
  for (const Node* n : roots_) add_bytes(n, written_ >= 0 ? written_ : n->numel());
  if (!whole_lines(k_, params_, k_.body, nullptr)) bytes = 0;
  k_.footprint_param = static_cast<int32_t>(params_.size());
  params_.push_back(bytes);
  k_.num_params = static_cast<int32_t>(params_.size());
}

}  // namespace kiln::jit::lowering

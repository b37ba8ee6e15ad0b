// Matmul steps: OpenBLAS sgemm/dgemm for float32/float64, a plain loop for
// the other dtypes (accumulating as the reference does). Each operand is read
// in place through its views when BLAS can walk them (a transpose flag and a
// leading dimension); the scheduler stores (copies) it otherwise.
#pragma once

#include <functional>
#include <optional>

#include "core/buffer.h"
#include "core/node.h"

namespace kiln::jit {

// Where an operand's elements lie in a stored node's contiguous buffer:
// element i of the operand is buffer[offset + sum_d i_d * strides[d]].
struct StridedRead {
  const Node* base = nullptr;  // the stored node whose buffer is read
  int64_t offset = 0;
  Shape strides;  // one per dim of the operand
};

// Follows op's AsStrided views down to the first node for which `stop` holds
// (or that is not a view), composing them into one offset and strides over
// that node's buffer. op itself when stop(op). nullopt when two views do not
// compose into one strided read (a merge of non-adjacent rows, ...).
std::optional<StridedRead> fold_views(const Node* op, const std::function<bool(const Node*)>& stop);

// How BLAS reads a matrix [R, C] (the last two dims of an operand) with
// strides (sr, sc): row-major with leading dimension ld, or transposed
// (column-major) with ld. nullopt when neither fits: both strides != 1, a
// stride 0 inside the matrix, a negative stride, an ld beyond int.
struct BlasMatrix {
  bool trans = false;
  int64_t ld = 1;  // >= max(1, cols) row-major, >= max(1, rows) transposed
};
std::optional<BlasMatrix> blas_matrix(int64_t rows, int64_t cols, int64_t sr, int64_t sc);

// Whether a Matmul step can read `op` in place from the buffer of `r.base`.
// The rule is the same for every dtype (the loop reads through any strides).
bool blas_readable(const Node& op, const StridedRead& r);

// One operand of a Matmul step: the buffer and how the operand lies in it.
struct MatmulOperand {
  const Buffer* buffer = nullptr;
  StridedRead read;
};

// The layout of operand `i` of the Matmul node n read from stored node
// `stored` (the step's input): derived from the nodes' attributes at run
// time, so a cached schedule reads a new graph's strides.
MatmulOperand matmul_operand(const Node& n, int i, const Node& stored, const Buffer& buffer);

// Whether BLAS reads that operand transposed (for the plan text).
bool matmul_transposed(const Node& n, int i, const Node& stored);

// Whether each batch entry e of operand i (read from stored node `stored`)
// lies within elements [e * row_elems, (e + 1) * row_elems) of its buffer,
// stored's rows of row_elems one per entry (jit/interleave.h).
bool operand_in_rows(const Node& n, int i, const Node& stored, int64_t row_elems);

// out[..., M, N] = a[..., M, K] x b[..., K, N], equal batch dims (any batch
// strides, 0 included); out is contiguous. Batch entries [first, last) only
// (last -1: to the end).
void run_matmul(const Node& n, const MatmulOperand& a, const MatmulOperand& b, Buffer& out, int64_t first = 0,
                int64_t last = -1);

}  // namespace kiln::jit

// The one sorting rule of kiln, shared by the reference evaluator and the
// JIT's sort steps: the positions that order each row along a dim, stable
// (equal values keep their order, as PyTorch's stable=True; its default
// unstable CPU sort may order ties differently), NaN above every number (last
// ascending, first descending), -0 equal to +0. Only the first k positions
// may be asked for (topk, kthvalue): a partial sort, the same k positions.
#pragma once

#include <cstdint>

#include "core/buffer.h"
#include "kiln/shape.h"

namespace kiln {

// For rows [begin, end) of `in` (contiguous, row-major in `shape`; a row is
// the elements along `dim` with the other indices fixed, in row-major order
// of those): out[row along dim] = the first k positions along dim that sort
// the row (out is row-major in `shape` with k along dim).
void sort_rows(const Buffer& in, Buffer& out, const Shape& shape, int64_t dim, bool descending, int64_t k,
               int64_t begin, int64_t end);

}  // namespace kiln

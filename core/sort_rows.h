// The one sorting rule of kiln, shared by the reference evaluator and the
// JIT's sort steps: the positions that order each row along a dim, stable
// (equal values keep their order, as PyTorch's stable=True; its default
// unstable CPU sort may order ties differently), NaN above every number (last
// ascending, first descending), -0 equal to +0. Only the first k positions
// may be asked for (topk): a partial sort, the same k positions. Or one
// position, found by selection (std::nth_element: linear, where a sort
// costs n log n) in the same total order, so the same one a sort puts there:
// the k-th (kthvalue), a row's median (the lower middle, or the first NaN),
// or its median ignoring NaNs.
#pragma once

#include <cstdint>

#include "core/buffer.h"
#include "kiln/shape.h"

namespace kiln {

// What sort_rows writes along dim (an ArgSort node's fourth int).
enum class SortSelect : int64_t {
  First = 0,      // the first k positions of the order
  Kth = 1,        // the position at rank k - 1, alone
  Median = 2,     // at rank (n - 1) / 2, or the first NaN's where the row has one
  NanMedian = 3,  // at rank (n - 1 - NaNs) / 2 (0 when every element is a NaN)
};

// An ArgSort node's selection: its fourth int, First where it has three
// (graphs saved before selections).
inline SortSelect sort_select(const Shape& ints) {
  return ints.size() > 3 ? static_cast<SortSelect>(ints[3]) : SortSelect::First;
}

// For rows [begin, end) of `in` (contiguous, row-major in `shape`; a row is
// the elements along `dim` with the other indices fixed, in row-major order
// of those): out[row along dim] = the first k positions along dim that sort
// the row (out is row-major in `shape` with k along dim); with a selection,
// the one position (out has 1 along dim).
void sort_rows(const Buffer& in, Buffer& out, const Shape& shape, int64_t dim, bool descending, int64_t k,
               int64_t begin, int64_t end, SortSelect select = SortSelect::First);

}  // namespace kiln

// run_sort: contiguous chunks of rows per thread; a small sort (under
// kMinParallelSort elements) on the calling thread.
#include "jit/sort.h"

#include "core/sort_rows.h"
#include "jit/thread_pool.h"
#include "kiln/error.h"

namespace kiln::jit {

namespace {
constexpr int64_t kMinParallelSort = 1 << 14;
}

void run_sort(const Node& n, const Buffer& in, Buffer& out) {
  KILN_INTERNAL_ASSERT(n.op == Op::ArgSort && (n.attrs.ints.size() == 3 || n.attrs.ints.size() == 4), "run_sort on ",
                       op_name(n.op));
  const Shape& xs = n.inputs[0]->shape;
  const int64_t d = n.attrs.ints[0], k = n.attrs.ints[2];
  const bool descending = n.attrs.ints[1] != 0;
  const SortSelect select = sort_select(n.attrs.ints);
  if (n.numel() == 0) return;
  const int64_t rows = xs.numel() / xs[static_cast<size_t>(d)];
  if (rows == 1 || xs.numel() < kMinParallelSort) {
    sort_rows(in, out, xs, d, descending, k, 0, rows, select);
    return;
  }
  ThreadPool::instance().parallel_for(rows, [&](int64_t b, int64_t e) {
    sort_rows(in, out, xs, d, descending, k, b, e, select);
  });
}

}  // namespace kiln::jit

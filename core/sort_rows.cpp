// sort_rows: each row's (value, position) pairs copied out and sorted by
// value, then position: a total order, so std::sort and std::partial_sort
// (k < the row's length) give the stable order without a stable sort's
// buffer; the positions written back along the dim.
#include "core/sort_rows.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "core/reference/kernels.h"

namespace kiln {

namespace {

template <typename C>
bool before(bool descending, C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    const bool na = std::isnan(a), nb = std::isnan(b);
    if (na || nb) return descending ? na && !nb : !na && nb;
  }
  return descending ? a > b : a < b;
}

}  // namespace

void sort_rows(const Buffer& in, Buffer& out, const Shape& shape, int64_t dim, bool descending, int64_t k,
               int64_t begin, int64_t end) {
  const int64_t len = shape[static_cast<size_t>(dim)];
  int64_t inner = 1;
  for (size_t k = static_cast<size_t>(dim) + 1; k < shape.size(); ++k) inner *= shape[k];
  int64_t* o = out.as<int64_t>();
  reference::visit_dtype(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = reference::compute_t<T>;
    const T* x = in.as<T>();
    std::vector<std::pair<C, int64_t>> row(static_cast<size_t>(len));
    auto order = [descending](const std::pair<C, int64_t>& a, const std::pair<C, int64_t>& b) {
      if (before<C>(descending, a.first, b.first)) return true;
      if (before<C>(descending, b.first, a.first)) return false;
      return a.second < b.second;
    };
    for (int64_t r = begin; r < end; ++r) {
      const int64_t base = (r / inner) * inner * len + r % inner;
      const int64_t out_base = (r / inner) * inner * k + r % inner;
      for (int64_t i = 0; i < len; ++i) row[static_cast<size_t>(i)] = {static_cast<C>(x[base + i * inner]), i};
      if (k < len) std::partial_sort(row.begin(), row.begin() + k, row.end(), order);
      else std::sort(row.begin(), row.end(), order);
      for (int64_t i = 0; i < k; ++i) o[out_base + i * inner] = row[static_cast<size_t>(i)].second;
    }
  });
}

}  // namespace kiln

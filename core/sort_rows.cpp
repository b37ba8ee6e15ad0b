// sort_rows: each row's (value, position) pairs copied out and sorted by
// value, then position: a total order, so std::sort and std::partial_sort
// (k < the row's length) give the stable order without a stable sort's
// buffer; the positions written back along the dim. Values of 32 bits or
// fewer go into one uint64 key (the value's order-preserving bits above the
// position), so the sort compares integers: 1.3x faster than pairs here;
// a few positions of a long row (topk) keep a heap of k keys instead of
// keying the row (first_keys: `topk(5, 1)` of [1024, 1000] 2.2 -> 1.4 ms,
// `topk(10)` of 2^22 94 -> 0.93 ms, which also faulted in a fresh 32 MiB of
// keys every call: the row's keys now come from the buffer pool).
#include "core/sort_rows.h"

#include <algorithm>
#include <cmath>
#include <cstring>
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

// The bits of a value of at most 32 bits whose unsigned order is the sort's
// ascending order: NaNs (any sign, any payload) one value above +inf, -0 as
// +0; descending flips them (flip: all ones).
// Branch-free, so that building a row's keys vectorizes.
inline uint32_t key_bits(float v, uint32_t flip) {
  uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  b = v != v ? 0x7FC00000u : v == 0.0f ? 0u : b;
  return b ^ (static_cast<uint32_t>(static_cast<int32_t>(b) >> 31) | 0x80000000u) ^ flip;
}
inline uint32_t key_bits(int64_t v, uint32_t flip) {  // int32, uint8, bool
  return (static_cast<uint32_t>(static_cast<int32_t>(v)) ^ 0x80000000u) ^ flip;
}

template <typename T>
constexpr bool kKeyed = sizeof(T) <= 4;

// k positions of a row of at least k times this many: first_keys.
constexpr int64_t kFewDivisor = 8;

// The first k keys of a row in order (at(i): the i-th value, of a compute
// type C; its key the value's key_bits above the position), without
// building the row's keys: a heap of the k smallest keys so far, which an
// element enters only when its bits are below the largest kept one's (equal
// bits lose: its position, the key's low half, is above every kept one's).
// Blocks of 16 elements none of which enters (nearly all, past the first few
// blocks) cost a compare each against the largest kept value: enters(v) is
// exactly "key_bits(v) < the largest kept key's bits" in the value's own
// order (NaN above every number, -0 equal to +0). The same k keys
// partial_sort gives, in the same order.
template <typename C, typename At>
void first_keys(int64_t len, int64_t k, bool descending, At at, std::vector<uint64_t>& heap) {
  const uint32_t flip = descending ? 0xFFFFFFFFu : 0u;
  heap.clear();
  for (int64_t i = 0; i < k; ++i) heap.push_back(uint64_t{key_bits(at(i), flip)} << 32 | static_cast<uint64_t>(i));
  std::make_heap(heap.begin(), heap.end());
  uint32_t top = 0;
  C worst{};  // the value behind top
  bool worst_nan = false;
  auto retop = [&] {
    top = static_cast<uint32_t>(heap.front() >> 32);
    worst = at(static_cast<int64_t>(heap.front() & 0xFFFFFFFFu));
    if constexpr (std::is_floating_point_v<C>) worst_nan = std::isnan(worst);
  };
  retop();
  auto offer = [&](int64_t i) {
    const uint32_t b = key_bits(at(i), flip);
    if (b >= top) return;
    std::pop_heap(heap.begin(), heap.end());
    heap.back() = uint64_t{b} << 32 | static_cast<uint64_t>(i);
    std::push_heap(heap.begin(), heap.end());
    retop();
  };
  constexpr int64_t kBlock = 16;
  int64_t i = k;
  for (; i + kBlock <= len; i += kBlock) {
    const C w = worst;  // (a local: the loop below keeps it in a register)
    int enters = 0;
    if constexpr (std::is_floating_point_v<C>) {
      if (descending && worst_nan) continue;  // nothing enters above a NaN
      if (descending) {
        for (int64_t j = 0; j < kBlock; ++j) {
          const C v = at(i + j);
          enters |= static_cast<int>(v > w) | static_cast<int>(v != v);
        }
      } else if (!worst_nan) {
        for (int64_t j = 0; j < kBlock; ++j) enters |= static_cast<int>(at(i + j) < w);
      } else {  // every number enters below a NaN
        for (int64_t j = 0; j < kBlock; ++j) {
          const C v = at(i + j);
          enters |= static_cast<int>(v == v);
        }
      }
    } else if (descending) {
      for (int64_t j = 0; j < kBlock; ++j) enters |= static_cast<int>(at(i + j) > w);
    } else {
      for (int64_t j = 0; j < kBlock; ++j) enters |= static_cast<int>(at(i + j) < w);
    }
    if (enters)
      for (int64_t j = 0; j < kBlock; ++j) offer(i + j);
  }
  for (; i < len; ++i) offer(i);
  std::sort_heap(heap.begin(), heap.end());
}

// The rank a selection picks in a row of len values (at(i): the i-th).
template <typename C, typename At>
int64_t selected_rank(SortSelect select, int64_t k, int64_t len, At at) {
  if (select == SortSelect::Kth) return k - 1;
  int64_t nans = 0;
  if constexpr (std::is_floating_point_v<C>)
    for (int64_t i = 0; i < len; ++i) nans += std::isnan(at(i)) ? 1 : 0;
  if (select == SortSelect::Median) return nans > 0 ? len - nans : (len - 1) / 2;
  return std::max<int64_t>(len - 1 - nans, 0) / 2;
}

}  // namespace

void sort_rows(const Buffer& in, Buffer& out, const Shape& shape, int64_t dim, bool descending, int64_t k,
               int64_t begin, int64_t end, SortSelect select) {
  const int64_t len = shape[static_cast<size_t>(dim)];
  const bool one = select != SortSelect::First;
  const int64_t width = one ? 1 : k;  // positions written along dim
  int64_t inner = 1;
  for (size_t k = static_cast<size_t>(dim) + 1; k < shape.size(); ++k) inner *= shape[k];
  int64_t* o = out.as<int64_t>();
  // where row r starts in `in` and in `out` (its elements inner apart)
  auto in_base = [&](int64_t r) { return (r / inner) * inner * len + r % inner; };
  auto out_base = [&](int64_t r) { return (r / inner) * inner * width + r % inner; };
  reference::visit_dtype(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = reference::compute_t<T>;
    const T* x = in.as<T>();
    if constexpr (kKeyed<T>) {
      if (len <= int64_t{0xFFFFFFFF}) {  // the position fits the key's low half
        // a few of a long row (topk): a heap of k, no row of keys
        if (!one && k * kFewDivisor <= len) {
          std::vector<uint64_t> heap;
          heap.reserve(static_cast<size_t>(k));
          for (int64_t r = begin; r < end; ++r) {
            const T* xr = x + in_base(r);
            int64_t* orow = o + out_base(r);
            if (inner == 1)
              first_keys<C>(len, k, descending, [&](int64_t i) { return static_cast<C>(xr[i]); }, heap);
            else
              first_keys<C>(len, k, descending, [&](int64_t i) { return static_cast<C>(xr[i * inner]); }, heap);
            for (int64_t i = 0; i < k; ++i)
              orow[i * inner] = static_cast<int64_t>(heap[static_cast<size_t>(i)] & 0xFFFFFFFFu);
          }
          return;
        }
        // the row's keys in a pooled buffer: a fresh vector of a long row
        // (a 1-D sort) faulted in its pages and zeroed them every call
        const BufferPtr key_buffer = Buffer::allocate(DType::Int64, len, Device());
        uint64_t* kp = key_buffer->as<uint64_t>();
        const uint32_t flip = descending ? 0xFFFFFFFFu : 0u;
        for (int64_t r = begin; r < end; ++r) {
          const T* xr = x + in_base(r);
          int64_t* orow = o + out_base(r);
          if (inner == 1)  // a contiguous row: the loop vectorizes
            for (int64_t i = 0; i < len; ++i)
              kp[i] = uint64_t{key_bits(static_cast<C>(xr[i]), flip)} << 32 | static_cast<uint64_t>(i);
          else
            for (int64_t i = 0; i < len; ++i)
              kp[i] = uint64_t{key_bits(static_cast<C>(xr[i * inner]), flip)} << 32 | static_cast<uint64_t>(i);
          if (one) {
            const int64_t rank =
                selected_rank<C>(select, k, len, [&](int64_t i) { return static_cast<C>(xr[i * inner]); });
            std::nth_element(kp, kp + rank, kp + len);
            orow[0] = static_cast<int64_t>(kp[rank] & 0xFFFFFFFFu);
            continue;
          }
          if (k < len)
            std::partial_sort(kp, kp + k, kp + len);
          else
            std::sort(kp, kp + len);
          for (int64_t i = 0; i < k; ++i) orow[i * inner] = static_cast<int64_t>(kp[i] & 0xFFFFFFFFu);
        }
        return;
      }
    }
    std::vector<std::pair<C, int64_t>> row(static_cast<size_t>(len));
    auto order = [descending](const std::pair<C, int64_t>& a, const std::pair<C, int64_t>& b) {
      if (before<C>(descending, a.first, b.first)) return true;
      if (before<C>(descending, b.first, a.first)) return false;
      return a.second < b.second;
    };
    for (int64_t r = begin; r < end; ++r) {
      const T* xr = x + in_base(r);
      int64_t* orow = o + out_base(r);
      for (int64_t i = 0; i < len; ++i) row[static_cast<size_t>(i)] = {static_cast<C>(xr[i * inner]), i};
      if (one) {
        const int64_t rank = selected_rank<C>(select, k, len, [&](int64_t i) { return row[static_cast<size_t>(i)].first; });
        std::nth_element(row.begin(), row.begin() + rank, row.end(), order);
        orow[0] = row[static_cast<size_t>(rank)].second;
        continue;
      }
      if (k < len)
        std::partial_sort(row.begin(), row.begin() + k, row.end(), order);
      else
        std::sort(row.begin(), row.end(), order);
      for (int64_t i = 0; i < k; ++i) orow[i * inner] = row[static_cast<size_t>(i)].second;
    }
  });
}

}  // namespace kiln

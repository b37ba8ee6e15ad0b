// PtrMap: a flat hash map keyed by pointers, for the graph walks that run on
// every evaluation and every backward (collect, sign, execute, the autograd
// engine). std::unordered_map allocates one heap node per entry; this keeps
// entries in one array (open addressing, linear probing), so a walk over a
// graph of n nodes costs O(1) allocations instead of O(n).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace kiln {

template <typename V>
class PtrMap {
 public:
  explicit PtrMap(size_t expected = 8) { rehash(capacity_for(expected)); }

  // The value for key k, inserted default-constructed if absent.
  V& operator[](const void* k) {
    bool inserted;
    return slots_[claim(k, inserted)].second;
  }
  // Inserts (k, v) if k is absent; returns whether it inserted.
  bool insert(const void* k, V v = V()) {
    bool inserted;
    const size_t i = claim(k, inserted);
    if (inserted) slots_[i].second = std::move(v);
    return inserted;
  }
  V* find(const void* k) {
    size_t i = probe(k);
    return slots_[i].first ? &slots_[i].second : nullptr;
  }
  const V* find(const void* k) const {
    size_t i = probe(k);
    return slots_[i].first ? &slots_[i].second : nullptr;
  }
  bool contains(const void* k) const { return slots_[probe(k)].first != nullptr; }
  // Empties the map for about `expected` entries, keeping its array unless
  // it is much larger than needed (so a reused map costs no allocation).
  void reset(size_t expected) {
    const size_t want = capacity_for(expected);
    if (slots_.size() > 4 * want && slots_.size() > 1024) {
      slots_.clear();
      rehash(want);
      return;
    }
    for (auto& slot : slots_)
      if (slot.first) slot = {nullptr, V()};
    size_ = 0;
    if (want > slots_.size()) rehash(want);
  }
  size_t size() const { return size_; }

 private:
  static size_t capacity_for(size_t n) {
    size_t c = 16;
    while (c < n * 2) c *= 2;
    return c;
  }
  // k's slot, taking an empty one (growing first if needed) when k is absent.
  size_t claim(const void* k, bool& inserted) {
    size_t i = probe(k);
    inserted = !slots_[i].first;
    if (inserted) {
      if ((size_ + 1) * 2 > slots_.size()) {
        rehash(slots_.size() * 2);
        i = probe(k);
      }
      slots_[i].first = k;
      ++size_;
    }
    return i;
  }
  size_t probe(const void* k) const {
    uint64_t h = reinterpret_cast<uintptr_t>(k) * 0x9E3779B97F4A7C15ull;
    size_t mask = slots_.size() - 1;
    size_t i = static_cast<size_t>(h >> 20) & mask;
    while (slots_[i].first && slots_[i].first != k) i = (i + 1) & mask;
    return i;
  }
  void rehash(size_t capacity) {
    std::vector<std::pair<const void*, V>> old(capacity);
    old.swap(slots_);
    size_ = 0;
    for (auto& [k, v] : old)
      if (k) {
        size_t i = probe(k);
        slots_[i].first = k;
        slots_[i].second = std::move(v);
        ++size_;
      }
  }

  std::vector<std::pair<const void*, V>> slots_;
  size_t size_ = 0;
};

}  // namespace kiln

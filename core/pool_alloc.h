// PoolAllocator: per-thread free lists for the small objects every op
// creates and drops (graph nodes, tensor handles, storages, backward
// functions), for std::allocate_shared.
//
// A training step builds and frees a few hundred of these. glibc's malloc
// caches only 7 blocks per size per thread, so freeing a whole graph at
// once falls through to its slower paths (_int_free was the top symbol of
// the training loop's profile). A free list per block size and thread keeps
// them, up to kMaxCached blocks; a block freed on another thread joins that
// thread's list.
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <utility>

#include "core/asan.h"

namespace kiln {

namespace pool_detail {
// Plain data, so it stays readable after the thread's cleaner has run
// (objects freed during thread or process exit go straight to delete).
struct FreeList {
  void* head;
  size_t count;
  bool closed;
};

struct Cleaner {
  FreeList* list;
  ~Cleaner() {
    list->closed = true;
    while (list->head) {
      KILN_UNPOISON(list->head, sizeof(void*));
      void* next = *static_cast<void**>(list->head);
      ::operator delete(list->head);
      list->head = next;
    }
    list->count = 0;
  }
};

template <size_t Size>
FreeList& free_list() {
  thread_local FreeList list{nullptr, 0, false};
  thread_local Cleaner cleaner{&list};
  (void)cleaner;
  return list;
}

inline constexpr size_t kMaxCached = 4096;
}  // namespace pool_detail

template <typename T>
struct PoolAllocator {
  using value_type = T;
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "over-aligned pooled type");

  PoolAllocator() = default;
  template <typename U>
  PoolAllocator(const PoolAllocator<U>&) {}  // NOLINT: rebinding

  // One object: a list per object size. A few (a small vector's buffer):
  // lists of 16, 32, 48, 64, 128, 256 and 512 bytes (a backward function's
  // input metadata and saved tensors come in twos and threes of 80-130
  // bytes). Anything larger: the heap.
  T* allocate(size_t n) {
    if (n == 1) return static_cast<T*>(pop<sizeof(T)>());
    switch (size_class(n * sizeof(T))) {
      case 16: return static_cast<T*>(pop<16>());
      case 32: return static_cast<T*>(pop<32>());
      case 48: return static_cast<T*>(pop<48>());
      case 64: return static_cast<T*>(pop<64>());
      case 128: return static_cast<T*>(pop<128>());
      case 256: return static_cast<T*>(pop<256>());
      case 512: return static_cast<T*>(pop<512>());
      default: return static_cast<T*>(::operator new(n * sizeof(T)));
    }
  }

  void deallocate(T* p, size_t n) {
    if (n == 1) return push<sizeof(T)>(p);
    switch (size_class(n * sizeof(T))) {
      case 16: return push<16>(p);
      case 32: return push<32>(p);
      case 48: return push<48>(p);
      case 64: return push<64>(p);
      case 128: return push<128>(p);
      case 256: return push<256>(p);
      case 512: return push<512>(p);
      default: ::operator delete(p);
    }
  }

  template <typename U>
  bool operator==(const PoolAllocator<U>&) const { return true; }
  template <typename U>
  bool operator!=(const PoolAllocator<U>&) const { return false; }

 private:
  // The block size a buffer of `bytes` takes; 0: the heap's.
  static size_t size_class(size_t bytes) {
    if (bytes <= 64) return (bytes + 15) / 16 * 16;
    if (bytes <= 128) return 128;
    if (bytes <= 256) return 256;
    if (bytes <= 512) return 512;
    return 0;
  }
  template <size_t Size>
  static void* pop() {
    pool_detail::FreeList& l = pool_detail::free_list<Size>();
    if (!l.head) return ::operator new(Size);
    void* p = l.head;
    KILN_UNPOISON(p, Size);
    l.head = *static_cast<void**>(p);
    --l.count;
    return p;
  }
  template <size_t Size>
  static void push(void* p) {
    static_assert(Size >= sizeof(void*));
    pool_detail::FreeList& l = pool_detail::free_list<Size>();
    if (l.closed || l.count >= pool_detail::kMaxCached) return ::operator delete(p);
    *static_cast<void**>(p) = l.head;
    // A use after free of a cached block is an ASan report. The link stays
    // unpoisoned: LeakSanitizer skips pointers in poisoned memory, and would
    // report every block after the list's head as leaked.
    KILN_POISON(static_cast<char*>(p) + sizeof(void*), Size - sizeof(void*));
    l.head = p;
    ++l.count;
  }
};

// std::make_shared through the pool.
template <typename T, typename... Args>
std::shared_ptr<T> make_pooled(Args&&... args) {
  return std::allocate_shared<T>(PoolAllocator<T>(), std::forward<Args>(args)...);
}

}  // namespace kiln

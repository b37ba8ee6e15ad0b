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

  // One object: a list per object size. A few (a small vector's buffer,
  // up to 64 bytes): a list per 16-byte class. Anything else: the heap.
  T* allocate(size_t n) {
    if (n == 1) return static_cast<T*>(pop<sizeof(T)>());
    switch (size_class(n)) {
      case 1: return static_cast<T*>(pop<16>());
      case 2: return static_cast<T*>(pop<32>());
      case 3: return static_cast<T*>(pop<48>());
      case 4: return static_cast<T*>(pop<64>());
      default: return static_cast<T*>(::operator new(n * sizeof(T)));
    }
  }

  void deallocate(T* p, size_t n) {
    if (n == 1) return push<sizeof(T)>(p);
    switch (size_class(n)) {
      case 1: return push<16>(p);
      case 2: return push<32>(p);
      case 3: return push<48>(p);
      case 4: return push<64>(p);
      default: ::operator delete(p);
    }
  }

  template <typename U>
  bool operator==(const PoolAllocator<U>&) const { return true; }
  template <typename U>
  bool operator!=(const PoolAllocator<U>&) const { return false; }

 private:
  static size_t size_class(size_t n) { return (n * sizeof(T) + 15) / 16; }
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
    KILN_POISON(p, Size);  // a use after free of a cached block is an ASan report
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

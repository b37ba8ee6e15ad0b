// Telling AddressSanitizer about kiln's own free lists (./dev test-asan).
// kiln keeps freed memory for reuse (the buffer pool in buffer.cpp, the node
// and tensor free lists in pool_alloc.h); to ASan such a block is still
// allocated, so a use after free would go unseen. Poisoning a block while it
// sits in a free list makes any access to it an ASan report; it is unpoisoned
// when handed out again. Without ASan the macros are no-ops.
#pragma once

#include <cstddef>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KILN_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define KILN_ASAN 1
#endif

#ifdef KILN_ASAN
#include <sanitizer/asan_interface.h>
#define KILN_POISON(p, n) __asan_poison_memory_region((p), (n))
#define KILN_UNPOISON(p, n) __asan_unpoison_memory_region((p), (n))
#else
#define KILN_POISON(p, n) ((void)(p), (void)(n))
#define KILN_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

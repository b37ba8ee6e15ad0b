// Bounded memory: a loop that updates a tensor and never reads it stays
// under a fixed bound (graphs deeper than 512 nodes are evaluated as they are
// built); a training loop's memory stops growing after its first iterations;
// an allocation that cannot be had raises kiln::Error naming the size, and
// kiln keeps working afterwards. README, "Reliability", gives the figures.
//
// Two counters: kiln's own allocator (kiln::memory_stats(): tensor buffers)
// and the process heap (glibc's mallinfo2, or the sanitizer allocator's
// count under ASan/TSan), which also sees graph nodes and tensor handles.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "kiln/kiln.h"
#include "linear_step.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define KILN_TEST_SANITIZER_HEAP 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define KILN_TEST_SANITIZER_HEAP 1
#endif
#ifdef KILN_TEST_SANITIZER_HEAP
#include <sanitizer/allocator_interface.h>
#else
#include <malloc.h>
#endif

using namespace kiln;

namespace {

// Bytes the process heap has handed out and not taken back.
int64_t heap_bytes() {
#ifdef KILN_TEST_SANITIZER_HEAP
  return static_cast<int64_t>(__sanitizer_get_current_allocated_bytes());
#else
  const struct mallinfo2 m = mallinfo2();
  return static_cast<int64_t>(m.uordblks + m.hblkhd);
#endif
}

constexpr int64_t kMiB = 1 << 20;
// The bound of the never-read loop: growth of the heap over 100,000 updates.
constexpr int64_t kLoopHeapBound = 4 * kMiB;

}  // namespace

TEST_CASE("memory: 100,000 in-place updates never read stay under a fixed bound") {
  Tensor x = zeros({256});
  for (int i = 0; i < 2000; ++i) x.add_(1);  // warm up: kernels and schedules cached
  const int64_t heap0 = heap_bytes();
  const int64_t live0 = memory_stats().live_bytes;
  reset_peak_memory();
  int64_t heap_max = heap0;
  for (int i = 0; i < 100000; ++i) {
    x.add_(1);
    if (i % 500 == 0) heap_max = std::max(heap_max, heap_bytes());
  }
  MESSAGE("heap growth over 100,000 updates: " << (heap_max - heap0) << " bytes; kiln peak buffers "
                                               << memory_stats().peak_bytes - live0 << " bytes above the start");
  CHECK(heap_max - heap0 < kLoopHeapBound);
  // At most the tensor and one evaluation's result live at once.
  CHECK(memory_stats().peak_bytes - live0 <= 2 * 1024);
  CHECK(x.index({0}).item<float>() == 102000.0f);
  CHECK(x.sum().item<float>() == 256 * 102000.0f);
}

TEST_CASE("memory: a training loop's memory does not grow after the first iterations") {
  manual_seed(3);
  Tensor X = randn({256, 8}), Y = randn({256, 1});
  Tensor w = zeros({8, 1}, requires_grad()), b = zeros({1}, requires_grad());
  auto epoch = [&] { kiln_test::linear_step(X, Y, w, b, 0.05); };
  for (int i = 0; i < 10; ++i) epoch();
  const MemoryStats m0 = memory_stats();
  const int64_t heap0 = heap_bytes();
  int64_t live_max = m0.live_bytes, pooled_max = m0.pooled_bytes, heap_max = heap0;
  for (int i = 0; i < 500; ++i) {
    epoch();
    const MemoryStats m = memory_stats();
    live_max = std::max(live_max, m.live_bytes);
    pooled_max = std::max(pooled_max, m.pooled_bytes);
    heap_max = std::max(heap_max, heap_bytes());
  }
  MESSAGE("training loop: live " << m0.live_bytes << " bytes, pooled " << m0.pooled_bytes
                                 << ", heap growth over 500 epochs " << heap_max - heap0 << " bytes");
  CHECK(live_max == m0.live_bytes);
  CHECK(pooled_max == m0.pooled_bytes);
  CHECK(heap_max - heap0 < 256 * 1024);
  CHECK(std::isfinite(w.sum().item<float>()));
}

TEST_CASE("memory: out of memory raises kiln::Error with the size, kiln stays usable") {
  const int64_t live0 = memory_stats().live_bytes;
  const int64_t n = int64_t{1} << 40;  // 4 TiB of float32: more than any machine here
  std::string msg;
  int line_ones = 0, line_add = 0;
  try {
    Tensor x = ones({n});
    line_ones = __LINE__ - 1;
    x.add_(1);  // a stored write: the JIT allocates its 4 TiB buffer
    line_add = __LINE__ - 1;
    x.eval();
  } catch (const Error& e) {
    msg = e.what();
  }
  // The failing kernel (k_add_<n>) and the user's lines whose values it computes.
  const std::string head = "[allocate] out of memory: could not allocate 4398046511104 bytes (1099511627776 "
                           "elements of torch.float32) on cpu\n  in kernel k0 k_add_";
  const std::string tail = ", which computes the values of test_memory.cpp:" + std::to_string(line_add) +
                           ", test_memory.cpp:" + std::to_string(line_ones);
  CHECK(msg.rfind(head, 0) == 0);
  CHECK(msg.size() > head.size() + tail.size());
  CHECK(msg.compare(msg.size() - tail.size(), tail.size(), tail) == 0);
  CHECK(memory_stats().live_bytes == live0);

  // A byte count that overflows size_t.
  msg.clear();
  int line_empty = 0;
  try {
    line_empty = __LINE__ + 1;
    empty({int64_t{1} << 62}, kFloat64).eval();
  } catch (const Error& e) {
    msg = e.what();
  }
  CHECK(msg.rfind("[allocate] cannot allocate 4611686018427387904 elements of torch.float64: the size overflows\n"
                  "  in kernel k0 k_full_", 0) == 0);
  const std::string where = ", which computes the values of test_memory.cpp:" + std::to_string(line_empty);
  CHECK(msg.compare(msg.size() - where.size(), where.size(), where) == 0);

  // Still usable: evaluations, the pool, autograd.
  Tensor a = tensor({1.0f, 2.0f, 3.0f}, requires_grad());
  Tensor s = (a * a).sum();
  s.backward();
  CHECK(s.item<float>() == 14.0f);
  CHECK(a.grad().to_vector<float>() == std::vector<float>{2, 4, 6});
  CHECK(memory_stats().allocations > 0);
}

// Under ASan the free lists poison the blocks they cache (core/asan.h) but
// not the link to the next one: LeakSanitizer ignores pointers in poisoned
// memory, and a poisoned link made every cached block but the list's head a
// "leak" (the fuzzer reported them as such). Other builds have nothing to
// check and report the test skipped.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KILN_TEST_LSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define KILN_TEST_LSAN 1
#endif
#ifdef KILN_TEST_LSAN
#include <sanitizer/lsan_interface.h>
constexpr bool kLeakCheck = true;
#else
constexpr bool kLeakCheck = false;
#endif

TEST_CASE("memory: graph nodes cached in the free lists are not reported as leaks" *
          doctest::skip(!kLeakCheck)) {
  {
    // Builds and drops a few hundred nodes and handles: they go to the lists.
    kiln::Tensor x = kiln::ones({8});
    for (int i = 0; i < 100; ++i) x = (x * 0.5 + 1).relu();  // 2 - 2^-i: 2 in float
    CHECK(x.sum().item<float>() == 16.0f);
  }
#ifdef KILN_TEST_LSAN
  CHECK(__lsan_do_recoverable_leak_check() == 0);
#endif
}

namespace {

// The VmFlags of the mapping of /proc/self/smaps that holds address p ("" if none).
std::string vm_flags_at(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto a = reinterpret_cast<uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2 && line.find(':') > line.find(' ')) {
      inside = a >= lo && a < hi;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0) return line;
  }
  return "";
}

}  // namespace

TEST_CASE("memory: buffers of 4 MiB and more are whole 2 MiB pages, 2 MiB aligned, advised for transparent huge pages") {
  const Tensor big = zeros({16, 1 << 20});  // 64 MiB
  big.eval();
  const void* p = big.data_ptr();
  CHECK(reinterpret_cast<uintptr_t>(p) % (uintptr_t{2} << 20) == 0);
  // VM_HUGEPAGE (madvise(MADV_HUGEPAGE)) shows as "hg" in the mapping's
  // VmFlags, where the kernel has transparent huge pages and says so
  const std::string flags = vm_flags_at(p);
  CAPTURE(flags);
  if (flags.empty() || !std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled"))
    MESSAGE("skipped: this kernel shows no transparent huge pages or no VmFlags");
  else
    CHECK(flags.find(" hg") != std::string::npos);
  const int64_t live = memory_stats().live_bytes;
  {
    const Tensor odd = zeros({(int64_t{5} << 20) / 4 + 1});  // 5 MiB + 4 bytes: three 2 MiB pages
    odd.eval();
    CHECK(reinterpret_cast<uintptr_t>(odd.data_ptr()) % (uintptr_t{2} << 20) == 0);
    CHECK(memory_stats().live_bytes - live == int64_t{6} << 20);
  }
  const Tensor small = zeros({1000});  // below 4 MiB: 64-byte aligned, the heap's
  small.eval();
  CHECK(reinterpret_cast<uintptr_t>(small.data_ptr()) % 64 == 0);
  CHECK(memory_stats().live_bytes - live == 4032);  // 4000 bytes in 64-byte units
}

// Buffer allocation: 64-byte aligned host memory from a size-keyed pool.
// A freed buffer's block goes back to the pool and the next buffer of the
// same rounded size reuses it, so a loop that evaluates the same shapes each
// iteration stops calling malloc after its first iteration. The pool keeps
// at most kPoolLimit bytes (KILN_POOL_MB overrides) and is emptied before an
// allocation is reported as failed.
//
// A block of kHugeFrom bytes or more is a whole number of 2 MiB pages,
// 2 MiB aligned, and asks the kernel for transparent huge pages
// (madvise(MADV_HUGEPAGE): in the THP mode "madvise", the default of Debian
// and of the machines kiln is measured on, nothing else gets them). A fresh
// 64 MiB buffer then costs 32 page faults instead of 16384 (about 6 ms
// instead of 200 on the VM of issue 3), and kernels streaming through it
// miss the TLB 512x less often.
#include "core/buffer.h"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

#include "core/asan.h"
#include "kiln/error.h"
#include "kiln/jit.h"

namespace kiln {

namespace {
std::atomic<int64_t> g_live_bytes{0}, g_peak_bytes{0}, g_allocations{0};

constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kHugeFrom = size_t{4} << 20;

size_t rounded_size(size_t bytes) {
  if (bytes >= kHugeFrom) return (bytes + kHugePage - 1) / kHugePage * kHugePage;
  size_t r = (bytes + 63) / 64 * 64;
  return r == 0 ? 64 : r;
}

// A new block of `rounded` bytes (rounded_size), or nullptr.
void* new_block(size_t rounded) {
  if (rounded < kHugeFrom) return std::aligned_alloc(64, rounded);
  void* p = std::aligned_alloc(kHugePage, rounded);
  // advice only: a kernel without THP says no, and the block still serves
  if (p) (void)::madvise(p, rounded, MADV_HUGEPAGE);
  return p;
}

class Pool {
 public:
  void* take(size_t rounded) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = free_.find(rounded);
    if (it == free_.end() || it->second.empty()) return nullptr;
    void* p = it->second.back();
    it->second.pop_back();
    pooled_ -= rounded;
    KILN_UNPOISON(p, rounded);
    return p;
  }
  void give(void* p, size_t rounded) {
    std::lock_guard<std::mutex> lock(mu_);
    if (pooled_ + rounded > limit_) {
      std::free(p);
      return;
    }
    KILN_POISON(p, rounded);  // a use after free of a pooled block is an ASan report
    free_[rounded].push_back(p);
    pooled_ += rounded;
  }
  void release() {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [size, blocks] : free_)
      for (void* p : blocks) {
        KILN_UNPOISON(p, size);
        std::free(p);
      }
    free_.clear();
    pooled_ = 0;
  }
  size_t pooled() {
    std::lock_guard<std::mutex> lock(mu_);
    return pooled_;
  }
  ~Pool() { release(); }

 private:
  std::mutex mu_;
  std::unordered_map<size_t, std::vector<void*>> free_;
  size_t pooled_ = 0;
  size_t limit_ = [] {
    const char* s = std::getenv("KILN_POOL_MB");
    long mb = s ? std::atol(s) : 1024;
    return static_cast<size_t>(mb < 0 ? 0 : mb) << 20;
  }();
};

Pool& pool() {
  static Pool* p = new Pool;  // never destroyed: buffers may outlive static destruction
  return *p;
}
}  // namespace

std::shared_ptr<Buffer> Buffer::allocate(DType dtype, int64_t numel, Device device) {
  KILN_INTERNAL_ASSERT(numel >= 0, "negative numel ", numel);
  KILN_CHECK(device.is_cpu(), "allocate",
             "cannot allocate memory on ", device.str(),
             ": kiln was built without a CUDA backend or no GPU is present");
  const size_t esize = element_size(dtype);
  KILN_CHECK(static_cast<uint64_t>(numel) <= std::numeric_limits<size_t>::max() / esize / 2,
             "allocate", "cannot allocate ", numel, " elements of ", dtype_name(dtype),
             ": the size overflows");
  const size_t bytes = static_cast<size_t>(numel) * esize;
  const size_t rounded = rounded_size(bytes);
  void* p = pool().take(rounded);
  if (!p) p = new_block(rounded);
  if (!p) {
    pool().release();
    p = new_block(rounded);
  }
  KILN_CHECK(p != nullptr, "allocate", "out of memory: could not allocate ", bytes,
             " bytes (", numel, " elements of ", dtype_name(dtype), ") on ", device.str());
  const int64_t live = g_live_bytes += static_cast<int64_t>(rounded);
  int64_t peak = g_peak_bytes.load(std::memory_order_relaxed);
  while (live > peak && !g_peak_bytes.compare_exchange_weak(peak, live, std::memory_order_relaxed)) {
  }
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::shared_ptr<Buffer>(new Buffer(p, dtype, numel, device, true));
}

std::shared_ptr<Buffer> Buffer::borrow(void* data, DType dtype, int64_t numel, Device device) {
  return std::shared_ptr<Buffer>(new Buffer(data, dtype, numel, device, false));
}

Buffer::~Buffer() {
  if (!owned_) return;
  const size_t rounded = rounded_size(nbytes());
  g_live_bytes -= static_cast<int64_t>(rounded);
  pool().give(data_, rounded);
}

int64_t Buffer::live_bytes() { return g_live_bytes.load(); }
int64_t Buffer::pooled_bytes() { return static_cast<int64_t>(pool().pooled()); }
void Buffer::release_pool() { pool().release(); }

MemoryStats memory_stats() {
  MemoryStats m;
  m.live_bytes = g_live_bytes.load();
  m.peak_bytes = std::max(g_peak_bytes.load(), m.live_bytes);
  m.pooled_bytes = Buffer::pooled_bytes();
  m.allocations = g_allocations.load();
  return m;
}
void reset_peak_memory() { g_peak_bytes = g_live_bytes.load(); }
void release_memory_pool() { Buffer::release_pool(); }

}  // namespace kiln

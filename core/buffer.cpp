// Buffer allocation: 64-byte aligned host memory, with a live-bytes counter.
#include "core/buffer.h"

#include <atomic>
#include <cstdlib>
#include <limits>
#include <new>

#include "kiln/error.h"

namespace kiln {

namespace {
std::atomic<int64_t> g_live_bytes{0};
}

std::shared_ptr<Buffer> Buffer::allocate(DType dtype, int64_t numel, Device device) {
  KILN_INTERNAL_ASSERT(numel >= 0, "negative numel ", numel);
  KILN_CHECK(device.is_cpu(), "allocate",
             "cannot allocate memory on ", device.str(),
             ": kiln was built without a CUDA backend or no GPU is present");
  const size_t esize = element_size(dtype);
  KILN_CHECK(static_cast<uint64_t>(numel) <= std::numeric_limits<size_t>::max() / esize / 2,
             "allocate", "cannot allocate ", numel, " elements of ", dtype_name(dtype),
             ": the size overflows");
  size_t bytes = static_cast<size_t>(numel) * esize;
  size_t rounded = (bytes + 63) / 64 * 64;
  if (rounded == 0) rounded = 64;
  void* p = std::aligned_alloc(64, rounded);
  KILN_CHECK(p != nullptr, "allocate", "out of memory: could not allocate ", bytes,
             " bytes (", numel, " elements of ", dtype_name(dtype), ") on ", device.str());
  g_live_bytes += static_cast<int64_t>(rounded);
  auto* b = new Buffer(p, dtype, numel, device, true);
  return std::shared_ptr<Buffer>(b);
}

std::shared_ptr<Buffer> Buffer::borrow(void* data, DType dtype, int64_t numel, Device device) {
  return std::shared_ptr<Buffer>(new Buffer(data, dtype, numel, device, false));
}

Buffer::~Buffer() {
  if (owned_) {
    size_t bytes = nbytes();
    size_t rounded = (bytes + 63) / 64 * 64;
    if (rounded == 0) rounded = 64;
    g_live_bytes -= static_cast<int64_t>(rounded);
    std::free(data_);
  }
}

int64_t Buffer::live_bytes() { return g_live_bytes.load(); }

}  // namespace kiln

// Buffer: a block of device memory holding `numel` elements of one dtype.
// Either owned (allocated by kiln, 64-byte aligned) or borrowed from the
// caller (from_blob), in which case kiln never frees it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "kiln/device.h"
#include "kiln/dtype.h"

namespace kiln {

class Buffer {
 public:
  // Raises kiln::Error naming the size when memory cannot be had.
  static std::shared_ptr<Buffer> allocate(DType dtype, int64_t numel, Device device);
  static std::shared_ptr<Buffer> borrow(void* data, DType dtype, int64_t numel, Device device);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() const { return data_; }
  template <typename T> T* as() const { return static_cast<T*>(data_); }
  DType dtype() const { return dtype_; }
  Device device() const { return device_; }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return static_cast<size_t>(numel_) * element_size(dtype_); }
  bool owned() const { return owned_; }
  // Bytes kiln itself currently holds in owned buffers (the allocator's counter).
  static int64_t live_bytes();
  // Bytes of freed blocks kept for reuse, and a way to give them back.
  static int64_t pooled_bytes();
  static void release_pool();

 private:
  Buffer(void* data, DType dtype, int64_t numel, Device device, bool owned)
      : data_(data), dtype_(dtype), device_(device), numel_(numel), owned_(owned) {}
  void* data_;
  DType dtype_;
  Device device_;
  int64_t numel_;
  bool owned_;
};

using BufferPtr = std::shared_ptr<Buffer>;

}  // namespace kiln

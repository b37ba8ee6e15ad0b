// SmallVector: a vector of trivially copyable values whose first N live
// inside the object. Attrs::reals uses it: most nodes carry zero to two real
// parameters (a fill value, arange's start and step), and a heap block per
// node for them was a tenth of a training step's allocations.
#pragma once

#include <cstddef>
#include <cstring>
#include <initializer_list>
#include <type_traits>

namespace kiln {

template <typename T, size_t N>
class SmallVector {
  static_assert(std::is_trivially_copyable_v<T>, "SmallVector holds plain values");

 public:
  using value_type = T;
  SmallVector() = default;
  SmallVector(std::initializer_list<T> values) { assign(values.begin(), values.size()); }
  SmallVector(const SmallVector& o) { assign(o.data(), o.size_); }
  SmallVector(SmallVector&& o) noexcept { steal(o); }
  SmallVector& operator=(const SmallVector& o) {
    if (this != &o) assign(o.data(), o.size_);
    return *this;
  }
  SmallVector& operator=(SmallVector&& o) noexcept {
    if (this != &o) {
      release();
      steal(o);
    }
    return *this;
  }
  SmallVector& operator=(std::initializer_list<T> values) {
    assign(values.begin(), values.size());
    return *this;
  }
  ~SmallVector() { release(); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return heap_ ? heap_ : inline_; }
  const T* data() const { return heap_ ? heap_ : inline_; }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }
  T& back() { return data()[size_ - 1]; }
  const T& back() const { return data()[size_ - 1]; }
  void clear() { size_ = 0; }
  void reserve(size_t n) {
    if (n > capacity()) grow(n);
  }
  void push_back(const T& v) {
    if (size_ == capacity()) {
      const T copy = v;  // v may live in this vector
      grow(size_ * 2);
      data()[size_++] = copy;
      return;
    }
    data()[size_++] = v;
  }
  friend bool operator==(const SmallVector& a, const SmallVector& b) {
    return a.size_ == b.size_ && (a.size_ == 0 || std::memcmp(a.data(), b.data(), a.size_ * sizeof(T)) == 0);
  }

 private:
  size_t capacity() const { return heap_ ? cap_ : N; }
  void assign(const T* src, size_t n) {
    if (n > capacity()) grow(n);
    if (n) std::memmove(data(), src, n * sizeof(T));
    size_ = n;
  }
  void grow(size_t n) {
    if (n < N * 2) n = N * 2;
    T* p = new T[n];
    if (size_) std::memcpy(p, data(), size_ * sizeof(T));
    release();
    heap_ = p;
    cap_ = n;
  }
  void release() {
    delete[] heap_;
    heap_ = nullptr;
  }
  void steal(SmallVector& o) {
    size_ = o.size_;
    if (o.heap_) {
      heap_ = o.heap_;
      cap_ = o.cap_;
      o.heap_ = nullptr;
    } else if (size_) {
      std::memcpy(inline_, o.inline_, size_ * sizeof(T));
    }
    o.size_ = 0;
  }

  T* heap_ = nullptr;
  size_t size_ = 0;
  size_t cap_ = 0;
  T inline_[N];
};

}  // namespace kiln

// Shape: a list of sizes or strides (int64), printed as LibTorch prints
// IntArrayRef: "[2, 3, 4]".
//
// It is a small vector: up to kInline values live inside the object, so the
// shapes, strides and view attributes that every op creates cost no heap
// allocation (graph building is allocation-bound otherwise). It behaves as
// std::vector<int64_t> for everything kiln and its users do with one, and
// converts to and from it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <ostream>
#include <string>
#include <type_traits>
#include <vector>

namespace kiln {

class Shape {
 public:
  using value_type = int64_t;
  using size_type = size_t;
  using difference_type = std::ptrdiff_t;
  using reference = int64_t&;
  using const_reference = const int64_t&;
  using pointer = int64_t*;
  using const_pointer = const int64_t*;
  using iterator = int64_t*;
  using const_iterator = const int64_t*;
  using reverse_iterator = std::reverse_iterator<iterator>;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;
  static constexpr size_t kInline = 6;

  Shape() = default;
  explicit Shape(size_t n, int64_t value = 0) { resize(n, value); }
  Shape(std::initializer_list<int64_t> values) { assign(values.begin(), values.end()); }
  template <typename It, typename = std::enable_if_t<!std::is_integral_v<It>>>
  Shape(It first, It last) {
    for (; first != last; ++first) push_back(static_cast<int64_t>(*first));
  }
  Shape(const std::vector<int64_t>& v) { assign(v.data(), v.data() + v.size()); }  // NOLINT
  Shape(const Shape& o) { copy_from(o); }
  Shape(Shape&& o) noexcept { steal(o); }
  Shape& operator=(const Shape& o) {
    if (this != &o) copy_from(o);
    return *this;
  }
  Shape& operator=(Shape&& o) noexcept {
    if (this != &o) {
      release();
      steal(o);
    }
    return *this;
  }
  Shape& operator=(std::initializer_list<int64_t> values) {
    size_ = 0;
    assign(values.begin(), values.end());
    return *this;
  }
  ~Shape() { release(); }

  operator std::vector<int64_t>() const { return {begin(), end()}; }  // NOLINT

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return cap_; }
  int64_t* data() { return ptr_; }
  const int64_t* data() const { return ptr_; }
  iterator begin() { return ptr_; }
  iterator end() { return ptr_ + size_; }
  const_iterator begin() const { return ptr_; }
  const_iterator end() const { return ptr_ + size_; }
  const_iterator cbegin() const { return ptr_; }
  const_iterator cend() const { return ptr_ + size_; }
  reverse_iterator rbegin() { return reverse_iterator(end()); }
  reverse_iterator rend() { return reverse_iterator(begin()); }
  const_reverse_iterator rbegin() const { return const_reverse_iterator(end()); }
  const_reverse_iterator rend() const { return const_reverse_iterator(begin()); }
  int64_t& operator[](size_t i) { return ptr_[i]; }
  const int64_t& operator[](size_t i) const { return ptr_[i]; }
  int64_t& at(size_t i);
  const int64_t& at(size_t i) const;
  int64_t& front() { return ptr_[0]; }
  const int64_t& front() const { return ptr_[0]; }
  int64_t& back() { return ptr_[size_ - 1]; }
  const int64_t& back() const { return ptr_[size_ - 1]; }

  void reserve(size_t n) {
    if (n > cap_) grow(n);
  }
  void clear() { size_ = 0; }
  void resize(size_t n, int64_t value = 0) {
    reserve(n);
    for (size_t i = size_; i < n; ++i) ptr_[i] = value;
    size_ = n;
  }
  void push_back(int64_t v) {
    if (size_ == cap_) grow(cap_ * 2);
    ptr_[size_++] = v;
  }
  void pop_back() { --size_; }
  template <typename It>
  void assign(It first, It last) {
    size_ = 0;
    for (; first != last; ++first) push_back(static_cast<int64_t>(*first));
  }
  iterator insert(const_iterator pos, int64_t v) { return insert(pos, &v, &v + 1); }
  iterator insert(const_iterator pos, std::initializer_list<int64_t> values) {
    return insert(pos, values.begin(), values.end());
  }
  template <typename It, typename = std::enable_if_t<!std::is_integral_v<It>>>
  iterator insert(const_iterator pos, It first, It last) {
    const size_t at = static_cast<size_t>(pos - ptr_);
    Shape tail(ptr_ + at, ptr_ + size_);  // first..last may alias *this
    Shape mid(first, last);
    size_ = at;
    for (int64_t v : mid) push_back(v);
    for (int64_t v : tail) push_back(v);
    return ptr_ + at;
  }
  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }
  iterator erase(const_iterator first, const_iterator last) {
    const size_t a = static_cast<size_t>(first - ptr_), b = static_cast<size_t>(last - ptr_);
    std::memmove(ptr_ + a, ptr_ + b, (size_ - b) * sizeof(int64_t));
    size_ -= b - a;
    return ptr_ + a;
  }

  friend bool operator==(const Shape& a, const Shape& b) {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator!=(const Shape& a, const Shape& b) { return !(a == b); }
  friend bool operator<(const Shape& a, const Shape& b) {
    return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
  }

  int64_t numel() const;
  std::string str() const;  // "[2, 3, 4]"

 private:
  void grow(size_t n) {
    n = std::max<size_t>(n, kInline * 2);
    int64_t* p = new int64_t[n];
    if (size_) std::memcpy(p, ptr_, size_ * sizeof(int64_t));
    release();
    ptr_ = p;
    cap_ = static_cast<uint32_t>(n);
  }
  void release() {
    if (ptr_ != inline_) delete[] ptr_;
    ptr_ = inline_;
    cap_ = kInline;
  }
  // Copies (and, in steal, moves) of shapes that fit inline copy the whole
  // inline block, a fixed size the compiler turns into a few vector moves:
  // a move's size-dependent memcpy was a library call, ~4% of recording a
  // training step, and a copy pushed element by element. Every buffer holds
  // at least kInline values, so the read stays in bounds.
  void copy_from(const Shape& o) {
    if (o.size_ <= kInline) {
      release();
      std::memcpy(inline_, o.ptr_, sizeof(inline_));
      size_ = o.size_;
    } else {
      size_ = 0;
      assign(o.begin(), o.end());
    }
  }
  void steal(Shape& o) {
    if (o.ptr_ == o.inline_) {
      ptr_ = inline_;
      cap_ = kInline;
      std::memcpy(inline_, o.inline_, sizeof(inline_));
    } else {
      ptr_ = o.ptr_;
      cap_ = o.cap_;
      o.ptr_ = o.inline_;
      o.cap_ = kInline;
    }
    size_ = o.size_;
    o.size_ = 0;
  }

  int64_t* ptr_ = inline_;
  uint32_t size_ = 0;
  uint32_t cap_ = kInline;
  int64_t inline_[kInline] = {};  // zeroed: whole-block copies never read indeterminate values
};

std::ostream& operator<<(std::ostream& os, const Shape& s);

}  // namespace kiln

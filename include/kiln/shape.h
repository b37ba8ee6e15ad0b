// Shape: a list of sizes or strides (int64), printed as LibTorch prints
// IntArrayRef: "[2, 3, 4]".
#pragma once

#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <string>
#include <vector>

namespace kiln {

struct Shape : std::vector<int64_t> {
  using std::vector<int64_t>::vector;
  Shape() = default;
  Shape(const std::vector<int64_t>& v) : std::vector<int64_t>(v) {}  // NOLINT
  Shape(std::vector<int64_t>&& v) : std::vector<int64_t>(std::move(v)) {}  // NOLINT
  int64_t numel() const;
  std::string str() const;  // "[2, 3, 4]"
};

std::ostream& operator<<(std::ostream& os, const Shape& s);

}  // namespace kiln

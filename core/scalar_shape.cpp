// Scalar's dtype and Shape's printing.
#include "kiln/error.h"
#include "kiln/scalar.h"
#include "kiln/shape.h"

#include <sstream>

namespace kiln {

DType Scalar::dtype() const {
  switch (kind_) {
    case Kind::Bool: return DType::Bool;
    case Kind::Int: return DType::Int64;
    case Kind::Float: return DType::Float64;
  }
  return DType::Float64;
}

int64_t& Shape::at(size_t i) {
  KILN_INTERNAL_ASSERT(i < size_, "Shape::at(", i, ") of a list of ", size_);
  return ptr_[i];
}
const int64_t& Shape::at(size_t i) const {
  KILN_INTERNAL_ASSERT(i < size_, "Shape::at(", i, ") of a list of ", size_);
  return ptr_[i];
}

int64_t Shape::numel() const {
  int64_t n = 1;
  for (int64_t s : *this) n *= s;
  return n;
}

std::string Shape::str() const {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < size(); ++i) os << (i ? ", " : "") << (*this)[i];
  os << ']';
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Shape& s) { return os << s.str(); }

}  // namespace kiln

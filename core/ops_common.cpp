// Dim wrapping, broadcasting and the node builders shared by all ops.
#include "core/ops_common.h"

#include <cmath>
#include <limits>
#include <sstream>

namespace kiln {

int64_t wrap_dim(int64_t dim, int64_t rank, const char* op) {
  int64_t r = rank == 0 ? 1 : rank;
  KILN_CHECK(dim >= -r && dim < r, op, "Dimension out of range (expected to be in range of [",
             -r, ", ", r - 1, "], but got ", dim, ")");
  return dim < 0 ? dim + r : dim;
}

namespace {
// s's size at dim i of a rank-n broadcast (missing leading dims are 1).
int64_t size_in(const Shape& s, size_t i, size_t n) { return i < n - s.size() ? 1 : s[i - (n - s.size())]; }
}  // namespace

int64_t broadcast_into(const Shape& a, const Shape& b, Shape* out) {
  const size_t n = std::max(a.size(), b.size());
  *out = Shape(n, 1);
  for (size_t i = 0; i < n; ++i) {
    const int64_t da = size_in(a, i, n), db = size_in(b, i, n);
    if (da != db && da != 1 && db != 1) return static_cast<int64_t>(i);
    (*out)[i] = da == 1 ? db : da;
  }
  return -1;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  Shape out;
  const int64_t bad = broadcast_into(a, b, &out);
  if (bad >= 0) {
    const size_t i = static_cast<size_t>(bad), n = out.size();
    KILN_CHECK(false, op, "The size of tensor a (", size_in(a, i, n), ") must match the size of tensor b (",
               size_in(b, i, n), ") at non-singleton dimension ", i, " (shapes ", a, " and ", b, ")");
  }
  return out;
}

DType wrapped_scalar_dtype(const Scalar& s) {
  if (s.is_bool()) return DType::Bool;
  if (s.is_integral()) return DType::Int64;
  return default_dtype();
}

NodePtr cast_node(NodePtr n, DType dtype) {
  if (n->dtype == dtype) return n;
  // n's fields are read before n is moved into the list (argument order is unspecified)
  const Device dev = n->device;
  Shape shape = n->shape;
  return make_node(Op::Cast, dtype, dev, std::move(shape), node_list(std::move(n)));
}

NodePtr as_strided_node(NodePtr n, Shape shape, int64_t offset, const Shape& strides, bool store) {
  Attrs a;
  a.ints.reserve(strides.size() + 1);
  a.ints.push_back(offset);
  a.ints.insert(a.ints.end(), strides.begin(), strides.end());
  // n's fields are read before n is moved into the list
  const DType dt = n->dtype;
  const Device dev = n->device;
  return make_node(Op::AsStrided, dt, dev, std::move(shape), node_list(std::move(n)), std::move(a), store);
}

NodePtr reshape_node(NodePtr n, const Shape& shape) {
  if (n->shape == shape) return n;
  return as_strided_node(std::move(n), shape, 0, contiguous_strides(shape));
}

NodePtr expand_node(NodePtr n, const Shape& shape) {
  if (n->shape == shape) return n;
  const Shape& in = n->shape;
  KILN_INTERNAL_ASSERT(in.size() <= shape.size(), "expand of ", in, " to ", shape);
  Shape in_strides = contiguous_strides(in);
  Attrs a;
  a.ints.push_back(0);
  size_t lead = shape.size() - in.size();
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i < lead) {
      a.ints.push_back(0);
    } else {
      int64_t s = in[i - lead];
      KILN_INTERNAL_ASSERT(s == shape[i] || s == 1, "expand of ", in, " to ", shape);
      a.ints.push_back(s == shape[i] && s != 1 ? in_strides[i - lead] : 0);
    }
  }
  const DType dt = n->dtype;
  const Device dev = n->device;
  return make_node(Op::AsStrided, dt, dev, shape, node_list(std::move(n)), std::move(a));
}

NodePtr full_node(const Shape& shape, const Scalar& v, DType dtype, Device device) {
  Attrs a;
  if (is_floating_point(dtype)) {
    a.reals.push_back(v.to_double());
    a.ints.push_back(0);
  } else {
    a.ints.push_back(dtype == DType::Bool ? (v.to_bool() ? 1 : 0) : v.to_long());
    a.reals.push_back(0.0);
  }
  return make_node(Op::Full, dtype, device, shape, {}, std::move(a));
}

NodePtr shape_scalar_node(double v, DType dtype, Device device) {
  Attrs a;
  a.ints = {static_cast<int64_t>(v), 1};
  a.reals = {v};
  return make_node(Op::Full, dtype, device, Shape{}, {}, std::move(a));
}

Tensor shape_scalar(int64_t v, Device device) {
  return make_tensor(shape_scalar_node(static_cast<double>(v), DType::Int64, device));
}

NodePtr scalar_node(const Scalar& v, DType dtype, Device device) {
  return full_node(Shape{}, v, dtype, device);
}

namespace {
template <typename List>
void check_same_device_impl(const char* op, const List& tensors) {
  const Tensor* first = nullptr;
  for (const Tensor* t : tensors) {
    KILN_CHECK(t->defined(), op, "expected a defined tensor but got an undefined one");
    if (!first) {
      first = t;
      continue;
    }
    KILN_CHECK(t->device() == first->device(), op,
               "Expected all tensors to be on the same device, but found at least two devices, ",
               first->device(), " and ", t->device(), "! (move one with .to(device))");
  }
}
}  // namespace

void check_same_device(const char* op, std::initializer_list<const Tensor*> tensors) {
  check_same_device_impl(op, tensors);
}
void check_same_device(const char* op, const std::vector<const Tensor*>& tensors) {
  check_same_device_impl(op, tensors);
}

void check_fill_value(const Scalar& v, DType dtype, const char* op) {
  // c10::overflows: unsigned targets accept negatives that wrap (-1 -> 255);
  // floating targets accept inf and NaN; integer targets refuse NaN.
  const bool fp = v.is_floating_point();
  const double d = v.to_double();
  const int64_t i = v.to_long();
  auto outside = [&](double lo, double hi) {
    if (!fp) return static_cast<double>(i) < lo || static_cast<double>(i) > hi;
    return std::isnan(d) || d < lo || d > hi;
  };
  auto outside_float = [&](double max) { return fp ? std::isfinite(d) && std::fabs(d) > max : std::fabs(static_cast<double>(i)) > max; };
  bool over = false;
  const char* name = "";
  switch (dtype) {
    case DType::Bool: case DType::Float64: return;
    case DType::UInt8: over = outside(-255.0, 255.0); name = "uint8_t"; break;
    case DType::Int32: over = outside(-2147483648.0, 2147483647.0); name = "int"; break;
    case DType::Int64: over = fp && outside(-9223372036854775808.0, 9223372036854775807.0); name = "int64_t"; break;
    case DType::Float16: over = outside_float(largest_finite(dtype)); name = "at::Half"; break;
    case DType::BFloat16: over = outside_float(largest_finite(dtype)); name = "at::BFloat16"; break;
    case DType::Float32: over = outside_float(largest_finite(dtype)); name = "float"; break;
  }
  KILN_CHECK(!over, op, "value cannot be converted to type ", name, " without overflow");
}

void check_shape_nonneg(const Shape& sizes, const char* op) {
  for (int64_t s : sizes)
    KILN_CHECK(s >= 0, op, "Trying to create tensor with negative dimension ", s, ": ", sizes);
  int64_t n = 1;
  for (int64_t s : sizes) {
    KILN_CHECK(s == 0 || n <= std::numeric_limits<int64_t>::max() / s, op,
               "the number of elements of shape ", sizes, " overflows int64");
    n *= s;
  }
}

void check_floating(const Tensor& x, const char* op) {
  KILN_CHECK(x.defined(), op, "expected a defined tensor but got an undefined one");
  KILN_CHECK(is_floating_point(x.dtype()), op, "not implemented for ", scalar_type_name(x.dtype()),
             ": expected a floating point tensor (shape ", x.sizes(), ")");
}

double largest_finite(DType t) {
  switch (t) {
    case DType::Float16: return 65504.0;
    case DType::BFloat16: return 3.3895313892515355e38;
    case DType::Float32: return 3.4028234663852886e38;
    default: return std::numeric_limits<double>::max();
  }
}

Tensor as_vector(const Tensor& t) { return t.defined() && t.dim() == 0 ? t.reshape({1}) : t; }

std::string shape_text(const Shape& s) {
  std::ostringstream os;
  os << s;
  return os.str();
}

void check_defined(const Tensor& t, const char* op) {
  KILN_CHECK(t.defined(), op, "expected a defined tensor but got an undefined one");
}

}  // namespace kiln

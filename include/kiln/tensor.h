// Tensor: the user's handle on a lazily evaluated value, with LibTorch's
// method names. Every method that computes returns at once with a new graph
// node; reading methods (item, to_vector, data_ptr, printing) evaluate.
// The graph itself lives in core/ and never appears in this header.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <tuple>
#include <vector>

#include "kiln/device.h"
#include "kiln/dtype.h"
#include "kiln/indexing.h"
#include "kiln/options.h"
#include "kiln/scalar.h"
#include "kiln/shape.h"

namespace kiln {

struct TensorImpl;  // core/tensor_impl.h
namespace autograd {
class Node;  // kiln/autograd.h
}

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // Index assignment, as LibTorch: t.index({0, 1}) = 5; t[0] = other;
  // Assigning to an rvalue (a view) writes through it; assigning to a named
  // Tensor rebinds the handle, as in C++ and LibTorch.
  Tensor(const Tensor&) = default;
  Tensor(Tensor&&) noexcept = default;
  Tensor& operator=(const Tensor&) & = default;
  Tensor& operator=(Tensor&&) & noexcept = default;
  Tensor& operator=(const Tensor& src) &&;
  Tensor& operator=(Scalar v) &&;

  bool defined() const { return impl_ != nullptr; }
  TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }

  // ---- attributes (no evaluation) ----
  const Shape& sizes() const;
  const Shape& shape() const { return sizes(); }
  int64_t size(int64_t dim) const;
  const Shape& strides() const;
  int64_t stride(int64_t dim) const;
  int64_t storage_offset() const;
  int64_t dim() const;
  int64_t ndimension() const { return dim(); }
  int64_t numel() const;
  DType dtype() const;
  DType scalar_type() const { return dtype(); }
  Device device() const;
  bool is_cuda() const { return device().is_cuda(); }
  bool is_contiguous() const;
  bool is_floating_point() const;
  size_t element_size() const;
  TensorOptions options() const;
  bool requires_grad() const;
  Tensor& requires_grad_(bool requires_grad = true);
  void set_requires_grad(bool r) { requires_grad_(r); }
  bool is_leaf() const;
  const Tensor& grad() const;
  Tensor& mutable_grad();
  // Python's `t.grad = g` (an undefined g clears it, as `t.grad = None`).
  void set_grad(const Tensor& g);

  // ---- autograd (kiln/autograd.h) ----
  // The backward function that produced this tensor (null for leaves).
  std::shared_ptr<autograd::Node> grad_fn() const;
  // Adds the gradient of this tensor (weighted by `gradient`, which may be
  // omitted for a one-element tensor) to the .grad() of the leaves. Lazy: it
  // builds gradient nodes; nothing is computed until a value is read.
  void backward(const Tensor& gradient = {}, std::optional<bool> retain_graph = std::nullopt,
                bool create_graph = false) const;
  // Makes backward() fill .grad() of this non-leaf tensor too.
  void retain_grad() const;
  bool retains_grad() const;
  // The storage's version counter: bumped by every in-place write.
  int64_t _version() const;
  // A tensor sharing this one's storage that autograd does not track (`.data`).
  Tensor data() const;
  // Whether this tensor shares storage with another (a view of it, or it of this).
  bool is_alias_of(const Tensor& other) const;

  // ---- evaluation and reading ----
  const Tensor& eval() const;
  template <typename T> T item() const;
  Scalar item() const;
  template <typename T> std::vector<T> to_vector() const;
  template <typename T> T* data_ptr() const;
  void* data_ptr() const;

  // ---- views (share storage with this tensor) ----
  Tensor operator[](int64_t index) const { return select(0, index); }
  Tensor index(std::initializer_list<indexing::TensorIndex> indices) const;
  Tensor index(const std::vector<indexing::TensorIndex>& indices) const;
  Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, const Tensor& value);
  Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, Scalar value);
  Tensor select(int64_t dim, int64_t index) const;
  Tensor slice(int64_t dim = 0, std::optional<int64_t> start = std::nullopt,
               std::optional<int64_t> end = std::nullopt, int64_t step = 1) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor view(const Shape& shape) const;
  Tensor reshape(const Shape& shape) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor t() const;
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor permute(const Shape& dims) const;
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor expand(const Shape& sizes) const;
  Tensor expand_as(const Tensor& other) const { return expand(other.sizes()); }
  Tensor view_as(const Tensor& other) const { return view(other.sizes()); }
  Tensor reshape_as(const Tensor& other) const { return reshape(other.sizes()); }
  Tensor as_strided(const Shape& size, const Shape& stride,
                    std::optional<int64_t> storage_offset = std::nullopt) const;
  Tensor contiguous() const;
  Tensor clone() const;
  Tensor detach() const;
  std::vector<Tensor> chunk(int64_t chunks, int64_t dim = 0) const;
  std::vector<Tensor> split(int64_t split_size, int64_t dim = 0) const;
  std::vector<Tensor> split(const Shape& split_sizes, int64_t dim = 0) const;
  std::vector<Tensor> unbind(int64_t dim = 0) const;

  // ---- elementwise ----
  Tensor add(const Tensor& other, Scalar alpha = 1) const;
  Tensor add(Scalar other, Scalar alpha = 1) const;
  Tensor sub(const Tensor& other, Scalar alpha = 1) const;
  Tensor sub(Scalar other, Scalar alpha = 1) const;
  Tensor mul(const Tensor& other) const;
  Tensor mul(Scalar other) const;
  Tensor div(const Tensor& other) const;
  Tensor div(Scalar other) const;
  Tensor pow(const Tensor& exponent) const;
  Tensor pow(Scalar exponent) const;
  Tensor neg() const;
  Tensor exp() const;
  Tensor log() const;
  Tensor sqrt() const;
  Tensor rsqrt() const;
  Tensor abs() const;
  Tensor sin() const;
  Tensor cos() const;
  Tensor tanh() const;
  Tensor sigmoid() const;
  Tensor relu() const;
  Tensor square() const;
  Tensor logical_not() const;
  Tensor clamp(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt) const;
  Tensor clamp_min(Scalar min) const { return clamp(min, std::nullopt); }
  Tensor clamp_max(Scalar max) const { return clamp(std::nullopt, max); }
  Tensor maximum(const Tensor& other) const;
  Tensor minimum(const Tensor& other) const;
  Tensor eq(const Tensor& o) const;
  Tensor eq(Scalar o) const;
  Tensor ne(const Tensor& o) const;
  Tensor ne(Scalar o) const;
  Tensor lt(const Tensor& o) const;
  Tensor lt(Scalar o) const;
  Tensor le(const Tensor& o) const;
  Tensor le(Scalar o) const;
  Tensor gt(const Tensor& o) const;
  Tensor gt(Scalar o) const;
  Tensor ge(const Tensor& o) const;
  Tensor ge(Scalar o) const;
  Tensor matmul(const Tensor& other) const;
  Tensor mm(const Tensor& other) const;

  // ---- in place (a new node on the same storage; views see the write) ----
  Tensor& add_(const Tensor& other, Scalar alpha = 1);
  Tensor& add_(Scalar other, Scalar alpha = 1);
  Tensor& sub_(const Tensor& other, Scalar alpha = 1);
  Tensor& sub_(Scalar other, Scalar alpha = 1);
  Tensor& mul_(const Tensor& other);
  Tensor& mul_(Scalar other);
  Tensor& div_(const Tensor& other);
  Tensor& div_(Scalar other);
  Tensor& zero_();
  Tensor& fill_(Scalar value);
  Tensor& fill_(const Tensor& value);
  Tensor& copy_(const Tensor& src);
  Tensor& clamp_(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt);
  Tensor& operator+=(const Tensor& o) { return add_(o); }
  Tensor& operator+=(Scalar o) { return add_(o); }
  Tensor& operator-=(const Tensor& o) { return sub_(o); }
  Tensor& operator-=(Scalar o) { return sub_(o); }
  Tensor& operator*=(const Tensor& o) { return mul_(o); }
  Tensor& operator*=(Scalar o) { return mul_(o); }
  Tensor& operator/=(const Tensor& o) { return div_(o); }
  Tensor& operator/=(Scalar o) { return div_(o); }

  // ---- reductions ----
  Tensor sum(std::optional<DType> dtype = std::nullopt) const;
  Tensor sum(int64_t dim, bool keepdim = false, std::optional<DType> dtype = std::nullopt) const;
  Tensor sum(const Shape& dims, bool keepdim = false, std::optional<DType> dtype = std::nullopt) const;
  Tensor mean(std::optional<DType> dtype = std::nullopt) const;
  Tensor mean(int64_t dim, bool keepdim = false, std::optional<DType> dtype = std::nullopt) const;
  Tensor mean(const Shape& dims, bool keepdim = false, std::optional<DType> dtype = std::nullopt) const;
  Tensor prod(std::optional<DType> dtype = std::nullopt) const;
  Tensor prod(int64_t dim, bool keepdim = false, std::optional<DType> dtype = std::nullopt) const;
  Tensor max() const;
  std::tuple<Tensor, Tensor> max(int64_t dim, bool keepdim = false) const;
  Tensor max(const Tensor& other) const { return maximum(other); }
  Tensor min() const;
  std::tuple<Tensor, Tensor> min(int64_t dim, bool keepdim = false) const;
  Tensor min(const Tensor& other) const { return minimum(other); }
  Tensor amax(const Shape& dims = {}, bool keepdim = false) const;
  Tensor amin(const Shape& dims = {}, bool keepdim = false) const;
  Tensor argmax(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor argmin(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  // unbiased=true divides by N-1, as torch.var's default.
  Tensor var(bool unbiased = true) const;
  Tensor var(const Shape& dims, bool unbiased = true, bool keepdim = false) const;
  Tensor var(int64_t dim, bool unbiased = true, bool keepdim = false) const;
  Tensor std(bool unbiased = true) const;
  Tensor std(const Shape& dims, bool unbiased = true, bool keepdim = false) const;
  Tensor std(int64_t dim, bool unbiased = true, bool keepdim = false) const;
  Tensor all() const;
  Tensor all(int64_t dim, bool keepdim = false) const;
  Tensor any() const;
  Tensor any(int64_t dim, bool keepdim = false) const;
  Tensor softmax(int64_t dim, std::optional<DType> dtype = std::nullopt) const;
  Tensor log_softmax(int64_t dim, std::optional<DType> dtype = std::nullopt) const;

  // ---- conversion ----
  Tensor to(DType dtype) const;
  Tensor to(Device device) const;
  Tensor to(Device device, DType dtype) const;
  Tensor to(const TensorOptions& options) const;
  Tensor to(DeviceType t) const { return to(Device(t)); }
  Tensor cpu() const { return to(Device(DeviceType::CPU)); }
  Tensor cuda(int index = 0) const { return to(Device(DeviceType::CUDA, index)); }
  Tensor type_as(const Tensor& other) const { return to(other.dtype()); }

 private:
  std::shared_ptr<TensorImpl> impl_;
};

// PyTorch's repr: tensor([[1., 2.],\n        [3., 4.]]) (evaluates).
std::ostream& operator<<(std::ostream& os, const Tensor& t);
std::string to_string(const Tensor& t);

// Arithmetic operators, NumPy broadcasting, PyTorch type promotion.
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, Scalar b);
Tensor operator+(Scalar a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, Scalar b);
Tensor operator-(Scalar a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, Scalar b);
Tensor operator*(Scalar a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, Scalar b);
Tensor operator/(Scalar a, const Tensor& b);
Tensor operator-(const Tensor& a);
Tensor operator==(const Tensor& a, const Tensor& b);
Tensor operator==(const Tensor& a, Scalar b);
Tensor operator!=(const Tensor& a, const Tensor& b);
Tensor operator!=(const Tensor& a, Scalar b);
Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator<(const Tensor& a, Scalar b);
Tensor operator<=(const Tensor& a, const Tensor& b);
Tensor operator<=(const Tensor& a, Scalar b);
Tensor operator>(const Tensor& a, const Tensor& b);
Tensor operator>(const Tensor& a, Scalar b);
Tensor operator>=(const Tensor& a, const Tensor& b);
Tensor operator>=(const Tensor& a, Scalar b);
Tensor operator!(const Tensor& a);

}  // namespace kiln

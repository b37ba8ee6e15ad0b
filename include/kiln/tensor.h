// Tensor: the user's handle on a lazily evaluated value, with LibTorch's
// method names. Every method that computes returns at once with a new graph
// node; reading methods (item, to_vector, data_ptr, printing) evaluate.
// The graph itself lives in core/ and never appears in this header.
#pragma once

#include <concepts>
#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string_view>
#include <tuple>
#include <vector>

#include "kiln/device.h"
#include "kiln/dtype.h"
#include "kiln/indexing.h"
#include "kiln/options.h"
#include "kiln/scalar.h"
#include "kiln/shape.h"
#include "kiln/source_location.h"

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
  // PyTorch's strides: an elementwise result keeps its inputs' memory
  // order (x.t() * 2 has strides (1, n), as in PyTorch).
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
                bool create_graph = false, KILN_LOC) const;
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
  Tensor index(std::initializer_list<indexing::TensorIndex> indices, KILN_LOC) const;
  Tensor index(const std::vector<indexing::TensorIndex>& indices, KILN_LOC) const;
  Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, const Tensor& value, KILN_LOC);
  Tensor& index_put_(std::initializer_list<indexing::TensorIndex> indices, Scalar value, KILN_LOC);
  // One int64 position tensor (or bool mask) per leading dim; repeated
  // positions add up with accumulate, else one of the values is written.
  Tensor index_put(const std::vector<Tensor>& indices, const Tensor& values, bool accumulate, KILN_LOC) const;
  Tensor& index_put_(const std::vector<Tensor>& indices, const Tensor& values, bool accumulate, KILN_LOC);
  Tensor select(int64_t dim, int64_t index, KILN_LOC) const;
  Tensor slice(int64_t dim = 0, std::optional<int64_t> start = std::nullopt,
               std::optional<int64_t> end = std::nullopt, int64_t step = 1, KILN_LOC) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length, KILN_LOC) const;
  Tensor view(const Shape& shape, KILN_LOC) const;
  Tensor reshape(const Shape& shape, KILN_LOC) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1, KILN_LOC) const;
  Tensor t(KILN_LOC) const;
  Tensor transpose(int64_t dim0, int64_t dim1, KILN_LOC) const;
  Tensor permute(const Shape& dims, KILN_LOC) const;
  Tensor squeeze(KILN_LOC) const;
  Tensor squeeze(int64_t dim, KILN_LOC) const;
  Tensor unsqueeze(int64_t dim, KILN_LOC) const;
  Tensor expand(const Shape& sizes, KILN_LOC) const;
  Tensor expand_as(const Tensor& other, KILN_LOC) const { return expand(other.sizes(), loc); }
  Tensor view_as(const Tensor& other, KILN_LOC) const { return view(other.sizes(), loc); }
  Tensor reshape_as(const Tensor& other, KILN_LOC) const { return reshape(other.sizes(), loc); }
  Tensor as_strided(const Shape& size, const Shape& stride,
                    std::optional<int64_t> storage_offset = std::nullopt, KILN_LOC) const;
  Tensor contiguous(KILN_LOC) const;  // row-major (itself when it is already)
  Tensor clone(KILN_LOC) const;       // keeps a dense layout (PyTorch's preserve_format)
  Tensor detach(KILN_LOC) const;
  std::vector<Tensor> chunk(int64_t chunks, int64_t dim = 0, KILN_LOC) const;
  std::vector<Tensor> split(int64_t split_size, int64_t dim = 0, KILN_LOC) const;
  std::vector<Tensor> split(const Shape& split_sizes, int64_t dim = 0, KILN_LOC) const;
  std::vector<Tensor> unbind(int64_t dim = 0, KILN_LOC) const;
  // More views and shape ops, as PyTorch's (core/reshaping.cpp). Views:
  // movedim, swapaxes, unflatten, diagonal, unfold (windows of `size` every
  // `step` along a dim, as a new last dim), broadcast_to. Copies: tile,
  // repeat_interleave, rot90, take_along_dim; tensor_split gives views.
  Tensor movedim(const Shape& source, const Shape& destination, KILN_LOC) const;
  Tensor movedim(int64_t source, int64_t destination, KILN_LOC) const;
  Tensor moveaxis(const Shape& source, const Shape& destination, KILN_LOC) const {
    return movedim(source, destination, loc);
  }
  Tensor moveaxis(int64_t source, int64_t destination, KILN_LOC) const { return movedim(source, destination, loc); }
  Tensor swapaxes(int64_t axis0, int64_t axis1, KILN_LOC) const { return transpose(axis0, axis1, loc); }
  Tensor swapdims(int64_t dim0, int64_t dim1, KILN_LOC) const { return transpose(dim0, dim1, loc); }
  Tensor unflatten(int64_t dim, const Shape& sizes, KILN_LOC) const;
  Tensor diagonal(int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1, KILN_LOC) const;
  Tensor unfold(int64_t dimension, int64_t size, int64_t step, KILN_LOC) const;
  Tensor broadcast_to(const Shape& size, KILN_LOC) const;
  Tensor tile(const Shape& dims, KILN_LOC) const;
  // Each element (each slice along dim; no dim: of the flattened tensor)
  // repeated `repeats` times, or repeats[i] times for element i.
  Tensor repeat_interleave(int64_t repeats, std::optional<int64_t> dim = std::nullopt, KILN_LOC) const;
  Tensor repeat_interleave(const Tensor& repeats, std::optional<int64_t> dim = std::nullopt, KILN_LOC) const;
  Tensor rot90(int64_t k = 1, const Shape& dims = {0, 1}, KILN_LOC) const;
  Tensor take_along_dim(const Tensor& indices, std::optional<int64_t> dim = std::nullopt, KILN_LOC) const;
  std::vector<Tensor> tensor_split(int64_t sections, int64_t dim = 0, KILN_LOC) const;
  std::vector<Tensor> tensor_split(const Shape& indices, int64_t dim = 0, KILN_LOC) const;

  // ---- elementwise ----
  Tensor add(const Tensor& other, Scalar alpha = 1, KILN_LOC) const;
  Tensor add(Scalar other, Scalar alpha = 1, KILN_LOC) const;
  Tensor sub(const Tensor& other, Scalar alpha = 1, KILN_LOC) const;
  Tensor sub(Scalar other, Scalar alpha = 1, KILN_LOC) const;
  Tensor mul(const Tensor& other, KILN_LOC) const;
  Tensor mul(Scalar other, KILN_LOC) const;
  Tensor div(const Tensor& other, KILN_LOC) const;
  Tensor div(Scalar other, KILN_LOC) const;
  Tensor pow(const Tensor& exponent, KILN_LOC) const;
  Tensor pow(Scalar exponent, KILN_LOC) const;
  Tensor neg(KILN_LOC) const;
  Tensor exp(KILN_LOC) const;
  Tensor log(KILN_LOC) const;
  Tensor sqrt(KILN_LOC) const;
  Tensor rsqrt(KILN_LOC) const;
  Tensor reciprocal(KILN_LOC) const;
  Tensor abs(KILN_LOC) const;
  Tensor sin(KILN_LOC) const;
  Tensor cos(KILN_LOC) const;
  Tensor tanh(KILN_LOC) const;
  Tensor sigmoid(KILN_LOC) const;
  Tensor log1p(KILN_LOC) const;
  Tensor expm1(KILN_LOC) const;
  Tensor erf(KILN_LOC) const;
  // Trigonometric, hyperbolic and their inverses, base-2 / base-10 logs, 2^x
  // (integers compute in the default float dtype, as PyTorch).
  Tensor tan(KILN_LOC) const;
  Tensor asin(KILN_LOC) const;
  Tensor acos(KILN_LOC) const;
  Tensor atan(KILN_LOC) const;
  Tensor sinh(KILN_LOC) const;
  Tensor cosh(KILN_LOC) const;
  Tensor asinh(KILN_LOC) const;
  Tensor acosh(KILN_LOC) const;
  Tensor atanh(KILN_LOC) const;
  Tensor log2(KILN_LOC) const;
  Tensor log10(KILN_LOC) const;
  Tensor exp2(KILN_LOC) const;
  Tensor atan2(const Tensor& other, KILN_LOC) const;  // atan(self / other) in the right quadrant
  Tensor arctan2(const Tensor& other, KILN_LOC) const { return atan2(other, loc); }
  Tensor floor(KILN_LOC) const;
  Tensor ceil(KILN_LOC) const;
  Tensor round(int64_t decimals = 0, KILN_LOC) const;
  Tensor trunc(KILN_LOC) const;
  Tensor frac(KILN_LOC) const;
  Tensor sign(KILN_LOC) const;
  Tensor relu(KILN_LOC) const;
  // Indexed reads and writes (int64 indices, checked against the size when
  // called): out[i] = self[i with i[dim] = index[i]]; self's rows at a 1-D
  // index; self with src[j] added at (scatter: written to) j with j[dim] =
  // index[j]; self with source's slices along dim added at (copied to,
  // filled at) the positions of a 1-D index.
  Tensor gather(int64_t dim, const Tensor& index, KILN_LOC) const;
  Tensor index_select(int64_t dim, const Tensor& index, KILN_LOC) const;
  Tensor scatter_add(int64_t dim, const Tensor& index, const Tensor& src, KILN_LOC) const;
  Tensor scatter(int64_t dim, const Tensor& index, const Tensor& src, KILN_LOC) const;
  Tensor scatter(int64_t dim, const Tensor& index, Scalar value, KILN_LOC) const;
  Tensor index_add(int64_t dim, const Tensor& index, const Tensor& source, Scalar alpha = 1, KILN_LOC) const;
  Tensor index_copy(int64_t dim, const Tensor& index, const Tensor& source, KILN_LOC) const;
  Tensor index_fill(int64_t dim, const Tensor& index, Scalar value, KILN_LOC) const;
  // The elements where mask (broadcast to self) is true, in order, 1-D; the
  // positions of the nonzero elements, [count, dim]. Their sizes depend on
  // the values: both evaluate (as PyTorch, which synchronizes on a GPU).
  Tensor masked_select(const Tensor& mask, KILN_LOC) const;
  // Running sums / products along dim (integers and bool give int64; dtype
  // casts the input first), as torch.cumsum / torch.cumprod.
  Tensor cumsum(int64_t dim, std::optional<DType> dtype = std::nullopt, KILN_LOC) const;
  Tensor cumprod(int64_t dim, std::optional<DType> dtype = std::nullopt, KILN_LOC) const;
  // Running maximum / minimum along dim and its position (the last of equal
  // values; a NaN, once met, stays), as torch.cummax / torch.cummin.
  // log(cumsum(exp(x))) without overflow, as torch.logcumsumexp (floats).
  Tensor logcumsumexp(int64_t dim, KILN_LOC) const;
  std::tuple<Tensor, Tensor> cummax(int64_t dim, KILN_LOC) const;
  std::tuple<Tensor, Tensor> cummin(int64_t dim, KILN_LOC) const;
  // Sorted values along dim and their positions. The order is stable (equal
  // values keep their order, PyTorch's stable=True; its default unstable
  // sort may order ties otherwise); NaN sorts above every number.
  std::tuple<Tensor, Tensor> sort(int64_t dim = -1, bool descending = false, KILN_LOC) const;
  Tensor argsort(int64_t dim = -1, bool descending = false, KILN_LOC) const;
  Tensor msort(KILN_LOC) const;  // sorted along dim 0
  // The k largest (smallest) along dim, always sorted; ties in index order.
  std::tuple<Tensor, Tensor> topk(int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true,
                                  KILN_LOC) const;
  // The k-th smallest along dim (k from 1).
  std::tuple<Tensor, Tensor> kthvalue(int64_t k, int64_t dim = -1, bool keepdim = false, KILN_LOC) const;
  // The lower median along dim (a row with a NaN gives NaN) / of all
  // elements; nanmedian leaves NaNs out.
  std::tuple<Tensor, Tensor> median(int64_t dim, bool keepdim = false, KILN_LOC) const;
  Tensor median(KILN_LOC) const;
  std::tuple<Tensor, Tensor> nanmedian(int64_t dim, bool keepdim = false, KILN_LOC) const;
  Tensor nanmedian(KILN_LOC) const;
  Tensor nonzero(KILN_LOC) const;
  // A new tensor with the order of dims reversed / rotated by shifts (no
  // dims: the flattened tensor), as torch.flip / torch.roll.
  Tensor flip(const Shape& dims, KILN_LOC) const;
  Tensor roll(const Shape& shifts, const Shape& dims = {}, KILN_LOC) const;
  Tensor square(KILN_LOC) const;
  Tensor logical_not(KILN_LOC) const;
  // bool results: nonzero-ness combined; NaN, +-inf, neither (integers:
  // never NaN or infinite)
  Tensor logical_and(const Tensor& other, KILN_LOC) const;
  Tensor logical_or(const Tensor& other, KILN_LOC) const;
  Tensor logical_xor(const Tensor& other, KILN_LOC) const;
  Tensor isnan(KILN_LOC) const;
  Tensor isinf(KILN_LOC) const;
  Tensor isfinite(KILN_LOC) const;
  Tensor clamp(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt, KILN_LOC) const;
  Tensor clamp_min(Scalar min, KILN_LOC) const { return clamp(min, std::nullopt, loc); }
  Tensor clamp_max(Scalar max, KILN_LOC) const { return clamp(std::nullopt, max, loc); }
  // Division with rounding, as PyTorch (core/division.cpp): fmod keeps the
  // dividend's sign, remainder the divisor's; div's rounding_mode "trunc"
  // or "floor" (floor_divide). An integer divisor of 0 is refused.
  Tensor fmod(const Tensor& other, KILN_LOC) const;
  Tensor fmod(Scalar other, KILN_LOC) const;
  Tensor remainder(const Tensor& other, KILN_LOC) const;
  Tensor remainder(Scalar other, KILN_LOC) const;
  Tensor div(const Tensor& other, std::string_view rounding_mode, KILN_LOC) const;
  Tensor div(Scalar other, std::string_view rounding_mode, KILN_LOC) const;
  Tensor floor_divide(const Tensor& other, KILN_LOC) const { return div(other, "floor", loc); }
  Tensor floor_divide(Scalar other, KILN_LOC) const { return div(other, "floor", loc); }
  Tensor maximum(const Tensor& other, KILN_LOC) const;
  Tensor minimum(const Tensor& other, KILN_LOC) const;
  Tensor eq(const Tensor& o, KILN_LOC) const;
  Tensor eq(Scalar o, KILN_LOC) const;
  Tensor ne(const Tensor& o, KILN_LOC) const;
  Tensor ne(Scalar o, KILN_LOC) const;
  Tensor lt(const Tensor& o, KILN_LOC) const;
  Tensor lt(Scalar o, KILN_LOC) const;
  Tensor le(const Tensor& o, KILN_LOC) const;
  Tensor le(Scalar o, KILN_LOC) const;
  Tensor gt(const Tensor& o, KILN_LOC) const;
  Tensor gt(Scalar o, KILN_LOC) const;
  Tensor ge(const Tensor& o, KILN_LOC) const;
  Tensor ge(Scalar o, KILN_LOC) const;
  Tensor matmul(const Tensor& other, KILN_LOC) const;
  Tensor mm(const Tensor& other, KILN_LOC) const;
  // Linear algebra helpers, as PyTorch's (core/linalg.cpp): products with
  // their shape checks (dot / vdot: 1-D, mv: 2-D x 1-D, bmm: 3-D x 3-D),
  // beta * self + alpha * product (addmm, addmv, baddbmm), the trace and
  // diagonals, the Kronecker and cross products.
  Tensor dot(const Tensor& other, KILN_LOC) const;
  Tensor vdot(const Tensor& other, KILN_LOC) const;
  Tensor mv(const Tensor& vec, KILN_LOC) const;
  Tensor bmm(const Tensor& mat2, KILN_LOC) const;
  Tensor addmm(const Tensor& mat1, const Tensor& mat2, Scalar beta = 1, Scalar alpha = 1, KILN_LOC) const;
  Tensor addmv(const Tensor& mat, const Tensor& vec, Scalar beta = 1, Scalar alpha = 1, KILN_LOC) const;
  Tensor baddbmm(const Tensor& batch1, const Tensor& batch2, Scalar beta = 1, Scalar alpha = 1, KILN_LOC) const;
  Tensor trace(KILN_LOC) const;
  // 1-D: a square matrix with self on diagonal `diagonal`; 2-D: that diagonal (a copy).
  Tensor diag(int64_t diagonal = 0, KILN_LOC) const;
  Tensor diag_embed(int64_t offset = 0, int64_t dim1 = -2, int64_t dim2 = -1, KILN_LOC) const;
  Tensor kron(const Tensor& other, KILN_LOC) const;
  // Along dim (default: the first dim of size 3), both of size 3 there.
  Tensor cross(const Tensor& other, std::optional<int64_t> dim = std::nullopt, KILN_LOC) const;
  // Compositions of the above, as PyTorch's (core/composite.cpp).
  // where(mask, value, self) in self's dtype; mask is bool and broadcasts.
  Tensor masked_fill(const Tensor& mask, Scalar value, KILN_LOC) const;
  Tensor masked_fill(const Tensor& mask, const Tensor& value, KILN_LOC) const;  // value 0-D
  // self + weight * (end - self), floating dtypes, PyTorch's formula.
  Tensor lerp(const Tensor& end, Scalar weight, KILN_LOC) const;
  // torch.isclose: |self - other| <= atol + rtol * |other| (or equal);
  // allclose: all of them (evaluates); equal: same sizes and values.
  Tensor isclose(const Tensor& other, double rtol = 1e-05, double atol = 1e-08, bool equal_nan = false,
                 KILN_LOC) const;
  bool allclose(const Tensor& other, double rtol = 1e-05, double atol = 1e-08, bool equal_nan = false,
                KILN_LOC) const;
  bool equal(const Tensor& other, KILN_LOC) const;
  Tensor lerp(const Tensor& end, const Tensor& weight, KILN_LOC) const;
  Tensor outer(const Tensor& vec2, KILN_LOC) const;  // two 1-D tensors
  // self + value * tensor1 * tensor2, self + value * tensor1 / tensor2.
  Tensor addcmul(const Tensor& tensor1, const Tensor& tensor2, Scalar value = 1, KILN_LOC) const;
  Tensor addcdiv(const Tensor& tensor1, const Tensor& tensor2, Scalar value = 1, KILN_LOC) const;
  // Zero above (tril) / below (triu) a diagonal of the last two dims.
  Tensor tril(int64_t diagonal = 0, KILN_LOC) const;
  Tensor triu(int64_t diagonal = 0, KILN_LOC) const;
  // Tiles the tensor repeats[d] times along dim d (extra leading repeats add dims).
  Tensor repeat(const Shape& repeats, KILN_LOC) const;
  // More elementwise compositions, PyTorch's formulas (core/composite_math.cpp).
  Tensor hypot(const Tensor& other, KILN_LOC) const;
  Tensor logaddexp(const Tensor& other, KILN_LOC) const;   // log(e^self + e^other)
  Tensor logaddexp2(const Tensor& other, KILN_LOC) const;  // log2(2^self + 2^other)
  Tensor xlogy(const Tensor& other, KILN_LOC) const;       // self * log(other), 0 where self == 0
  Tensor xlogy(Scalar other, KILN_LOC) const;
  Tensor deg2rad(KILN_LOC) const;
  Tensor rad2deg(KILN_LOC) const;
  Tensor sinc(KILN_LOC) const;  // sin(pi x) / (pi x), 1 at 0
  // log(p / (1 - p)), p clamped to [eps, 1 - eps] when eps is given.
  Tensor logit(std::optional<double> eps = std::nullopt, KILN_LOC) const;
  Tensor heaviside(const Tensor& values, KILN_LOC) const;  // 0 below 0, values at 0, 1 above
  // NaN, +inf, -inf replaced (default: 0, the dtype's largest, its lowest).
  Tensor nan_to_num(std::optional<double> nan = std::nullopt, std::optional<double> posinf = std::nullopt,
                    std::optional<double> neginf = std::nullopt, KILN_LOC) const;
  Tensor float_power(const Tensor& exponent, KILN_LOC) const;  // in float64
  Tensor float_power(Scalar exponent, KILN_LOC) const;
  Tensor true_divide(const Tensor& other, KILN_LOC) const { return div(other, loc); }
  Tensor true_divide(Scalar other, KILN_LOC) const { return div(other, loc); }
  // The n-th forward difference along dim (prepend / append joined first).
  Tensor diff(int64_t n = 1, int64_t dim = -1, const Tensor& prepend = Tensor(), const Tensor& append = Tensor(),
              KILN_LOC) const;

  // ---- in place (a new node on the same storage; views see the write) ----
  Tensor& add_(const Tensor& other, Scalar alpha = 1, KILN_LOC);
  Tensor& add_(Scalar other, Scalar alpha = 1, KILN_LOC);
  Tensor& sub_(const Tensor& other, Scalar alpha = 1, KILN_LOC);
  Tensor& sub_(Scalar other, Scalar alpha = 1, KILN_LOC);
  Tensor& mul_(const Tensor& other, KILN_LOC);
  Tensor& mul_(Scalar other, KILN_LOC);
  Tensor& div_(const Tensor& other, KILN_LOC);
  Tensor& div_(Scalar other, KILN_LOC);
  Tensor& zero_(KILN_LOC);
  Tensor& fill_(Scalar value, KILN_LOC);
  Tensor& fill_(const Tensor& value, KILN_LOC);
  Tensor& copy_(const Tensor& src, KILN_LOC);
  Tensor& clamp_(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt, KILN_LOC);
  Tensor& masked_fill_(const Tensor& mask, Scalar value, KILN_LOC);
  Tensor& masked_fill_(const Tensor& mask, const Tensor& value, KILN_LOC);
  Tensor& addcmul_(const Tensor& tensor1, const Tensor& tensor2, Scalar value = 1, KILN_LOC);
  Tensor& addcdiv_(const Tensor& tensor1, const Tensor& tensor2, Scalar value = 1, KILN_LOC);
  Tensor& lerp_(const Tensor& end, Scalar weight, KILN_LOC);
  Tensor& lerp_(const Tensor& end, const Tensor& weight, KILN_LOC);
  Tensor& tril_(int64_t diagonal = 0, KILN_LOC);
  Tensor& scatter_(int64_t dim, const Tensor& index, const Tensor& src, KILN_LOC);
  Tensor& scatter_(int64_t dim, const Tensor& index, Scalar value, KILN_LOC);
  Tensor& scatter_add_(int64_t dim, const Tensor& index, const Tensor& src, KILN_LOC);
  Tensor& index_add_(int64_t dim, const Tensor& index, const Tensor& source, Scalar alpha = 1, KILN_LOC);
  Tensor& index_copy_(int64_t dim, const Tensor& index, const Tensor& source, KILN_LOC);
  Tensor& index_fill_(int64_t dim, const Tensor& index, Scalar value, KILN_LOC);
  Tensor& triu_(int64_t diagonal = 0, KILN_LOC);
  // Filled in place with random numbers (core/random.cpp; kiln's Philox
  // generator, so the numbers are kiln's, not PyTorch's): uniform on [from,
  // to), normal, 1 with probability p (any dtype), exponential with rate lambd.
  Tensor& uniform_(double from = 0.0, double to = 1.0, KILN_LOC);
  Tensor& normal_(double mean = 0.0, double std = 1.0, KILN_LOC);
  Tensor& bernoulli_(double p = 0.5, KILN_LOC);
  Tensor& exponential_(double lambd = 1.0, KILN_LOC);
  // 1 with probability self[i] (probabilities in [0, 1], checked: evaluates them).
  Tensor bernoulli(KILN_LOC) const;
  // Indices drawn from the rows of self (weights, not necessarily
  // normalized; 1-D or 2-D): with replacement by the inverse CDF, without
  // by the largest u^(1/w) (Efraimidis-Spirakis), as torch.multinomial.
  Tensor multinomial(int64_t num_samples, bool replacement = false, KILN_LOC) const;
  Tensor& operator+=(Located o) { return add_(o.tensor, 1, o.loc); }
  Tensor& operator+=(LocatedScalar o) { return add_(o.value, 1, o.loc); }
  Tensor& operator-=(Located o) { return sub_(o.tensor, 1, o.loc); }
  Tensor& operator-=(LocatedScalar o) { return sub_(o.value, 1, o.loc); }
  Tensor& operator*=(Located o) { return mul_(o.tensor, o.loc); }
  Tensor& operator*=(LocatedScalar o) { return mul_(o.value, o.loc); }
  Tensor& operator/=(Located o) { return div_(o.tensor, o.loc); }
  Tensor& operator/=(LocatedScalar o) { return div_(o.value, o.loc); }

  // ---- reductions ----
  Tensor sum(std::optional<DType> dtype = std::nullopt, KILN_LOC) const;
  Tensor sum(int64_t dim, bool keepdim = false, std::optional<DType> dtype = std::nullopt, KILN_LOC) const;
  Tensor sum(const Shape& dims, bool keepdim = false, std::optional<DType> dtype = std::nullopt, KILN_LOC) const;
  Tensor mean(std::optional<DType> dtype = std::nullopt, KILN_LOC) const;
  Tensor mean(int64_t dim, bool keepdim = false, std::optional<DType> dtype = std::nullopt, KILN_LOC) const;
  Tensor mean(const Shape& dims, bool keepdim = false, std::optional<DType> dtype = std::nullopt, KILN_LOC) const;
  Tensor prod(std::optional<DType> dtype = std::nullopt, KILN_LOC) const;
  Tensor prod(int64_t dim, bool keepdim = false, std::optional<DType> dtype = std::nullopt, KILN_LOC) const;
  Tensor max(KILN_LOC) const;
  std::tuple<Tensor, Tensor> max(int64_t dim, bool keepdim = false, KILN_LOC) const;
  Tensor max(const Tensor& other, KILN_LOC) const { return maximum(other, loc); }
  Tensor min(KILN_LOC) const;
  std::tuple<Tensor, Tensor> min(int64_t dim, bool keepdim = false, KILN_LOC) const;
  Tensor min(const Tensor& other, KILN_LOC) const { return minimum(other, loc); }
  Tensor amax(const Shape& dims = {}, bool keepdim = false, KILN_LOC) const;
  Tensor amin(const Shape& dims = {}, bool keepdim = false, KILN_LOC) const;
  // x.amax(1), x.var(1), x.std(0): one dim, as in PyTorch's Python (an int
  // literal would otherwise convert to bool `unbiased` as well as to the
  // dim). Templates, so that x.amax({}) stays "every dim".
  template <std::integral I>
    requires(!std::same_as<I, bool>)
  Tensor amax(I dim, bool keepdim = false, KILN_LOC) const {
    return amax(Shape{static_cast<int64_t>(dim)}, keepdim, loc);
  }
  template <std::integral I>
    requires(!std::same_as<I, bool>)
  Tensor amin(I dim, bool keepdim = false, KILN_LOC) const {
    return amin(Shape{static_cast<int64_t>(dim)}, keepdim, loc);
  }
  Tensor argmax(std::optional<int64_t> dim = std::nullopt, bool keepdim = false, KILN_LOC) const;
  // (min, max) over dim (no dim: all elements), as Tensor.aminmax.
  std::tuple<Tensor, Tensor> aminmax(std::optional<int64_t> dim = std::nullopt, bool keepdim = false, KILN_LOC) const;
  // int64 counts of the nonzero elements over dims ({}: all).
  Tensor count_nonzero(const Shape& dims = {}, KILN_LOC) const;
  // sum / mean with NaNs left out (a row of NaNs: 0 / NaN), as torch.nansum / nanmean.
  Tensor nansum(const Shape& dims = {}, bool keepdim = false, std::optional<DType> dtype = std::nullopt,
                KILN_LOC) const;
  Tensor nanmean(const Shape& dims = {}, bool keepdim = false, std::optional<DType> dtype = std::nullopt,
                 KILN_LOC) const;
  template <std::integral I>
    requires(!std::same_as<I, bool>)
  Tensor count_nonzero(I dim, KILN_LOC) const {
    return count_nonzero(Shape{static_cast<int64_t>(dim)}, loc);
  }
  template <std::integral I>
    requires(!std::same_as<I, bool>)
  Tensor nansum(I dim, bool keepdim = false, std::optional<DType> dtype = std::nullopt, KILN_LOC) const {
    return nansum(Shape{static_cast<int64_t>(dim)}, keepdim, dtype, loc);
  }
  template <std::integral I>
    requires(!std::same_as<I, bool>)
  Tensor nanmean(I dim, bool keepdim = false, std::optional<DType> dtype = std::nullopt, KILN_LOC) const {
    return nanmean(Shape{static_cast<int64_t>(dim)}, keepdim, dtype, loc);
  }
  Tensor argmin(std::optional<int64_t> dim = std::nullopt, bool keepdim = false, KILN_LOC) const;
  // unbiased=true divides by N-1, as torch.var's default.
  Tensor var(bool unbiased = true, KILN_LOC) const;
  Tensor var(const Shape& dims, bool unbiased = true, bool keepdim = false, KILN_LOC) const;
  Tensor var(int64_t dim, bool unbiased = true, bool keepdim = false, KILN_LOC) const;
  Tensor std(bool unbiased = true, KILN_LOC) const;
  Tensor std(const Shape& dims, bool unbiased = true, bool keepdim = false, KILN_LOC) const;
  Tensor std(int64_t dim, bool unbiased = true, bool keepdim = false, KILN_LOC) const;
  template <std::integral I>
    requires(!std::same_as<I, bool>)
  Tensor var(I dim, bool unbiased = true, bool keepdim = false, KILN_LOC) const {
    return var(static_cast<int64_t>(dim), unbiased, keepdim, loc);
  }
  template <std::integral I>
    requires(!std::same_as<I, bool>)
  Tensor std(I dim, bool unbiased = true, bool keepdim = false, KILN_LOC) const {
    return std(static_cast<int64_t>(dim), unbiased, keepdim, loc);
  }
  Tensor all(KILN_LOC) const;
  Tensor all(int64_t dim, bool keepdim = false, KILN_LOC) const;
  Tensor any(KILN_LOC) const;
  Tensor any(int64_t dim, bool keepdim = false, KILN_LOC) const;
  Tensor softmax(int64_t dim, std::optional<DType> dtype = std::nullopt, KILN_LOC) const;
  Tensor log_softmax(int64_t dim, std::optional<DType> dtype = std::nullopt, KILN_LOC) const;
  // log(sum(exp(x))) over dims ({}: every dim), stabilized by the max, as
  // torch.logsumexp (integers compute in the default float dtype).
  Tensor logsumexp(const Shape& dims, bool keepdim = false, KILN_LOC) const;
  template <std::integral I>
    requires(!std::same_as<I, bool>)
  Tensor logsumexp(I dim, bool keepdim = false, KILN_LOC) const {
    return logsumexp(Shape{static_cast<int64_t>(dim)}, keepdim, loc);
  }
  // The vector p-norm over dims ({}: every dim), as Tensor.norm: p = 2 by
  // default, inf / -inf (largest / smallest |x|), 0 (count of non-zeros).
  Tensor norm(double p = 2.0, const Shape& dims = {}, bool keepdim = false, KILN_LOC) const;
  template <std::integral I>
    requires(!std::same_as<I, bool>)
  Tensor norm(double p, I dim, bool keepdim = false, KILN_LOC) const {
    return norm(p, Shape{static_cast<int64_t>(dim)}, keepdim, loc);
  }

  // ---- conversion ----
  Tensor to(DType dtype, KILN_LOC) const;
  Tensor to(Device device, KILN_LOC) const;
  Tensor to(Device device, DType dtype, KILN_LOC) const;
  Tensor to(const TensorOptions& options, KILN_LOC) const;
  Tensor to(DeviceType t, KILN_LOC) const { return to(Device(t), loc); }
  Tensor cpu(KILN_LOC) const { return to(Device(DeviceType::CPU), loc); }
  Tensor cuda(int index = 0, KILN_LOC) const { return to(Device(DeviceType::CUDA, index), loc); }
  Tensor type_as(const Tensor& other, KILN_LOC) const { return to(other.dtype(), loc); }

 private:
  std::shared_ptr<TensorImpl> impl_;
};

// PyTorch's repr: tensor([[1., 2.],\n        [3., 4.]]) (evaluates).
std::ostream& operator<<(std::ostream& os, const Tensor& t);
std::string to_string(const Tensor& t);

// Arithmetic operators, NumPy broadcasting, PyTorch type promotion. A Tensor
// operand is taken as Located so the node records the expression's line.
Tensor operator+(Located a, const Tensor& b);
Tensor operator+(Located a, Scalar b);
Tensor operator+(Scalar a, Located b);
Tensor operator-(Located a, const Tensor& b);
Tensor operator-(Located a, Scalar b);
Tensor operator-(Scalar a, Located b);
Tensor operator*(Located a, const Tensor& b);
Tensor operator*(Located a, Scalar b);
Tensor operator*(Scalar a, Located b);
Tensor operator/(Located a, const Tensor& b);
Tensor operator/(Located a, Scalar b);
Tensor operator/(Scalar a, Located b);
Tensor operator-(Located a);
Tensor operator==(Located a, const Tensor& b);
Tensor operator==(Located a, Scalar b);
Tensor operator!=(Located a, const Tensor& b);
Tensor operator!=(Located a, Scalar b);
Tensor operator<(Located a, const Tensor& b);
Tensor operator<(Located a, Scalar b);
Tensor operator<=(Located a, const Tensor& b);
Tensor operator<=(Located a, Scalar b);
Tensor operator>(Located a, const Tensor& b);
Tensor operator>(Located a, Scalar b);
Tensor operator>=(Located a, const Tensor& b);
Tensor operator>=(Located a, Scalar b);
Tensor operator!(Located a);

}  // namespace kiln

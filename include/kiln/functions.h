// Free functions of the API: creation, random numbers, joining, and the
// functional forms of the Tensor methods (kiln::exp(t), kiln::sum(t), ...).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "kiln/tensor.h"

namespace kiln {

// Nested data for kiln::tensor(): a scalar, a nested initializer list or a
// std::vector. Integer data gives int64, floating data float32, bools bool
// (PyTorch's inference), unless options name a dtype.
class NestedData {
 public:
  NestedData(bool v) : kind_(Scalar::Kind::Bool) { values_.push_back(v ? 1.0 : 0.0); ints_.push_back(v); }  // NOLINT
  template <typename T,
            std::enable_if_t<std::is_arithmetic_v<T> && !std::is_same_v<T, bool>, int> = 0>
  NestedData(T v) {  // NOLINT
    kind_ = std::is_floating_point_v<T> ? Scalar::Kind::Float : Scalar::Kind::Int;
    values_.push_back(static_cast<double>(v));
    ints_.push_back(std::is_floating_point_v<T> ? trunc_to_int64(static_cast<double>(v)) : static_cast<int64_t>(v));
  }
  NestedData(std::initializer_list<NestedData> list);
  template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  NestedData(const std::vector<T>& v) {  // NOLINT
    kind_ = std::is_same_v<T, bool> ? Scalar::Kind::Bool
            : std::is_floating_point_v<T> ? Scalar::Kind::Float : Scalar::Kind::Int;
    sizes_.push_back(static_cast<int64_t>(v.size()));
    for (const auto& x : v) {
      values_.push_back(static_cast<double>(x));
      ints_.push_back(std::is_floating_point_v<T> ? trunc_to_int64(static_cast<double>(x)) : static_cast<int64_t>(x));
    }
  }

  const Shape& sizes() const { return sizes_; }
  Scalar::Kind kind() const { return kind_; }
  const std::vector<double>& values() const { return values_; }
  const std::vector<int64_t>& ints() const { return ints_; }

 private:
  Shape sizes_;
  Scalar::Kind kind_ = Scalar::Kind::Int;
  bool empty_list_ = false;
  std::vector<double> values_;   // row-major values as double (floats)
  std::vector<int64_t> ints_;    // the same values as int64 (exact for integers)
};

// ---- creation ----
Tensor tensor(const NestedData& data, const TensorOptions& options = {}, KILN_LOC);
// Aliases memory the caller owns (no copy): writes on either side are seen by
// the other. `strides` in elements; contiguous when omitted.
Tensor from_blob(void* data, const Shape& sizes, const TensorOptions& options = {}, KILN_LOC);
Tensor from_blob(void* data, const Shape& sizes, const Shape& strides,
                 const TensorOptions& options = {}, KILN_LOC);
Tensor empty(const Shape& sizes, const TensorOptions& options = {}, KILN_LOC);
Tensor zeros(const Shape& sizes, const TensorOptions& options = {}, KILN_LOC);
Tensor ones(const Shape& sizes, const TensorOptions& options = {}, KILN_LOC);
// An integer fill value gives int64, a bool bool, a floating one float32.
Tensor full(const Shape& sizes, Scalar fill_value, const TensorOptions& options = {}, KILN_LOC);
Tensor eye(int64_t n, const TensorOptions& options = {}, KILN_LOC);
Tensor eye(int64_t n, int64_t m, const TensorOptions& options = {}, KILN_LOC);
Tensor arange(Scalar end, const TensorOptions& options = {}, KILN_LOC);
Tensor arange(Scalar start, Scalar end, const TensorOptions& options = {}, KILN_LOC);
Tensor arange(Scalar start, Scalar end, Scalar step, const TensorOptions& options = {}, KILN_LOC);
Tensor linspace(Scalar start, Scalar end, int64_t steps, const TensorOptions& options = {}, KILN_LOC);
// base ** linspace(start, end, steps), as torch.logspace.
Tensor logspace(Scalar start, Scalar end, int64_t steps, double base = 10.0, const TensorOptions& options = {},
                KILN_LOC);
Tensor empty_like(const Tensor& t, const TensorOptions& options = {}, KILN_LOC);
Tensor zeros_like(const Tensor& t, const TensorOptions& options = {}, KILN_LOC);
Tensor ones_like(const Tensor& t, const TensorOptions& options = {}, KILN_LOC);
Tensor full_like(const Tensor& t, Scalar fill_value, const TensorOptions& options = {}, KILN_LOC);

// ---- random numbers: Philox4x32-10, counter based ----
// One seed gives the same numbers whatever the evaluation order or device.
void manual_seed(uint64_t seed);
uint64_t initial_seed();
Tensor rand(const Shape& sizes, const TensorOptions& options = {}, KILN_LOC);
Tensor randn(const Shape& sizes, const TensorOptions& options = {}, KILN_LOC);
Tensor randint(int64_t high, const Shape& sizes, const TensorOptions& options = {}, KILN_LOC);
Tensor randint(int64_t low, int64_t high, const Shape& sizes, const TensorOptions& options = {}, KILN_LOC);
Tensor rand_like(const Tensor& t, const TensorOptions& options = {}, KILN_LOC);
Tensor randn_like(const Tensor& t, const TensorOptions& options = {}, KILN_LOC);
Tensor randint_like(const Tensor& t, int64_t low, int64_t high, const TensorOptions& options = {}, KILN_LOC);
// A random permutation of 0 .. n-1 (int64 unless options say otherwise).
Tensor randperm(int64_t n, const TensorOptions& options = {}, KILN_LOC);
// Normal numbers of the given mean and standard deviation (tensors broadcast).
Tensor normal(double mean, double std, const Shape& sizes, const TensorOptions& options = {}, KILN_LOC);
Tensor normal(const Tensor& mean, const Tensor& std, KILN_LOC);
inline Tensor bernoulli(const Tensor& p, KILN_LOC) { return p.bernoulli(loc); }
inline Tensor multinomial(const Tensor& t, int64_t num_samples, bool replacement = false, KILN_LOC) {
  return t.multinomial(num_samples, replacement, loc);
}

// ---- joining and splitting ----
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0, KILN_LOC);
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0, KILN_LOC);
std::vector<Tensor> chunk(const Tensor& t, int64_t chunks, int64_t dim = 0, KILN_LOC);
std::vector<Tensor> split(const Tensor& t, int64_t split_size, int64_t dim = 0, KILN_LOC);
std::vector<Tensor> split(const Tensor& t, const Shape& split_sizes, int64_t dim = 0, KILN_LOC);
// Joined along dim 1 (0 for 1-D inputs) / dim 0 of the inputs made at least
// 2-D / dim 2 of the inputs made at least 3-D / as columns; as NumPy's.
Tensor hstack(const std::vector<Tensor>& tensors, KILN_LOC);
Tensor vstack(const std::vector<Tensor>& tensors, KILN_LOC);
inline Tensor row_stack(const std::vector<Tensor>& tensors, KILN_LOC) { return vstack(tensors, loc); }
Tensor dstack(const std::vector<Tensor>& tensors, KILN_LOC);
Tensor column_stack(const std::vector<Tensor>& tensors, KILN_LOC);
// Coordinate grids of 1-D (or 0-D) tensors: indexing "ij" (matrix, the
// default) or "xy" (Cartesian: the first two dims swapped); expanded views.
std::vector<Tensor> meshgrid(const std::vector<Tensor>& tensors, const char* indexing = "ij", KILN_LOC);
// The inputs expanded to their common broadcast shape (views).
std::vector<Tensor> broadcast_tensors(const std::vector<Tensor>& tensors, KILN_LOC);
Tensor atleast_1d(const Tensor& t, KILN_LOC);
Tensor atleast_2d(const Tensor& t, KILN_LOC);
Tensor atleast_3d(const Tensor& t, KILN_LOC);
// torch.var_mean / torch.std_mean: (var, mean) / (std, mean) in one pass.
// var_mean(x, {1}) reduces dim 1 (the bool overload takes only a bool, so a
// braced dim list never converts to `unbiased`); var_mean(x, 1) too.
std::tuple<Tensor, Tensor> var_mean(const Tensor& t, const Shape& dims, bool unbiased = true, bool keepdim = false,
                                    KILN_LOC);
std::tuple<Tensor, Tensor> std_mean(const Tensor& t, const Shape& dims, bool unbiased = true, bool keepdim = false,
                                    KILN_LOC);
inline std::tuple<Tensor, Tensor> var_mean(const Tensor& t, KILN_LOC) { return var_mean(t, Shape{}, true, false, loc); }
inline std::tuple<Tensor, Tensor> std_mean(const Tensor& t, KILN_LOC) { return std_mean(t, Shape{}, true, false, loc); }
template <typename B>
  requires std::same_as<B, bool>
std::tuple<Tensor, Tensor> var_mean(const Tensor& t, B unbiased, KILN_LOC) {
  return var_mean(t, Shape{}, unbiased, false, loc);
}
template <typename B>
  requires std::same_as<B, bool>
std::tuple<Tensor, Tensor> std_mean(const Tensor& t, B unbiased, KILN_LOC) {
  return std_mean(t, Shape{}, unbiased, false, loc);
}
template <std::integral I>
  requires(!std::same_as<I, bool>)
std::tuple<Tensor, Tensor> var_mean(const Tensor& t, I dim, bool unbiased = true, bool keepdim = false, KILN_LOC) {
  return var_mean(t, Shape{static_cast<int64_t>(dim)}, unbiased, keepdim, loc);
}
template <std::integral I>
  requires(!std::same_as<I, bool>)
std::tuple<Tensor, Tensor> std_mean(const Tensor& t, I dim, bool unbiased = true, bool keepdim = false, KILN_LOC) {
  return std_mean(t, Shape{static_cast<int64_t>(dim)}, unbiased, keepdim, loc);
}

// ---- functional forms ----
Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b, KILN_LOC);
Tensor where(const Tensor& condition, const Tensor& a, Scalar b, KILN_LOC);
Tensor where(const Tensor& condition, Scalar a, const Tensor& b, KILN_LOC);
Tensor where(const Tensor& condition, Scalar a, Scalar b, KILN_LOC);
Tensor masked_fill(const Tensor& t, const Tensor& mask, Scalar value, KILN_LOC);
Tensor lerp(const Tensor& start, const Tensor& end, Scalar weight, KILN_LOC);
Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight, KILN_LOC);
Tensor outer(const Tensor& a, const Tensor& b, KILN_LOC);
Tensor gather(const Tensor& t, int64_t dim, const Tensor& index, KILN_LOC);
Tensor index_select(const Tensor& t, int64_t dim, const Tensor& index, KILN_LOC);
Tensor scatter_add(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src, KILN_LOC);
inline Tensor scatter(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src, KILN_LOC) {
  return t.scatter(dim, index, src, loc);
}
inline Tensor scatter(const Tensor& t, int64_t dim, const Tensor& index, Scalar value, KILN_LOC) {
  return t.scatter(dim, index, value, loc);
}
inline Tensor index_add(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& source, Scalar alpha = 1,
                        KILN_LOC) {
  return t.index_add(dim, index, source, alpha, loc);
}
inline Tensor masked_select(const Tensor& t, const Tensor& mask, KILN_LOC) { return t.masked_select(mask, loc); }
inline Tensor nonzero(const Tensor& t, KILN_LOC) { return t.nonzero(loc); }
inline Tensor cumsum(const Tensor& t, int64_t dim, std::optional<DType> dtype = std::nullopt, KILN_LOC) {
  return t.cumsum(dim, dtype, loc);
}
inline Tensor cumprod(const Tensor& t, int64_t dim, std::optional<DType> dtype = std::nullopt, KILN_LOC) {
  return t.cumprod(dim, dtype, loc);
}
inline Tensor logcumsumexp(const Tensor& t, int64_t dim, KILN_LOC) { return t.logcumsumexp(dim, loc); }
inline std::tuple<Tensor, Tensor> cummax(const Tensor& t, int64_t dim, KILN_LOC) { return t.cummax(dim, loc); }
inline std::tuple<Tensor, Tensor> cummin(const Tensor& t, int64_t dim, KILN_LOC) { return t.cummin(dim, loc); }
inline std::tuple<Tensor, Tensor> sort(const Tensor& t, int64_t dim = -1, bool descending = false, KILN_LOC) {
  return t.sort(dim, descending, loc);
}
inline Tensor argsort(const Tensor& t, int64_t dim = -1, bool descending = false, KILN_LOC) {
  return t.argsort(dim, descending, loc);
}
inline Tensor msort(const Tensor& t, KILN_LOC) { return t.msort(loc); }
inline std::tuple<Tensor, Tensor> topk(const Tensor& t, int64_t k, int64_t dim = -1, bool largest = true,
                                       bool sorted = true, KILN_LOC) {
  return t.topk(k, dim, largest, sorted, loc);
}
inline std::tuple<Tensor, Tensor> kthvalue(const Tensor& t, int64_t k, int64_t dim = -1, bool keepdim = false,
                                           KILN_LOC) {
  return t.kthvalue(k, dim, keepdim, loc);
}
inline std::tuple<Tensor, Tensor> median(const Tensor& t, int64_t dim, bool keepdim = false, KILN_LOC) {
  return t.median(dim, keepdim, loc);
}
inline Tensor median(const Tensor& t, KILN_LOC) { return t.median(loc); }
inline std::tuple<Tensor, Tensor> nanmedian(const Tensor& t, int64_t dim, bool keepdim = false, KILN_LOC) {
  return t.nanmedian(dim, keepdim, loc);
}
inline Tensor nanmedian(const Tensor& t, KILN_LOC) { return t.nanmedian(loc); }
inline Tensor flip(const Tensor& t, const Shape& dims, KILN_LOC) { return t.flip(dims, loc); }
inline Tensor roll(const Tensor& t, const Shape& shifts, const Shape& dims = {}, KILN_LOC) { return t.roll(shifts, dims, loc); }
Tensor addcmul(const Tensor& t, const Tensor& tensor1, const Tensor& tensor2, Scalar value = 1, KILN_LOC);
Tensor addcdiv(const Tensor& t, const Tensor& tensor1, const Tensor& tensor2, Scalar value = 1, KILN_LOC);
Tensor tril(const Tensor& t, int64_t diagonal = 0, KILN_LOC);
Tensor triu(const Tensor& t, int64_t diagonal = 0, KILN_LOC);
// Activations of torch.nn.functional, compositions that fuse (core/composite.cpp).
Tensor silu(const Tensor& x, KILN_LOC);
Tensor leaky_relu(const Tensor& x, double negative_slope = 0.01, KILN_LOC);
Tensor hardtanh(const Tensor& x, Scalar min_val = -1, Scalar max_val = 1, KILN_LOC);
Tensor relu6(const Tensor& x, KILN_LOC);
// approximate: "none" (x Phi(x), with erf) or "tanh", as torch.nn.functional.gelu.
Tensor gelu(const Tensor& x, const char* approximate = "none", KILN_LOC);
Tensor softplus(const Tensor& x, double beta = 1, double threshold = 20, KILN_LOC);
Tensor elu(const Tensor& x, double alpha = 1, KILN_LOC);
Tensor selu(const Tensor& x, KILN_LOC);
Tensor celu(const Tensor& x, double alpha = 1, KILN_LOC);
Tensor mish(const Tensor& x, KILN_LOC);
Tensor hardsigmoid(const Tensor& x, KILN_LOC);
Tensor hardswish(const Tensor& x, KILN_LOC);
Tensor matmul(const Tensor& a, const Tensor& b, KILN_LOC);
Tensor mm(const Tensor& a, const Tensor& b, KILN_LOC);
Tensor maximum(const Tensor& a, const Tensor& b, KILN_LOC);
Tensor minimum(const Tensor& a, const Tensor& b, KILN_LOC);
Tensor clamp(const Tensor& t, std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt, KILN_LOC);
Tensor pow(const Tensor& t, Scalar exponent, KILN_LOC);
Tensor pow(const Tensor& t, const Tensor& exponent, KILN_LOC);
Tensor pow(Scalar base, const Tensor& exponent, KILN_LOC);
#define KILN_FUNCTIONAL_UNARY(name) \
  inline Tensor name(const Tensor& t, KILN_LOC) { return t.name(loc); }
KILN_FUNCTIONAL_UNARY(neg)
KILN_FUNCTIONAL_UNARY(exp)
KILN_FUNCTIONAL_UNARY(log)
KILN_FUNCTIONAL_UNARY(sqrt)
KILN_FUNCTIONAL_UNARY(rsqrt)
KILN_FUNCTIONAL_UNARY(reciprocal)
KILN_FUNCTIONAL_UNARY(abs)
KILN_FUNCTIONAL_UNARY(sin)
KILN_FUNCTIONAL_UNARY(cos)
KILN_FUNCTIONAL_UNARY(tanh)
KILN_FUNCTIONAL_UNARY(sigmoid)
KILN_FUNCTIONAL_UNARY(relu)
KILN_FUNCTIONAL_UNARY(log1p)
KILN_FUNCTIONAL_UNARY(expm1)
KILN_FUNCTIONAL_UNARY(erf)
KILN_FUNCTIONAL_UNARY(tan)
KILN_FUNCTIONAL_UNARY(asin)
KILN_FUNCTIONAL_UNARY(acos)
KILN_FUNCTIONAL_UNARY(atan)
KILN_FUNCTIONAL_UNARY(sinh)
KILN_FUNCTIONAL_UNARY(cosh)
KILN_FUNCTIONAL_UNARY(asinh)
KILN_FUNCTIONAL_UNARY(acosh)
KILN_FUNCTIONAL_UNARY(atanh)
KILN_FUNCTIONAL_UNARY(log2)
KILN_FUNCTIONAL_UNARY(log10)
KILN_FUNCTIONAL_UNARY(exp2)
KILN_FUNCTIONAL_UNARY(floor)
KILN_FUNCTIONAL_UNARY(ceil)
KILN_FUNCTIONAL_UNARY(trunc)
KILN_FUNCTIONAL_UNARY(frac)
KILN_FUNCTIONAL_UNARY(sign)
KILN_FUNCTIONAL_UNARY(square)
KILN_FUNCTIONAL_UNARY(logical_not)
KILN_FUNCTIONAL_UNARY(squeeze)
#undef KILN_FUNCTIONAL_UNARY
inline Tensor atan2(const Tensor& y, const Tensor& x, KILN_LOC) { return y.atan2(x, loc); }
#define KILN_FUNCTIONAL_BINARY(name) \
  inline Tensor name(const Tensor& a, const Tensor& b, KILN_LOC) { return a.name(b, loc); }
KILN_FUNCTIONAL_BINARY(hypot)
KILN_FUNCTIONAL_BINARY(logaddexp)
KILN_FUNCTIONAL_BINARY(logaddexp2)
KILN_FUNCTIONAL_BINARY(xlogy)
KILN_FUNCTIONAL_BINARY(heaviside)
KILN_FUNCTIONAL_BINARY(float_power)
KILN_FUNCTIONAL_BINARY(true_divide)
KILN_FUNCTIONAL_BINARY(dot)
KILN_FUNCTIONAL_BINARY(vdot)
KILN_FUNCTIONAL_BINARY(mv)
KILN_FUNCTIONAL_BINARY(bmm)
KILN_FUNCTIONAL_BINARY(kron)
#undef KILN_FUNCTIONAL_BINARY
inline Tensor deg2rad(const Tensor& t, KILN_LOC) { return t.deg2rad(loc); }
inline Tensor rad2deg(const Tensor& t, KILN_LOC) { return t.rad2deg(loc); }
inline Tensor sinc(const Tensor& t, KILN_LOC) { return t.sinc(loc); }
inline Tensor trace(const Tensor& t, KILN_LOC) { return t.trace(loc); }
inline Tensor logit(const Tensor& t, std::optional<double> eps = std::nullopt, KILN_LOC) { return t.logit(eps, loc); }
inline Tensor nan_to_num(const Tensor& t, std::optional<double> nan = std::nullopt,
                         std::optional<double> posinf = std::nullopt, std::optional<double> neginf = std::nullopt,
                         KILN_LOC) {
  return t.nan_to_num(nan, posinf, neginf, loc);
}
inline Tensor diag(const Tensor& t, int64_t diagonal = 0, KILN_LOC) { return t.diag(diagonal, loc); }
inline Tensor diagonal(const Tensor& t, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1, KILN_LOC) {
  return t.diagonal(offset, dim1, dim2, loc);
}
inline Tensor diag_embed(const Tensor& t, int64_t offset = 0, int64_t dim1 = -2, int64_t dim2 = -1, KILN_LOC) {
  return t.diag_embed(offset, dim1, dim2, loc);
}
inline Tensor cross(const Tensor& a, const Tensor& b, std::optional<int64_t> dim = std::nullopt, KILN_LOC) {
  return a.cross(b, dim, loc);
}
inline Tensor addmm(const Tensor& t, const Tensor& m1, const Tensor& m2, Scalar beta = 1, Scalar alpha = 1,
                    KILN_LOC) {
  return t.addmm(m1, m2, beta, alpha, loc);
}
inline Tensor movedim(const Tensor& t, int64_t source, int64_t destination, KILN_LOC) {
  return t.movedim(source, destination, loc);
}
inline Tensor movedim(const Tensor& t, const Shape& source, const Shape& destination, KILN_LOC) {
  return t.movedim(source, destination, loc);
}
inline Tensor swapaxes(const Tensor& t, int64_t a, int64_t b, KILN_LOC) { return t.transpose(a, b, loc); }
inline Tensor unflatten(const Tensor& t, int64_t dim, const Shape& sizes, KILN_LOC) {
  return t.unflatten(dim, sizes, loc);
}
inline Tensor broadcast_to(const Tensor& t, const Shape& size, KILN_LOC) { return t.broadcast_to(size, loc); }
inline Tensor tile(const Tensor& t, const Shape& dims, KILN_LOC) { return t.tile(dims, loc); }
inline Tensor repeat_interleave(const Tensor& t, int64_t repeats, std::optional<int64_t> dim = std::nullopt,
                                KILN_LOC) {
  return t.repeat_interleave(repeats, dim, loc);
}
inline Tensor repeat_interleave(const Tensor& t, const Tensor& repeats, std::optional<int64_t> dim = std::nullopt,
                                KILN_LOC) {
  return t.repeat_interleave(repeats, dim, loc);
}
inline Tensor rot90(const Tensor& t, int64_t k = 1, const Shape& dims = {0, 1}, KILN_LOC) {
  return t.rot90(k, dims, loc);
}
inline Tensor take_along_dim(const Tensor& t, const Tensor& indices, std::optional<int64_t> dim = std::nullopt,
                             KILN_LOC) {
  return t.take_along_dim(indices, dim, loc);
}
inline std::vector<Tensor> tensor_split(const Tensor& t, int64_t sections, int64_t dim = 0, KILN_LOC) {
  return t.tensor_split(sections, dim, loc);
}
inline std::vector<Tensor> tensor_split(const Tensor& t, const Shape& indices, int64_t dim = 0, KILN_LOC) {
  return t.tensor_split(indices, dim, loc);
}
inline std::tuple<Tensor, Tensor> aminmax(const Tensor& t, std::optional<int64_t> dim = std::nullopt,
                                          bool keepdim = false, KILN_LOC) {
  return t.aminmax(dim, keepdim, loc);
}
inline Tensor count_nonzero(const Tensor& t, const Shape& dims = {}, KILN_LOC) { return t.count_nonzero(dims, loc); }
inline Tensor nansum(const Tensor& t, const Shape& dims = {}, bool keepdim = false, KILN_LOC) {
  return t.nansum(dims, keepdim, std::nullopt, loc);
}
inline Tensor nanmean(const Tensor& t, const Shape& dims = {}, bool keepdim = false, KILN_LOC) {
  return t.nanmean(dims, keepdim, std::nullopt, loc);
}
inline Tensor round(const Tensor& t, int64_t decimals = 0, KILN_LOC) { return t.round(decimals, loc); }
inline Tensor flatten(const Tensor& t, int64_t start_dim = 0, int64_t end_dim = -1, KILN_LOC) { return t.flatten(start_dim, end_dim, loc); }
inline Tensor sum(const Tensor& t, KILN_LOC) { return t.sum(std::nullopt, loc); }
inline Tensor sum(const Tensor& t, int64_t dim, bool keepdim = false, KILN_LOC) { return t.sum(dim, keepdim, std::nullopt, loc); }
inline Tensor sum(const Tensor& t, const Shape& dims, bool keepdim = false, KILN_LOC) { return t.sum(dims, keepdim, std::nullopt, loc); }
inline Tensor mean(const Tensor& t, KILN_LOC) { return t.mean(std::nullopt, loc); }
inline Tensor mean(const Tensor& t, int64_t dim, bool keepdim = false, KILN_LOC) { return t.mean(dim, keepdim, std::nullopt, loc); }
inline Tensor prod(const Tensor& t, KILN_LOC) { return t.prod(std::nullopt, loc); }
inline Tensor max(const Tensor& t, KILN_LOC) { return t.max(loc); }
inline std::tuple<Tensor, Tensor> max(const Tensor& t, int64_t dim, bool keepdim = false, KILN_LOC) { return t.max(dim, keepdim, loc); }
inline Tensor min(const Tensor& t, KILN_LOC) { return t.min(loc); }
inline std::tuple<Tensor, Tensor> min(const Tensor& t, int64_t dim, bool keepdim = false, KILN_LOC) { return t.min(dim, keepdim, loc); }
inline Tensor argmax(const Tensor& t, std::optional<int64_t> dim = std::nullopt, bool keepdim = false, KILN_LOC) { return t.argmax(dim, keepdim, loc); }
inline Tensor argmin(const Tensor& t, std::optional<int64_t> dim = std::nullopt, bool keepdim = false, KILN_LOC) { return t.argmin(dim, keepdim, loc); }
inline Tensor softmax(const Tensor& t, int64_t dim, KILN_LOC) { return t.softmax(dim, std::nullopt, loc); }
inline Tensor log_softmax(const Tensor& t, int64_t dim, KILN_LOC) { return t.log_softmax(dim, std::nullopt, loc); }
inline Tensor logsumexp(const Tensor& t, int64_t dim, bool keepdim = false, KILN_LOC) {
  return t.logsumexp(Shape{dim}, keepdim, loc);
}
inline Tensor norm(const Tensor& t, double p = 2.0, const Shape& dims = {}, bool keepdim = false, KILN_LOC) {
  return t.norm(p, dims, keepdim, loc);
}
inline Tensor transpose(const Tensor& t, int64_t d0, int64_t d1, KILN_LOC) { return t.transpose(d0, d1, loc); }
inline Tensor permute(const Tensor& t, const Shape& dims, KILN_LOC) { return t.permute(dims, loc); }
inline Tensor reshape(const Tensor& t, const Shape& shape, KILN_LOC) { return t.reshape(shape, loc); }
inline Tensor unsqueeze(const Tensor& t, int64_t dim, KILN_LOC) { return t.unsqueeze(dim, loc); }
inline Tensor narrow(const Tensor& t, int64_t dim, int64_t start, int64_t length, KILN_LOC) { return t.narrow(dim, start, length, loc); }
inline Tensor select(const Tensor& t, int64_t dim, int64_t index, KILN_LOC) { return t.select(dim, index, loc); }

// The dtype an op over these operands computes in (torch.result_type).
DType result_type(const Tensor& a, const Tensor& b);
DType result_type(const Tensor& a, Scalar b);

// ---- evaluation ----
// Evaluates every pending tensor given, sharing the work common to them.
void eval(const std::vector<Tensor>& tensors);
template <typename... Ts>
void eval(const Tensor& first, const Ts&... rest) {
  eval(std::vector<Tensor>{first, rest...});
}

}  // namespace kiln

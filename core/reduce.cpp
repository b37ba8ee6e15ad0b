// Reductions: sum, mean, prod, max/min (with indices), amax/amin, argmax,
// argmin, var, std, all, any, softmax, log_softmax. Primitive reductions are
// one Reduce node kept in keepdim form, viewed without the reduced dims when
// keepdim is false; mean, var, std and the softmaxes are compositions of
// primitives, so the JIT can fuse their chains and autograd needs no rule.
#include <algorithm>

#include "core/ops_common.h"

namespace kiln {

namespace {
// Wraps and checks dims; an empty list means every dim.
Shape normalize_dims(const Shape& dims, int64_t rank, const char* op) {
  Shape out;
  if (dims.empty()) {
    for (int64_t d = 0; d < rank; ++d) out.push_back(d);
    return out;
  }
  for (int64_t d : dims) {
    int64_t w = wrap_dim(d, rank, op);
    KILN_CHECK(std::find(out.begin(), out.end(), w) == out.end(), op, "dim ", w,
               " appears multiple times in the list of dims");
    out.push_back(w);
  }
  if (rank == 0) out.clear();
  std::sort(out.begin(), out.end());
  return out;
}

// One primitive reduction node over `dims` (normalized) of t cast to `in`.
Tensor reduce(const Tensor& t, Op op, const Shape& dims, bool keepdim, DType in, DType out,
              const char* name, bool differentiable = true) {
  NodePtr x = cast_node(node_of(t, name), in);
  Shape rdims = dims;
  const bool scalar = t.dim() == 0;
  if (scalar) {
    x = reshape_node(x, {1});
    rdims = {0};
  }
  Shape kept = x->shape;
  for (int64_t d : rdims) kept[d] = 1;
  Attrs a;
  a.ints = rdims;
  NodePtr r = make_node(op, out, t.device(), kept, {x}, std::move(a));
  Shape final_shape;
  if (!scalar) {
    for (size_t d = 0; d < kept.size(); ++d)
      if (keepdim || !std::binary_search(rdims.begin(), rdims.end(), static_cast<int64_t>(d)))
        final_shape.push_back(kept[d]);
  }
  return make_tensor(reshape_node(r, final_shape), differentiable && t.requires_grad());
}

DType sum_dtype(DType in, std::optional<DType> requested) {
  if (requested) return *requested;
  return is_integral(in, true) ? DType::Int64 : in;
}

int64_t reduced_count(const Tensor& t, const Shape& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= t.sizes()[d];
  return n;
}

void check_nonempty_dims(const Tensor& t, const Shape& dims, const char* op) {
  for (int64_t d : dims)
    KILN_CHECK(t.sizes()[d] != 0, op, op, "(): Expected reduction dim ", d,
               " to have non-zero size. (input shape ", t.sizes(), ")");
}

// t / count, the count being a runtime value of the kernel (see shape_scalar_node).
Tensor divide_by_count(const Tensor& t, int64_t count) {
  NodePtr n = node_of(t, "mean");
  NodePtr c = expand_node(shape_scalar_node(static_cast<double>(count), t.dtype(), t.device()), t.sizes());
  return make_tensor(make_node(Op::Div, t.dtype(), t.device(), t.sizes(), {n, c}), t.requires_grad());
}

DType check_floating(const Tensor& t, std::optional<DType> dtype, const char* op, const char* what) {
  DType d = dtype.value_or(t.dtype());
  KILN_CHECK(is_floating_point(d), op, what, " Got: ", scalar_type_name(d),
             " (convert first with .to(kiln::kFloat))");
  return d;
}
}  // namespace

// ---- sum / mean / prod ----
Tensor Tensor::sum(const Shape& dims, bool keepdim, std::optional<DType> dtype) const {
  Shape d = normalize_dims(dims, dim(), "sum");
  DType out = sum_dtype(this->dtype(), dtype);
  return reduce(*this, Op::Sum, d, keepdim, out, out, "sum");
}
Tensor Tensor::sum(std::optional<DType> dtype) const { return sum(Shape{}, false, dtype); }
Tensor Tensor::sum(int64_t d, bool keepdim, std::optional<DType> dtype) const {
  return sum(Shape{d}, keepdim, dtype);
}

Tensor Tensor::mean(const Shape& dims, bool keepdim, std::optional<DType> dtype) const {
  DType d = check_floating(*this, dtype, "mean",
                           "mean(): could not infer output dtype. Input dtype must be either a "
                           "floating point or complex dtype.");
  Shape nd = normalize_dims(dims, dim(), "mean");
  Tensor s = reduce(*this, Op::Sum, nd, keepdim, d, d, "mean");
  return divide_by_count(s, reduced_count(*this, nd));
}
Tensor Tensor::mean(std::optional<DType> dtype) const { return mean(Shape{}, false, dtype); }
Tensor Tensor::mean(int64_t d, bool keepdim, std::optional<DType> dtype) const {
  return mean(Shape{d}, keepdim, dtype);
}

Tensor Tensor::prod(std::optional<DType> dtype) const {
  DType out = sum_dtype(this->dtype(), dtype);
  return reduce(*this, Op::Prod, normalize_dims({}, dim(), "prod"), false, out, out, "prod");
}
Tensor Tensor::prod(int64_t d, bool keepdim, std::optional<DType> dtype) const {
  DType out = sum_dtype(this->dtype(), dtype);
  return reduce(*this, Op::Prod, normalize_dims({d}, dim(), "prod"), keepdim, out, out, "prod");
}

// ---- max / min ----
Tensor Tensor::amax(const Shape& dims, bool keepdim) const {
  Shape d = normalize_dims(dims, dim(), "amax");
  check_nonempty_dims(*this, d, "amax");
  return reduce(*this, Op::Max, d, keepdim, dtype(), dtype(), "amax");
}
Tensor Tensor::amin(const Shape& dims, bool keepdim) const {
  Shape d = normalize_dims(dims, dim(), "amin");
  check_nonempty_dims(*this, d, "amin");
  return reduce(*this, Op::Min, d, keepdim, dtype(), dtype(), "amin");
}
Tensor Tensor::max() const {
  KILN_CHECK(numel() > 0, "max",
             "max(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
             "reduction dim with the 'dim' argument.");
  return amax({}, false);
}
Tensor Tensor::min() const {
  KILN_CHECK(numel() > 0, "min",
             "min(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
             "reduction dim with the 'dim' argument.");
  return amin({}, false);
}
std::tuple<Tensor, Tensor> Tensor::max(int64_t d, bool keepdim) const {
  Shape nd = normalize_dims({d}, dim(), "max");
  check_nonempty_dims(*this, nd, "max");
  return {reduce(*this, Op::Max, nd, keepdim, dtype(), dtype(), "max"),
          reduce(*this, Op::ArgMax, nd, keepdim, dtype(), DType::Int64, "max", false)};
}
std::tuple<Tensor, Tensor> Tensor::min(int64_t d, bool keepdim) const {
  Shape nd = normalize_dims({d}, dim(), "min");
  check_nonempty_dims(*this, nd, "min");
  return {reduce(*this, Op::Min, nd, keepdim, dtype(), dtype(), "min"),
          reduce(*this, Op::ArgMin, nd, keepdim, dtype(), DType::Int64, "min", false)};
}

static Tensor arg_reduce(const Tensor& t, Op op, std::optional<int64_t> dim, bool keepdim,
                         const char* name) {
  if (!dim) {
    KILN_CHECK(t.numel() > 0, name, name,
               "(): Expected reduction dim to be specified for input.numel() == 0.");
    Tensor flat = t.reshape({-1});
    return reduce(flat, op, {0}, false, t.dtype(), DType::Int64, name, false);
  }
  Shape nd = normalize_dims({*dim}, t.dim(), name);
  check_nonempty_dims(t, nd, name);
  return reduce(t, op, nd, keepdim, t.dtype(), DType::Int64, name, false);
}
Tensor Tensor::argmax(std::optional<int64_t> d, bool keepdim) const {
  return arg_reduce(*this, Op::ArgMax, d, keepdim, "argmax");
}
Tensor Tensor::argmin(std::optional<int64_t> d, bool keepdim) const {
  return arg_reduce(*this, Op::ArgMin, d, keepdim, "argmin");
}

// ---- var / std: mean of squared deviations, divided by N - correction ----
Tensor Tensor::var(const Shape& dims, bool unbiased, bool keepdim) const {
  check_floating(*this, std::nullopt, "var", "std and var only support floating point and complex dtypes.");
  Shape nd = normalize_dims(dims, dim(), "var");
  int64_t n = reduced_count(*this, nd);
  Tensor mu = divide_by_count(reduce(*this, Op::Sum, nd, true, dtype(), dtype(), "var"), n);
  Tensor dev = *this - mu;
  Tensor ss = reduce(dev * dev, Op::Sum, nd, keepdim, dtype(), dtype(), "var");
  return divide_by_count(ss, std::max<int64_t>(n - (unbiased ? 1 : 0), 0));
}
Tensor Tensor::var(bool unbiased) const { return var(Shape{}, unbiased, false); }
Tensor Tensor::var(int64_t d, bool unbiased, bool keepdim) const { return var(Shape{d}, unbiased, keepdim); }
Tensor Tensor::std(const Shape& dims, bool unbiased, bool keepdim) const {
  return var(dims, unbiased, keepdim).sqrt();
}
Tensor Tensor::std(bool unbiased) const { return var(unbiased).sqrt(); }
Tensor Tensor::std(int64_t d, bool unbiased, bool keepdim) const { return var(d, unbiased, keepdim).sqrt(); }

// ---- all / any ----
static DType logical_reduce_dtype(DType in) { return in == DType::UInt8 ? DType::UInt8 : DType::Bool; }
Tensor Tensor::all() const {
  return reduce(*this, Op::All, normalize_dims({}, dim(), "all"), false, dtype(), logical_reduce_dtype(dtype()), "all", false);
}
Tensor Tensor::all(int64_t d, bool keepdim) const {
  return reduce(*this, Op::All, normalize_dims({d}, dim(), "all"), keepdim, dtype(), logical_reduce_dtype(dtype()), "all", false);
}
Tensor Tensor::any() const {
  return reduce(*this, Op::Any, normalize_dims({}, dim(), "any"), false, dtype(), logical_reduce_dtype(dtype()), "any", false);
}
Tensor Tensor::any(int64_t d, bool keepdim) const {
  return reduce(*this, Op::Any, normalize_dims({d}, dim(), "any"), keepdim, dtype(), logical_reduce_dtype(dtype()), "any", false);
}

// ---- softmax / log_softmax over one dim, stabilized by the row max ----
// x minus its max along dim `d` (after the dtype checks both share), and the
// wrapped dim; an empty x comes back as is.
static std::pair<Tensor, int64_t> shifted_by_max(const Tensor& t, int64_t d, std::optional<DType> dtype,
                                                 const char* op, const char* what) {
  Tensor x = t.to(check_floating(t, dtype, op, what));
  int64_t w = wrap_dim(d, t.dim(), op);
  if (x.numel() == 0) return {x, w};
  return {x - x.amax({w}, true), w};
}

Tensor Tensor::softmax(int64_t d, std::optional<DType> dtype) const {
  auto [shifted, w] = shifted_by_max(*this, d, dtype, "softmax", "softmax expects a floating point tensor.");
  if (shifted.numel() == 0) return shifted.clone();
  Tensor e = shifted.exp();
  return e / e.sum(w, true);
}

Tensor Tensor::log_softmax(int64_t d, std::optional<DType> dtype) const {
  auto [shifted, w] = shifted_by_max(*this, d, dtype, "log_softmax", "log_softmax expects a floating point tensor.");
  if (shifted.numel() == 0) return shifted.clone();
  return shifted - shifted.exp().sum(w, true).log();
}

}  // namespace kiln

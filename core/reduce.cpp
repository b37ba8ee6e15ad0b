// Reductions: sum, mean, prod, max/min (with indices), amax/amin, argmax,
// argmin, var, std, all, any, softmax, log_softmax, logsumexp, norm. Primitive reductions are
// one Reduce node kept in keepdim form, viewed without the reduced dims when
// keepdim is false; mean, var, std and the softmaxes are compositions of
// primitives, so the JIT can fuse their chains. Each public op records one
// backward function (its PyTorch name) with ints {keepdim, dims...}.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "core/built_nodes.h"
#include "core/layout.h"
#include "core/ops_common.h"
#include "core/provenance.h"
#include "core/reduction_forms.h"

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

// The primitive reductions built last on this thread, by what they
// reduce (core/built_nodes.h): the same reduction of the same node built
// again (x.mean(1) beside x.std(1), whose two-pass variance builds x's
// mean too; a sum a program asks for twice) is the node built before.
struct ReductionKey {
  Op op = Op::Sum;
  DType in = DType::Float32, out = DType::Float32;
  Shape dims;
  bool operator==(const ReductionKey&) const = default;
};
using BuiltReductions = BuiltNodes<struct BuiltReductionsTag, ReductionKey, 16>;

// One primitive reduction node over `dims` (normalized) of t cast to `in`.
Tensor reduce(const Tensor& t, Op op, const Shape& dims, bool keepdim, DType in, DType out,
              const char* name) {
  const NodePtr source = node_of(t, name);
  Shape rdims = dims;
  const bool scalar = t.dim() == 0;
  if (scalar) rdims = {0};
  const ReductionKey key{op, in, out, dims};
  NodePtr r = BuiltReductions::find(source, key);
  if (!r) {
    NodePtr x = cast_node(source, in);
    if (scalar) x = reshape_node(x, {1});
    r = reduction_in_memory_order(op, out, x, rdims);
    BuiltReductions::remember(source, key, r);
  }
  const Shape& kept = r->shape;
  Shape final_shape;
  if (!scalar) {
    for (size_t d = 0; d < kept.size(); ++d)
      if (keepdim || !std::binary_search(rdims.begin(), rdims.end(), static_cast<int64_t>(d)))
        final_shape.push_back(kept[d]);
  }
  return make_tensor(reshape_node(r, final_shape));
}

// Records a reduction's backward function: ints {keepdim, dims...}.
autograd::FunctionPtr record_reduction(GradFn kind, const Tensor& out, const Tensor& in,
                                       const Shape& dims, bool keepdim) {
  autograd::FunctionPtr f = record(kind, out, {&in});
  if (f) {
    f->ints.reserve(dims.size() + 1);
    f->ints.push_back(keepdim);
    f->ints.insert(f->ints.end(), dims.begin(), dims.end());
  }
  return f;
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

DType check_floating(const Tensor& t, std::optional<DType> dtype, const char* op, const char* what) {
  DType d = dtype.value_or(t.dtype());
  KILN_CHECK(is_floating_point(d), op, what, " Got: ", scalar_type_name(d),
             " (convert first with .to(kiln::kFloat))");
  return d;
}
}  // namespace

Tensor divide_by_count(const Tensor& t, int64_t count) {
  const NodePtr& n = node_of(t, "mean");  // first: an undefined t is refused as mean's
  NodePtr c = expand_node(shape_scalar_node(static_cast<double>(count), t.dtype(), t.device()), t.sizes());
  Tensor out = make_tensor(make_node(Op::Div, t.dtype(), t.device(), t.sizes(), node_list(n, std::move(c))));
  if (auto f = record(GradFn::DivBackward0, out, {&t})) f->reals.push_back(static_cast<double>(count));
  return out;
}

// ---- sum / mean / prod ----
Tensor Tensor::sum(const Shape& dims, bool keepdim, std::optional<DType> dtype, SourceLoc loc) const {
  const LocScope at(loc);
  Shape d = normalize_dims(dims, dim(), "sum");
  DType out = sum_dtype(this->dtype(), dtype);
  Tensor r = reduce(*this, Op::Sum, d, keepdim, out, out, "sum");
  record_reduction(GradFn::SumBackward1, r, *this, d, keepdim);
  return r;
}
Tensor Tensor::sum(std::optional<DType> dtype, SourceLoc loc) const {
  const LocScope at(loc);
  Tensor r = sum(Shape{}, false, dtype);
  autograd::relabel(r, GradFn::SumBackward0);
  return r;
}
Tensor Tensor::sum(int64_t d, bool keepdim, std::optional<DType> dtype, SourceLoc loc) const {
  const LocScope at(loc);
  return sum(Shape{d}, keepdim, dtype);
}

Tensor Tensor::mean(const Shape& dims, bool keepdim, std::optional<DType> dtype, SourceLoc loc) const {
  const LocScope at(loc);
  DType d = check_floating(*this, dtype, "mean",
                           "mean(): could not infer output dtype. Input dtype must be either a "
                           "floating point or complex dtype.");
  Shape nd = normalize_dims(dims, dim(), "mean");
  Tensor r;
  {
    AutoGradMode no_grad(false);
    r = divide_by_count(reduce(*this, Op::Sum, nd, keepdim, d, d, "mean"), reduced_count(*this, nd));
  }
  record_reduction(GradFn::MeanBackward1, r, *this, nd, keepdim);
  return r;
}
Tensor Tensor::mean(std::optional<DType> dtype, SourceLoc loc) const {
  const LocScope at(loc);
  Tensor r = mean(Shape{}, false, dtype);
  autograd::relabel(r, GradFn::MeanBackward0);
  return r;
}
Tensor Tensor::mean(int64_t d, bool keepdim, std::optional<DType> dtype, SourceLoc loc) const {
  const LocScope at(loc);
  return mean(Shape{d}, keepdim, dtype);
}

static Tensor prod_impl(const Tensor& t, const Shape& dims, bool keepdim, std::optional<DType> dtype,
                        GradFn kind) {
  DType out = sum_dtype(t.dtype(), dtype);
  Tensor r = reduce(t, Op::Prod, dims, keepdim, out, out, "prod");
  if (auto f = record_reduction(kind, r, t, dims, keepdim)) {
    f->save(t);
    f->save_output(r);
  }
  return r;
}
Tensor Tensor::prod(std::optional<DType> dtype, SourceLoc loc) const {
  const LocScope at(loc);
  return prod_impl(*this, normalize_dims({}, dim(), "prod"), false, dtype, GradFn::ProdBackward0);
}
Tensor Tensor::prod(int64_t d, bool keepdim, std::optional<DType> dtype, SourceLoc loc) const {
  const LocScope at(loc);
  return prod_impl(*this, normalize_dims({d}, dim(), "prod"), keepdim, dtype, GradFn::ProdBackward1);
}

// ---- max / min ----
// amax / amin: the gradient is shared evenly between ties (rules.cpp).
static Tensor extremum(const Tensor& t, const Shape& dims, bool keepdim, bool max) {
  const char* name = max ? "amax" : "amin";
  Shape d = normalize_dims(dims, t.dim(), name);
  check_nonempty_dims(t, d, name);
  Tensor r = reduce(t, max ? Op::Max : Op::Min, d, keepdim, t.dtype(), t.dtype(), name);
  if (auto f = record_reduction(max ? GradFn::AmaxBackward0 : GradFn::AminBackward0, r, t, d, keepdim)) {
    f->save(t);
    f->save_output(r);
  }
  return r;
}
Tensor Tensor::amax(const Shape& dims, bool keepdim, SourceLoc loc) const {
  const LocScope at(loc);
  return extremum(*this, dims, keepdim, true);
}
Tensor Tensor::amin(const Shape& dims, bool keepdim, SourceLoc loc) const {
  const LocScope at(loc);
  return extremum(*this, dims, keepdim, false);
}
Tensor Tensor::max(SourceLoc loc) const {
  const LocScope at(loc);
  KILN_CHECK(numel() > 0, "max",
             "max(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
             "reduction dim with the 'dim' argument.");
  Tensor r = amax({}, false);
  autograd::relabel(r, GradFn::MaxBackward1);
  return r;
}
Tensor Tensor::min(SourceLoc loc) const {
  const LocScope at(loc);
  KILN_CHECK(numel() > 0, "min",
             "min(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
             "reduction dim with the 'dim' argument.");
  Tensor r = amin({}, false);
  autograd::relabel(r, GradFn::MinBackward1);
  return r;
}
// The position of the first extreme of t (rank >= 1) along dim d, given the
// extreme m in keepdim form: the smallest position whose element equals m,
// or where m is NaN (a NaN wins a max) the first NaN. As the reference's
// ArgMax (the first element no later one beats; -0 and +0 are equal there
// and equal here). An int64 min over positions vectorizes after the
// extreme's own vectorized pass, where a reduction keeping a position ran
// one element at a time (argmax(1) of [1024, 1024] 10x slower). Positions
// the row does not hold are INT64_MAX, not the row's length, so that the
// kernel stays shape-generic.
static Tensor first_extreme_position(const Tensor& t, const Tensor& m, int64_t d, bool keepdim, const char* name) {
  AutoGradMode no_grad(false);
  const int64_t n = t.sizes()[static_cast<size_t>(d)];
  const Tensor pos = laid_along(arange(n, TensorOptions().dtype(DType::Int64).device(t.device())), d, t.sizes());
  Tensor hit = t == m;
  if (is_floating_point(t.dtype())) hit = hit.logical_or(m.isnan().logical_and(t.isnan()));
  const Tensor cand = where(hit, pos, Scalar(std::numeric_limits<int64_t>::max()));
  return reduce(cand, Op::Min, {d}, keepdim, DType::Int64, DType::Int64, name);
}

// The extreme of t along d and its first position. Along fewer than
// kPositionPassMinLength elements (a pooling window's row) one reduction
// keeping its position costs less than a second pass and a stored extreme.
constexpr int64_t kPositionPassMinLength = 16;
static std::pair<Tensor, Tensor> extreme_and_position(const Tensor& t, int64_t d, bool keepdim, bool max, const char* name) {
  if (t.dim() == 0 || t.sizes()[static_cast<size_t>(d)] < kPositionPassMinLength)
    return {reduce(t, max ? Op::Max : Op::Min, {d}, keepdim, t.dtype(), t.dtype(), name),
            reduce(t, max ? Op::ArgMax : Op::ArgMin, {d}, keepdim, t.dtype(), DType::Int64, name)};
  Tensor m = reduce(t, max ? Op::Max : Op::Min, {d}, true, t.dtype(), t.dtype(), name);
  Tensor values = m;
  if (!keepdim) {
    Shape s = t.sizes();
    s.erase(s.begin() + d);
    values = make_tensor(reshape_node(m.impl()->node(), s));
  }
  return {values, first_extreme_position(t, m, d, keepdim, name)};
}

// values and indices; the gradient goes to the element at the index.
static std::tuple<Tensor, Tensor> indexed_extremum(const Tensor& t, int64_t d, bool keepdim, bool max) {
  const char* name = max ? "max" : "min";
  Shape nd = normalize_dims({d}, t.dim(), name);
  check_nonempty_dims(t, nd, name);
  auto [values, indices] = extreme_and_position(t, nd[0], keepdim, max, name);
  if (auto f = record(max ? GradFn::MaxBackward0 : GradFn::MinBackward0, values, {&t})) {
    f->ints = {t.dim() == 0 ? 0 : nd[0], keepdim};
    f->save(indices);
  }
  return {values, indices};
}
std::tuple<Tensor, Tensor> Tensor::max(int64_t d, bool keepdim, SourceLoc loc) const {
  const LocScope at(loc);
  return indexed_extremum(*this, d, keepdim, true);
}
std::tuple<Tensor, Tensor> Tensor::min(int64_t d, bool keepdim, SourceLoc loc) const {
  const LocScope at(loc);
  return indexed_extremum(*this, d, keepdim, false);
}

static Tensor arg_reduce(const Tensor& t, Op op, std::optional<int64_t> dim, bool keepdim,
                         const char* name) {
  if (!dim) {
    KILN_CHECK(t.numel() > 0, name, name,
               "(): Expected reduction dim to be specified for input.numel() == 0.");
    Tensor flat = t.reshape({-1});
    return extreme_and_position(flat, 0, false, op == Op::ArgMax, name).second;
  }
  Shape nd = normalize_dims({*dim}, t.dim(), name);
  check_nonempty_dims(t, nd, name);
  return extreme_and_position(t, nd[0], keepdim, op == Op::ArgMax, name).second;
}
Tensor Tensor::argmax(std::optional<int64_t> d, bool keepdim, SourceLoc loc) const {
  const LocScope at(loc);
  return arg_reduce(*this, Op::ArgMax, d, keepdim, "argmax");
}
Tensor Tensor::argmin(std::optional<int64_t> d, bool keepdim, SourceLoc loc) const {
  const LocScope at(loc);
  return arg_reduce(*this, Op::ArgMin, d, keepdim, "argmin");
}

// ---- var / std: mean of squared deviations, divided by N - correction ----
// Float32 and narrower in one pass over x, so that x.var(0) reads x once
// and the sums merge with x.mean(0)'s (a standardization reads x twice, not
// three times): the sums of d = x - K and d * d in float64, K the first
// element along dims, var = (S2 - S1^2 / n) / (n - correction). Shifting by
// a sample bounds the cancellation: (K - mean)^2 <= (n - 1) var, so the
// error is at most about n float64 roundings of var, below float32's
// rounding up to n ~ 1e8. Float64 keeps the two passes: it has no wider
// accumulator to absorb the cancellation.
namespace {
// Rows of up to kVarRowTwoPassMax elements over the trailing dims (a
// layernorm's) keep the two passes: one row kernel reads its row twice from
// cache (var(1) of 4096 x 4096 ran 7% slower in one pass).
constexpr int64_t kVarRowTwoPassMax = 1 << 16;
bool var_in_one_pass(const Tensor& x, const Shape& dims, int64_t n) {
  const DType t = x.dtype();
  if (n == 0 || x.dim() == 0 || (t != kFloat32 && t != kFloat16 && t != kBFloat16)) return false;
  bool trailing = dims.back() == x.dim() - 1;
  for (size_t k = 1; k < dims.size(); ++k) trailing = trailing && dims[k] == dims[k - 1] + 1;
  return !(trailing && n <= kVarRowTwoPassMax);
}
Tensor var_one_pass(const Tensor& x, const Shape& dims, bool keepdim, int64_t n, int64_t divisor) {
  Tensor k = x;
  for (int64_t d : dims) k = k.narrow(d, 0, 1);
  const Tensor d = x.to(kFloat64) - k.to(kFloat64);
  const Tensor s1 = reduce(d, Op::Sum, dims, keepdim, kFloat64, kFloat64, "var");
  const Tensor s2 = reduce(d * d, Op::Sum, dims, keepdim, kFloat64, kFloat64, "var");
  const Tensor m2 = (s2 - s1 * s1 / static_cast<double>(n)).clamp_min(0.0);
  return divide_by_count(m2, divisor).to(x.dtype());
}
}  // namespace
Tensor Tensor::var(const Shape& dims, bool unbiased, bool keepdim, SourceLoc loc) const {
  const LocScope at(loc);
  check_floating(*this, std::nullopt, "var", "std and var only support floating point and complex dtypes.");
  Shape nd = normalize_dims(dims, dim(), "var");
  int64_t n = reduced_count(*this, nd);
  const int64_t divisor = std::max<int64_t>(n - (unbiased ? 1 : 0), 0);
  Tensor r;
  {
    AutoGradMode no_grad(false);
    if (var_in_one_pass(*this, nd, n)) {
      r = var_one_pass(*this, nd, keepdim, n, divisor);
    } else {
      Tensor mu = divide_by_count(reduce(*this, Op::Sum, nd, true, dtype(), dtype(), "var"), n);
      Tensor dev = *this - mu;
      Tensor ss = reduce(dev * dev, Op::Sum, nd, keepdim, dtype(), dtype(), "var");
      r = divide_by_count(ss, divisor);
    }
  }
  if (auto f = record_reduction(GradFn::VarBackward0, r, *this, nd, keepdim)) {
    f->reals.push_back(unbiased ? 1.0 : 0.0);
    f->save(*this);
  }
  return r;
}
Tensor Tensor::var(bool unbiased, SourceLoc loc) const {
  const LocScope at(loc);
  return var(Shape{}, unbiased, false);
}
Tensor Tensor::var(int64_t d, bool unbiased, bool keepdim, SourceLoc loc) const {
  const LocScope at(loc);
  return var(Shape{d}, unbiased, keepdim);
}
Tensor Tensor::std(const Shape& dims, bool unbiased, bool keepdim, SourceLoc loc) const {
  const LocScope at(loc);
  Tensor r;
  {
    AutoGradMode no_grad(false);
    r = var(dims, unbiased, keepdim).sqrt();
  }
  Shape nd = normalize_dims(dims, dim(), "std");
  if (auto f = record_reduction(GradFn::StdBackward0, r, *this, nd, keepdim)) {
    f->reals.push_back(unbiased ? 1.0 : 0.0);
    f->save(*this);
    f->save_output(r);
  }
  return r;
}
Tensor Tensor::std(bool unbiased, SourceLoc loc) const {
  const LocScope at(loc);
  return std(Shape{}, unbiased, false);
}
Tensor Tensor::std(int64_t d, bool unbiased, bool keepdim, SourceLoc loc) const {
  const LocScope at(loc);
  return std(Shape{d}, unbiased, keepdim);
}

// ---- all / any ----
static DType logical_reduce_dtype(DType in) { return in == DType::UInt8 ? DType::UInt8 : DType::Bool; }
Tensor Tensor::all(SourceLoc loc) const {
  const LocScope at(loc);
  return reduce(*this, Op::All, normalize_dims({}, dim(), "all"), false, dtype(), logical_reduce_dtype(dtype()), "all");
}
Tensor Tensor::all(int64_t d, bool keepdim, SourceLoc loc) const {
  const LocScope at(loc);
  return reduce(*this, Op::All, normalize_dims({d}, dim(), "all"), keepdim, dtype(), logical_reduce_dtype(dtype()), "all");
}
Tensor Tensor::any(SourceLoc loc) const {
  const LocScope at(loc);
  return reduce(*this, Op::Any, normalize_dims({}, dim(), "any"), false, dtype(), logical_reduce_dtype(dtype()), "any");
}
Tensor Tensor::any(int64_t d, bool keepdim, SourceLoc loc) const {
  const LocScope at(loc);
  return reduce(*this, Op::Any, normalize_dims({d}, dim(), "any"), keepdim, dtype(), logical_reduce_dtype(dtype()), "any");
}

// ---- softmax / log_softmax over one dim, stabilized by the row max ----
// x (in the requested floating dtype) minus its max along dim d, passed with
// the wrapped dim to `finish`; recorded as one function saving its result.
// An empty x comes back as a copy.
template <typename Finish>
static Tensor shifted_by_max(const Tensor& t, int64_t d, std::optional<DType> dtype, const char* op,
                             const char* what, GradFn kind, Finish finish) {
  Tensor x = t.to(check_floating(t, dtype, op, what));
  const int64_t w = wrap_dim(d, t.dim(), op);
  Tensor r;
  {
    AutoGradMode no_grad(false);
    // Row-major, as PyTorch's, whatever x's layout (core/layout.h)
    r = x.numel() == 0 ? x.contiguous().clone() : finish(x - x.amax({w}, true), w).contiguous();
  }
  if (auto f = record(kind, r, {&x})) {
    f->ints = {w};
    f->save_output(r);
  }
  return r;
}

Tensor Tensor::softmax(int64_t d, std::optional<DType> dtype, SourceLoc loc) const {
  const LocScope at(loc);
  return shifted_by_max(*this, d, dtype, "softmax", "softmax expects a floating point tensor.",
                        GradFn::SoftmaxBackward0, [](const Tensor& shifted, int64_t w) {
                          Tensor e = shifted.exp();
                          return e * e.sum(w, true).reciprocal();  // one division per row, as PyTorch
                        });
}

Tensor Tensor::log_softmax(int64_t d, std::optional<DType> dtype, SourceLoc loc) const {
  const LocScope at(loc);
  return shifted_by_max(*this, d, dtype, "log_softmax", "log_softmax expects a floating point tensor.",
                        GradFn::LogSoftmaxBackward0, [](const Tensor& shifted, int64_t w) {
                          return shifted - shifted.exp().sum(w, true).log();
                        });
}

// ---- logsumexp: log(sum(exp(x))) over dims, shifted by the max ----
// As torch.logsumexp: integers compute in the default float dtype; the max is
// a constant to autograd (its terms cancel: the gradient is softmax(x) times
// the incoming one), and an infinite max shifts by 0, so a row of -inf gives
// -inf, not NaN. An empty reduction gives -inf (log of an empty sum). Over
// rows it is one kernel, as log_softmax (tests/test_jit_fusion.cpp).
Tensor Tensor::logsumexp(const Shape& dims, bool keepdim, SourceLoc loc) const {
  const LocScope at(loc);
  Tensor x = kiln::is_floating_point(dtype()) ? *this : to(default_dtype());
  const Shape nd = normalize_dims(dims, dim(), "logsumexp");
  if (x.numel() == 0) return x.exp().sum(nd, keepdim).log();
  Tensor m = x.amax(nd, true).detach();
  m = where(m.abs().eq(std::numeric_limits<double>::infinity()), 0.0, m);
  Tensor s = (x - m).exp().sum(nd, keepdim).log();
  return s + (keepdim ? m : m.reshape(s.shape()));
}

// ---- norm: the vector p-norm over dims, as Tensor.norm / torch.norm ----
// inf / -inf: the largest / smallest |x| (ties share the gradient, as amax);
// 0: the count of non-zeros; 1: sum |x|; else sum(|x|^p)^(1/p). Where the
// sum is 0 the norm is 0 with gradient 0, as PyTorch's masked rule, where
// the formula's derivative is 0/0: the root is taken of 1 there instead,
// and each `where` passes only the gradient of the branch it picks.
Tensor Tensor::norm(double p, const Shape& dims, bool keepdim, SourceLoc loc) const {
  const LocScope at(loc);
  check_floating(*this, std::nullopt, "norm", "norm(): input dtype should be either floating point or complex.");
  const Shape nd = normalize_dims(dims, dim(), "norm");
  const Tensor a = abs();
  if (std::isinf(p)) return p > 0 ? a.amax(nd, keepdim) : a.amin(nd, keepdim);
  if (p == 0) return a.ne(0.0).to(dtype()).sum(nd, keepdim);
  if (p == 1) return a.sum(nd, keepdim);
  const Tensor s = a.pow(p).sum(nd, keepdim);  // pow(2) is a * a (pow's shortcuts)
  const Tensor zero = s.eq(0.0);
  const Tensor safe = where(zero, 1.0, s);
  return where(zero, 0.0, p == 2 ? safe.sqrt() : safe.pow(1.0 / p));
}

}  // namespace kiln

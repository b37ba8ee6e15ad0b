// The gradient rules: one short rule per backward function, written with
// kiln's own tensor ops (so backward builds lazy nodes the JIT fuses, and
// with create_graph the rules are themselves differentiated).
//
// A rule gets the gradient of the op's result and returns one gradient per
// input (undefined where the input needs none). It may return a gradient
// of the broadcast shape or the result's dtype: the engine sums it back to
// the input's shape and casts it (engine.cpp, to_input). f.ints / f.reals
// hold the op's parameters as the recording op in core/ stored them.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/autograd/function.h"
#include "core/convolution.h"
#include "core/layout.h"
#include "core/ops_common.h"
#include "kiln/nn_functional.h"

namespace kiln::autograd {

namespace {
using Grads = std::vector<Tensor>;

TensorOptions like(const Tensor& g) { return TensorOptions(g.dtype()).device(g.device()); }
Tensor zeros_of(const Shape& sizes, const Tensor& g) { return zeros(sizes, like(g)); }

// The shape of a reduction's result with its reduced dims kept as size 1.
// Reductions store ints = {keepdim, dims...}.
Shape kept_shape(const Function& f) {
  Shape s = f.inputs[0].sizes;
  for (size_t i = 1; i < f.ints.size(); ++i) s[f.ints[i]] = 1;
  return s;
}
Shape reduced_dims(const Function& f) { return Shape(f.ints.begin() + 1, f.ints.end()); }
int64_t reduced_count(const Function& f) {
  int64_t n = 1;
  for (size_t i = 1; i < f.ints.size(); ++i) n *= f.inputs[0].sizes[f.ints[i]];
  return n;
}
// A reduction's result (or its gradient) viewed with the reduced dims kept.
// A full reduction's 0-dim result broadcasts as it is.
Tensor kept(const Function& f, const Tensor& t) {
  if (f.ints[0] || (t.dim() == 0 && f.ints.size() == f.inputs[0].sizes.size() + 1)) return t;
  return t.reshape(kept_shape(f));
}

// Gradient of a view: zeros of the input's shape with the view's region
// set to g (`region` picks the region of a tensor of the input's shape).
template <typename Region>
Tensor scatter_into(const Function& f, const Tensor& g, Region region) {
  Tensor z = zeros_of(f.inputs[0].sizes, g);
  region(z).copy_(g);
  return z;
}

// g summed over the dims where the view repeats elements (stride 0), so
// each memory location of the view is written once.
std::pair<Tensor, Shape> collapse_repeats(const Tensor& g, const Shape& strides) {
  Shape dims, sizes = g.sizes();
  for (size_t d = 0; d < strides.size(); ++d)
    if (strides[d] == 0 && sizes[d] > 1) {
      dims.push_back(static_cast<int64_t>(d));
      sizes[d] = 1;
    }
  return {dims.empty() ? g : g.sum(dims, true), sizes};
}

bool overlaps(const Shape& sizes, const Shape& strides) {
  std::vector<size_t> order(sizes.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return strides[a] < strides[b]; });
  int64_t extent = 1;  // elements spanned by the dims so far
  for (size_t d : order) {
    if (sizes[d] <= 1) continue;
    if (strides[d] < extent) return true;
    extent = strides[d] * (sizes[d] - 1) + extent;
  }
  return false;
}

// ---- the rules ----
#define RULE(name) Grads rule_##name(Function& f, const Tensor& g)

RULE(AccumulateGrad) {
  KILN_INTERNAL_ASSERT(false, "AccumulateGrad has no rule (the engine accumulates)");
  (void)f;
  (void)g;
  return {};
}
RULE(Add) { return {g, f.needs(1) ? g : Tensor()}; }
RULE(Sub) { return {g, f.needs(1) ? -g : Tensor()}; }
RULE(Rsub) { (void)f; return {-g}; }
RULE(Mul) {
  if (f.next.size() == 1) return {g * f.reals[0]};  // tensor * scalar
  return {f.needs(0) ? g * f.saved_tensor(0) : Tensor(), f.needs(1) ? g * f.saved_tensor(1) : Tensor()};
}
RULE(Rdiv) {  // scalar / x
  Tensor x = f.saved_tensor(0);
  return {g * -f.reals[0] / (x * x)};
}
RULE(Div) {
  if (f.next.size() == 1) return {g / f.reals[0]};
  Tensor other = f.saved_tensor(0);
  return {f.needs(0) ? g / other : Tensor(),
          f.needs(1) ? -g * f.saved_tensor(1) / (other * other) : Tensor()};
}
// fmod(a, b) = a - trunc(a / b) * b, the quotient's gradient zero
RULE(Fmod) {
  if (f.next.size() == 1) return {g};  // by a scalar
  return {f.needs(0) ? g : Tensor(),
          f.needs(1) ? -g * f.saved_tensor(0).div(f.saved_tensor(1), "trunc") : Tensor()};
}
RULE(PowScalar) {
  const double e = f.reals[0];
  if (e == 0.0) return {zeros_like(g)};
  if (e == 1.0) return {g};
  // x^1 * 2 is x * 2 exactly: the square (the commonest case) skips a pow.
  if (e == 2.0) return {g * (f.saved_tensor(0) * 2.0)};
  return {g * (f.saved_tensor(0).pow(e - 1) * e)};
}
RULE(Pow) {  // saved: self, exponent, result
  Tensor x = f.saved_tensor(0), e = f.saved_tensor(1);
  Grads r(2);
  if (f.needs(0)) r[0] = where(e == 0, 0.0, g * (e * x.pow(e - 1)));
  if (f.needs(1)) {
    Tensor ge = g * (f.saved_tensor(2) * x.log());
    r[1] = where(x == 0, where(e >= 0, 0.0, ge), ge);
  }
  return r;
}
RULE(Rpow) {  // scalar ** x; saved: result, x
  const double base = f.reals[0];
  Tensor grad = g * (f.saved_tensor(0) * std::log(base));
  if (base == 0.0) grad = where(f.saved_tensor(1) >= 0, 0.0, grad);
  return {grad};
}
RULE(Neg) { (void)f; return {-g}; }
RULE(Exp) { return {g * f.saved_tensor(0)}; }
RULE(Log) { return {g / f.saved_tensor(0)}; }
RULE(Sqrt) { return {g / (2 * f.saved_tensor(0))}; }
RULE(Rsqrt) { return {-0.5 * g * f.saved_tensor(0).pow(3)}; }
RULE(Abs) { return {g * f.saved_tensor(0).sign()}; }
RULE(Sin) { return {g * f.saved_tensor(0).cos()}; }
RULE(Cos) { return {g * -f.saved_tensor(0).sin()}; }
RULE(Tanh) {
  Tensor y = f.saved_tensor(0);
  return {g * (1 - y * y)};
}
RULE(Sigmoid) {
  Tensor y = f.saved_tensor(0);
  return {g * (1 - y) * y};
}
RULE(Log1p) { return {g / (f.saved_tensor(0) + 1)}; }
RULE(Expm1) { return {g * (f.saved_tensor(0) + 1)}; }
RULE(Erf) {  // 2 / sqrt(pi) e^(-x^2)
  Tensor x = f.saved_tensor(0);
  return {g * (2.0 / std::sqrt(M_PI)) * (-(x * x)).exp()};
}
// tan .. exp2, atan2: PyTorch's formulas (derivatives.yaml)
RULE(Tan) {
  Tensor y = f.saved_tensor(0);
  return {g * (1 + y * y)};
}
RULE(Asin) {
  Tensor x = f.saved_tensor(0);
  return {g * (-x * x + 1).rsqrt()};
}
RULE(Acos) {
  Tensor x = f.saved_tensor(0);
  return {g * -(-x * x + 1).rsqrt()};
}
RULE(Atan) {
  Tensor x = f.saved_tensor(0);
  return {g / (x * x + 1)};
}
RULE(Sinh) { return {g * f.saved_tensor(0).cosh()}; }
RULE(Cosh) { return {g * f.saved_tensor(0).sinh()}; }
RULE(Asinh) {
  Tensor x = f.saved_tensor(0);
  return {g * (x * x + 1).rsqrt()};
}
RULE(Acosh) {
  Tensor x = f.saved_tensor(0);
  return {g * (x * x - 1).rsqrt()};
}
RULE(Atanh) {
  Tensor x = f.saved_tensor(0);
  return {g / (1 - x * x)};
}
RULE(Log2) { return {g / (f.saved_tensor(0) * M_LN2)}; }
RULE(Log10) { return {g / (f.saved_tensor(0) * M_LN10)}; }
RULE(Exp2) { return {g * f.saved_tensor(0) * M_LN2}; }
RULE(Atan2) {  // saved: self (y), other (x)
  Tensor y = f.saved_tensor(0), x = f.saved_tensor(1);
  Tensor recip = (y * y + x * x).reciprocal();
  return {f.needs(0) ? g * x * recip : Tensor(), f.needs(1) ? g * -y * recip : Tensor()};
}
RULE(Relu) { return {where(f.saved_tensor(0) <= 0, 0.0, g)}; }
RULE(Clamp) {  // ints {has_min, has_max}, reals {min, max}; NaN inputs get 0
  Tensor x = f.saved_tensor(0);
  Tensor r = g;
  if (f.ints[1]) r = where(x <= f.reals[1], r, 0.0);
  if (f.ints[0]) r = where(x >= f.reals[0], r, 0.0);
  return {r};
}
// PyTorch splits the gradient of a tie between both inputs.
Grads extremum_pair(Function& f, const Tensor& g, bool max) {
  Tensor a = f.saved_tensor(0), b = f.saved_tensor(1);
  Tensor half = where(a == b, g / 2, g);
  return {f.needs(0) ? where(max ? a < b : a > b, 0.0, half) : Tensor(),
          f.needs(1) ? where(max ? a > b : a < b, 0.0, half) : Tensor()};
}
RULE(Maximum) { return extremum_pair(f, g, true); }
RULE(Minimum) { return extremum_pair(f, g, false); }
RULE(Where) {
  Tensor c = f.saved_tensor(0);
  return {Tensor(), f.needs(1) ? where(c, g, 0.0) : Tensor(), f.needs(2) ? where(c, 0.0, g) : Tensor()};
}
// matmul: 1-D operands are promoted to matrices as in the forward op, the
// gradient of a broadcast batch is summed back by the engine.
RULE(Matmul) {
  const bool a_vec = f.inputs[0].sizes.size() == 1, b_vec = f.inputs[1].sizes.size() == 1;
  Tensor G = g;
  if (a_vec) G = G.unsqueeze(b_vec ? 0 : -2);
  if (b_vec) G = G.unsqueeze(-1);
  Grads r(2);
  if (f.needs(0)) {
    Tensor b = f.saved_tensor(1);
    if (b_vec) b = b.unsqueeze(1);
    Tensor ga = G.matmul(b.transpose(-1, -2));
    r[0] = a_vec ? ga.squeeze(-2) : ga;
  }
  if (f.needs(1)) {
    Tensor a = f.saved_tensor(0);
    if (a_vec) a = a.unsqueeze(0);
    Tensor gb = a.transpose(-1, -2).matmul(G);
    r[1] = b_vec ? gb.squeeze(-1) : gb;
  }
  return r;
}
RULE(Sum) { return {kept(f, g).expand(f.inputs[0].sizes)}; }
RULE(Mean) { return {divide_by_count(kept(f, g), reduced_count(f)).expand(f.inputs[0].sizes)}; }
// The product of the other elements: result / x without zeros; with one
// zero in a reduced group only that element gets the product of the rest.
// prod reduces one dim or all of them.
RULE(Prod) {
  Tensor x = f.saved_tensor(0), y = kept(f, f.saved_tensor(1)), gk = kept(f, g);
  Shape dims = reduced_dims(f);
  auto prod_kept = [&](const Tensor& t) {
    return dims.size() == 1 ? t.prod(dims[0], true) : t.prod().reshape(kept_shape(f));
  };
  Tensor is_zero = x == 0;
  Tensor zeros_in_group = is_zero.sum(dims, true);
  Tensor nonzero_x = where(is_zero, 1.0, x);
  Tensor only_zero = where(is_zero, prod_kept(nonzero_x), 0.0);
  Tensor others = where(zeros_in_group == 0, y / nonzero_x,
                        where(zeros_in_group == 1, only_zero, 0.0));
  return {gk * others};
}
// max()/min()/amax/amin: the gradient is shared evenly between ties.
RULE(Extremum) {
  Tensor x = f.saved_tensor(0), y = kept(f, f.saved_tensor(1));
  Tensor mask = (x == y).to(x.dtype());
  return {kept(f, g) / mask.sum(reduced_dims(f), true) * mask};
}
// max(dim)/min(dim): the gradient goes to the returned index.
// ints {dim, keepdim}; saved: the indices.
RULE(IndexedExtremum) {
  const int64_t dim = f.ints[0];
  const Shape& in = f.inputs[0].sizes;
  if (in.empty()) return {g};
  Tensor idx = f.saved_tensor(0), gk = g;
  if (!f.ints[1]) {
    idx = idx.unsqueeze(dim);
    gk = gk.unsqueeze(dim);
  }
  Shape pos_shape(in.size(), 1);
  pos_shape[dim] = in[dim];
  Tensor pos = arange(in[dim], TensorOptions(DType::Int64).device(g.device())).view(pos_shape);
  return {where(pos == idx, gk, 0.0)};
}
// var/std: ints {keepdim, dims...}, reals {correction}.
Tensor deviation(Function& f) {
  Tensor x = f.saved_tensor(0);
  return x - x.mean(reduced_dims(f), true);
}
int64_t var_divisor(const Function& f) {
  return reduced_count(f) - static_cast<int64_t>(f.reals[0]);
}
RULE(Var) { return {divide_by_count(kept(f, g) * 2 * deviation(f), var_divisor(f))}; }
RULE(Std) {
  return {divide_by_count(kept(f, g) * deviation(f) / kept(f, f.saved_tensor(1)), var_divisor(f))};
}
RULE(Softmax) {
  Tensor y = f.saved_tensor(0);
  return {y * (g - (g * y).sum(f.ints[0], true))};
}
RULE(LogSoftmax) {
  Tensor y = f.saved_tensor(0);
  return {g - y.exp() * g.sum(f.ints[0], true)};
}
// gather's gradient adds g into zeros where the index read (saved: the
// index, checked when gather was called).
RULE(Gather) {
  return {scatter_add_node(zeros_of(f.inputs[0].sizes, g), f.ints[0], f.saved_tensor(0), g, "gather_backward")};
}
RULE(ScatterAdd) {  // self's gradient passes; src's is g read where src was added
  return {f.needs(0) ? g : Tensor(),
          f.needs(1) ? gather_node(g, f.ints[0], f.saved_tensor(0), "scatter_add_backward") : Tensor()};
}
// scatter's: self's gradient where nothing was written over, src's read
// where src was written (a src written over by a later one, at a repeated
// position, still gets it, as in PyTorch)
RULE(Scatter) {
  const Tensor& index = f.saved_tensor(0);
  const int64_t d = f.ints[0];
  Grads r(f.next.size());  // {self} for scatter(dim, index, value)
  if (f.needs(0)) r[0] = scatter_node(g, d, index, Tensor(), 0, "scatter_backward");
  if (f.needs(1)) r[1] = gather_node(g, d, index, "scatter_backward");
  return r;
}
// The running sums of t along d taken from the end.
Tensor reversed_cumsum(const Tensor& t, int64_t d, const char* op) { return cumsum_node(t.flip({d}), d, op).flip({d}); }
RULE(Cumsum) {  // each input adds into every later output: g summed from the end
  return {reversed_cumsum(g, f.ints[0], "cumsum_backward")};
}
// Each input multiplies into every later output: sum_j>=i g_j out_j / x_i
// before the first zero of a row; at that zero, the products of the other
// inputs (the prefix before it times a running product from it, the zero
// taken as 1); after it, 0. saved: {x, out}.
RULE(Cumprod) {
  const int64_t d = f.ints[0];
  const Tensor x = f.saved_tensor(0), out = f.saved_tensor(1);
  const Tensor is_zero = x == 0;
  const Tensor zeros_so_far = cumsum_node(is_zero.to(DType::Int64), d, "cumprod_backward");
  const Tensor first_zero = is_zero.logical_and(zeros_so_far == 1);
  const Tensor before = reversed_cumsum(g * out, d, "cumprod_backward") / x;
  const Tensor others = where(first_zero, 1.0, x).cumprod(d);  // the zero's own factor left out
  const Tensor at_zero = where(zeros_so_far >= 1, g * others, 0.0).sum(d, true);
  return {where(zeros_so_far == 0, before, where(first_zero, at_zero, 0.0))};
}
// PyTorch's logcumsumexp_backward: sum_{i>=j} g_i exp(x_j - out_i), the
// positive and negative parts of g apart, each summed from the end in log
// space (no overflow). saved: {x, out}.
RULE(Logcumsumexp) {
  const int64_t d = f.ints[0];
  const Tensor x = f.saved_tensor(0), out = f.saved_tensor(1);
  auto reversed = [&](const Tensor& t) { return t.flip({d}).logcumsumexp(d).flip({d}); };
  const double lowest = x.dtype() == DType::Float64 ? std::numeric_limits<double>::lowest()
                                                    : static_cast<double>(std::numeric_limits<float>::lowest());
  const Tensor log_abs = g.abs().log();
  const Tensor pos = (reversed(where(g > 0, log_abs, lowest) - out) + x).exp();
  const Tensor neg = (reversed(where(g < 0, log_abs, lowest) - out) + x).exp();
  return {pos - neg};
}
// Values read at positions (cummax, sort, topk, kthvalue, median): g adds
// into those positions. ints {dim (-1: of the flattened input), kept dim
// (0: positions and g have lost it)}; saved: the positions.
RULE(ToPositions) {
  const Shape& in = f.inputs[0].sizes;
  if (in.empty()) return {g};
  Tensor pos = f.saved_tensor(0), gk = g;
  int64_t d = f.ints[0];
  const bool flat = d < 0;
  if (flat) d = 0;
  if (f.ints.size() > 1 && !f.ints[1]) {
    pos = pos.unsqueeze(d);
    gk = gk.unsqueeze(d);
  }
  const Shape zs = flat ? Shape{Shape(in).numel()} : in;
  Tensor r = scatter_add_node(zeros_of(zs, g), d, pos, gk, "positions_backward");
  return {flat ? r.reshape(in) : r};
}
RULE(Cat) {  // ints {dim, size of each input along dim...}
  Grads r;
  int64_t offset = 0;
  for (size_t i = 0; i < f.next.size(); ++i) {
    const int64_t len = f.ints[i + 1];
    r.push_back(f.needs(i) ? g.narrow(f.ints[0], offset, len) : Tensor());
    offset += len;
  }
  return r;
}
RULE(Stack) {
  Grads r;
  for (size_t i = 0; i < f.next.size(); ++i)
    r.push_back(f.needs(i) ? g.select(f.ints[0], static_cast<int64_t>(i)) : Tensor());
  return r;
}
// The runs of a select and of a slice of step up to kGradRunMaxStep
// (gradient_run); the engine collects them, a rule run alone places its own.
GradRun select_run(const Function& f, const Tensor& g) {  // ints {dim, index}
  return GradRun{f.ints[0], f.ints[1], 1, g.unsqueeze(f.ints[0])};
}
GradRun slice_run(const Function& f, const Tensor& g) {  // ints {dim, start, end, step}
  return GradRun{f.ints[0], f.ints[1], g.size(f.ints[0]), g, f.ints[3]};
}
RULE(Select) { return {place_runs({select_run(f, g)}, f.inputs[0].sizes)}; }
RULE(Slice) {  // ints {dim, start, end, step}
  if (f.ints[3] <= kGradRunMaxStep) return {place_runs({slice_run(f, g)}, f.inputs[0].sizes)};
  return {scatter_into(f, g, [&](const Tensor& z) {
    return z.slice(f.ints[0], f.ints[1], f.ints[2], f.ints[3]);
  })};
}
RULE(Reshape) { return {g.reshape(f.inputs[0].sizes)}; }
RULE(Transpose) {  // ints {dim0, dim1}, empty for t() of a vector
  return {f.ints.empty() ? g : g.transpose(f.ints[0], f.ints[1])};
}
RULE(Permute) {
  Shape inverse(f.ints.size());
  for (size_t i = 0; i < f.ints.size(); ++i) inverse[f.ints[i]] = static_cast<int64_t>(i);
  return {g.permute(inverse)};
}
RULE(Expand) { (void)f; return {g}; }  // the engine sums over the expanded dims
// A strided view of the input's storage: ints {storage numel, input offset,
// input rank, input strides...}; the view's geometry in view_*.
RULE(AsStrided) {
  const int64_t rank = f.ints[2];
  const Shape in_strides(f.ints.begin() + 3, f.ints.begin() + 3 + rank);
  KILN_CHECK(!overlaps(f.inputs[0].sizes, in_strides), "as_strided",
             "the backward of as_strided is not supported for an input whose elements overlap "
             "in memory (input ", f.inputs[0].sizes, " with strides ", in_strides, ")");
  auto [gc, sizes] = collapse_repeats(g, f.view_strides);
  KILN_CHECK(!overlaps(sizes, f.view_strides), "as_strided",
             "the backward of a strided view whose elements overlap in memory is not supported "
             "(view ", f.view_sizes, " with strides ", f.view_strides, ")");
  Tensor z = zeros_of({f.ints[0]}, g);
  z.as_strided(sizes, f.view_strides, f.view_offset).copy_(gc);
  return {z.as_strided(f.inputs[0].sizes, in_strides, f.ints[1])};
}
RULE(Diagonal) {  // ints {offset, dim1, dim2}: g written on that diagonal of zeros
  Tensor z = zeros_of(f.inputs[0].sizes, g);
  z.diagonal(f.ints[0], f.ints[1], f.ints[2]).copy_(g);
  return {z};
}
// ints {dim, step, dilation}: fold_windows' adjoint reads each window's
// elements back from g (core/reshaping.cpp).
RULE(Col2Im) { return {unfold_windows(g, f.inputs[0].sizes, f.ints[0], f.ints[1], f.ints[2])}; }
// ints {dim, size, step}: each window's gradient added back at its
// positions (fold_windows, core/reshaping.cpp).
RULE(Unfold) {
  const Shape& in = f.inputs[0].sizes;
  if (in.empty()) return {g.sum().reshape({})};
  return {fold_windows(g, f.ints[0], in[f.ints[0]], f.ints[2], 1)};
}
// ints: the pads (pad()'s order): the gradient is g cropped where the input
// was padded and zero-padded where it was cropped, pad(g, -pads).
RULE(ConstantPad) {
  Tensor r = g;
  std::vector<int64_t> rest;
  bool crop_only = true;
  for (size_t k = 0; k < f.ints.size(); k += 2) {
    const int64_t d = g.dim() - 1 - static_cast<int64_t>(k / 2), before = f.ints[k], after = f.ints[k + 1];
    const int64_t b = std::max<int64_t>(before, 0), a = std::max<int64_t>(after, 0);
    if (b > 0 || a > 0) r = r.narrow(d, b, r.size(d) - b - a);
    rest.push_back(std::max<int64_t>(-before, 0));
    rest.push_back(std::max<int64_t>(-after, 0));
    crop_only = crop_only && before >= 0 && after >= 0;
  }
  return {crop_only ? r : pad(r, Shape(rest.begin(), rest.end()))};
}
// saved: the flat position of each maximum in the input's pooled dims
// (max_pool*_with_indices); ints {pooled dims}. Each output's gradient is
// added at its maximum, one scatter over every row of pooled positions.
RULE(MaxPool) {
  const Shape& in = f.inputs[0].sizes;
  const int64_t k = f.ints[0], lead = static_cast<int64_t>(in.size()) - k;
  Shape rows(in.begin(), in.begin() + lead);
  int64_t spatial = 1;
  for (int64_t j = lead; j < static_cast<int64_t>(in.size()); ++j) spatial *= in[j];
  rows.push_back(spatial);
  const Tensor at = f.saved_tensor(0).flatten(lead, -1), gf = g.flatten(lead, -1);
  return {scatter_add_node(zeros_of(rows, g), lead, at, gf, "max_pool_backward").reshape(in)};
}
// ints: the pooling's attributes (avg_pool_backward, core/pooling.cpp).
RULE(AvgPool) { return {avg_pool_backward(g, f.inputs[0].sizes, f.ints)}; }
// saved: the input (batched) and the weight of a depthwise convolution;
// ints: its attributes (core/depthwise_conv.cpp).
RULE(DepthwiseConv) {
  return depthwise_conv_backward(g, f.saved_tensor(0), f.saved_tensor(1), f.ints, f.needs(0), f.needs(1));
}
RULE(Identity) { (void)f; return {g}; }
RULE(Zero) { return {zeros_of(f.inputs[0].sizes, g)}; }
RULE(FillTensor) { return {zeros_of(f.inputs[0].sizes, g), f.needs(1) ? g.sum() : Tensor()}; }
RULE(Copy) { return {zeros_of(f.inputs[0].sizes, g), f.needs(1) ? g : Tensor()}; }
// A write through a view of the base: the region's gradient goes through
// the op that wrote it; the rest of the base's gradient passes unchanged.
RULE(CopySlices) {
  // The base's gradient in the base's layout, so that the view's strides
  // (into the base's storage) address it.
  Tensor gb = with_strides(g, Shape(f.ints.begin(), f.ints.end()));
  Tensor region = gb.as_strided(f.view_sizes, f.view_strides, f.view_offset);
  Grads inner = apply_rule(*f.inner, region.clone());
  Tensor out = gb.clone();
  Tensor dst = out.as_strided(f.view_sizes, f.view_strides, f.view_offset);
  if (inner[0].defined()) dst.copy_(to_input(inner[0], f.inner->inputs[0]));
  else dst.zero_();
  Grads r{out};
  for (size_t i = 1; i < inner.size(); ++i) r.push_back(inner[i]);
  return r;
}
#undef RULE

using Rule = Grads (*)(Function&, const Tensor&);
constexpr Rule kRules[] = {
#define KILN_GRAD_FN_RULE(e, name, rule) &rule_##rule,
    KILN_FORALL_GRAD_FNS(KILN_GRAD_FN_RULE)
#undef KILN_GRAD_FN_RULE
};
}  // namespace

std::optional<GradRun> gradient_run(const Function& f, const Tensor& grad) {
  const Rule rule = kRules[static_cast<size_t>(f.kind)];
  if (rule == &rule_Select) return select_run(f, grad);
  if (rule == &rule_Slice && f.ints[3] <= kGradRunMaxStep) return slice_run(f, grad);
  return std::nullopt;
}

namespace {

// Strided runs as runs of step 1: those of one dim and step that start in
// the same row of `step` positions (b * step + phase, b the same) become one
// cat of the step's phases along a new dim after `dim` (a phase no run fills
// is zeros, one two runs fill their sum, a shorter one padded with zeros),
// viewed as [.., len * step, ..] and cut at the dim's end: x[..., 0::2] and
// x[..., 1::2] interleaved by one kernel (a narrow cat along the last dim)
// writing each element once, where each scattered into zeros of its own.
void interleave_strided(std::vector<GradRun>& runs, const Shape& sizes) {
  std::vector<GradRun> out;
  std::vector<bool> done(runs.size(), false);
  for (size_t i = 0; i < runs.size(); ++i) {
    if (done[i]) continue;
    GradRun& r = runs[i];
    if (r.step == 1 || r.len == 0) {  // (an empty slice: nothing to place)
      r.step = 1;
      out.push_back(std::move(r));
      continue;
    }
    const int64_t d = r.dim, s = r.step, b = r.start / s;
    int64_t n = 0;
    std::vector<size_t> group;
    for (size_t j = i; j < runs.size(); ++j)
      if (!done[j] && runs[j].dim == d && runs[j].step == s && runs[j].len > 0 && runs[j].start / s == b) {
        group.push_back(j);
        n = std::max(n, runs[j].len);
        done[j] = true;
      }
    std::vector<Tensor> phases(static_cast<size_t>(s));
    for (size_t j : group) {
      Tensor piece = runs[j].piece;
      if (runs[j].len < n) {
        Shape widths(2 * static_cast<size_t>(piece.dim() - d), 0);  // pad() lists the last dim first
        widths.back() = n - runs[j].len;
        piece = pad(piece, widths);
      }
      Tensor& ph = phases[static_cast<size_t>(runs[j].start % s)];
      ph = ph.defined() ? ph + piece : piece;
    }
    Shape row = r.piece.sizes();
    row[static_cast<size_t>(d)] = n;
    for (Tensor& ph : phases) ph = (ph.defined() ? ph : zeros_of(row, r.piece)).unsqueeze(d + 1);
    Shape merged = row;
    merged[static_cast<size_t>(d)] = n * s;
    const int64_t len = std::min(n * s, sizes[static_cast<size_t>(d)] - b * s);
    out.push_back(GradRun{d, b * s, len, cat(phases, d + 1).reshape(merged).narrow(d, 0, len)});
  }
  runs = std::move(out);
}

}  // namespace

Tensor place_runs(std::vector<GradRun> runs, const Shape& sizes) {
  interleave_strided(runs, sizes);
  std::sort(runs.begin(), runs.end(), [](const GradRun& a, const GradRun& b) {
    return a.dim != b.dim ? a.dim < b.dim : a.start < b.start;
  });
  bool apart = true;  // along one dim, none overlapping the next
  for (size_t i = 1; i < runs.size(); ++i)
    apart = apart && runs[i].dim == runs[0].dim && runs[i - 1].start + runs[i - 1].len <= runs[i].start;
  if (!apart) {
    Tensor sum;
    for (GradRun& r : runs) {
      Tensor t = place_runs({std::move(r)}, sizes);
      sum = sum.defined() ? sum + t : t;
    }
    return sum;
  }
  const int64_t d = runs[0].dim, n = sizes[d];
  // g padded is computed under a mask at every element of the input: over
  // at least half of it, the fusion is worth the masked lanes; a select
  // of one row of many would compute g's expression once per row
  if (runs.size() == 1 && 2 * runs[0].len >= n && runs[0].len < n) {
    Shape widths(2 * (sizes.size() - static_cast<size_t>(d)), 0);  // pad() lists the last dim first
    widths[widths.size() - 2] = runs[0].start;
    widths[widths.size() - 1] = n - runs[0].start - runs[0].len;
    return pad(runs[0].piece, widths);
  }
  std::vector<Tensor> parts;
  int64_t at = 0;
  const TensorOptions options = like(runs[0].piece);
  auto zeros_along = [&](int64_t len) {
    Shape s = sizes;
    s[d] = len;
    parts.push_back(zeros(s, options));
  };
  for (GradRun& r : runs) {
    if (r.len == 0) continue;
    if (r.start > at) zeros_along(r.start - at);
    parts.push_back(std::move(r.piece));
    at = r.start + r.len;
  }
  if (at < n || parts.empty()) zeros_along(n - at);
  return parts.size() == 1 ? parts[0] : cat(parts, d);
}

std::vector<Tensor> apply_rule(Function& f, const Tensor& grad) {
  Grads r = kRules[static_cast<size_t>(f.kind)](f, grad);
  r.resize(f.next.size());
  return r;
}

}  // namespace kiln::autograd

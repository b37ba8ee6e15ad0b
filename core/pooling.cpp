// torch.nn.functional's pooling (include/kiln/nn_functional.h): max_pool,
// avg_pool and adaptive_avg_pool over 1, 2 or 3 trailing dims.
//
// A pooling window is a view: the input padded (pad(), -inf for max, 0 for
// avg, and as much more on the right as ceil_mode needs), then unfold()
// per spatial dim, [N, C, O..., K...]. avg_pool sums the K dims (one fused
// reduction kernel that reads the input once) and divides by PyTorch's
// per-window count, arange arithmetic fused in the same kernel. max_pool
// folds a window of up to 9 elements elementwise, one tap after another in
// row-major order, as PyTorch's CPU kernel (one kernel over the output, the
// taps read through views); a larger one takes max(-1) over each window dim,
// the last first. Either way the first maximum in row-major window order
// wins a tie, as PyTorch's max_pool kernels (a NaN wins over any number:
// the fold keeps the last NaN's position, as PyTorch's CPU kernel, max(-1)
// the first). Its gradient goes to that maximum through the flat input positions
// with_indices returns (one scatter: MaxPool2DWithIndicesBackward0; amax
// would share it among the ties). adaptive_avg_pool
// of a dim whose size the output divides is an avg_pool; otherwise its
// windows differ in length and it is a matmul with the [O, I] averaging
// matrix along that dim.
#include <algorithm>
#include <limits>
#include <string>
#include <tuple>

#include "core/ops_common.h"
#include "core/provenance.h"
#include "kiln/autograd.h"
#include "kiln/nn_functional.h"

namespace kiln {

namespace {

// Python's floor division (PyTorch's div_rtn) for the output-size formula,
// whose numerator may be negative.
int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

std::string sizes_x(const Shape& s) {
  std::string t;
  for (size_t i = 0; i < s.size(); ++i) t += (i ? "x" : "") + std::to_string(s[i]);
  return t;
}

struct Pool {
  int64_t k = 0;  // spatial dims
  Shape kernel, stride, padding, dilation, out;
  Shape pad_after;  // right padding that ceil_mode's last windows need (may be negative: a crop)
};

// PyTorch's checks of a pooling call and its output sizes.
Pool plan_pool(const Tensor& input, int64_t k, const Shape& kernel, const Shape& stride, const Shape& padding,
               const Shape& dilation, bool ceil_mode, const char* op) {
  check_defined(input, op);
  bool ok = input.dim() == k + 1 || input.dim() == k + 2;
  for (int64_t d = input.dim() - k - 1; ok && d < input.dim(); ++d) ok = input.size(d) > 0;
  KILN_CHECK(ok, op, "Expected ", k + 1, "D or ", k + 2,
             "D (batch mode) tensor with optional 0 dim batch size for input, but got:", input.sizes());
  Pool p;
  p.k = k;
  auto expand = [&](const Shape& v, const char* what, const Shape& fallback) {
    if (v.empty()) return fallback;
    KILN_CHECK(v.size() == 1 || static_cast<int64_t>(v.size()) == k, op, what, " must either be a single int, or a tuple of ",
               k, " ints (got ", v, ")");
    return v.size() == 1 ? Shape(static_cast<size_t>(k), v[0]) : v;
  };
  p.kernel = expand(kernel, "kernel_size", Shape());
  KILN_CHECK(!p.kernel.empty(), op, "kernel_size must either be a single int, or a tuple of ", k, " ints (got [])");
  p.stride = expand(stride, "stride", p.kernel);
  p.padding = expand(padding, "padding", Shape(static_cast<size_t>(k), 0));
  p.dilation = expand(dilation, "dilation", Shape(static_cast<size_t>(k), 1));
  for (int64_t j = 0; j < k; ++j) {
    KILN_CHECK(p.kernel[j] > 0, op, "kernel size should be greater than zero, but got kernel_size ", p.kernel);
    KILN_CHECK(p.stride[j] > 0, op, "stride should not be zero (stride ", p.stride, ")");
    KILN_CHECK(p.dilation[j] > 0, op, "dilation should be greater than zero, but got dilation ", p.dilation);
    KILN_CHECK(p.padding[j] >= 0, op, "pad must be non-negative, but got pad: ", p.padding[j]);
    KILN_CHECK(p.padding[j] <= p.kernel[j] / 2, op, "pad should be at most half of kernel size, but got pad=",
               p.padding[j], " and kernel_size=", p.kernel[j]);
  }
  Shape in(input.sizes().end() - k, input.sizes().end());
  for (int64_t j = 0; j < k; ++j) {
    const int64_t span = p.dilation[j] * (p.kernel[j] - 1) + 1;
    int64_t o = floor_div(in[j] + 2 * p.padding[j] - span + (ceil_mode ? p.stride[j] - 1 : 0), p.stride[j]) + 1;
    // ceil_mode: the last window must start inside the input or its left padding
    if (ceil_mode && (o - 1) * p.stride[j] >= in[j] + p.padding[j]) --o;
    p.out.push_back(o);
    p.pad_after.push_back((o - 1) * p.stride[j] + span - in[j] - p.padding[j]);
  }
  bool positive = true;
  for (int64_t o : p.out) positive = positive && o > 0;
  Shape c_in{input.size(input.dim() - k - 1)}, c_out{input.size(input.dim() - k - 1)};
  for (int64_t j = 0; j < k; ++j) c_in.push_back(in[j]), c_out.push_back(p.out[j]);
  KILN_CHECK(positive, op, "Given input size: (", sizes_x(c_in), "). Calculated output size: (", sizes_x(c_out),
             "). Output size is too small");
  return p;
}

// The windows of `input` padded with `value`: [*, C, O..., K...]. A fold
// reads them with the padded input stored first (store_padded): its taps
// then load plainly, not each through a mask of its own (avg_pool2d 3 x 3
// padding 1 of [16, 64, 56, 56]: 11.6 -> 4.0 ms; max_pool2d 8.5 -> 6.8).
Tensor windows(const Tensor& input, const Pool& p, double value, bool store_padded = false) {
  const int64_t first = input.dim() - p.k;
  // rows past the last window (a negative pad after) are cut by a slice,
  // not by pad's gather: the windows stay a strided view of the input
  Tensor cropped = input;
  Shape pads;
  bool any = false;
  for (int64_t j = p.k - 1; j >= 0; --j) {
    const int64_t after = p.pad_after[j];
    if (after < 0) cropped = cropped.narrow(first + j, 0, input.size(first + j) + after);
    pads.push_back(p.padding[j]);
    pads.push_back(std::max<int64_t>(after, 0));
    any = any || p.padding[j] != 0 || after > 0;
  }
  Tensor w = any ? pad(cropped, pads, PadMode::Constant, value) : cropped;
  if (any && store_padded) w = stored_copy(w);
  for (int64_t j = 0; j < p.k; ++j) {
    w = w.unfold(first + j, p.dilation[j] * (p.kernel[j] - 1) + 1, p.stride[j]);
    if (p.dilation[j] > 1) w = w.slice(-1, 0, std::nullopt, p.dilation[j]);
  }
  return w;
}

// The output positions of spatial dim j as an int64 vector laid along that
// dim of a [*, C, O...] tensor of rank `rank`.
Tensor positions_along(const Pool& p, int64_t j, int64_t rank, Device device) {
  Shape along(static_cast<size_t>(rank), 1);
  along[rank - p.k + j] = p.out[j];
  return arange(p.out[j], TensorOptions(DType::Int64).device(device)).reshape(along);
}

std::tuple<Tensor, Tensor> max_pool_values(const Tensor& input, const Pool& p, bool indices, const char* op);

// Windows of at most this many elements take their maximum as an
// elementwise fold (max_pool_values); larger ones as max(-1) per window dim.
// The fold's kernel grows with the taps: LLVM compiled a 3 x 3 window in
// 9-14 ms, 17-18 ms padded at stride 1 (nine guarded loads at unit steps,
// each a masked load and its unmasked twin; 27 ms before the row's tail
// was folded: no scalar remainder to compile), 4 x 4 in 25 ms and
// 3 x 3 x 3 in 250 ms (a VM busy with a second build); a row reduction of
// any window compiles in about 10 ms. max(-1) would keep the first NaN's
// position, not PyTorch's last. avg_pool folds up to as many taps.
constexpr int64_t kFoldedWindow = 9;

// The gradient goes to each window's maximum through the flat positions
// (PyTorch's MaxPool2DWithIndicesBackward0: one scatter), not back through
// the row maxima, the window view and the padding.
std::tuple<Tensor, Tensor> max_pool(const Tensor& input, int64_t k, const Shape& kernel, const Shape& stride,
                                    const Shape& padding, const Shape& dilation, bool ceil_mode, bool indices,
                                    const char* op) {
  const Pool p = plan_pool(input, k, kernel, stride, padding, dilation, ceil_mode, op);
  check_floating(input, op);
  if (!autograd::should_record({&input})) return max_pool_values(input, p, indices, op);
  Tensor values, at;
  {
    const NoGradGuard no_grad;
    std::tie(values, at) = max_pool_values(input, p, true, op);
  }
  const GradFn kind = k == 1 ? GradFn::MaxPool1DWithIndicesBackward0
                      : k == 2 ? GradFn::MaxPool2DWithIndicesBackward0
                               : GradFn::MaxPool3DWithIndicesBackward0;
  if (auto f = record(kind, values, {&input})) {
    f->save(at);
    f->ints = {k};
  }
  return {values, indices ? at : Tensor()};
}

// `v` as an int64 tensor: a constant when `shaped` is false (it depends
// on the pooling's attributes only), else a shape scalar (a runtime param:
// the flat offset of a window row depends on the input's width).
Tensor flat_offset(int64_t v, bool shaped, Device device) {
  return shaped ? shape_scalar(v, device) : full({}, v, TensorOptions(DType::Int64).device(device));
}

// The first flat input position of each window, (o_j * stride_j - pad_j)
// along each spatial dim j, as an int64 tensor of shape [*, O...] (broadcast).
Tensor window_starts(const Tensor& input, const Pool& p, int64_t rank) {
  Tensor flat = zeros({}, TensorOptions(DType::Int64).device(input.device()));
  int64_t scale = 1;
  for (int64_t j = p.k - 1; j >= 0; --j) {
    const Tensor start = positions_along(p, j, rank, input.device()) * p.stride[j] - p.padding[j];
    flat = flat + (j == p.k - 1 ? start : start * shape_scalar(scale, input.device()));
    scale *= input.size(input.dim() - p.k + j);
  }
  return flat;
}

std::tuple<Tensor, Tensor> max_pool_values(const Tensor& input, const Pool& p, bool indices, const char* op) {
  const int64_t k = p.k;
  const int64_t taps = Shape(p.kernel).numel();
  if (taps <= kFoldedWindow) {
    // An elementwise fold over the window's positions in row-major order,
    // PyTorch's loop: a value replaces the maximum when it is larger or NaN
    // (so the last NaN's position is kept, as PyTorch's CPU kernel). One
    // kernel over the output reads each tap through a view of the input
    // (no reduction loop of a few elements per output, and the taps' loads
    // vectorize along the output's last dim).
    //
    // Two running values, each chosen by one comparison: the first largest
    // number (v > big) and the last NaN (isnan(v); a non-NaN first tap
    // until one comes); the result is the NaN if there is one. The same
    // value and index as the one condition `v > best || isnan(v)`, but a
    // select on an `or` of two float compares is a branch in x86's scalar
    // code (a row's remainder past its last vector): random data
    // mispredicted it, a 2 x 2 pool of 28-wide rows ran at 1 GB/s.
    const Tensor w = windows(input, p, -std::numeric_limits<double>::infinity(), /*store_padded=*/true);
    Tensor big, nan, at_big, at_nan;
    Shape tap(static_cast<size_t>(k), 0);
    for (int64_t t = 0; t < taps; ++t) {
      Tensor v = w;
      int64_t offset = 0, scale = 1;  // the tap's flat offset from its window's start
      bool shaped = false;              // ... depends on the input's sizes
      for (int64_t j = k - 1; j >= 0; --j) {
        v = v.select(-1, tap[j]);
        offset += tap[j] * p.dilation[j] * scale;
        shaped = shaped || (tap[j] != 0 && j != k - 1);
        scale *= input.size(input.dim() - k + j);
      }
      if (t == 0) {
        big = nan = v;
        if (indices) at_big = at_nan = zeros_like(v, TensorOptions(DType::Int64));
      } else {
        const Tensor larger = v.gt(big), is_nan = v.isnan();
        big = where(larger, v, big);
        nan = where(is_nan, v, nan);
        if (indices) {
          const Tensor here = flat_offset(offset, shaped, input.device());
          at_big = where(larger, here, at_big);
          at_nan = where(is_nan, here, at_nan);
        }
      }
      next_tap(tap, p.kernel);
    }
    const Tensor any_nan = nan.isnan();
    const Tensor best = where(any_nan, nan, big);
    if (!indices) return {best, Tensor()};
    return {best, window_starts(input, p, best.dim()) + where(any_nan, at_nan, at_big)};
  }
  // max(-1) per window dim, the last first: the first maximum of each row,
  // then the first row holding the largest: the first maximum in row-major
  // window order, as PyTorch's kernel finds it
  Tensor values = windows(input, p, -std::numeric_limits<double>::infinity());
  std::vector<Tensor> along(static_cast<size_t>(k));
  for (int64_t j = k - 1; j >= 0; --j) std::tie(values, along[j]) = values.max(-1);
  if (!indices) return {values, Tensor()};
  // the winner's offset along window dim j: along[j] ([*, O..., K0 ..
  // K(j-1)]) read at the best K(j-1) for each K0 .. K(j-2), then at the best
  // K(j-2), ...
  Tensor flat = window_starts(input, p, values.dim());
  int64_t scale = 1;
  for (int64_t j = k - 1; j >= 0; --j) {
    Tensor kj = along[j];
    for (int64_t i = j - 1; i >= 0; --i)
      kj = gather_node(kj, kj.dim() - 1, along[i].unsqueeze(-1), op).squeeze(-1);
    flat = flat + kj * flat_offset(p.dilation[j] * scale, j != k - 1, input.device());
    scale *= input.size(input.dim() - k + j);
  }
  return {values, flat};
}

// PyTorch's count per window ([*, O...], broadcast): the window clipped to
// the padded input (or to the input itself without count_include_pad), a
// product over dims, or the divisor override.
Tensor window_counts(const Tensor& input, const Pool& p, int64_t rank, bool count_include_pad,
                     std::optional<int64_t> divisor_override) {
  const Device dev = input.device();
  if (divisor_override) return full({}, *divisor_override, TensorOptions(DType::Int64).device(dev));
  Tensor count;
  for (int64_t j = 0; j < p.k; ++j) {
    // the input's size as a shape scalar: a new size compiles nothing
    const int64_t n = input.size(input.dim() - p.k + j);
    const Tensor start = positions_along(p, j, rank, dev) * p.stride[j] - p.padding[j];
    const Tensor end = start + p.kernel[j];
    const Tensor len = count_include_pad ? end.minimum(shape_scalar(n + p.padding[j], dev)) - start
                                         : end.minimum(shape_scalar(n, dev)) - start.clamp_min(0);
    count = count.defined() ? count * len : len;
  }
  return count;
}

// The sum of each window, as sum() over the window dims gives it (float64
// / int64 accumulation, row-major order). Windows of at most
// kFoldedWindow taps add their taps elementwise in that order, one kernel
// over the output whose taps load as vectors (a reduction of 3 x 3 taps
// ran two inner loops of 3 per output: 72 ms against 16 ms for
// max_pool2d's fold at [32, 64, 56, 56]); the values are the same.
Tensor window_sums(const Tensor& input, const Pool& p) {
  const int64_t taps = Shape(p.kernel).numel();
  const Tensor w = windows(input, p, 0.0, /*store_padded=*/taps <= kFoldedWindow);
  if (taps > kFoldedWindow) {
    Shape dims;
    for (int64_t j = 0; j < p.k; ++j) dims.push_back(-1 - j);
    return w.sum(dims);
  }
  const bool floating = is_floating_point(input.dtype());
  const DType acc = floating ? DType::Float64 : DType::Int64;
  Tensor sum;
  Shape tap(static_cast<size_t>(p.k), 0);
  do {
    const Tensor v = window_tap(w, tap).to(acc);
    sum = sum.defined() ? sum + v : v;
  } while (next_tap(tap, p.kernel));
  return sum.to(floating ? input.dtype() : DType::Int64);
}

Tensor avg_pool_values(const Tensor& input, const Pool& p, bool count_include_pad,
                       std::optional<int64_t> divisor_override) {
  const Tensor sum = window_sums(input, p);
  const Tensor count = window_counts(input, p, sum.dim(), count_include_pad, divisor_override);
  if (is_floating_point(input.dtype())) return sum / count.to(input.dtype());
  return sum.div(count, "trunc").to(input.dtype());
}

// The gradient goes back through the adjoint of the windows (PyTorch's
// AvgPool2DBackward0), not through the fold's taps one by one.
Tensor avg_pool(const Tensor& input, int64_t k, const Shape& kernel, const Shape& stride, const Shape& padding,
                bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override, const char* op) {
  const Pool p = plan_pool(input, k, kernel, stride, padding, {1}, ceil_mode, op);
  KILN_CHECK(input.dtype() != DType::Bool, op, "not implemented for Bool (input ", input.sizes(), ")");
  if (divisor_override) KILN_CHECK(*divisor_override != 0, op, "divisor must be not zero");
  if (!autograd::should_record({&input})) return avg_pool_values(input, p, count_include_pad, divisor_override);
  Tensor out;
  {
    const NoGradGuard no_grad;
    out = avg_pool_values(input, p, count_include_pad, divisor_override);
  }
  // PyTorch pools 1-D inputs as 2-D ones
  const GradFn kind = k == 3 ? GradFn::AvgPool3DBackward0 : GradFn::AvgPool2DBackward0;
  if (auto f = record(kind, out, {&input})) {
    f->ints = {k, ceil_mode, count_include_pad, divisor_override.has_value(), divisor_override.value_or(0)};
    for (const Shape* v : {&p.kernel, &p.stride, &p.padding}) f->ints.insert(f->ints.end(), v->begin(), v->end());
  }
  return out;
}

// The [O, I] matrix whose row o averages PyTorch's adaptive window
// [floor(o I / O), ceil((o + 1) I / O)).
Tensor averaging_matrix(int64_t o, int64_t i, DType dtype, Device device) {
  const TensorOptions ints = TensorOptions(DType::Int64).device(device);
  const Tensor row = arange(o, ints).unsqueeze(1), col = arange(i, ints).unsqueeze(0);
  const Tensor n = shape_scalar(i, device);  // the input's size: a new one compiles nothing
  const Tensor start = (row * n).div(o, "floor"), end = ((row + 1) * n + (o - 1)).div(o, "floor");
  return where((col >= start).logical_and(col < end), 1.0 / (end - start).to(dtype), 0.0).to(dtype);
}

Tensor adaptive_avg_pool(const Tensor& input, const Shape& output_size, int64_t k, const char* op) {
  check_defined(input, op);
  bool ok = input.dim() == k + 1 || input.dim() == k + 2;
  KILN_CHECK(ok, op, "Expected ", k + 1, "D or ", k + 2, "D tensor, but got ", input.sizes());
  for (int64_t d = input.dim() - k; d < input.dim(); ++d)
    KILN_CHECK(input.size(d) > 0, op, "Expected input to have non-zero size for non-batch dimensions, but input has sizes ",
               input.sizes(), " with dimension ", d, " being empty");
  KILN_CHECK(output_size.size() == 1 || static_cast<int64_t>(output_size.size()) == k, op, "output_size must be ", k,
             " (got ", output_size, ")");
  const Shape out = output_size.size() == 1 ? Shape(static_cast<size_t>(k), output_size[0]) : output_size;
  for (int64_t o : out)
    KILN_CHECK(o >= 0, op, "elements of output_size must be greater than or equal to 0 but received ", out);
  check_floating(input, op);
  Shape out_shape = input.sizes();
  for (int64_t j = 0; j < k; ++j) out_shape[input.dim() - k + j] = out[j];
  if (out_shape.numel() == 0) return zeros(out_shape, TensorOptions(input.dtype()).device(input.device()));
  // A global average (ResNet's head) is a mean: a new input size compiles
  // nothing (an avg_pool's window would be the whole input, a new kernel
  // for each size).
  bool global = true;
  Shape spatial;
  for (int64_t j = 0; j < k; ++j) {
    global = global && out[j] == 1;
    spatial.push_back(input.dim() - k + j);
  }
  if (global) return input.mean(spatial, /*keepdim=*/true);
  bool uniform = true;
  for (int64_t j = 0; j < k; ++j) uniform = uniform && input.size(input.dim() - k + j) % out[j] == 0;
  if (uniform) {
    Shape kernel;
    for (int64_t j = 0; j < k; ++j) kernel.push_back(input.size(input.dim() - k + j) / out[j]);
    return avg_pool(input, k, kernel, kernel, {0}, false, true, std::nullopt, op);
  }
  Tensor x = input;
  for (int64_t j = 0; j < k; ++j) {
    const int64_t d = input.dim() - k + j, n = input.size(d);
    if (n == out[j]) continue;
    const Tensor m = averaging_matrix(out[j], n, input.dtype(), input.device());
    x = x.movedim(d, -1).matmul(m.t()).movedim(-1, d);
  }
  return x;
}

}  // namespace

Tensor avg_pool_backward(const Tensor& g, const Shape& input_sizes, const std::vector<int64_t>& ints) {
  const int64_t k = ints[0];
  auto dims = [&](int64_t at) { return Shape(ints.begin() + 5 + at * k, ints.begin() + 5 + (at + 1) * k); };
  std::optional<int64_t> divisor;
  if (ints[3]) divisor = ints[4];
  // only the input's sizes matter: a lazy zeros, never evaluated
  const Tensor like = zeros(input_sizes, TensorOptions(g.dtype()).device(g.device()));
  const Pool p = plan_pool(like, k, dims(0), dims(1), dims(2), {1}, ints[1] != 0, "avg_pool_backward");
  const int64_t first = like.dim() - k;
  const Tensor gw = g / window_counts(like, p, g.dim(), ints[2] != 0, divisor).to(g.dtype());
  const int64_t taps = Shape(p.kernel).numel();
  if (taps <= kFoldedWindow) {
    // col2im as one elementwise fold over the input: position x of dim j
    // (q = x + pad in the padded input) takes tap t of window o where
    // o * stride + t = q; each tap's term is a read of gw at (o_0, o_1, ...)
    // where every dim has such a window (a guarded load), 0 elsewhere
    const TensorOptions ints64 = TensorOptions(DType::Int64).device(g.device());
    std::vector<std::vector<Tensor>> at(static_cast<size_t>(k)), inside(static_cast<size_t>(k));
    for (int64_t j = 0; j < k; ++j) {
      Shape along(static_cast<size_t>(like.dim()), 1);
      along[first + j] = input_sizes[first + j];
      const Tensor q = arange(input_sizes[first + j], ints64) + p.padding[j];
      const Tensor last = shape_scalar(p.out[j] - 1, g.device()), zero = zeros_like(last);
      for (int64_t t = 0; t < p.kernel[j]; ++t) {
        const Tensor off = q - t;
        const Tensor o = p.stride[j] == 1 ? off : off.div(p.stride[j], "floor");
        Tensor ok = (off >= 0).logical_and(o <= last);
        if (p.stride[j] > 1) ok = ok.logical_and(off.remainder(p.stride[j]) == 0);
        at[j].push_back(o.maximum(zero).minimum(last).reshape(along));
        inside[j].push_back(ok.reshape(along));
      }
    }
    Tensor sum;
    Shape tap(static_cast<size_t>(k), 0);
    for (int64_t t = 0; t < taps; ++t) {
      Tensor read = gw, ok;
      Shape shape = gw.sizes();
      for (int64_t j = 0; j < k; ++j) {
        shape[first + j] = input_sizes[first + j];
        read = gather_node(read, first + j, at[j][tap[j]].expand(shape), "avg_pool_backward");
        ok = ok.defined() ? ok.logical_and(inside[j][tap[j]]) : inside[j][tap[j]];
      }
      const Tensor term = where(ok, read, 0.0);
      sum = sum.defined() ? sum + term : term;
      next_tap(tap, p.kernel);
    }
    return sum;
  }
  // larger windows: the adjoints, last first: of the sum over the window
  // dims (a broadcast), of unfold per dim (col2im: fold_windows), of the
  // padding (a crop) and of the rows past the last window (zeros)
  Shape win = g.sizes(), ones = g.sizes();
  for (int64_t j = 0; j < k; ++j) win.push_back(p.kernel[j]), ones.push_back(1);
  Tensor y = gw.reshape(ones).expand(win);
  for (int64_t j = k - 1; j >= 0; --j) {
    const int64_t n = input_sizes[first + j], after = p.pad_after[j], kept = n + std::min<int64_t>(after, 0);
    y = fold_windows(y, first + j, kept + p.padding[j] + std::max<int64_t>(after, 0), p.stride[j], 1);
    y = y.narrow(first + j, p.padding[j], kept);
    if (after < 0) {
      Shape grow(static_cast<size_t>(2 * (like.dim() - first - j)), 0);
      grow[grow.size() - 1] = -after;  // pad()'s order: the last dim's pair first
      y = pad(y, grow);
    }
  }
  return y;
}

#define KILN_MAX_POOL(N)                                                                                          \
  Tensor max_pool##N##d(const Tensor& input, const Shape& kernel_size, const Shape& stride, const Shape& padding, \
                        const Shape& dilation, bool ceil_mode, SourceLoc loc) {                                   \
    const LocScope at(loc);                                                                                       \
    return std::get<0>(max_pool(input, N, kernel_size, stride, padding, dilation, ceil_mode, false,               \
                                "max_pool" #N "d"));                                                             \
  }                                                                                                               \
  std::tuple<Tensor, Tensor> max_pool##N##d_with_indices(const Tensor& input, const Shape& kernel_size,           \
                                                         const Shape& stride, const Shape& padding,               \
                                                         const Shape& dilation, bool ceil_mode, SourceLoc loc) {  \
    const LocScope at(loc);                                                                                       \
    return max_pool(input, N, kernel_size, stride, padding, dilation, ceil_mode, true, "max_pool" #N "d");       \
  }                                                                                                               \
  Tensor adaptive_avg_pool##N##d(const Tensor& input, const Shape& output_size, SourceLoc loc) {                  \
    const LocScope at(loc);                                                                                       \
    return adaptive_avg_pool(input, output_size, N, "adaptive_avg_pool" #N "d");                                 \
  }
KILN_MAX_POOL(1)
KILN_MAX_POOL(2)
KILN_MAX_POOL(3)
#undef KILN_MAX_POOL

Tensor avg_pool1d(const Tensor& input, const Shape& kernel_size, const Shape& stride, const Shape& padding,
                  bool ceil_mode, bool count_include_pad, SourceLoc loc) {
  const LocScope at(loc);
  return avg_pool(input, 1, kernel_size, stride, padding, ceil_mode, count_include_pad, std::nullopt, "avg_pool1d");
}
Tensor avg_pool2d(const Tensor& input, const Shape& kernel_size, const Shape& stride, const Shape& padding,
                  bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override, SourceLoc loc) {
  const LocScope at(loc);
  return avg_pool(input, 2, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override,
                  "avg_pool2d");
}
Tensor avg_pool3d(const Tensor& input, const Shape& kernel_size, const Shape& stride, const Shape& padding,
                  bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override, SourceLoc loc) {
  const LocScope at(loc);
  return avg_pool(input, 3, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override,
                  "avg_pool3d");
}

}  // namespace kiln

// Depthwise convolution (one input channel per group: MobileNet's 3 x 3
// and 5 x 5 layers) as a fold of its taps, with its own gradient.
//
// As im2col and a matmul (convolution.cpp) each group's product has K =
// taps: an inline matmul per output position whose K loop unravels the
// window view's positions by division, and whose gradients are a K = 1
// outer product and a reduction over positions of the same form
// ([8, 64, 56, 56] 3 x 3: 164 ms forward, 325 ms for both gradients). Here
// each output channel adds its taps' products elementwise, in tap order,
// the way pooling folds its windows (pooling.cpp): one kernel over the
// output (after the padded input, stored) whose tap loads run as vectors
// along the output rows; past 25 taps, one kernel per stage of rows. The
// gradient (ConvolutionBackward0, PyTorch's name) goes back through the
// windows' adjoint, not through the taps one by one (each tap's select
// would scatter into zeros): the input's is col2im of g * w (fold_windows
// per dim, then the padding cropped), one kernel; the weight's sums g
// times each tap's window over the batch and the positions.
#include "core/autograd/function.h"
#include "core/convolution.h"
#include "core/ops_common.h"

namespace kiln {

namespace {

// As pooling's kFoldedWindow: a fold's kernel grows with its taps. A 5 x 5
// window's 25 taps run in one kernel (1 thread, [8, 64, 56, 56]: 2.7-3.4
// ms, its kernel compiled in about 18 ms; as five stages of a row, each
// stage's sum stored, 4.6-4.9 ms, and 21.3 ms as im2col and a matmul of
// K = 25): the taps, shifted blocks of the stored padded input, load at a
// few row pointers and constant displacements (jit/lower_views.cpp:
// shifted_of), and rows not a multiple of 16 end in a masked vector, not
// a scalar remainder of every tap (codegen/llvm/loop_hints.cpp). (Before
// both, 25 taps in one kernel ran 7.3 ms and compiled in 81.) A larger
// window folds in stages of whole rows of its last dim, each stage's sum
// stored: 7 x 7 as 3 + 2 + 2 rows, 3 x 3 x 3 as 15 + 12 taps.
constexpr int64_t kFoldedConvTaps = 25;
constexpr int64_t kStagedConvTaps = 81;

Shape kernel_of(const Tensor& weight) { return Shape(weight.sizes().begin() + 2, weight.sizes().end()); }

// weight [OC, 1, K...] as [1, G, m, 1 (per O dim)..., K...]: each output
// channel's taps, broadcast over the batch and the positions.
Tensor weight_along_windows(const Tensor& weight, int64_t groups, int64_t k) {
  Shape s{1, groups, weight.size(0) / groups};
  for (int64_t j = 0; j < k; ++j) s.push_back(1);
  for (int64_t kk : kernel_of(weight)) s.push_back(kk);
  return weight.reshape(s);
}

ConvArgs args_of(const std::vector<int64_t>& ints, int64_t k) {
  auto part = [&](int64_t i) { return Shape(ints.begin() + 1 + i * k, ints.begin() + 1 + (i + 1) * k); };
  return ConvArgs{part(0), part(1), part(2), part(3)};
}

}  // namespace

bool depthwise_folds(const Tensor& x, const Tensor& weight, int64_t groups) {
  const Shape kernel = kernel_of(weight);
  const int64_t taps = kernel.numel();
  const bool staged = !kernel.empty() && kernel.back() <= kFoldedConvTaps && taps <= kStagedConvTaps;
  return x.size(1) == groups && weight.size(1) == 1 && taps >= 1 && (taps <= kFoldedConvTaps || staged);
}

Tensor depthwise_conv(const Tensor& x, const Tensor& weight, const ConvArgs& a, int64_t groups) {
  const Shape kernel = kernel_of(weight);
  const int64_t k = static_cast<int64_t>(kernel.size()), n = x.size(0), oc = weight.size(0);
  Tensor out;
  {
    const NoGradGuard no_grad;  // the rule below is the gradient
    Shape outs;
    // the padded input stored first: each tap loads it plainly, not through
    // a mask of its own ([8, 64, 56, 56] 3 x 3: 2.9 -> 1.2 ms; stride 2
    // 1.96 -> 1.26). The gradient's tap sums read it inline (a stored copy
    // measured 1.1x slower there).
    const Tensor win = conv_windows(x, kernel, a, outs, /*store_padded=*/true).unsqueeze(2);  // [N, G, 1, O..., K...]
    const Tensor w = weight_along_windows(weight, groups, k);          // [1, G, m, 1..., K...]
    // taps per kernel: all, or whole rows of the last dim in as few
    // stages as fit, the later stages of equal rows (one compiled kernel:
    // their taps differ from each other's by constants at a param base)
    const int64_t rows = kernel.numel() / kernel.back(), most = std::max<int64_t>(1, kFoldedConvTaps / kernel.back());
    const int64_t stages = kernel.numel() <= kFoldedConvTaps ? 1 : (rows + most - 1) / most;
    const int64_t later = rows / stages * kernel.back(), first = kernel.numel() - later * (stages - 1);
    Shape tap(static_cast<size_t>(k), 0);
    for (int64_t t = 1;; ++t) {
      const Tensor term = window_tap(win, tap) * window_tap(w, tap);
      out = out.defined() ? out + term : term;
      if (!next_tap(tap, kernel)) break;
      if (t >= first && (t - first) % later == 0) out = stored_copy(out);
    }
    Shape out_shape{n, oc};
    out_shape.insert(out_shape.end(), outs.begin(), outs.end());
    out = out.reshape(out_shape);
  }
  if (auto f = record(autograd::GradFn::ConvolutionBackward0, out, {&x, &weight})) {
    f->save(x);
    f->save(weight);
    f->ints = {groups};
    for (const Shape* v : {&a.stride, &a.dilation, &a.pad_before, &a.pad_after})
      f->ints.insert(f->ints.end(), v->begin(), v->end());
  }
  return out;
}

std::vector<Tensor> depthwise_conv_backward(const Tensor& g, const Tensor& x, const Tensor& weight,
                                            const std::vector<int64_t>& ints, bool need_x, bool need_weight) {
  const Shape kernel = kernel_of(weight);
  const int64_t k = static_cast<int64_t>(kernel.size()), groups = ints[0], m = weight.size(0) / groups;
  const ConvArgs a = args_of(ints, k);
  Shape gs{g.size(0), groups, m};  // g as [N, G, m, O..., 1...]
  for (int64_t j = 0; j < k; ++j) gs.push_back(g.size(2 + j));
  for (int64_t j = 0; j < k; ++j) gs.push_back(1);
  const Tensor gw = g.reshape(gs);
  std::vector<Tensor> grads(2);
  if (need_x) {
    const Tensor prod = gw * weight_along_windows(weight, groups, k);  // [N, G, m, O..., K...]
    Tensor y = m == 1 ? prod.select(2, 0) : prod.sum(2);                // the windows' gradient
    for (int64_t j = k - 1; j >= 0; --j)
      y = fold_windows(y, 2 + j, x.size(2 + j) + a.pad_before[j] + a.pad_after[j], a.stride[j], a.dilation[j]);
    for (int64_t j = 0; j < k; ++j)
      if (a.pad_before[j] > 0 || a.pad_after[j] > 0) y = y.narrow(2 + j, a.pad_before[j], x.size(2 + j));
    grads[0] = y;
  }
  if (need_weight) {
    Shape outs;
    const Tensor win = conv_windows(x, kernel, a, outs).unsqueeze(2);
    const Tensor gg = g.reshape(Shape(gs.begin(), gs.begin() + 3 + k));
    Shape dims{0};
    for (int64_t j = 0; j < k; ++j) dims.push_back(3 + j);
    std::vector<Tensor> per_tap;
    Shape tap(static_cast<size_t>(k), 0);
    do per_tap.push_back((gg * window_tap(win, tap)).sum(dims));
    while (next_tap(tap, kernel));
    grads[1] = stack(per_tap, -1).reshape(weight.sizes());
  }
  return grads;
}

}  // namespace kiln

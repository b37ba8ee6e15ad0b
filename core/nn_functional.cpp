// torch.nn.functional's layers and losses (include/kiln/nn_functional.h) as
// compositions of kiln ops: they fuse with the work around them (a
// cross-entropy is log_softmax's row kernel plus a masked row sum) and
// autograd differentiates them through those ops' rules. The class masks of
// nll_loss / one_hot are comparisons of the targets with an arange, so no
// gather op is needed: the selected log-probability is a masked sum over the
// class dim (where(), not a product, so -inf elsewhere in the row stays out).
// Formulas follow PyTorch 1.13's kernels (tests/test_nn_functional.cpp holds
// its values).
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "core/ops_common.h"
#include "core/provenance.h"
#include "kiln/functions.h"
#include "kiln/nn_functional.h"

namespace kiln {

namespace {

Tensor reduce(const Tensor& loss, Reduction r) {
  switch (r) {
    case Reduction::None: return loss;
    case Reduction::Mean: return loss.mean();
    case Reduction::Sum: return loss.sum();
  }
  KILN_INTERNAL_ASSERT(false, "unknown reduction ", static_cast<int>(r));
  return loss;
}

// Shape [n, 1, ..., 1] with `trailing` ones: a per-class vector laid along
// the class dim of a [N, C, d1, ...] tensor.
Shape class_column(int64_t n, int64_t trailing) {
  Shape s{n};
  for (int64_t k = 0; k < trailing; ++k) s.push_back(1);
  return s;
}

void check_pair(const Tensor& input, const Tensor& target, const char* op) {
  KILN_CHECK(input.defined() && target.defined(), op, "expected defined tensors but got an undefined one");
  check_same_device(op, {&input, &target});
  check_floating(input, op);
}

// The elementwise losses broadcast input with target (PyTorch warns, then
// broadcasts); a mismatch is named after the loss.
void check_regression(const Tensor& input, const Tensor& target, const char* op) {
  check_pair(input, target, op);
  (void)broadcast_shapes(input.sizes(), target.sizes(), op);
}

}  // namespace

// ---- layers ----
Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias, SourceLoc loc) {
  const LocScope at(loc);
  KILN_CHECK(input.defined() && weight.defined(), "linear", "expected defined tensors but got an undefined one");
  KILN_CHECK(weight.dim() == 1 || weight.dim() == 2, "linear", "weight must be 1-D or 2-D, got shape ",
             weight.sizes());
  KILN_CHECK(input.dim() >= 1 && input.size(-1) == weight.size(-1), "linear",
             "input and weight shapes cannot be multiplied (input ", input.sizes(), ", weight ", weight.sizes(),
             "): the input's last dim must equal the weight's in_features");
  Tensor out = input.matmul(weight.dim() == 2 ? weight.t() : weight);
  if (!bias.defined()) return out;
  return out + bias;
}

Tensor dropout(const Tensor& input, double p, bool training, SourceLoc loc) {
  const LocScope at(loc);
  KILN_CHECK(p >= 0.0 && p <= 1.0, "dropout", "dropout probability has to be between 0 and 1, but got ", p);
  check_floating(input, "dropout");
  if (!training || p == 0.0) return input;
  if (p == 1.0) return input * 0;  // NaN stays NaN, as PyTorch's input * zeros
  const Tensor keep = (rand_like(input) >= p).to(input.dtype());
  return input * (keep / (1.0 - p));
}

Tensor layer_norm(const Tensor& input, const Shape& normalized_shape, const Tensor& weight, const Tensor& bias,
                  double eps, SourceLoc loc) {
  const LocScope at(loc);
  check_floating(input, "layer_norm");
  const int64_t k = static_cast<int64_t>(normalized_shape.size());
  const Shape& s = input.sizes();
  bool fits = k >= 1 && k <= input.dim();
  for (int64_t j = 0; fits && j < k; ++j) fits = s[s.size() - k + j] == normalized_shape[j];
  KILN_CHECK(fits, "layer_norm", "Given normalized_shape=", normalized_shape, ", expected input with shape [*",
             [&] {
               std::string t;
               for (int64_t d : normalized_shape) t += ", " + std::to_string(d);
               return t;
             }(),
             "], but got input of size", s);
  for (const Tensor* t : {&weight, &bias})
    KILN_CHECK(!t->defined() || t->sizes() == normalized_shape, "layer_norm", "Expected ",
               t == &weight ? "weight" : "bias", " to be of same shape as normalized_shape, but got ",
               t == &weight ? "weight" : "bias", " of shape ", t->sizes(), " and normalized_shape = ",
               normalized_shape);
  Shape dims;
  for (int64_t j = input.dim() - k; j < input.dim(); ++j) dims.push_back(j);
  Tensor out = normalize_over(input, dims, eps).out;
  if (weight.defined()) out = out * weight;
  if (bias.defined()) out = out + bias;
  return out;
}

Tensor one_hot(const Tensor& labels, int64_t num_classes, SourceLoc loc) {
  const LocScope at(loc);
  KILN_CHECK(labels.defined() && labels.dtype() == DType::Int64, "one_hot",
             "one_hot is only applicable to index tensor (got ",
             labels.defined() ? scalar_type_name(labels.dtype()) : std::string("an undefined tensor"), ")");
  KILN_CHECK(num_classes >= -1, "one_hot", "num_classes should be -1 or a non-negative number, got ",
             num_classes);
  if (labels.numel() == 0) {
    KILN_CHECK(num_classes != -1, "one_hot", "Can not infer total number of classes from empty tensor.");
  } else {
    if (num_classes == -1) num_classes = labels.max().item<int64_t>() + 1;
    // one range check; min and max only to word its error, in PyTorch's order
    if (first_outside(labels, num_classes)) {
      KILN_CHECK(labels.min().item<int64_t>() >= 0, "one_hot", "Class values must be non-negative.");
      const int64_t top = labels.max().item<int64_t>();
      KILN_CHECK(false, "one_hot", "Class values must be smaller than num_classes (", top, " >= ", num_classes, ").");
    }
  }
  return (labels.unsqueeze(-1) == arange(num_classes, TensorOptions(DType::Int64).device(labels.device())))
      .to(DType::Int64);
}

// ---- regression losses ----
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction, SourceLoc loc) {
  const LocScope at(loc);
  check_regression(input, target, "mse_loss");
  Tensor d = input - target;
  return reduce(d * d, reduction);
}

Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction, SourceLoc loc) {
  const LocScope at(loc);
  check_regression(input, target, "l1_loss");
  return reduce((input - target).abs(), reduction);
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction, double beta, SourceLoc loc) {
  const LocScope at(loc);
  check_regression(input, target, "smooth_l1_loss");
  KILN_CHECK(beta >= 0, "smooth_l1_loss", "smooth_l1_loss does not support negative values for beta (got ",
             beta, ")");
  Tensor z = (input - target).abs();
  if (beta == 0) return reduce(z, reduction);
  return reduce(where(z < beta, z * z * 0.5 / beta, z - 0.5 * beta), reduction);
}

Tensor huber_loss(const Tensor& input, const Tensor& target, Reduction reduction, double delta, SourceLoc loc) {
  const LocScope at(loc);
  check_regression(input, target, "huber_loss");
  KILN_CHECK(delta > 0, "huber_loss", "huber_loss does not support non-positive values for delta (got ", delta,
             ")");
  Tensor z = (input - target).abs();
  return reduce(where(z < delta, z * z * 0.5, (z - 0.5 * delta) * delta), reduction);
}

// ---- classification losses ----
Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight, int64_t ignore_index,
                Reduction reduction, SourceLoc loc) {
  const LocScope at(loc);
  check_pair(input, target, "nll_loss");
  KILN_CHECK(target.dtype() == DType::Int64, "nll_loss", "expected scalar type Long but found ",
             scalar_type_name(target.dtype()), " (target ", target.sizes(), ")");
  KILN_CHECK(input.dim() >= 1, "nll_loss", "input tensor should be 1D or more, got a 0-D input");
  const int64_t cdim = input.dim() == 1 ? 0 : 1;
  const int64_t C = input.size(cdim);
  Shape want = input.sizes();
  want.erase(want.begin() + cdim);
  if (input.dim() == 2)
    KILN_CHECK(target.sizes() == want, "nll_loss", "Expected input batch_size (", input.size(0),
               ") to match target batch_size (", target.dim() >= 1 ? target.size(0) : 0, ") (input ",
               input.sizes(), ", target ", target.sizes(), ")");
  else
    KILN_CHECK(target.sizes() == want, "nll_loss", "expected target size ", want, ", got ", target.sizes(),
               " (input ", input.sizes(), ")");
  KILN_CHECK(!weight.defined() || (weight.dim() == 1 && weight.size(0) == C), "nll_loss",
             "weight tensor should be defined either for all ", C,
             " classes or no classes but got weight tensor of shape: ", weight.defined() ? weight.sizes() : Shape{});
  if (weight.defined()) check_same_device("nll_loss", {&input, &weight});
  // An index outside [0, C) that is not ignore_index is an error, as PyTorch's.
  const std::optional<int64_t> bad = first_outside(target, C, ignore_index);
  KILN_CHECK(!bad, "nll_loss", "Target ", *bad, " is out of bounds (", C, " classes).");
  const int64_t trailing = input.dim() - cdim - 1;
  const Tensor t = target.unsqueeze(cdim);
  const Tensor classes = arange(C, TensorOptions(DType::Int64).device(input.device())).reshape(class_column(C, trailing));
  Tensor hit = t == classes;
  if (ignore_index >= 0 && ignore_index < C) hit = where(t != ignore_index, hit, false);
  Tensor picked = where(hit, input, 0);
  // the mean's divisor: per target, its class weight (0 if ignored)
  Tensor counted = (target != ignore_index).to(input.dtype());
  if (weight.defined()) {
    const Tensor w = weight.to(input.dtype()).reshape(class_column(C, trailing));
    picked = picked * w;
    counted = where(hit, w, 0).sum(cdim);
  }
  const Tensor loss = -picked.sum(cdim);
  if (reduction != Reduction::Mean) return reduce(loss, reduction);
  return loss.sum() / counted.sum();
}

// PyTorch's cross_entropy_loss_label_smoothing: (1 - s) nll + s / C times
// the loss against the uniform distribution (-sum_c w_c logp_c per target,
// 0 where ignored; the mean divides by the targets' weights, as nll's).
static Tensor smoothed_nll(const Tensor& logp, const Tensor& target, const Tensor& weight, int64_t ignore_index,
                           Reduction reduction, double s) {
  const int64_t cdim = logp.dim() == 1 ? 0 : 1;
  const int64_t C = logp.size(cdim);
  const Tensor nll = nll_loss(logp, target, weight, ignore_index, reduction);
  const Tensor ignored = target == ignore_index;
  const Tensor w = weight.defined() ? weight.to(logp.dtype()) : Tensor();
  Tensor uniform = -(w.defined() ? logp * w.reshape(class_column(C, logp.dim() - cdim - 1)) : logp).sum(cdim);
  uniform = where(ignored, 0.0, uniform);
  Tensor ret;
  switch (reduction) {
    case Reduction::None: ret = uniform; break;
    case Reduction::Sum: ret = uniform.sum(); break;
    case Reduction::Mean: {
      const Tensor kept = ignored.logical_not();
      const Tensor counted = w.defined() ? where(kept, w.index_select(0, where(kept, target, 0).reshape({-1})).reshape(target.sizes()), 0.0)
                                         : kept.to(logp.dtype());
      ret = uniform.sum() / counted.sum();
      break;
    }
  }
  return nll * (1.0 - s) + ret * (s / static_cast<double>(C));
}

Tensor cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight, int64_t ignore_index,
                     Reduction reduction, double label_smoothing, SourceLoc loc) {
  const LocScope at(loc);
  check_pair(input, target, "cross_entropy");
  KILN_CHECK(input.dim() >= 1, "cross_entropy", "input tensor should be 1D or more, got a 0-D input");
  KILN_CHECK(label_smoothing <= 1.0, "cross_entropy", "label_smoothing must be between 0.0 and 1.0. Got: ",
             label_smoothing);
  const int64_t cdim = input.dim() == 1 ? 0 : 1;
  const Tensor logp = input.log_softmax(cdim);
  if (!is_floating_point(target.dtype())) {
    if (label_smoothing > 0.0) return smoothed_nll(logp, target, weight, ignore_index, reduction, label_smoothing);
    return nll_loss(logp, target, weight, ignore_index, reduction);
  }
  // class probabilities: -sum_c w_c p_c log_softmax_c; the mean is over the
  // elements without the class dim, whatever the weights
  KILN_CHECK(target.sizes() == input.sizes(), "cross_entropy",
             "class-probability targets must have the input's shape (input ", input.sizes(), ", target ",
             target.sizes(), ")");
  const int64_t C = input.size(cdim);
  Tensor prod = logp * (label_smoothing > 0.0 ? target * (1.0 - label_smoothing) + label_smoothing / static_cast<double>(C)
                                              : target);
  if (weight.defined()) {
    KILN_CHECK(weight.dim() == 1 && weight.size(0) == C, "cross_entropy", "weight tensor should be defined either for all ",
               C, " classes or no classes but got weight tensor of shape: ", weight.sizes());
    prod = prod * weight.to(input.dtype()).reshape(class_column(C, input.dim() - cdim - 1));
  }
  const Tensor loss = -prod.sum(cdim);
  if (reduction != Reduction::Mean) return reduce(loss, reduction);
  return loss.sum() / static_cast<double>(std::max<int64_t>(input.numel() / std::max<int64_t>(C, 1), 0));
}

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight, Reduction reduction,
                            SourceLoc loc) {
  const LocScope at(loc);
  check_pair(input, target, "binary_cross_entropy");
  KILN_CHECK(input.sizes() == target.sizes(), "binary_cross_entropy", "Using a target size (", target.sizes(),
             ") that is different to the input size (", input.sizes(), ") is deprecated. Please ensure they have the same size.");
  // PyTorch checks the range in its kernel; NaN is outside it too.
  KILN_CHECK(!where(input >= 0, input <= 1, false).logical_not().any().item<bool>(), "binary_cross_entropy",
             "all elements of input should be between 0 and 1 (input ", input.sizes(), ")");
  Tensor loss = (target - 1) * (-input).log1p().clamp_min(-100) - target * input.log().clamp_min(-100);
  if (weight.defined()) loss = loss * weight;
  return reduce(loss, reduction);
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target, const Tensor& weight,
                                        const Tensor& pos_weight, Reduction reduction, SourceLoc loc) {
  const LocScope at(loc);
  check_pair(input, target, "binary_cross_entropy_with_logits");
  KILN_CHECK(input.sizes() == target.sizes(), "binary_cross_entropy_with_logits", "Target size (",
             target.sizes(), ") must be the same as input size (", input.sizes(), ")");
  // max(-x, 0) + log(e^-max + e^(-x-max)) = log(1 + e^-x) without overflow
  const Tensor max_val = (-input).clamp_min(0);
  const Tensor log_term = ((-max_val).exp() + (-input - max_val).exp()).log();
  Tensor loss;
  if (pos_weight.defined()) {
    const Tensor log_weight = (pos_weight - 1) * target + 1;
    loss = (1 - target) * input + log_weight * (log_term + max_val);
  } else {
    loss = (1 - target) * input + max_val + log_term;
  }
  if (weight.defined()) loss = loss * weight;
  return reduce(loss, reduction);
}

// ---- activations, distances and pixel rearrangements ----
Tensor logsigmoid(const Tensor& x, SourceLoc loc) {
  const LocScope at(loc);
  check_floating(x, "logsigmoid");
  return x.clamp_max(0) - (-x.abs()).exp().log1p();  // PyTorch's kernel: no overflow either way
}

Tensor softmin(const Tensor& x, int64_t dim, SourceLoc loc) {
  const LocScope at(loc);
  return (-x).softmax(dim);
}

Tensor glu(const Tensor& x, int64_t dim, SourceLoc loc) {
  const LocScope at(loc);
  check_floating(x, "glu");
  KILN_CHECK(x.dim() > 0, "glu", "glu does not support scalars because halving size must be even");
  const int64_t d = wrap_dim(dim, x.dim(), "glu");
  KILN_CHECK(x.size(d) % 2 == 0, "glu", "Halving dimension must be even, but dimension ", d, " is size ", x.size(d),
             " (input ", x.sizes(), ")");
  const int64_t half = x.size(d) / 2;
  return x.narrow(d, 0, half) * x.narrow(d, half, half).sigmoid();
}

Tensor normalize(const Tensor& x, double p, int64_t dim, double eps, SourceLoc loc) {
  const LocScope at(loc);
  check_floating(x, "normalize");
  return x / x.norm(p, dim, true).clamp_min(eps);
}

Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim, double eps, SourceLoc loc) {
  const LocScope at(loc);
  check_pair(x1, x2, "cosine_similarity");
  const Shape common = broadcast_shapes(x1.sizes(), x2.sizes(), "cosine_similarity");
  const Tensor a = x1.expand(common), b = x2.expand(common);
  // each normalized first (its squared norm clamped at eps^2), as PyTorch 1.13
  auto unit = [&](const Tensor& v) { return v / (v * v).sum(dim, true).clamp_min(eps * eps).sqrt(); };
  return (unit(a) * unit(b)).sum(dim);
}

Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p, double eps, bool keepdim, SourceLoc loc) {
  const LocScope at(loc);
  check_pair(x1, x2, "pairwise_distance");
  const int64_t last = std::max(x1.dim(), x2.dim()) - 1;
  return (x1 - x2 + eps).norm(p, std::max<int64_t>(last, 0), keepdim);
}

namespace {
void check_pixel_input(const Tensor& x, int64_t factor, const char* op, const char* what) {
  check_defined(x, op);
  KILN_CHECK(x.dim() >= 3, op, op, " expects input to have at least 3 dimensions, but got input with ", x.dim(),
             " dimension(s) (input ", x.sizes(), ")");
  KILN_CHECK(factor > 0, op, op, " expects a positive ", what, ", but got ", factor);
}
}  // namespace

Tensor pixel_shuffle(const Tensor& x, int64_t upscale_factor, SourceLoc loc) {
  const LocScope at(loc);
  const int64_t r = upscale_factor;
  check_pixel_input(x, r, "pixel_shuffle", "upscale_factor");
  const int64_t c = x.size(-3), h = x.size(-2), w = x.size(-1);
  KILN_CHECK(c % (r * r) == 0, "pixel_shuffle",
             "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of upscale_factor, "
             "but input.size(-3)=", c, " is not divisible by ", r * r, " (input ", x.sizes(), ")");
  const int64_t lead = x.dim() - 3;
  Shape split(x.sizes().begin(), x.sizes().begin() + lead), out = split;
  for (int64_t s : {c / (r * r), r, r, h, w}) split.push_back(s);
  for (int64_t s : {c / (r * r), h * r, w * r}) out.push_back(s);
  Shape order;
  for (int64_t d = 0; d < lead; ++d) order.push_back(d);
  for (int64_t d : {0, 3, 1, 4, 2}) order.push_back(lead + d);  // [C', H, r, W, r]
  return x.reshape(split).permute(order).reshape(out);
}

Tensor pixel_unshuffle(const Tensor& x, int64_t downscale_factor, SourceLoc loc) {
  const LocScope at(loc);
  const int64_t r = downscale_factor;
  check_pixel_input(x, r, "pixel_unshuffle", "downscale_factor");
  const int64_t c = x.size(-3), h = x.size(-2), w = x.size(-1);
  KILN_CHECK(h % r == 0, "pixel_unshuffle", "pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)=",
             h, " is not divisible by ", r, " (input ", x.sizes(), ")");
  KILN_CHECK(w % r == 0, "pixel_unshuffle", "pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)=",
             w, " is not divisible by ", r, " (input ", x.sizes(), ")");
  const int64_t lead = x.dim() - 3;
  Shape split(x.sizes().begin(), x.sizes().begin() + lead), out = split;
  for (int64_t s : {c, h / r, r, w / r, r}) split.push_back(s);
  for (int64_t s : {c * r * r, h / r, w / r}) out.push_back(s);
  Shape order;
  for (int64_t d = 0; d < lead; ++d) order.push_back(d);
  for (int64_t d : {0, 2, 4, 1, 3}) order.push_back(lead + d);  // [C, r, r, H', W']
  return x.reshape(split).permute(order).reshape(out);
}

}  // namespace kiln

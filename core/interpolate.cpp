// torch.nn.functional.interpolate (include/kiln/nn_functional.h): nearest,
// nearest-exact, linear, bilinear and trilinear resizing of the trailing
// 1-3 dims.
//
// Resizing is separable: along each resized dim, output position o reads
// input positions i0(o), i1(o) with weights l0(o), l1(o) (nearest: one
// position, weight 1). Those are worked out on the host as PyTorch's CPU
// kernels compute them (UpSample.h: the source index in the input's
// accumulate type, float for float32), so the positions and weights are
// PyTorch's to the bit; each dim is then two gathers and a weighted sum,
// which fuse into one kernel over the output, and autograd differentiates
// them through the gather's rule (a scatter of the weighted gradient).
#include <cmath>
#include <string>
#include <vector>

#include "core/ops_common.h"
#include "core/provenance.h"
#include "kiln/nn_functional.h"

namespace kiln {

namespace {

const char* mode_name(InterpolateMode m) {
  switch (m) {
    case InterpolateMode::Nearest: return "nearest";
    case InterpolateMode::NearestExact: return "nearest-exact";
    case InterpolateMode::Linear: return "linear";
    case InterpolateMode::Bilinear: return "bilinear";
    case InterpolateMode::Trilinear: return "trilinear";
  }
  return "?";
}

// The positions and weights along one dim, as PyTorch computes them in T:
// nearest modes fill i0 only (UpSample.h nearest_idx / nearest_exact_idx,
// in float); linear modes i0, i1 and i1's weight l1
// (area_pixel_compute_source_index, compute_indices_weights_linear).
template <typename T>
void source_positions(int64_t in, int64_t out, InterpolateMode mode, bool align_corners,
                      std::optional<double> scale, std::vector<int64_t>& i0, std::vector<int64_t>& i1,
                      std::vector<double>& l1) {
  if (mode == InterpolateMode::Nearest || mode == InterpolateMode::NearestExact) {
    const float s = scale && *scale > 0 ? static_cast<float>(1.0 / *scale)
                                        : static_cast<float>(in) / static_cast<float>(out);
    for (int64_t o = 0; o < out; ++o) {
      int64_t at;
      if (mode == InterpolateMode::Nearest)
        at = out == in ? o : out == 2 * in ? o >> 1 : static_cast<int64_t>(std::floor(static_cast<float>(o) * s));
      else
        at = out == in ? o : static_cast<int64_t>(std::floor((static_cast<float>(o) + 0.5f) * s));
      i0.push_back(std::min(at, in - 1));
    }
    return;
  }
  // compute_scales_value / area_pixel_compute_scale
  const T ratio = align_corners ? (out > 1 ? static_cast<T>(in - 1) / static_cast<T>(out - 1) : T(0))
                  : scale && *scale > 0 ? static_cast<T>(1.0 / *scale)
                                        : static_cast<T>(in) / static_cast<T>(out);
  for (int64_t o = 0; o < out; ++o) {
    T src = align_corners ? ratio * static_cast<T>(o) : ratio * (static_cast<T>(o) + T(0.5)) - T(0.5);
    if (src < 0) src = T(0);
    const int64_t a = static_cast<int64_t>(src);
    const T lambda = std::min(std::max(src - static_cast<T>(a), T(0)), T(1));
    i0.push_back(a);
    i1.push_back(a + (a < in - 1 ? 1 : 0));
    l1.push_back(static_cast<double>(lambda));
  }
}

// x resized along dim d to `out` positions.
Tensor resize_dim(const Tensor& x, int64_t d, int64_t out, InterpolateMode mode, bool align_corners,
                  std::optional<double> scale) {
  const int64_t in = x.size(d);
  std::vector<int64_t> i0, i1;
  std::vector<double> l1;
  if (x.dtype() == DType::Float64) source_positions<double>(in, out, mode, align_corners, scale, i0, i1, l1);
  else source_positions<float>(in, out, mode, align_corners, scale, i0, i1, l1);
  Shape shape = x.sizes();
  shape[d] = out;
  const TensorOptions ints = TensorOptions(DType::Int64).device(x.device());
  const Tensor at0 = laid_along(kiln::tensor(i0, ints).reshape({out}), d, shape);
  const Tensor v0 = gather_node(x, d, at0, "interpolate");
  if (mode == InterpolateMode::Nearest || mode == InterpolateMode::NearestExact) return v0;
  Shape along(static_cast<size_t>(x.dim()), 1);
  along[d] = out;
  const Tensor w1 = kiln::tensor(l1, TensorOptions(DType::Float64).device(x.device())).to(x.dtype()).reshape(along);
  const Tensor v1 = gather_node(x, d, laid_along(kiln::tensor(i1, ints).reshape({out}), d, shape), "interpolate");
  return v0 * (1 - w1) + v1 * w1;
}

std::string spatial_text(const Tensor& x) {
  std::string t = "[";
  for (int64_t d = 2; d < x.dim(); ++d) t += (d > 2 ? ", " : "") + std::to_string(x.size(d));
  return t + "]";
}

}  // namespace

Tensor interpolate(const Tensor& input, const InterpolateOptions& o, SourceLoc loc) {
  const LocScope at(loc);
  const char* op = "interpolate";
  check_defined(input, op);
  KILN_CHECK(!(o.size_ && o.scale_factor_), op, "only one of size or scale_factor should be defined");
  KILN_CHECK(o.size_ || o.scale_factor_, op, "either size or scale_factor should be defined");
  const bool linear = o.mode_ == InterpolateMode::Linear || o.mode_ == InterpolateMode::Bilinear ||
                      o.mode_ == InterpolateMode::Trilinear;
  KILN_CHECK(linear || !o.align_corners_, op,
             "align_corners option can only be set with the interpolating modes: linear | bilinear | bicubic | trilinear");
  const int64_t k = input.dim() - 2;
  if (o.size_)
    KILN_CHECK(k >= 1 && (o.size_->size() == 1 || static_cast<int64_t>(o.size_->size()) == k), op,
               "Input and output must have the same number of spatial dimensions, but got input with spatial "
               "dimensions of ",
               spatial_text(input), " and output size of ", *o.size_,
               ". Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) "
               "format.");
  if (o.scale_factor_)
    KILN_CHECK(k >= 1 && (o.scale_factor_->size() == 1 || static_cast<int64_t>(o.scale_factor_->size()) == k), op,
               "Input and scale_factor must have the same number of spatial dimensions, but got input with spatial "
               "dimensions of ",
               spatial_text(input), " and ", o.scale_factor_->size(),
               " scale factors. Please provide input tensor in (N, C, d1, d2, ...,dK) format and scale_factor in "
               "(s1, s2, ...,sK) format.");
  KILN_CHECK(k >= 1 && k <= 3, op, "Input Error: Only 3D, 4D and 5D input Tensors supported (got ", input.dim(),
             "D) for the modes: nearest | linear | bilinear | trilinear | nearest-exact (input ", input.sizes(), ")");
  const int64_t needs = o.mode_ == InterpolateMode::Linear ? 1 : o.mode_ == InterpolateMode::Bilinear ? 2 : 3;
  KILN_CHECK(!linear || needs == k, op, "Got ", input.dim(), "D input, but ", mode_name(o.mode_), " mode needs ",
             needs + 2, "D input");
  check_floating(input, op);
  Shape out(static_cast<size_t>(k));
  std::vector<std::optional<double>> scales(static_cast<size_t>(k));
  for (int64_t j = 0; j < k; ++j) {
    const int64_t in = input.size(2 + j);
    if (o.size_) {
      out[j] = o.size_->size() == 1 ? (*o.size_)[0] : (*o.size_)[j];
    } else {
      const double s = o.scale_factor_->size() == 1 ? (*o.scale_factor_)[0] : (*o.scale_factor_)[j];
      out[j] = static_cast<int64_t>(std::floor(static_cast<double>(in) * s));
      if (!o.recompute_scale_factor_.value_or(false)) scales[j] = s;
    }
  }
  bool positive = true;
  for (int64_t j = 0; j < k; ++j) positive = positive && out[j] > 0 && input.size(2 + j) > 0;
  KILN_CHECK(positive, op, "Input and output sizes should be greater than 0, but got input ", spatial_text(input),
             " output ", out);
  Tensor y = input;
  for (int64_t j = k - 1; j >= 0; --j)  // the last dim first, as PyTorch's separable kernels
    y = resize_dim(y, 2 + j, out[j], o.mode_, o.align_corners_.value_or(false), scales[j]);
  return y;
}

}  // namespace kiln

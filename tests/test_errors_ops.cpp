// Errors of the shape ops, linear algebra helpers and composed math and
// reductions (core/reshaping.cpp, core/linalg.cpp, core/composite_math.cpp,
// core/statistics.cpp): a kiln::Error naming the op, in PyTorch's words, with
// the shapes or dtypes involved, raised when the op is written.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "kiln/kiln.h"
#include "tests/error_checks.h"

using namespace kiln;

TEST_CASE("errors: movedim, unflatten, diagonal, unfold, repeat_interleave, rot90, take_along_dim, tensor_split") {
  const Tensor x = ones({2, 3, 4});
  CHECK_HAS(KILN_ERROR_OF(x.movedim({0, 1}, {2})), "[movedim]", "should contain the same number of dims");
  CHECK_HAS(KILN_ERROR_OF(x.movedim({0, 0}, {1, 2})), "[movedim]", "repeated dim in `source`");
  CHECK_HAS(KILN_ERROR_OF(x.movedim({0, 1}, {2, 2})), "[movedim]", "repeated dim in `destination`");
  CHECK_HAS(KILN_ERROR_OF(x.movedim(3, 0)), "[movedim]", "out of range");
  CHECK_HAS(KILN_ERROR_OF(x.unflatten(2, {3, 2})), "[unflatten]", "Provided sizes [3, 2] don't multiply up to the size of dim 2 (4)");
  CHECK_HAS(KILN_ERROR_OF(x.unflatten(2, {-1, -1})), "[unflatten]", "only one dimension can be inferred");
  CHECK_HAS(KILN_ERROR_OF(x.diagonal(0, 1, -2)), "[diagonal]", "diagonal dimensions cannot be identical 1, -2", "[2, 3, 4]");
  CHECK_HAS(KILN_ERROR_OF(x.unfold(2, 5, 1)), "[unfold]", "maximum size for tensor at dimension 2 is 4 but size is 5");
  CHECK_HAS(KILN_ERROR_OF(x.unfold(2, 2, 0)), "[unfold]", "step is 0 but must be > 0");
  CHECK_HAS(KILN_ERROR_OF(x.repeat_interleave(-1)), "[repeat_interleave]", "repeats can not be negative");
  CHECK_HAS(KILN_ERROR_OF(x.repeat_interleave(kiln::tensor({1, 2}), 1)), "[repeat_interleave]",
            "repeats must have the same size as input along dim, but got repeats.size(0) = 2 and input.size(1) = 3");
  CHECK_HAS(KILN_ERROR_OF(x.repeat_interleave(kiln::tensor({1, -2, 0}), 1)), "[repeat_interleave]", "repeats can not be negative");
  CHECK_HAS(KILN_ERROR_OF(x.repeat_interleave(kiln::tensor({1.0, 2.0, 0.0}), 1)), "[repeat_interleave]",
            "repeats has to be Long or Int tensor (got Float)");
  CHECK_HAS(KILN_ERROR_OF(x.rot90(1, {0, 1, 2})), "[rot90]", "expected total rotation dims == 2, but got dims = 3");
  CHECK_HAS(KILN_ERROR_OF(x.rot90(1, {1, -2})), "[rot90]", "expected rotation dims to be different, but got dim0 = 1 and dim1 = 1");
  CHECK_HAS(KILN_ERROR_OF(ones({3}).rot90()), "[rot90]", "expected total dims >= 2, but got total dims = 1");
  CHECK_HAS(KILN_ERROR_OF(x.take_along_dim(kiln::tensor({1}, kInt32))), "[take_along_dim]",
            "dtype of indices should be Long but got Int");
  CHECK_HAS(KILN_ERROR_OF(x.take_along_dim(kiln::tensor({1}), 0)), "[take_along_dim]",
            "input and indices should have the same number of dimensions, but got 3 dimensions for input, and 1 dimensions for indices");
  CHECK_HAS(KILN_ERROR_OF(x.take_along_dim(zeros({2, 2, 4}, kInt64), 2)), "[take_along_dim]",
            "The size of tensor a (3) must match the size of tensor b (2)");
  CHECK_HAS(KILN_ERROR_OF(x.tensor_split(0)), "[tensor_split]", "number of sections must be larger than 0, got 0");
  CHECK_HAS(KILN_ERROR_OF(ones({}).tensor_split(2)), "[tensor_split]", "at least a 1-dimensional tensor");
  CHECK_HAS(KILN_ERROR_OF(meshgrid({ones({2, 2})})), "[meshgrid]", "Expected 0D or 1D tensor in the tensor list but got: 2D");
  CHECK_HAS(KILN_ERROR_OF(meshgrid({ones({2}), ones({2}, kFloat64)})), "[meshgrid]", "expects all tensors to have the same dtype");
  CHECK_HAS(KILN_ERROR_OF(meshgrid({ones({2})}, "ji")), "[meshgrid]", "indexing must be one of \"xy\" or \"ij\", but received: ji");
  CHECK_HAS(KILN_ERROR_OF(broadcast_tensors({ones({2}), ones({3})})), "[broadcast_tensors]",
            "The size of tensor a (2) must match the size of tensor b (3)");
  CHECK_HAS(KILN_ERROR_OF(vstack({})), "[vstack]", "expects a non-empty TensorList");
  CHECK_HAS(KILN_ERROR_OF(hstack({ones({2, 2}), ones({3, 2})})), "[cat]", "Sizes of tensors must match except in dimension 1");
}

TEST_CASE("errors: dot, mv, bmm, addmm, trace, diag, diag_embed, cross") {
  CHECK_HAS(KILN_ERROR_OF(ones({2, 2}).dot(ones({2}))), "[dot]", "1D tensors expected, but got 2D and 1D tensors");
  CHECK_HAS(KILN_ERROR_OF(ones({3}).dot(ones({4}))), "[dot]", "inconsistent tensor size, expected tensor [3] and src [4]");
  CHECK_HAS(KILN_ERROR_OF(ones({3}).vdot(ones({3}, kFloat64))), "[vdot]", "expected both vectors to have same dtype, but found Float and Double");
  CHECK_HAS(KILN_ERROR_OF(ones({3}).mv(ones({3}))), "[mv]", "vector + matrix @ vector expected, got 1D and 1D");
  CHECK_HAS(KILN_ERROR_OF(ones({2, 3}).mv(ones({4}))), "[matmul]", "size mismatch");
  CHECK_HAS(KILN_ERROR_OF(ones({2, 3}).bmm(ones({2, 3, 4}))), "[bmm]", "batch1 must be a 3D tensor");
  CHECK_HAS(KILN_ERROR_OF(ones({2, 3, 4}).bmm(ones({3, 4, 5}))), "[bmm]",
            "Expected size for first two dimensions of batch2 tensor to be: [2, 4] but got: [3, 4]");
  CHECK_HAS(KILN_ERROR_OF(ones({5}).addmm(ones({2, 3}), ones({3, 4}))), "[addmm]", "The size of tensor a (5) must match the size of tensor b (4)");
  CHECK_HAS(KILN_ERROR_OF(ones({2, 1, 4}).addmm(ones({2, 3}), ones({3, 4}))), "[addmm]",
            "the input of shape [2, 1, 4] does not broadcast to the product's shape [2, 4]");
  CHECK_HAS(KILN_ERROR_OF(ones({3}).trace()), "[trace]", "trace: expected a matrix, but got tensor with dim 1");
  CHECK_HAS(KILN_ERROR_OF(ones({2, 2, 2}).diag()), "[diag]", "Supports 1D or 2D tensors. Got 3D");
  CHECK_HAS(KILN_ERROR_OF(ones({2, 2}).diag_embed(0, 1, -2)), "[diag_embed]", "diagonal dimensions cannot be identical");
  CHECK_HAS(KILN_ERROR_OF(ones({2, 2}).cross(ones({2, 2}))), "[cross]", "no dimension of size 3 in input");
  CHECK_HAS(KILN_ERROR_OF(ones({3, 2}).cross(ones({3, 2}), 1)), "[cross]", "inputs dimension 1 must have length 3. Got 2 and 2");
  CHECK_HAS(KILN_ERROR_OF(ones({3}).cross(ones({2, 3}))), "[cross]", "inputs must have the same number of dimensions");
}

TEST_CASE("errors: hypot, logaddexp, heaviside, diff, nanmean, aminmax, logspace") {
  const Tensor i = kiln::tensor({1, 2});
  CHECK_HAS(KILN_ERROR_OF(i.hypot(i)), "[hypot]", "\"hypot\" not implemented for 'Long'", "[2]");
  CHECK_HAS(KILN_ERROR_OF(i.logaddexp(i)), "[logaddexp]", "\"logaddexp\" not implemented for 'Long'");
  CHECK_HAS(KILN_ERROR_OF(ones({2}).hypot(ones({3}))), "[hypot]", "The size of tensor a (2) must match the size of tensor b (3)");
  CHECK_HAS(KILN_ERROR_OF(ones({2}).xlogy(ones({3}))), "[xlogy]", "The size of tensor a (2) must match the size of tensor b (3)");
  CHECK_HAS(KILN_ERROR_OF(ones({2}).logaddexp2(ones({3}))), "[logaddexp2]", "must match the size");
  CHECK_HAS(KILN_ERROR_OF(ones({2}).heaviside(i)), "[heaviside]", "heaviside is not yet implemented for tensors with different dtypes (Float and Long)");
  CHECK_HAS(KILN_ERROR_OF(ones({}).diff()), "[diff]", "diff expects input to be at least one-dimensional");
  CHECK_HAS(KILN_ERROR_OF(ones({3}).diff(-1)), "[diff]", "order must be non-negative but got -1");
  CHECK_HAS(KILN_ERROR_OF(ones({3}).diff(1, 0, ones({1, 1}))), "[diff]",
            "diff expects prepend or append to be the same dimension as input");
  CHECK_HAS(KILN_ERROR_OF(i.nanmean()), "[nanmean]", "nanmean(): expected input to have floating point dtype but got Long");
  CHECK_HAS(KILN_ERROR_OF(ones({0, 2}).aminmax()), "[aminmax]", "cannot compute aminmax over an empty dimension");
  CHECK_HAS(KILN_ERROR_OF(logspace(0, 1, -1)), "[logspace]", "number of steps must be non-negative");
  CHECK_HAS(KILN_ERROR_OF(Tensor().sinc()), "[sinc]", "expected a defined tensor");
  CHECK_HAS(KILN_ERROR_OF(Tensor().tile({2})), "[tile]", "expected a defined tensor");
}

TEST_CASE("errors: pad, conv, pooling and normalization layers, in PyTorch's words") {
  const Tensor x = ones({1, 2, 3, 4}), w = ones({4, 2, 3, 3});
  CHECK_HAS(KILN_ERROR_OF(pad(x, {1})), "[pad]", "Padding length must be divisible by 2");
  CHECK_HAS(KILN_ERROR_OF(pad(x, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1})), "[pad]", "Padding length too large");
  CHECK_HAS(KILN_ERROR_OF(pad(x, {1, 1}, PadMode::Reflect)), "[pad]", "reflect padding of the last 1 dim(s) needs a 2-D or 3-D input, but got input [1, 2, 3, 4]");
  CHECK_HAS(KILN_ERROR_OF(pad(ones({1, 2, 3}), {1, 3}, PadMode::Reflect)), "[pad]",
            "Padding size should be less than the corresponding input dimension, but got: padding (1, 3) at dimension 2 of input [1, 2, 3]");
  CHECK_HAS(KILN_ERROR_OF(pad(ones({1, 2, 3}), {4, 1}, PadMode::Circular)), "[pad]", "Padding value causes wrapping around more than once");
  CHECK_HAS(KILN_ERROR_OF(pad(ones({1, 2, 5}), {5, -2}, PadMode::Circular)), "[pad]", "wrapping around more than once (padding (5, -2)");
  CHECK_HAS(KILN_ERROR_OF(pad(ones({2, 3}), {-2, -2})), "[pad]", "padding (-2, -2) of dim 1 of input [2, 3] leaves -1 elements");
  CHECK_HAS(KILN_ERROR_OF(pad(ones({1, 0, 3}), {1, 1}, PadMode::Replicate)), "[pad]", "non-zero sizes apart from the batch dim", "[1, 0, 3]");
  CHECK_HAS(KILN_ERROR_OF(conv2d(ones({1, 3, 5, 5}), w)), "[conv2d]",
            "Given groups=1, weight of size [4, 2, 3, 3], expected input[1, 3, 5, 5] to have 2 channels, but got 3 channels instead");
  CHECK_HAS(KILN_ERROR_OF(conv2d(ones({5, 5}), w)), "[conv2d]", "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [5, 5]");
  CHECK_HAS(KILN_ERROR_OF(conv2d(ones({1, 4, 5, 5}), ones({3, 2, 3, 3}), Tensor(), {1}, {0}, {1}, 2)), "[conv2d]",
            "Given groups=2, expected weight to be divisible by 2 at dimension 0, but got weight of size [3, 2, 3, 3] instead");
  CHECK_HAS(KILN_ERROR_OF(conv2d(x, w, Tensor(), {0})), "[conv2d]", "non-positive stride is not supported");
  CHECK_HAS(KILN_ERROR_OF(conv2d(x, w, Tensor(), {1}, {-1})), "[conv2d]", "negative padding is not supported");
  CHECK_HAS(KILN_ERROR_OF(conv2d(x, w, Tensor(), {1}, {0}, {0})), "[conv2d]", "dilation should be greater than zero, but got [0, 0]");
  CHECK_HAS(KILN_ERROR_OF(conv2d(x, w, Tensor(), {1, 1, 1})), "[conv2d]",
            "expected stride to be a single integer value or a list of 2 values to match the convolution dimensions, but got stride=[1, 1, 1]");
  CHECK_HAS(KILN_ERROR_OF(conv2d(x, w, ones({3}))), "[conv2d]", "expected bias to be 1-dimensional with 4 elements, but got bias of size [3] instead");
  CHECK_HAS(KILN_ERROR_OF(conv2d(x, w, ones({4}, kFloat64))), "[conv2d]", "Input type (torch.float32) and bias type (torch.float64) should be the same");
  CHECK_HAS(KILN_ERROR_OF(conv2d(x, w, Tensor(), {2}, ConvPadding::Same)), "[conv2d]", "padding='same' is not supported for strided convolutions");
  CHECK_HAS(KILN_ERROR_OF(conv2d(x, w.to(kFloat64))), "[conv2d]", "expected input and weight of one dtype, but got input Float and weight Double");
  CHECK_HAS(KILN_ERROR_OF(conv2d(ones({1, 2, 2, 2}), w)), "[conv2d]",
            "Calculated padded input size per channel: (2 x 2). Kernel size: (3 x 3). Kernel size can't be greater than actual input size");
  CHECK_HAS(KILN_ERROR_OF(conv1d(ones({1, 2, 5}), w)), "[conv1d]", "expected a 3-D weight", "[4, 2, 3, 3]");
  const Tensor xt = ones({1, 4, 5, 5}), wt = ones({4, 3, 3, 3});
  CHECK_HAS(KILN_ERROR_OF(conv_transpose2d(xt, wt, Tensor(), {2}, {1}, {2})), "[conv_transpose2d]",
            "output padding must be smaller than either stride or dilation, but got output_padding [2, 2], stride [2, 2], dilation [1, 1]");
  CHECK_HAS(KILN_ERROR_OF(conv_transpose2d(xt, wt, Tensor(), {1}, {5})), "[conv_transpose2d]",
            "Given input size per channel: (5 x 5). Calculated output size per channel: (-3 x -3). Output size is too small");
  CHECK_HAS(KILN_ERROR_OF(conv_transpose2d(xt, ones({3, 3, 3, 3}))), "[conv_transpose2d]",
            "Given transposed=1, weight of size [3, 3, 3, 3], expected input[1, 4, 5, 5] to have 3 channels, but got 4 channels instead");
  CHECK_HAS(KILN_ERROR_OF(conv_transpose2d(xt, wt, ones({4}))), "[conv_transpose2d]",
            "Given transposed=1, weight of size [4, 3, 3, 3], expected bias to be 1-dimensional with 3 elements, but got bias of size [4] instead");
  CHECK_HAS(KILN_ERROR_OF(conv_transpose2d(xt, wt, Tensor(), {1}, {0}, {0}, 3)), "[conv_transpose2d]",
            "Given groups=3, expected weight to be divisible by 3 at dimension 0, but got weight of size [4, 3, 3, 3] instead");
  CHECK_HAS(KILN_ERROR_OF(conv_transpose2d(xt, wt, Tensor(), {1}, {0}, {-1})), "[conv_transpose2d]", "negative output_padding is not supported");
  CHECK_HAS(KILN_ERROR_OF(pixel_shuffle(ones({1, 7, 2, 2}), 2)), "[pixel_shuffle]",
            "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of upscale_factor, but input.size(-3)=7 is not divisible by 4");
  CHECK_HAS(KILN_ERROR_OF(pixel_shuffle(ones({7, 2}), 2)), "[pixel_shuffle]", "expects input to have at least 3 dimensions, but got input with 2 dimension(s)");
  CHECK_HAS(KILN_ERROR_OF(pixel_shuffle(ones({1, 4, 2, 2}), 0)), "[pixel_shuffle]", "expects a positive upscale_factor, but got 0");
  CHECK_HAS(KILN_ERROR_OF(pixel_unshuffle(ones({1, 1, 3, 4}), 2)), "[pixel_unshuffle]",
            "pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)=3 is not divisible by 2");
  CHECK_HAS(KILN_ERROR_OF(glu(ones({3, 5}))), "[glu]", "Halving dimension must be even, but dimension 1 is size 5");
  CHECK_HAS(KILN_ERROR_OF(cosine_similarity(ones({3, 5}), ones({4, 5}))), "[cosine_similarity]", "[3, 5]", "[4, 5]");
  using IO = InterpolateOptions;
  CHECK_HAS(KILN_ERROR_OF(interpolate(x, IO().size({2, 2}).scale_factor({2.0}))), "[interpolate]", "only one of size or scale_factor should be defined");
  CHECK_HAS(KILN_ERROR_OF(interpolate(x, IO())), "[interpolate]", "either size or scale_factor should be defined");
  CHECK_HAS(KILN_ERROR_OF(interpolate(x, IO().size({8, 8}).align_corners(true))), "[interpolate]",
            "align_corners option can only be set with the interpolating modes");
  CHECK_HAS(KILN_ERROR_OF(interpolate(x, IO().size({8, 8, 8}))), "[interpolate]",
            "Input and output must have the same number of spatial dimensions, but got input with spatial dimensions of [3, 4] and output size of [8, 8, 8]");
  CHECK_HAS(KILN_ERROR_OF(interpolate(x, IO().size({8, 8}).mode(InterpolateMode::Linear))), "[interpolate]", "Got 4D input, but linear mode needs 3D input");
  CHECK_HAS(KILN_ERROR_OF(interpolate(x, IO().size({0, 2}))), "[interpolate]",
            "Input and output sizes should be greater than 0, but got input [3, 4] output [0, 2]");
  CHECK_HAS(KILN_ERROR_OF(interpolate(x.to(kInt64), IO().size({8, 8}))), "[interpolate]", "expected a floating point tensor");
  CHECK_HAS(KILN_ERROR_OF(max_pool2d(x, {3}, {}, {2})), "[max_pool2d]", "pad should be at most half of kernel size, but got pad=2 and kernel_size=3");
  CHECK_HAS(KILN_ERROR_OF(max_pool2d(x, {4})), "[max_pool2d]", "Given input size: (2x3x4). Calculated output size: (2x0x1). Output size is too small");
  CHECK_HAS(KILN_ERROR_OF(max_pool2d(x, {2}, {0})), "[max_pool2d]", "stride should not be zero");
  CHECK_HAS(KILN_ERROR_OF(max_pool2d(x.to(kInt64), {2})), "[max_pool2d]", "expected a floating point tensor");
  CHECK_HAS(KILN_ERROR_OF(max_pool2d(ones({1, 1, 0, 5}), {2})), "[max_pool2d]",
            "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got:[1, 1, 0, 5]");
  CHECK_HAS(KILN_ERROR_OF(max_pool2d(x, {2, 2, 2})), "[max_pool2d]", "kernel_size must either be a single int, or a tuple of 2 ints");
  CHECK_HAS(KILN_ERROR_OF(avg_pool2d(x, {2}, {}, {0}, false, true, 0)), "[avg_pool2d]", "divisor must be not zero");
  CHECK_HAS(KILN_ERROR_OF(adaptive_avg_pool2d(ones({1, 1, 0, 5}), {2})), "[adaptive_avg_pool2d]",
            "Expected input to have non-zero size for non-batch dimensions, but input has sizes [1, 1, 0, 5] with dimension 2 being empty");
  CHECK_HAS(KILN_ERROR_OF(adaptive_avg_pool2d(x, {-1})), "[adaptive_avg_pool2d]", "elements of output_size must be greater than or equal to 0");
  CHECK_HAS(KILN_ERROR_OF(adaptive_avg_pool2d(x, {2, 3, 4})), "[adaptive_avg_pool2d]", "output_size must be 2");
  CHECK_HAS(KILN_ERROR_OF(batch_norm(ones({1, 3}), Tensor(), Tensor(), Tensor(), Tensor(), true)), "[batch_norm]",
            "Expected more than 1 value per channel when training, got input size [1, 3]");
  CHECK_HAS(KILN_ERROR_OF(batch_norm(ones({2, 3}), Tensor(), Tensor())), "[batch_norm]", "running_mean must be defined in evaluation mode");
  CHECK_HAS(KILN_ERROR_OF(batch_norm(ones({2, 3}), zeros({4}), ones({4}))), "[batch_norm]", "running_mean should contain 3 elements not 4");
  CHECK_HAS(KILN_ERROR_OF(batch_norm(ones({2, 3}, kInt64), zeros({3}), ones({3}))), "[batch_norm]", "expected a floating point tensor");
  CHECK_HAS(KILN_ERROR_OF(group_norm(ones({2, 6, 3}), 4)), "[group_norm]",
            "Expected number of channels in input to be divisible by num_groups, but got input of shape [2, 6, 3] and num_groups=4");
  CHECK_HAS(KILN_ERROR_OF(group_norm(ones({2, 6, 3}), 3, ones({5}))), "[group_norm]",
            "Expected weight to be a vector of size equal to the number of channels in input, but got weight of shape [5]");
  CHECK_HAS(KILN_ERROR_OF(group_norm(ones({2, 6, 3}), 0)), "[group_norm]", "num_groups must be positive");
  CHECK_HAS(KILN_ERROR_OF(instance_norm(ones({2, 3, 1}))), "[instance_norm]", "Expected more than 1 spatial element when training, got input size [2, 3, 1]");
}

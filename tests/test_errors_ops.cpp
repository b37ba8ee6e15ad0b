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

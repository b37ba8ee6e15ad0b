// Shared rules of the front end: dim wrapping, broadcasting, promotion,
// and the small node builders every op uses (cast, expand, scalar).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/autograd/function.h"
#include "core/tensor_impl.h"
#include "kiln/error.h"
#include "kiln/functions.h"

namespace kiln {

// Ops record their backward functions (core/autograd/function.h).
using autograd::GradFn;
using autograd::record;

// Python-style dim: -1 is the last. A 0-dim tensor accepts -1 and 0.
int64_t wrap_dim(int64_t dim, int64_t rank, const char* op);
// NumPy broadcasting; PyTorch's message on mismatch.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);
// The same without an error: a and b broadcast into *out; the first dim
// where they clash, or -1.
int64_t broadcast_into(const Shape& a, const Shape& b, Shape* out);
// The dtype of the scalar as a wrapped number: bool, int64 or float32.
DType wrapped_scalar_dtype(const Scalar& s);

NodePtr cast_node(NodePtr n, DType dtype);
// Broadcasts n (a value of shape n->shape) to `shape` with zero strides.
NodePtr expand_node(NodePtr n, const Shape& shape);
NodePtr scalar_node(const Scalar& v, DType dtype, Device device);
NodePtr full_node(const Shape& shape, const Scalar& v, DType dtype, Device device);
// A 0-dim constant derived from a shape (a count): the JIT keeps it out of
// the kernel's code, so a new shape needs no new kernel.
NodePtr shape_scalar_node(double v, DType dtype, Device device);
// The same as an int64 Tensor: index arithmetic that depends on a shape (a
// dim's last position, a row's length in flat positions) reads it, so the
// kernels reading the positions are shape-generic.
Tensor shape_scalar(int64_t v, Device device);
// A view of n's value with a new shape of the same numel (row-major).
NodePtr reshape_node(NodePtr n, const Shape& shape);
// A view of n's row-major value: shape, offset and strides in its elements
// (Op::AsStrided); `store`: stored by its own kernel (node.h).
NodePtr as_strided_node(NodePtr n, Shape shape, int64_t offset, const Shape& strides, bool store = false);

// "[2, 3]", as messages print shapes.
std::string shape_text(const Shape& s);

// "Expected all tensors to be on the same device, but found at least two devices, ..."
void check_same_device(const char* op, std::initializer_list<const Tensor*> tensors);
void check_same_device(const char* op, const std::vector<const Tensor*>& tensors);
void check_shape_nonneg(const Shape& sizes, const char* op);
// self = result of an out-of-place op on self (inplace.cpp), under op's
// name: PyTorch's in-place rules checked, then the write.
Tensor& assign_result(Tensor& self, const Tensor& result, const char* op);
// "[op] expected a defined tensor but got an undefined one"
void check_defined(const Tensor& t, const char* op);
// A fill value (full, fill_) must fit the dtype, as PyTorch's checked
// Scalar conversion: "value cannot be converted to type uint8_t without overflow".
void check_fill_value(const Scalar& v, DType dtype, const char* op);

// Ops with floating kernels only (activations, losses): "[op] not
// implemented for Long: expected a floating point tensor (shape [3])".
void check_floating(const Tensor& x, const char* op);
// The dtype floating ops compute in: t itself if floating, else the default float dtype.
DType floating_compute_type(DType t);
// The largest finite value of a floating dtype (float16 65504, ...).
double largest_finite(DType t);
// A 0-dim tensor as a 1-element vector, for ops that work along a dim
// (PyTorch accepts 0-dim inputs there); any other (or undefined) as it is.
Tensor as_vector(const Tensor& t);

// The first value of the int64 index outside [0, size) other than `skip`,
// if any (gather.cpp): one reduction, which evaluates the index, and a scan
// of its values only when one is outside.
std::optional<int64_t> first_outside(const Tensor& index, int64_t size, std::optional<int64_t> skip = std::nullopt);

// The Gather / ScatterAdd / Scatter nodes (gather.cpp) for indices known to
// be in range (the gradients of gather and the scatters reuse checked ones).
// scatter_node's src may be undefined: `value` then, as PyTorch's
// scatter(dim, index, value).
Tensor gather_node(const Tensor& x, int64_t dim, const Tensor& index, const char* op);
// Advanced indexing (advanced_index.cpp): is t a mask (bool, uint8); x read
// at index tensors (positions or masks) placed at `dims` of x (increasing);
// x with `value` written (added) there, a new tensor.
bool is_mask(const Tensor& t);
// A mask placed at dim d of x covers x's dims d.. with equal sizes.
void check_mask_shape(const Tensor& mask, const Tensor& x, int64_t d, const char* op);
Tensor index_by_tensors(const Tensor& x, const std::vector<int64_t>& dims, const std::vector<Tensor>& indices);
Tensor put_by_tensors(const Tensor& x, const std::vector<int64_t>& dims, const std::vector<Tensor>& indices,
                      const Tensor& value, bool accumulate);
// The basic part of an index (integers, slices, None, ...: views) applied
// to t; each tensor index is left for index_by_tensors with the dim of the
// view it applies to (views.cpp).
Tensor apply_basic_index(const Tensor& t, const std::vector<indexing::TensorIndex>& indices,
                         std::vector<int64_t>* dims, std::vector<Tensor>* tensors);

// A 1-D index laid along dim d and broadcast to `shape` (whose dim d is its
// length): a stride-0 view, no copy (index_select's gather index).
Tensor laid_along(const Tensor& positions, int64_t d, const Shape& shape);
// (x - mean) / sqrt(var + eps) over dims, the biased variance, with the
// statistics (kept dims): layer_norm, batch_norm, instance_norm and
// group_norm's normalization (core/normalization.cpp).
struct Normalized {
  Tensor out, mean, var;
};
Normalized normalize_over(const Tensor& x, const Shape& dims, double eps);
// t's value (row-major) computed by a kernel of its own before its readers
// run (Node::store), with t's gradient (CloneBackward0): the taps of a
// window fold read a padded input stored this way plainly, where computing
// it inline costs each tap a mask, and a staged fold's partial sums are
// stored this way (views.cpp). t itself when stored.
Tensor stored_copy(const Tensor& t);

// unfold's adjoint (core/reshaping.cpp): windows [.., O at dim d, .., K]
// (window o's element k at position o * step + k * dilation) added back
// into a dim of size n: [.., n, ..]. Windows up to 16 wide are a sum of
// masked gathers that fuses into one kernel (no scatter); longer ones
// index_add.
Tensor fold_windows(const Tensor& windows, int64_t d, int64_t n, int64_t step, int64_t dilation);
// A window's taps in row-major order (pooling's folds, depthwise
// convolution): tap, one index per window dim, steps to the next one
// (false past the last); window_tap selects it from windows whose last
// tap.size() dims are the window's.
bool next_tap(Shape& tap, const Shape& kernel);
Tensor window_tap(const Tensor& windows, const Shape& tap);
// fold_windows' adjoint (its gradient, Col2ImBackward0): the windows of
// shape `windows` read from g [.., n, ..]: a view of g (cropped to the
// windows' reach, or padded with zeros past its end), unfolded.
Tensor unfold_windows(const Tensor& g, const Shape& windows, int64_t d, int64_t step, int64_t dilation);
// The gradient of avg_pool (pooling.cpp) for an input of input_sizes; ints
// as avg_pool records them: {k, ceil_mode, count_include_pad, has divisor,
// divisor, kernel..., stride..., padding...}.
Tensor avg_pool_backward(const Tensor& g, const Shape& input_sizes, const std::vector<int64_t>& ints);
Tensor scatter_add_node(const Tensor& base, int64_t dim, const Tensor& index, const Tensor& src, const char* op);
Tensor cumsum_node(const Tensor& x, int64_t dim, const char* op);  // scan.cpp
Tensor scatter_node(const Tensor& base, int64_t dim, const Tensor& index, const Tensor& src, Scalar value,
                    const char* op);

// The options of a *_like factory: o's dtype and device, else t's (t must
// be defined), and o's requires_grad.
TensorOptions like_options(const Tensor& t, const TensorOptions& o);

// t / count, the count being a runtime value of the kernel (see
// shape_scalar_node), so a new shape needs no new kernel. Differentiable.
Tensor divide_by_count(const Tensor& t, int64_t count);

// Elementwise builders (elementwise.cpp), shared by the in-place ops.
// integer_division: Div in the common dtype even when integral (truncated)
Tensor binary_op(Op op, const Tensor& a, const Tensor& b, const char* name, bool integer_division = false);
Tensor binary_op(Op op, const Tensor& a, const Scalar& b, const char* name, bool scalar_first = false);

}  // namespace kiln

// Linear algebra helpers around matmul (matmul.cpp), as PyTorch's: dot,
// vdot, mv, bmm with their own shape checks; addmm / addmv / baddbmm
// (beta * self + alpha * product: the add fuses into the kernel after the
// BLAS call); trace, diag, diag_embed, kron and cross, written with kiln's
// views and elementwise ops.
#include <cstdlib>

#include "core/ops_common.h"
#include "core/provenance.h"

namespace kiln {

namespace {
Tensor vector_product(const Tensor& a, const Tensor& b, const char* op, GradFn name) {
  check_defined(a, op);
  check_defined(b, op);
  KILN_CHECK(a.dim() == 1 && b.dim() == 1, op, "1D tensors expected, but got ", a.dim(), "D and ", b.dim(),
             "D tensors (shapes ", a.sizes(), " and ", b.sizes(), ")");
  KILN_CHECK(a.dtype() == b.dtype(), op, op, " : expected both vectors to have same dtype, but found ",
             scalar_type_name(a.dtype()), " and ", scalar_type_name(b.dtype()));
  KILN_CHECK(a.numel() == b.numel(), op, "inconsistent tensor size, expected tensor [", a.numel(), "] and src [",
             b.numel(), "] to have the same number of elements, but got ", a.numel(), " and ", b.numel(),
             " elements respectively");
  Tensor out = a.matmul(b);
  if (out.grad_fn()) autograd::relabel(out, name);
  return out;
}

// beta * self + alpha * product; beta == 0 ignores self (its NaNs too), as PyTorch.
Tensor add_scaled(const Tensor& self, const Tensor& product, const Scalar& beta, const Scalar& alpha, const char* op) {
  check_defined(self, op);
  const Shape out = broadcast_shapes(self.sizes(), product.sizes(), op);
  KILN_CHECK(out == product.sizes(), op, "the input of shape ", self.sizes(),
             " does not broadcast to the product's shape ", product.sizes());
  Tensor p = alpha.to_double() == 1.0 ? product : product * alpha;
  if (beta.to_double() == 0.0) return p;
  return (beta.to_double() == 1.0 ? self : self * beta) + p;
}
}  // namespace

Tensor Tensor::dot(const Tensor& other, SourceLoc loc) const {
  const LocScope at(loc);
  return vector_product(*this, other, "dot", GradFn::DotBackward0);
}
Tensor Tensor::vdot(const Tensor& other, SourceLoc loc) const {  // real tensors: no conjugate
  const LocScope at(loc);
  return vector_product(*this, other, "vdot", GradFn::VdotBackward0);
}

Tensor Tensor::mv(const Tensor& vec, SourceLoc loc) const {
  const LocScope at(loc);
  check_defined(*this, "mv");
  check_defined(vec, "mv");
  KILN_CHECK(dim() == 2 && vec.dim() == 1, "mv", "vector + matrix @ vector expected, got ", dim(), "D and ",
             vec.dim(), "D (shapes ", sizes(), " and ", vec.sizes(), ")");
  return matmul(vec);
}

Tensor Tensor::bmm(const Tensor& mat2, SourceLoc loc) const {
  const LocScope at(loc);
  check_defined(*this, "bmm");
  check_defined(mat2, "bmm");
  KILN_CHECK(dim() == 3, "bmm", "batch1 must be a 3D tensor (got shape ", sizes(), ")");
  KILN_CHECK(mat2.dim() == 3, "bmm", "batch2 must be a 3D tensor (got shape ", mat2.sizes(), ")");
  KILN_CHECK(mat2.sizes()[0] == sizes()[0] && mat2.sizes()[1] == sizes()[2], "bmm",
             "Expected size for first two dimensions of batch2 tensor to be: [", sizes()[0], ", ", sizes()[2],
             "] but got: [", mat2.sizes()[0], ", ", mat2.sizes()[1], "]. (shapes ", sizes(), " and ", mat2.sizes(),
             ")");
  Tensor out = matmul(mat2);
  if (out.grad_fn()) autograd::relabel(out, GradFn::BmmBackward0);
  return out;
}

Tensor Tensor::addmm(const Tensor& mat1, const Tensor& mat2, Scalar beta, Scalar alpha, SourceLoc loc) const {
  const LocScope at(loc);
  check_defined(mat1, "addmm");
  return add_scaled(*this, mat1.mm(mat2), beta, alpha, "addmm");
}
Tensor Tensor::addmv(const Tensor& mat, const Tensor& vec, Scalar beta, Scalar alpha, SourceLoc loc) const {
  const LocScope at(loc);
  check_defined(mat, "addmv");
  return add_scaled(*this, mat.mv(vec), beta, alpha, "addmv");
}
Tensor Tensor::baddbmm(const Tensor& batch1, const Tensor& batch2, Scalar beta, Scalar alpha, SourceLoc loc) const {
  const LocScope at(loc);
  check_defined(batch1, "baddbmm");
  return add_scaled(*this, batch1.bmm(batch2), beta, alpha, "baddbmm");
}

Tensor Tensor::trace(SourceLoc loc) const {
  const LocScope at(loc);
  check_defined(*this, "trace");
  KILN_CHECK(dim() == 2, "trace", "trace: expected a matrix, but got tensor with dim ", dim(), " (shape ", sizes(),
             ")");
  return diagonal().sum();
}

Tensor Tensor::diag_embed(int64_t offset, int64_t dim1, int64_t dim2, SourceLoc loc) const {
  const LocScope at(loc);
  check_defined(*this, "diag_embed");
  const Tensor x = as_vector(*this);
  const int64_t rank = x.dim() + 1;
  const int64_t a = wrap_dim(dim1, rank, "diag_embed"), b = wrap_dim(dim2, rank, "diag_embed");
  KILN_CHECK(a != b, "diag_embed", "diagonal dimensions cannot be identical ", dim1, ", ", dim2);
  const int64_t n = std::llabs(offset) + x.sizes().back();
  Shape shape(x.sizes().begin(), x.sizes().end() - 1);
  shape.insert(shape.begin() + std::min(a, b), n);
  shape.insert(shape.begin() + std::max(a, b), n);
  Tensor out = zeros(shape, TensorOptions(x.dtype()).device(x.device()));
  out.diagonal(offset, a, b).copy_(x);
  return out;
}

Tensor Tensor::diag(int64_t diagonal, SourceLoc loc) const {
  const LocScope at(loc);
  check_defined(*this, "diag");
  KILN_CHECK(dim() == 1 || dim() == 2, "diag", "diag(): Supports 1D or 2D tensors. Got ", dim(), "D (shape ", sizes(),
             ")");
  if (dim() == 1) return diag_embed(diagonal, 0, 1);
  return this->diagonal(diagonal).clone();
}

Tensor Tensor::kron(const Tensor& other, SourceLoc loc) const {
  const LocScope at(loc);
  check_defined(*this, "kron");
  check_defined(other, "kron");
  const int64_t rank = std::max(dim(), other.dim());
  Shape a(static_cast<size_t>(rank - dim()), 1), b(static_cast<size_t>(rank - other.dim()), 1);
  a.insert(a.end(), sizes().begin(), sizes().end());
  b.insert(b.end(), other.sizes().begin(), other.sizes().end());
  // a as [a0, 1, a1, 1, ...], b as [1, b0, 1, b1, ...]: their product is [a0, b0, a1, b1, ...]
  Shape ai, bi, out;
  for (int64_t k = 0; k < rank; ++k) {
    ai.insert(ai.end(), {a[k], 1});
    bi.insert(bi.end(), {1, b[k]});
    out.push_back(a[k] * b[k]);
  }
  return (reshape(ai) * other.reshape(bi)).reshape(out);
}

Tensor Tensor::cross(const Tensor& other, std::optional<int64_t> dim, SourceLoc loc) const {
  const LocScope at(loc);
  check_defined(*this, "cross");
  check_defined(other, "cross");
  KILN_CHECK(this->dim() == other.dim(), "cross", "linalg.cross: inputs must have the same number of dimensions "
             "(shapes ", sizes(), " and ", other.sizes(), ")");
  const Shape shape = broadcast_shapes(sizes(), other.sizes(), "cross");
  int64_t d = -1;
  if (dim) {
    d = wrap_dim(*dim, static_cast<int64_t>(shape.size()), "cross");
  } else {  // torch.cross's default: the first dim of size 3
    for (size_t k = 0; k < shape.size() && d < 0; ++k)
      if (shape[k] == 3) d = static_cast<int64_t>(k);
    KILN_CHECK(d >= 0, "cross", "no dimension of size 3 in input (shapes ", sizes(), " and ", other.sizes(), ")");
  }
  KILN_CHECK(sizes()[d] == 3 && other.sizes()[d] == 3, "cross", "linalg.cross: inputs dimension ", d,
             " must have length 3. Got ", sizes()[d], " and ", other.sizes()[d]);
  // [a1 b2 - a2 b1, a2 b0 - a0 b2, a0 b1 - a1 b0]: rolls by one and two
  return roll({-1}, {d}) * other.roll({-2}, {d}) - roll({-2}, {d}) * other.roll({-1}, {d});
}

}  // namespace kiln

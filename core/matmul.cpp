// matmul with torch.matmul's rules: 1-D·1-D is a dot product, 1-D operands
// gain and then lose a dim, batch dims broadcast. One Matmul node over
// [..., M, K] x [..., K, N].
#include "core/ops_common.h"
#include "core/provenance.h"

namespace kiln {

Tensor matmul(const Tensor& a, const Tensor& b, SourceLoc loc) {
  const LocScope at(loc);
  check_same_device("matmul", {&a, &b});
  KILN_CHECK(a.dim() >= 1 && b.dim() >= 1, "matmul",
             "both arguments to matmul need to be at least 1D, but they are ", a.dim(), "D and ",
             b.dim(), "D");
  KILN_CHECK(a.dtype() == b.dtype(), "matmul", "expected scalar type ", scalar_type_name(a.dtype()),
             " but found ", scalar_type_name(b.dtype()), " (convert one with .to(dtype))");
  KILN_CHECK(a.dtype() != DType::Bool, "matmul", "matmul is not implemented for bool tensors");
  const int64_t ka = a.sizes().back();
  const int64_t kb = b.dim() == 1 ? b.sizes()[0] : b.sizes()[b.dim() - 2];
  if (a.dim() == 1 && b.dim() == 1)
    KILN_CHECK(ka == kb, "matmul", "inconsistent tensor size, expected tensor [", ka,
               "] and src [", kb, "] to have the same number of elements, but got ", ka, " and ",
               kb, " elements respectively");
  else if (a.dim() == 2 && b.dim() == 1)
    KILN_CHECK(ka == kb, "matmul", "size mismatch, got input (", a.sizes()[0], "), mat (",
               a.sizes()[0], "x", ka, "), vec (", kb, ")");
  else if (b.dim() <= 2 && a.dim() <= 2)
    KILN_CHECK(ka == kb, "matmul", "mat1 and mat2 shapes cannot be multiplied (",
               a.dim() == 1 ? 1 : a.sizes()[0], "x", ka, " and ", kb, "x",
               b.dim() == 1 ? 1 : b.sizes()[1], ")");
  else
    KILN_CHECK(ka == kb, "matmul", "Expected size for first two dimensions of batch2 tensor to be: [",
               b.dim() > 2 ? b.sizes()[0] : 1, ", ", ka, "] but got: [", b.dim() > 2 ? b.sizes()[0] : 1,
               ", ", kb, "]. (shapes ", a.sizes(), " and ", b.sizes(), ")");

  // Promote 1-D operands to matrices, remembering which dims to drop.
  Tensor A1, B1;  // promoted copies only when needed (a Tensor copy is an atomic increment)
  const Tensor& A = a.dim() == 1 ? (A1 = a.unsqueeze(0)) : a;
  const Tensor& B = b.dim() == 1 ? (B1 = b.unsqueeze(1)) : b;
  Shape ba(A.sizes().begin(), A.sizes().end() - 2), bb(B.sizes().begin(), B.sizes().end() - 2);
  Shape batch = broadcast_shapes(ba, bb, "matmul");
  const int64_t M = A.sizes()[A.dim() - 2], K = ka, N = B.sizes().back();
  Shape sa = batch, sb = batch, so = batch;
  sa.insert(sa.end(), {M, K});
  sb.insert(sb.end(), {K, N});
  so.insert(so.end(), {M, N});
  NodePtr r = make_node(Op::Matmul, a.dtype(), a.device(), so,
                        node_list(expand_node(node_of(A, "matmul"), sa), expand_node(node_of(B, "matmul"), sb)));
  Shape final_shape = batch;
  if (a.dim() > 1) final_shape.push_back(M);
  if (b.dim() > 1) final_shape.push_back(N);
  Tensor out = make_tensor(reshape_node(std::move(r), final_shape));
  if (autograd::should_record({&a, &b})) {
    GradFn kind = a.dim() == 2 && b.dim() == 2   ? GradFn::MmBackward0
                  : a.dim() == 2 && b.dim() == 1 ? GradFn::MvBackward0
                  : a.dim() == 1 && b.dim() == 1 ? GradFn::DotBackward0
                  : a.dim() == 1 && b.dim() == 2 ? GradFn::SqueezeBackward3
                                                 : GradFn::BmmBackward;
    autograd::FunctionPtr f = record(kind, out, {&a, &b});
    f->save(a, f->needs(1));
    f->save(b, f->needs(0));
  }
  return out;
}

Tensor mm(const Tensor& a, const Tensor& b, SourceLoc loc) {
  const LocScope at(loc);
  KILN_CHECK(a.dim() == 2, "mm", "self must be a matrix (got ", a.dim(), "D)");
  KILN_CHECK(b.dim() == 2, "mm", "mat2 must be a matrix (got ", b.dim(), "D)");
  return matmul(a, b);
}

Tensor Tensor::matmul(const Tensor& o, SourceLoc loc) const {
  const LocScope at(loc);
  return kiln::matmul(*this, o);
}
Tensor Tensor::mm(const Tensor& o, SourceLoc loc) const {
  const LocScope at(loc);
  return kiln::mm(*this, o);
}

}  // namespace kiln

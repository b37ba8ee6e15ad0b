// Joining: cat (one Cat node over promoted inputs) and stack (cat of unsqueezed).
#include "core/ops_common.h"
#include "core/provenance.h"

namespace kiln {

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim, SourceLoc loc) {
  const LocScope at(loc);
  KILN_CHECK(!tensors.empty(), "cat", "torch.cat(): expected a non-empty list of Tensors");
  std::vector<const Tensor*> ptrs;
  for (const Tensor& t : tensors) ptrs.push_back(&t);
  check_same_device("cat", ptrs);
  // PyTorch skips legacy empty 1-D tensors of shape [0] when others have data.
  std::vector<const Tensor*> parts;
  for (const Tensor* t : ptrs)
    if (!(t->dim() == 1 && t->numel() == 0)) parts.push_back(t);
  DType dt = tensors[0].dtype();
  for (const Tensor* t : ptrs) dt = promote_types(dt, t->dtype());
  if (parts.empty()) return tensors[0].to(dt).clone();
  const Tensor& first = *parts[0];
  int64_t d = wrap_dim(dim, first.dim(), "cat");
  KILN_CHECK(first.dim() > 0, "cat", "zero-dimensional tensor (at position 0) cannot be concatenated");
  Shape out = first.sizes();
  out[d] = 0;
  NodeList nodes;
  for (size_t i = 0; i < parts.size(); ++i) {
    const Tensor& t = *parts[i];
    KILN_CHECK(t.dim() == first.dim(), "cat", "Tensors must have same number of dimensions: got ",
               first.dim(), " and ", t.dim());
    for (int64_t k = 0; k < first.dim(); ++k)
      KILN_CHECK(k == d || t.sizes()[k] == first.sizes()[k], "cat",
                 "Sizes of tensors must match except in dimension ", d, ". Expected size ",
                 first.sizes()[k], " but got size ", t.sizes()[k], " for tensor number ", i,
                 " in the list. (shapes ", first.sizes(), " and ", t.sizes(), ")");
    out[d] += t.sizes()[d];
    nodes.push_back(cast_node(node_of(t, "cat"), dt));
  }
  Tensor r;
  if (nodes.size() == 1) {
    r = make_tensor(nodes[0]);
  } else {
    Attrs a;
    a.ints = {d};
    r = make_tensor(make_node(Op::Cat, dt, first.device(), out, std::move(nodes), std::move(a)));
  }
  if (auto f = record(GradFn::CatBackward0, r, parts)) {
    f->ints.push_back(d);
    for (const Tensor* t : parts) f->ints.push_back(t->sizes()[d]);
  }
  return r;
}

Tensor stack(const std::vector<Tensor>& tensors, int64_t dim, SourceLoc loc) {
  const LocScope at(loc);
  KILN_CHECK(!tensors.empty(), "stack", "stack expects a non-empty TensorList");
  for (size_t i = 0; i < tensors.size(); ++i)
    KILN_CHECK(tensors[i].defined(), "stack",
               "expected a defined tensor but got an undefined one (at entry ", i, ")");
  std::vector<Tensor> parts;
  int64_t d = wrap_dim(dim, tensors[0].dim() + 1, "stack");
  for (size_t i = 0; i < tensors.size(); ++i) {
    KILN_CHECK(tensors[i].sizes() == tensors[0].sizes(), "stack",
               "stack expects each tensor to be equal size, but got ", tensors[0].sizes(),
               " at entry 0 and ", tensors[i].sizes(), " at entry ", i);
  }
  Tensor r;
  {
    AutoGradMode no_grad(false);
    for (const Tensor& t : tensors) parts.push_back(t.unsqueeze(d));
    r = cat(parts, d);
  }
  std::vector<const Tensor*> inputs;
  for (const Tensor& t : tensors) inputs.push_back(&t);
  if (auto f = record(GradFn::StackBackward0, r, inputs)) f->ints = {d};
  return r;
}

}  // namespace kiln

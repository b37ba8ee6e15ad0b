// Advanced indexing, NumPy's rules as PyTorch applies them: t.index({Slice(),
// idx}) with int64 position tensors (negative counts from the end)
// or bool masks, and index_put_ with them; nonzero and masked_select.
//
// The index tensors broadcast to one shape B. The indexed dims are merged
// into one (after moving them to the front when they are not adjacent, as
// NumPy puts B first then) and read with one gather at the linear position
// sum(idx_j * stride_j): the read fuses with what feeds and consumes it, and
// its gradient is a scatter_add. A write is a Scatter (ScatterAdd with
// accumulate) of the value into the merged tensor. A mask becomes the
// positions of its true elements, which depend on its values: it is
// evaluated, as PyTorch does (it synchronizes with a GPU there). Writing a
// scalar through a single mask needs no positions: it is masked_fill_.
#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "core/buffer.h"
#include "core/node.h"
#include "core/ops_common.h"
#include "core/provenance.h"

namespace kiln {

indexing::TensorIndex::TensorIndex(const Tensor& t) : kind_(Kind::Tensor), tensor_(t.impl_ptr()) {}
Tensor indexing::TensorIndex::tensor() const { return Tensor(tensor_); }

bool is_mask(const Tensor& t) { return t.dtype() == DType::Bool || t.dtype() == DType::UInt8; }

void check_mask_shape(const Tensor& mask, const Tensor& x, int64_t d, const char* op) {
  for (int64_t j = 0; j < mask.dim(); ++j)
    KILN_CHECK(mask.size(j) == x.size(d + j), op, "The shape of the mask ", mask.sizes(), " at index ", j,
               " does not match the shape of the indexed tensor ", x.sizes(), " at index ", d + j);
}

namespace {

std::string shapes_text(const std::vector<Tensor>& ts) {
  std::string s;
  for (const Tensor& t : ts) {
    if (!s.empty()) s += ", ";
    s += shape_text(t.sizes());
  }
  return s;
}

// The read or write of x at the index tensors: the merged view and the
// linear positions, with what is needed to undo the merge.
struct Plan {
  Tensor merged;    // x, its indexed dims (moved to the front unless adjacent) merged into dim q
  int64_t q = 0;    // where the indexed dims were merged
  Tensor position;  // linear position in the merged dim, shape B
  Shape b;          // the index tensors' broadcast shape
  Shape perm;       // x's dims as `merged` has them before the merge (empty: none moved)
  Shape unmerged;   // the shape before the merge
  Shape result;     // merged's shape with dim q replaced by B
};

Plan plan_for(const Tensor& x, std::vector<int64_t> dims, std::vector<Tensor> indices, const char* op) {
  // masks become one position tensor per dim they cover
  std::vector<int64_t> ds;
  std::vector<Tensor> is;
  for (size_t k = 0; k < dims.size(); ++k) {
    const Tensor& t = indices[k];
    const int64_t d = dims[k];
    check_same_device(op, {&x, &t});
    if (is_mask(t)) {
      check_mask_shape(t, x, d, op);
      const Tensor nz = t.nonzero();
      for (int64_t j = 0; j < t.dim(); ++j) {
        ds.push_back(d + j);
        is.push_back(nz.select(1, j));
      }
      continue;
    }
    KILN_CHECK(t.dtype() == DType::Int64, op, "tensors used as indices must be long, byte or bool tensors (got ",
               scalar_type_name(t.dtype()), " index ", t.sizes(), ")");
    ds.push_back(d);
    is.push_back(t);
  }
  Plan p;
  for (const Tensor& t : is) {
    Shape out;
    KILN_CHECK(broadcast_into(p.b, t.sizes(), &out) < 0, op,
               "shape mismatch: indexing tensors could not be broadcast together with shapes ", shapes_text(is));
    p.b = out;
  }
  // positions in range, negative ones counted from the end
  int64_t stride = 1;
  Tensor position;
  for (size_t k = ds.size(); k-- > 0;) {
    const int64_t size = x.size(ds[k]);
    const Tensor w = where(is[k] < 0, is[k] + size, is[k]);
    if (const std::optional<int64_t> bad = first_outside(w, size))
      KILN_CHECK(false, op, "index ", *bad < 0 ? *bad - size : *bad, " is out of bounds for dimension ", ds[k],
                 " with size ", size);
    const Tensor term = stride == 1 ? w : w * stride;
    position = position.defined() ? term + position : term;
    stride *= size;
  }
  p.position = position.expand(p.b);
  bool adjacent = true;
  for (size_t k = 1; k < ds.size(); ++k) adjacent = adjacent && ds[k] == ds[k - 1] + 1;
  Tensor moved = x;
  if (!adjacent) {
    p.perm.assign(ds.begin(), ds.end());
    for (int64_t d = 0; d < x.dim(); ++d)
      if (std::find(ds.begin(), ds.end(), d) == ds.end()) p.perm.push_back(d);
    moved = x.permute(p.perm);
  }
  p.q = adjacent ? ds[0] : 0;
  p.unmerged = moved.sizes();
  const int64_t m = static_cast<int64_t>(ds.size());
  p.merged = m == 1 ? moved : moved.flatten(p.q, p.q + m - 1);
  const Shape& ms = p.merged.sizes();
  p.result.assign(ms.begin(), ms.begin() + p.q);
  p.result.insert(p.result.end(), p.b.begin(), p.b.end());
  p.result.insert(p.result.end(), ms.begin() + p.q + 1, ms.end());
  return p;
}

// The merged shape with dim q the positions' count: a gather's or a
// scatter's index shape.
Shape along(const Plan& p) {
  Shape s = p.merged.sizes();
  s[static_cast<size_t>(p.q)] = p.position.numel();
  return s;
}

}  // namespace

Tensor index_by_tensors(const Tensor& x, const std::vector<int64_t>& dims, const std::vector<Tensor>& indices) {
  const Plan p = plan_for(x, dims, indices, "index");
  const Tensor out = gather_node(p.merged, p.q, laid_along(p.position.reshape({-1}), p.q, along(p)), "index");
  return out.reshape(p.result);
}

Tensor put_by_tensors(const Tensor& x, const std::vector<int64_t>& dims, const std::vector<Tensor>& indices,
                      const Tensor& value, bool accumulate) {
  const char* op = "index_put_";
  const Plan p = plan_for(x, dims, indices, op);
  check_same_device(op, {&x, &value});
  KILN_CHECK(value.dtype() == x.dtype(), op, "Index put requires the source and destination dtypes match, got ",
             scalar_type_name(x.dtype()), " for the destination and ", scalar_type_name(value.dtype()),
             " for the source.");
  Shape reach;
  KILN_CHECK(broadcast_into(value.sizes(), p.result, &reach) < 0 && reach == p.result, op, "shape mismatch: value tensor of shape ", value.sizes(),
             " cannot be broadcast to indexing result of shape ", p.result);
  const Shape s = along(p);
  const Tensor src = value.expand(p.result).reshape(s);
  const Tensor at = laid_along(p.position.reshape({-1}), p.q, s);
  Tensor out = accumulate ? scatter_add_node(p.merged, p.q, at, src, op) : scatter_node(p.merged, p.q, at, src, 0, op);
  if (out.sizes() != p.unmerged) out = out.reshape(p.unmerged);
  if (p.perm.empty()) return out;
  Shape inverse(p.perm.size());
  for (size_t i = 0; i < p.perm.size(); ++i) inverse[static_cast<size_t>(p.perm[i])] = static_cast<int64_t>(i);
  return out.permute(inverse);
}

Tensor Tensor::nonzero(SourceLoc loc) const {
  const LocScope at(loc);
  KILN_CHECK(defined(), "nonzero", "expected a defined tensor but got an undefined one");
  const std::vector<uint8_t> on = ne(0).cpu().to_vector<uint8_t>();
  const int64_t r = dim();
  const int64_t n = std::count(on.begin(), on.end(), uint8_t{1});
  BufferPtr buf = Buffer::allocate(DType::Int64, n * r, Device());
  int64_t* out = buf->as<int64_t>();
  // Without a branch per element (a random mask mispredicted half of them:
  // 1 thread, [1024, 1024] 15 -> 3.1 ms): each element up to the last
  // nonzero one writes its coordinates at the next free row, which its
  // flag then keeps or leaves to the next element; none writes past the
  // last row.
  int64_t last = static_cast<int64_t>(on.size()) - 1;
  while (last >= 0 && on[static_cast<size_t>(last)] == 0) --last;
  if (r > 0) {
    const int64_t inner = size(r - 1);
    Shape coord(static_cast<size_t>(r), 0);  // the outer dims' coordinates
    int64_t j = 0;
    for (int64_t base = 0; base <= last; base += inner) {  // a row along the last dim
      const int64_t end = std::min(inner, last + 1 - base);
      for (int64_t c = 0; c < end; ++c) {
        int64_t* row = out + j * r;
        for (int64_t d = 0; d + 1 < r; ++d) row[d] = coord[static_cast<size_t>(d)];
        row[r - 1] = c;
        j += on[static_cast<size_t>(base + c)];
      }
      for (int64_t d = r - 1; d-- > 0;) {  // the next row in row-major order
        if (++coord[static_cast<size_t>(d)] < size(d)) break;
        coord[static_cast<size_t>(d)] = 0;
      }
    }
  }
  const Tensor t = make_tensor(make_buffer_node(std::move(buf), {n, r}));
  return device().is_cpu() ? t : t.to(device());
}

Tensor Tensor::masked_select(const Tensor& mask, SourceLoc loc) const {
  const LocScope at(loc);
  KILN_CHECK(defined() && mask.defined(), "masked_select", "expected defined tensors but got an undefined one");
  KILN_CHECK(mask.dtype() == DType::Bool, "masked_select", "expected BoolTensor for mask (mask ",
             scalar_type_name(mask.dtype()), ")");
  check_same_device("masked_select", {this, &mask});
  const Shape b = broadcast_shapes(sizes(), mask.sizes(), "masked_select");
  const Tensor positions = mask.expand(b).reshape({-1}).nonzero().reshape({-1});
  return gather_node(expand(b).reshape({-1}), 0, positions, "masked_select");
}

}  // namespace kiln

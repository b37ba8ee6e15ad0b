// sort and what is read from it: argsort, topk, kthvalue, median,
// nanmedian, msort. The positions come from one ArgSort node (a library
// step of the JIT: core/sort_rows.h's stable order, NaN above numbers; for
// kthvalue and the medians a selection of one position in that order);
// the values are a gather at those positions, which fuses into whatever
// reads them. Each values tensor's gradient goes back to its positions.
#include <cmath>
#include <limits>

#include "core/ops_common.h"
#include "core/provenance.h"
#include "core/sort_rows.h"

namespace kiln {

namespace {

using autograd::GradFn;

// The first k positions (all: k < 0) along d that sort x; or, with a
// selection, the one position it picks (the k-th for SortSelect::Kth).
Tensor argsort_node(const Tensor& x, int64_t d, bool descending, const char* op, int64_t k = -1,
                    SortSelect select = SortSelect::First) {
  Shape s = x.sizes();
  if (k >= 0) s[static_cast<size_t>(d)] = k;
  Attrs a;
  a.ints = {d, descending ? 1 : 0, s[static_cast<size_t>(d)]};
  if (select != SortSelect::First) {
    s[static_cast<size_t>(d)] = 1;
    a.ints.push_back(static_cast<int64_t>(select));
  }
  return make_tensor(make_node(Op::ArgSort, DType::Int64, x.device(), s, node_list(node_of(x, op)), std::move(a)));
}

// x read at `positions` along d, the gradient to those positions (`kind`;
// keepdim false: positions and values have lost dim d).
Tensor values_at(const Tensor& t, int64_t d, const Tensor& positions, bool keepdim, GradFn kind, const char* op) {
  Tensor values;
  {
    AutoGradMode off(false);
    values = gather_node(as_vector(t), d, keepdim ? as_vector(positions) : positions.unsqueeze(d), op);
    values = t.dim() == 0 ? values.reshape({}) : keepdim ? values : values.squeeze(d);
  }
  if (auto f = record(kind, values, {&t})) {
    f->ints = {t.dim() == 0 ? 0 : d, keepdim ? 1 : 0};
    f->save(positions);
  }
  return values;
}

void check_sortable(const Tensor& t, const char* op) {
  KILN_CHECK(t.defined(), op, "expected a defined tensor but got an undefined one");
}

// The positions along d (of the ascending order) holding a row's median:
// the lower middle one, or (nan == propagate) the first NaN of a row that
// has one; ignoring NaNs, the lower middle of the numbers. Selected, not
// sorted (core/sort_rows.h; 1 thread: median(1) of [1024, 1024] 38 ->
// 10.7 ms, kthvalue(500, 1) of [4096, 1000] 208 -> 40 ms).
Tensor median_positions(const Tensor& x, int64_t d, bool ignore_nan, const char* op) {
  return argsort_node(x, d, false, op, 1, ignore_nan ? SortSelect::NanMedian : SortSelect::Median);
}

std::tuple<Tensor, Tensor> median_dim(const Tensor& t, int64_t dim, bool keepdim, bool ignore_nan) {
  const char* op = ignore_nan ? "nanmedian" : "median";
  check_sortable(t, op);
  const int64_t d = wrap_dim(dim, t.dim(), op);
  KILN_CHECK(t.dim() == 0 || t.size(d) > 0, op, op, "(): Expected reduction dim ", d,
             " to have non-zero size (shape ", shape_text(t.sizes()), ")");
  const Tensor x = as_vector(t);
  Tensor at = median_positions(x, d, ignore_nan, op);  // keepdim shape
  const Tensor positions = t.dim() == 0 ? at.reshape({}) : keepdim ? at : at.squeeze(d);
  return {values_at(t, d, positions, keepdim, ignore_nan ? GradFn::NanmedianBackward1 : GradFn::MedianBackward1, op),
          positions};
}

Tensor median_all(const Tensor& t, bool ignore_nan) {
  const char* op = ignore_nan ? "nanmedian" : "median";
  check_sortable(t, op);
  if (t.numel() == 0)
    return full(Shape{}, std::numeric_limits<double>::quiet_NaN(), TensorOptions(t.dtype()).device(t.device()));
  const Tensor flat = t.reshape({-1});
  const Tensor at = median_positions(flat, 0, ignore_nan, op).reshape({});
  Tensor values;
  {
    AutoGradMode off(false);
    values = gather_node(flat, 0, at.reshape({1}), op).reshape({});
  }
  if (auto f = record(ignore_nan ? GradFn::NanmedianBackward0 : GradFn::MedianBackward0, values, {&t})) {
    f->ints = {-1, 0};
    f->save(at);
  }
  return values;
}

}  // namespace

std::tuple<Tensor, Tensor> Tensor::sort(int64_t dim, bool descending, SourceLoc loc) const {
  const LocScope at(loc);
  check_sortable(*this, "sort");
  const int64_t d = wrap_dim(dim, this->dim(), "sort");
  Tensor positions = argsort_node(as_vector(*this), d, descending, "sort");
  if (this->dim() == 0) positions = positions.reshape({});
  return {values_at(*this, d, positions, true, GradFn::SortBackward0, "sort"), positions};
}

Tensor Tensor::argsort(int64_t dim, bool descending, SourceLoc loc) const {
  const LocScope at(loc);
  check_sortable(*this, "argsort");
  const int64_t d = wrap_dim(dim, this->dim(), "argsort");
  const Tensor positions = argsort_node(as_vector(*this), d, descending, "argsort");
  return this->dim() == 0 ? positions.reshape({}) : positions;
}

Tensor Tensor::msort(SourceLoc loc) const {
  const LocScope at(loc);
  return std::get<0>(sort(0, false, loc));
}

std::tuple<Tensor, Tensor> Tensor::topk(int64_t k, int64_t dim, bool largest, bool sorted, SourceLoc loc) const {
  const LocScope at(loc);
  (void)sorted;  // the k values always come sorted (PyTorch leaves the order unspecified)
  check_sortable(*this, "topk");
  const int64_t d = wrap_dim(dim, this->dim(), "topk");
  const int64_t n = this->dim() == 0 ? 1 : size(d);
  KILN_CHECK(k >= 0 && k <= n, "topk", "selected index k out of range (k = ", k, ", size ", n, " along dim ", d,
             " of shape ", shape_text(sizes()), ")");
  Tensor positions = argsort_node(as_vector(*this), d, largest, "topk", k);
  if (this->dim() == 0) positions = positions.reshape({});
  return {values_at(*this, d, positions, true, GradFn::TopkBackward0, "topk"), positions};
}

std::tuple<Tensor, Tensor> Tensor::kthvalue(int64_t k, int64_t dim, bool keepdim, SourceLoc loc) const {
  const LocScope at(loc);
  check_sortable(*this, "kthvalue");
  const int64_t d = wrap_dim(dim, this->dim(), "kthvalue");
  const int64_t n = this->dim() == 0 ? 1 : size(d);
  KILN_CHECK(k >= 1 && k <= n, "kthvalue", "kthvalue(): selected number k out of range for dimension ", d,
             " (k = ", k, ", size ", n, " of shape ", shape_text(sizes()), ")");
  Tensor at_k = argsort_node(as_vector(*this), d, false, "kthvalue", k, SortSelect::Kth);
  const Tensor positions = this->dim() == 0 ? at_k.reshape({}) : keepdim ? at_k : at_k.squeeze(d);
  return {values_at(*this, d, positions, keepdim, GradFn::KthvalueBackward0, "kthvalue"), positions};
}

std::tuple<Tensor, Tensor> Tensor::median(int64_t dim, bool keepdim, SourceLoc loc) const {
  const LocScope at(loc);
  return median_dim(*this, dim, keepdim, false);
}
Tensor Tensor::median(SourceLoc loc) const {
  const LocScope at(loc);
  return median_all(*this, false);
}
std::tuple<Tensor, Tensor> Tensor::nanmedian(int64_t dim, bool keepdim, SourceLoc loc) const {
  const LocScope at(loc);
  return median_dim(*this, dim, keepdim, true);
}
Tensor Tensor::nanmedian(SourceLoc loc) const {
  const LocScope at(loc);
  return median_all(*this, true);
}

}  // namespace kiln

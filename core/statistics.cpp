// Reductions built from the primitive ones (reduce.cpp), as PyTorch's:
// var_mean / std_mean (both results of one pass: evaluated together they
// share their kernel), aminmax, count_nonzero, nansum and nanmean.
#include <limits>

#include "core/ops_common.h"
#include "core/provenance.h"

namespace kiln {

std::tuple<Tensor, Tensor> var_mean(const Tensor& t, const Shape& dims, bool unbiased, bool keepdim, SourceLoc loc) {
  const LocScope at(loc);
  check_defined(t, "var_mean");
  return {t.var(dims, unbiased, keepdim), t.mean(dims, keepdim)};
}
std::tuple<Tensor, Tensor> std_mean(const Tensor& t, const Shape& dims, bool unbiased, bool keepdim, SourceLoc loc) {
  const LocScope at(loc);
  check_defined(t, "std_mean");
  return {t.std(dims, unbiased, keepdim), t.mean(dims, keepdim)};
}

std::tuple<Tensor, Tensor> Tensor::aminmax(std::optional<int64_t> dim, bool keepdim, SourceLoc loc) const {
  const LocScope at(loc);
  check_defined(*this, "aminmax");
  KILN_CHECK(numel() > 0, "aminmax", "aminmax(): cannot compute aminmax over an empty dimension as the operation "
             "has no identity (shape ", sizes(), ")");
  if (dim) return {amin(Shape{*dim}, keepdim), amax(Shape{*dim}, keepdim)};
  if (!keepdim) return {amin(Shape{}), amax(Shape{})};
  // all dims kept: every dim of size 1 (PyTorch's aminmax(keepdim=True))
  const Shape ones(static_cast<size_t>(this->dim()), 1);
  return {amin(Shape{}).reshape(ones), amax(Shape{}).reshape(ones)};
}

Tensor Tensor::count_nonzero(const Shape& dims, SourceLoc loc) const {
  const LocScope at(loc);
  check_defined(*this, "count_nonzero");
  return ne(0).sum(dims, false, DType::Int64);
}

Tensor Tensor::nansum(const Shape& dims, bool keepdim, std::optional<DType> dtype, SourceLoc loc) const {
  const LocScope at(loc);
  check_defined(*this, "nansum");
  const Tensor x = is_floating_point() ? where(isnan(), 0.0, *this) : *this;
  return x.sum(dims, keepdim, dtype);
}

Tensor Tensor::nanmean(const Shape& dims, bool keepdim, std::optional<DType> dtype, SourceLoc loc) const {
  const LocScope at(loc);
  check_defined(*this, "nanmean");
  KILN_CHECK(is_floating_point(), "nanmean", "nanmean(): expected input to have floating point dtype but got ",
             scalar_type_name(this->dtype()), " (shape ", sizes(), ")");
  const DType dt = dtype.value_or(this->dtype());
  const Tensor x = to(dt);
  // a slice of NaNs only: 0 / 0 = NaN, as PyTorch
  return x.nansum(dims, keepdim) / x.isnan().logical_not().sum(dims, keepdim, dt);
}

}  // namespace kiln

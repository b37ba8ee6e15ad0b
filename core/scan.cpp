// The scans: cumsum, cumprod, logcumsumexp, cummax, cummin. Each is a Scan node (one
// kernel whose loop along the dim carries the running value; the
// elementwise work feeding it is computed in that loop). As PyTorch:
// integers and bool sum and multiply to int64, `dtype` casts the input
// first; cummax / cummin keep the dtype and return the positions too (two
// nodes, one kernel when evaluated together).
#include <optional>

#include "core/ops_common.h"
#include "core/provenance.h"

namespace kiln {

namespace {

Tensor scan_node(Op op, const Tensor& x, int64_t d, const char* name) {
  Attrs a;
  a.ints = {d};
  const bool position = op == Op::CumArgMax || op == Op::CumArgMin;
  return make_tensor(make_node(op, position ? DType::Int64 : x.dtype(), x.device(), x.sizes(),
                               node_list(node_of(x, name)), std::move(a)));
}

// The input of cumsum / cumprod: cast to `dtype`, or integers to int64.
Tensor accumulated(const Tensor& t, std::optional<DType> dtype) {
  const DType dt = dtype ? *dtype : t.is_floating_point() ? t.dtype() : DType::Int64;
  return t.dtype() == dt ? t : t.to(dt);
}

// A 0-dim tensor scans as one element (as_vector), its result made 0-dim again.
Tensor back(const Tensor& r, const Tensor& t) { return t.dim() == 0 ? r.reshape({}) : r; }

std::tuple<Tensor, Tensor> running_extremum(const Tensor& t, int64_t dim, bool max) {
  const char* name = max ? "cummax" : "cummin";
  KILN_CHECK(t.defined(), name, "expected a defined tensor but got an undefined one");
  const int64_t d = wrap_dim(dim, t.dim(), name);
  const Tensor x = as_vector(t);
  Tensor values = back(scan_node(max ? Op::CumMax : Op::CumMin, x, d, name), t);
  Tensor indices = back(scan_node(max ? Op::CumArgMax : Op::CumArgMin, x, d, name), t);
  if (auto f = record(max ? autograd::GradFn::CummaxBackward0 : autograd::GradFn::CumminBackward0, values, {&t})) {
    f->ints = {t.dim() == 0 ? 0 : d, 1};
    f->save(indices);
  }
  return {values, indices};
}

}  // namespace

Tensor cumsum_node(const Tensor& x, int64_t d, const char* op) {
  Tensor out = scan_node(Op::CumSum, x, d, op);
  if (auto f = record(autograd::GradFn::CumsumBackward0, out, {&x})) f->ints = {d};
  return out;
}

Tensor Tensor::cumsum(int64_t dim, std::optional<DType> dtype, SourceLoc loc) const {
  const LocScope at(loc);
  KILN_CHECK(defined(), "cumsum", "expected a defined tensor but got an undefined one");
  const int64_t d = wrap_dim(dim, this->dim(), "cumsum");
  return back(cumsum_node(as_vector(accumulated(*this, dtype)), d, "cumsum"), *this);
}

Tensor Tensor::cumprod(int64_t dim, std::optional<DType> dtype, SourceLoc loc) const {
  const LocScope at(loc);
  KILN_CHECK(defined(), "cumprod", "expected a defined tensor but got an undefined one");
  const int64_t d = wrap_dim(dim, this->dim(), "cumprod");
  const Tensor x = as_vector(accumulated(*this, dtype));
  Tensor out = scan_node(Op::CumProd, x, d, "cumprod");
  if (auto f = record(autograd::GradFn::CumprodBackward0, out, {&x})) {
    f->ints = {d};
    f->save(x);
    f->save_output(out);
  }
  return back(out, *this);
}

Tensor Tensor::logcumsumexp(int64_t dim, SourceLoc loc) const {
  const LocScope at(loc);
  KILN_CHECK(defined(), "logcumsumexp", "expected a defined tensor but got an undefined one");
  const int64_t d = wrap_dim(dim, this->dim(), "logcumsumexp");
  KILN_CHECK(is_floating_point(), "logcumsumexp", "\"logcumsumexp_out_cpu\" not implemented for '",
             scalar_type_name(dtype()), "' (a floating-point input is needed; convert with .to(kFloat32))");
  const Tensor x = as_vector(*this);
  Tensor out = scan_node(Op::LogCumSumExp, x, d, "logcumsumexp");
  if (auto f = record(autograd::GradFn::LogcumsumexpBackward0, out, {&x})) {
    f->ints = {d};
    f->save(x);
    f->save_output(out);
  }
  return back(out, *this);
}

std::tuple<Tensor, Tensor> Tensor::cummax(int64_t dim, SourceLoc loc) const {
  const LocScope at(loc);
  return running_extremum(*this, dim, true);
}
std::tuple<Tensor, Tensor> Tensor::cummin(int64_t dim, SourceLoc loc) const {
  const LocScope at(loc);
  return running_extremum(*this, dim, false);
}

}  // namespace kiln

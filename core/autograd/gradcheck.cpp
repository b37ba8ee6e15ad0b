// gradcheck / gradgradcheck: analytic Jacobians (one backward per output
// element, through kiln::grad) against central finite differences
// (two forward evaluations per input element), in float64.
#include <cmath>
#include <cstring>
#include <sstream>

#include "core/autograd/function.h"
#include "core/ops_common.h"

namespace kiln {

namespace {
// A float64 tensor of `sizes` holding row-major values.
Tensor from_vector(const std::vector<double>& v, const Shape& sizes) {
  BufferPtr b = Buffer::allocate(DType::Float64, static_cast<int64_t>(v.size()), Device());
  if (!v.empty()) std::memcpy(b->data(), v.data(), v.size() * sizeof(double));
  return make_tensor(make_buffer_node(std::move(b), sizes));
}

using Matrix = std::vector<std::vector<double>>;  // [output element][input element]

std::vector<double> values(const Tensor& t) {
  if (!t.defined()) return {};
  return t.detach().to(DType::Float64).contiguous().to_vector<double>();
}

std::string format(const Matrix& m) {
  std::ostringstream os;
  os.precision(6);
  for (const auto& row : m) {
    for (double v : row) os << ' ' << v;
    os << '\n';
  }
  return os.str();
}

std::vector<Tensor> run(const GradcheckFn& fn, const std::vector<Tensor>& inputs) {
  std::vector<Tensor> outs = fn(inputs);
  for (size_t j = 0; j < outs.size(); ++j)
    KILN_CHECK(outs[j].defined(), "gradcheck", "output ", j, " of the function is undefined");
  return outs;
}

// d out_j / d in_i by central differences: column k perturbs element k.
// `outs` (the unperturbed outputs) give the Jacobians' row counts.
// fn runs with grad mode on and the probes requiring grad where the inputs
// do, as PyTorch's gradcheck runs it: a function that differentiates
// internally (gradgradcheck's) needs its inputs' history.
std::vector<Matrix> numerical(const GradcheckFn& fn, const std::vector<Tensor>& inputs, size_t i,
                              const std::vector<Tensor>& outs, double eps) {
  std::vector<Tensor> probe;
  for (const Tensor& t : inputs)
    probe.push_back(t.defined() ? t.detach().requires_grad_(t.requires_grad()) : t);
  const Tensor& x = inputs[i];
  std::vector<double> base = values(x);
  std::vector<Matrix> jac;
  for (const Tensor& o : outs) jac.emplace_back(o.numel(), std::vector<double>(base.size(), 0.0));
  for (size_t k = 0; k < base.size(); ++k) {
    std::vector<std::vector<double>> sides;
    for (double step : {eps, -eps}) {
      std::vector<double> v = base;
      v[k] += step;
      probe[i] = from_vector(v, x.sizes()).to(x.dtype());
      probe[i].eval();
      probe[i].requires_grad_(x.requires_grad());
      std::vector<Tensor> perturbed = run(fn, probe);
      KILN_CHECK(perturbed.size() == outs.size(), "gradcheck", "the function returned ",
                 perturbed.size(), " outputs for a perturbed input but ", outs.size(), " before");
      std::vector<double> flat;
      for (const Tensor& o : perturbed) {
        std::vector<double> ov = values(o);
        flat.insert(flat.end(), ov.begin(), ov.end());
      }
      sides.push_back(std::move(flat));
    }
    size_t pos = 0;
    for (size_t j = 0; j < jac.size(); ++j)
      for (size_t m = 0; m < jac[j].size(); ++m, ++pos)
        jac[j][m][k] = (sides[0][pos] - sides[1][pos]) / (2 * eps);
  }
  return jac;
}

// Row m of d out_j / d in: the gradient of out_j's element m.
std::vector<std::vector<Matrix>> analytical(const std::vector<Tensor>& outs,
                                            const std::vector<Tensor>& inputs,
                                            const std::vector<size_t>& diff) {
  std::vector<Tensor> wrt;
  for (size_t i : diff) wrt.push_back(inputs[i]);
  // [input][output] -> matrix
  std::vector<std::vector<Matrix>> jac(diff.size(), std::vector<Matrix>(outs.size()));
  for (size_t j = 0; j < outs.size(); ++j) {
    for (size_t d = 0; d < diff.size(); ++d)
      jac[d][j].assign(outs[j].numel(), std::vector<double>(inputs[diff[d]].numel(), 0.0));
    if (!outs[j].requires_grad()) continue;
    for (int64_t m = 0; m < outs[j].numel(); ++m) {
      std::vector<double> onehot(outs[j].numel(), 0.0);
      onehot[m] = 1.0;
      Tensor go = from_vector(onehot, outs[j].sizes()).to(outs[j].dtype());
      std::vector<Tensor> g = grad({outs[j]}, wrt, {go}, true, false, true);
      for (size_t d = 0; d < diff.size(); ++d) {
        if (!g[d].defined()) continue;
        KILN_CHECK(g[d].sizes() == inputs[diff[d]].sizes(), "gradcheck", "the gradient of input ",
                   diff[d], " has shape ", g[d].sizes(), ", expected ", inputs[diff[d]].sizes());
        KILN_CHECK(g[d].dtype() == inputs[diff[d]].dtype(), "gradcheck", "the gradient of input ",
                   diff[d], " has dtype ", scalar_type_name(g[d].dtype()), ", expected ",
                   scalar_type_name(inputs[diff[d]].dtype()));
        jac[d][j][m] = values(g[d]);
      }
    }
  }
  return jac;
}
}  // namespace

bool gradcheck(const GradcheckFn& fn, const std::vector<Tensor>& inputs,
               const GradcheckOptions& o) {
  std::vector<size_t> diff;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].defined() && inputs[i].requires_grad()) diff.push_back(i);
  KILN_CHECK(!diff.empty(), "gradcheck",
             "gradcheck expects at least one input tensor to require gradient, but none of the "
             "them have requires_grad=True.");
  std::vector<Tensor> outs = run(fn, inputs);
  std::vector<std::vector<Matrix>> an = analytical(outs, inputs, diff);
  for (size_t d = 0; d < diff.size(); ++d) {
    std::vector<Matrix> num = numerical(fn, inputs, diff[d], outs, o.eps);
    for (size_t j = 0; j < outs.size(); ++j) {
      const Matrix& a = an[d][j];
      const Matrix& n = num[j];
      bool ok = true;
      for (size_t m = 0; m < a.size(); ++m)
        for (size_t k = 0; k < a[m].size(); ++k) {
          const double diffv = std::fabs(a[m][k] - n[m][k]);
          if (!(diffv <= o.atol + o.rtol * std::fabs(n[m][k]))) ok = false;
        }
      KILN_CHECK(ok, "gradcheck", "Jacobian mismatch for output ", j, " with respect to input ",
                 diff[d], ",\nnumerical:\n", format(n), "analytical:\n", format(a));
    }
  }
  return true;
}

bool gradgradcheck(const GradcheckFn& fn, const std::vector<Tensor>& inputs,
                   const GradcheckOptions& o) {
  std::vector<Tensor> outs = run(fn, inputs);
  // Fixed, reproducible weights for the first-order gradients.
  std::vector<Tensor> weights;
  uint64_t state = 0x9E3779B97F4A7C15ull;
  for (const Tensor& out : outs) {
    std::vector<double> v(out.numel());
    for (double& x : v) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      x = static_cast<double>(state >> 11) / 9007199254740992.0 * 2.0 - 1.0;
    }
    weights.push_back(from_vector(v, out.sizes()).to(out.dtype()).requires_grad_());
  }
  const size_t n_in = inputs.size();
  GradcheckFn first = [&fn, n_in](const std::vector<Tensor>& all) {
    std::vector<Tensor> in(all.begin(), all.begin() + n_in);
    std::vector<Tensor> w(all.begin() + n_in, all.end());
    std::vector<Tensor> outs = fn(in), wrt;
    for (const Tensor& t : in)
      if (t.defined() && t.requires_grad()) wrt.push_back(t);
    std::vector<Tensor> keep_outs, keep_w;
    for (size_t j = 0; j < outs.size(); ++j)
      if (outs[j].requires_grad()) {
        keep_outs.push_back(outs[j]);
        keep_w.push_back(w[j]);
      }
    std::vector<Tensor> g;
    if (!keep_outs.empty()) g = grad(keep_outs, wrt, keep_w, true, true, true);
    g.resize(wrt.size());
    for (size_t d = 0; d < wrt.size(); ++d)
      if (!g[d].defined()) g[d] = zeros_like(wrt[d]);
    return g;
  };
  std::vector<Tensor> all(inputs);
  all.insert(all.end(), weights.begin(), weights.end());
  return gradcheck(first, all, o);
}

}  // namespace kiln

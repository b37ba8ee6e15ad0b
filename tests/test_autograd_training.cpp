// Training loops end to end: the tutorial's linear regression (section 7)
// against PyTorch 1.13's trajectory, and what the JIT runs per epoch: a
// fixed handful of kernels, compiled in the first epoch only.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "kiln/kiln.h"

using namespace kiln;

namespace {
struct Run {
  std::vector<double> losses;  // every 50 epochs
  double w = 0, b = 0;
};

// The loop of examples/linear_regression.cpp on the given data.
Run train(const Tensor& x, const Tensor& y, int epochs,
          const std::function<void(int)>& after_epoch = nullptr) {
  Tensor w = tensor({{1.0f}}, requires_grad());
  Tensor b = tensor({{0.0f}}, requires_grad());
  Run run;
  for (int epoch = 0; epoch < epochs; ++epoch) {
    Tensor loss = (x.matmul(w) + b - y).pow(2).mean();
    loss.backward();
    {
      NoGradGuard no_grad;
      w -= 0.01 * w.grad();
      b -= 0.01 * b.grad();
      w.mutable_grad().zero_();
      b.mutable_grad().zero_();
    }
    if (after_epoch) after_epoch(epoch);
    if ((epoch + 1) % 50 == 0) run.losses.push_back(loss.item<double>());
  }
  run.w = w.item<double>();
  run.b = b.item<double>();
  return run;
}
}  // namespace

TEST_CASE("training: linear regression follows PyTorch's trajectory (noise-free data)") {
  // PyTorch 1.13, same program with y = 2x + 1 exactly (float32):
  // losses at epochs 50..200 and the final w, b.
  Tensor x = linspace(0, 10, 100).reshape({-1, 1});
  Tensor y = 2.0 * x + 1.0;
  Run r = train(x, y, 200);
  const std::vector<double> want = {0.107588, 0.065410, 0.039767, 0.024177};
  REQUIRE(r.losses.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) CHECK(r.losses[i] == doctest::Approx(want[i]).epsilon(1e-4));
  CHECK(r.w == doctest::Approx(2.046176).epsilon(1e-5));
  CHECK(r.b == doctest::Approx(0.692896).epsilon(1e-4));
}

TEST_CASE("training: the tutorial's noisy data converges as the tutorial says") {
  // 200 epochs at lr 0.01 bring w within ~0.1 of 2 and the loss near the
  // noise floor (0.5^2 = 0.25); b moves slowly (mean x is 5) and ends near
  // 0.7 (PyTorch with its own random numbers: w 2.0457, b 0.7212, loss 0.2675).
  manual_seed(42);
  Tensor x = linspace(0, 10, 100).reshape({-1, 1});
  Tensor y = 2.0 * x + 1.0 + randn_like(x) * 0.5;
  Run r = train(x, y, 200);
  CHECK(r.losses.front() > r.losses.back());
  CHECK(r.losses.back() < 0.35);
  CHECK(r.w == doctest::Approx(2.0).epsilon(0.06));
  CHECK(r.b > 0.5);
  CHECK(r.b < 1.0);
}

TEST_CASE("training: one epoch is a fixed handful of kernels, compiled in epoch 1 only") {
  if (evaluator() != Evaluator::Jit) {
    MESSAGE("skipped: the JIT is not the evaluator (no LLVM backend in this build)");
    return;
  }
  Tensor x = linspace(0, 10, 100).reshape({-1, 1});
  Tensor y = (2.0 * x + 1.0).eval();
  x.eval();
  std::vector<JitStats> per_epoch;
  reset_stats();
  train(x, y, 20, [&](int) {
    per_epoch.push_back(stats());
    reset_stats();
  });
  REQUIRE(per_epoch.size() == 20);
  // Forward, backward and the update of w and b evaluate together when the
  // NoGradGuard closes: one evaluation per epoch.
  const int64_t kernels = per_epoch[1].kernels_launched + per_epoch[1].library_calls;
  MESSAGE("kernels per epoch: ", per_epoch[1].kernels_launched, " (+ ", per_epoch[1].library_calls,
          " library calls)");
  // The small matmuls (X @ w, X^T @ grad) are inline sums, so the whole step
  // (forward, both gradients, both updates) is one kernel.
  CHECK(per_epoch[1].kernels_launched == 1);
  CHECK(per_epoch[1].library_calls == 0);
  for (size_t e = 1; e < per_epoch.size(); ++e) {
    CAPTURE(e);
    CHECK(per_epoch[e].evaluations == 1);
    CHECK(per_epoch[e].kernels_compiled == 0);
    CHECK(per_epoch[e].schedules == 0);  // the schedule of epoch 1 is reused
    CHECK(per_epoch[e].schedules_reused == 1);
    CHECK(per_epoch[e].kernels_launched + per_epoch[e].library_calls == kernels);
  }
}

// Adam written with kiln's in-place ops, as torch.optim.Adam (1.13's
// single-tensor step) does it: the moments through mul_ / add_ / addcmul_,
// the update through addcdiv_; six steps against PyTorch's losses and
// parameters (tolerance 1e-5: sums in double, PyTorch's fused multiply-adds).
TEST_CASE("training: Adam with addcmul_ / addcdiv_ follows torch.optim.Adam") {
  const Tensor x = (arange(24.0).reshape({8, 3}) * 0.37).sin();
  const Tensor y = (arange(8.0).reshape({8, 1}) * 0.5).cos();
  Tensor w = tensor({{0.5f}, {-0.25f}, {1.0f}}, requires_grad());
  Tensor b = tensor({0.1f}, requires_grad());
  const double lr = 0.1, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  std::vector<Tensor> params{w, b}, m{zeros_like(w), zeros_like(b)}, v{zeros_like(w), zeros_like(b)};
  std::vector<double> losses;
  for (int t = 1; t <= 6; ++t) {
    Tensor loss = (x.matmul(w) + b - y).pow(2).mean();
    losses.push_back(loss.item<float>());
    loss.backward();
    NoGradGuard no_grad;
    const double bc1 = 1 - std::pow(beta1, t), bc2 = 1 - std::pow(beta2, t);
    for (size_t i = 0; i < params.size(); ++i) {
      Tensor& p = params[i];
      const Tensor g = p.grad();
      m[i].mul_(beta1).add_(g, 1 - beta1);
      v[i].mul_(beta2).addcmul_(g, g, 1 - beta2);
      const Tensor denom = (v[i].sqrt() / std::sqrt(bc2)).add_(eps);
      p.addcdiv_(m[i], denom, -lr / bc1);
      p.mutable_grad().zero_();
    }
  }
  const std::vector<double> want{1.245104193687439, 0.9079706072807312, 0.7039241790771484,
                                 0.6228942275047302, 0.6346151232719421, 0.6883082985877991};
  for (size_t i = 0; i < want.size(); ++i) CHECK(losses[i] == doctest::Approx(want[i]).epsilon(1e-5));
  const std::vector<float> wv = w.to_vector<float>();
  CHECK(wv[0] == doctest::Approx(0.07819872349500656).epsilon(1e-5));
  CHECK(wv[1] == doctest::Approx(-0.7183496952056885).epsilon(1e-5));
  CHECK(wv[2] == doctest::Approx(0.5018271803855896).epsilon(1e-5));
  CHECK(b.item<float>() == doctest::Approx(-0.3131946325302124).epsilon(1e-5));
}

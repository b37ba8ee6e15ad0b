// Training loops end to end: the tutorial's linear regression (section 7)
// against PyTorch 1.13's trajectory, and what the JIT runs per epoch: a
// fixed handful of kernels, compiled in the first epoch only.
#include <doctest/doctest.h>

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

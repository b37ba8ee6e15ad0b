// cnn: a small convolutional network trained by plain SGD, written with the
// torch.nn.functional layers of kiln (include/kiln/nn_functional.h): conv2d,
// batch_norm (training mode, running statistics updated in place), relu,
// max_pool2d, a second conv2d, adaptive_avg_pool2d, linear and
// cross_entropy. The data are synthetic 12 x 12 images of three classes: a
// horizontal bar, a vertical bar or a diagonal, at a random position, with
// Gaussian noise.
//
// Each step builds the forward pass, the loss and loss.backward() (which only
// records gradient nodes), then updates the parameters under NoGradGuard;
// closing the guard evaluates everything pending, so the JIT runs the step
// (the columns of both convolutions, their BLAS calls, the fused
// normalization, activation and pooling kernels, and their gradients) as
// one evaluation, scheduled in the first step and reused by later ones.
// At the end the network classifies fresh images in evaluation mode (the
// running statistics instead of the batch's).
//
// Build and run:  ./dev build && ./build/examples/cnn
#include <cmath>
#include <cstdio>
#include <vector>

#include "kiln/kiln.h"

namespace {

constexpr int64_t kSide = 12, kClasses = 3, kBatch = 64;

// n images [n, 1, 12, 12] and their labels [n]: a 1-pixel-wide bar (or
// diagonal) of brightness 1 at a random place, plus noise of std 0.3.
std::pair<kiln::Tensor, kiln::Tensor> batch(int64_t n) {
  const kiln::Tensor labels = kiln::randint(0, kClasses, {n});
  const kiln::Tensor where = kiln::randint(0, kSide, {n}).reshape({n, 1, 1, 1});
  const kiln::Tensor row = kiln::arange(kSide).reshape({1, 1, kSide, 1});
  const kiln::Tensor col = kiln::arange(kSide).reshape({1, 1, 1, kSide});
  const kiln::Tensor l = labels.reshape({n, 1, 1, 1});
  const kiln::Tensor bar = kiln::where(l == 0, row == where, kiln::where(l == 1, col == where, row == col));
  return {bar.to(kiln::kFloat) + kiln::randn({n, 1, kSide, kSide}) * 0.3, labels};
}

// PyTorch's default initialization of Conv2d / Linear weights and biases:
// uniform in [-1/sqrt(fan_in), 1/sqrt(fan_in)].
kiln::Tensor init(const kiln::Shape& shape, int64_t fan_in) {
  const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
  auto t = (kiln::rand(shape) * 2 - 1) * bound;
  t.eval();
  return t.requires_grad_();
}

}  // namespace

int main() {
  kiln::manual_seed(0);
  kiln::Tensor w1 = init({8, 1, 3, 3}, 9), b1 = init({8}, 9);
  kiln::Tensor gamma = kiln::ones({8}).requires_grad_(), beta = kiln::zeros({8}).requires_grad_();
  kiln::Tensor running_mean = kiln::zeros({8}), running_var = kiln::ones({8});
  kiln::Tensor w2 = init({16, 8, 3, 3}, 72), b2 = init({16}, 72);
  kiln::Tensor w3 = init({kClasses, 16}, 16), b3 = init({kClasses}, 16);
  std::vector<kiln::Tensor*> params = {&w1, &b1, &gamma, &beta, &w2, &b2, &w3, &b3};

  auto forward = [&](const kiln::Tensor& x, bool training) {
    auto h = kiln::conv2d(x, w1, b1, {1}, {1});                                      // [n, 8, 12, 12]
    h = kiln::batch_norm(h, running_mean, running_var, gamma, beta, training).relu();
    h = kiln::max_pool2d(h, {2});                                                    // [n, 8, 6, 6]
    h = kiln::conv2d(h, w2, b2, {1}, {1}).relu();                                    // [n, 16, 6, 6]
    h = kiln::adaptive_avg_pool2d(h, {1}).flatten(1);                                // [n, 16]
    return kiln::linear(h, w3, b3);                                                  // [n, 3]
  };

  const double learning_rate = 0.1;
  for (int step = 1; step <= 150; ++step) {
    auto [x, y] = batch(kBatch);
    auto loss = kiln::cross_entropy(forward(x, true), y);
    loss.backward();
    {
      kiln::NoGradGuard no_grad;
      for (kiln::Tensor* p : params) {
        *p -= learning_rate * p->grad();
        p->mutable_grad().zero_();
      }
    }
    if (step % 30 == 0) std::printf("step %3d  loss %.4f\n", step, loss.item<float>());
  }

  // Evaluation mode on 512 fresh images.
  kiln::NoGradGuard no_grad;
  auto [x, y] = batch(512);
  const auto predicted = forward(x, false).argmax(1);
  const double accuracy = (predicted == y).to(kiln::kFloat).mean().item<float>();
  std::printf("accuracy on 512 new images: %.1f%%\n", 100 * accuracy);
  std::printf("running mean of the first channels: %.3f %.3f %.3f\n", running_mean[0].item<float>(),
              running_mean[1].item<float>(), running_mean[2].item<float>());
  const kiln::JitStats st = kiln::stats();
  std::printf("JIT: %lld evaluations, %lld schedules built (%lld reused), %lld kernels compiled, %lld launched, "
              "%lld BLAS calls\n",
              static_cast<long long>(st.evaluations), static_cast<long long>(st.schedules),
              static_cast<long long>(st.schedules_reused), static_cast<long long>(st.kernels_compiled),
              static_cast<long long>(st.kernels_launched), static_cast<long long>(st.library_calls));
  return accuracy > 0.9 ? 0 : 1;
}

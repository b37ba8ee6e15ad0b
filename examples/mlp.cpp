// mlp: a two-layer perceptron (784-256-10, ReLU, softmax cross-entropy)
// trained by plain SGD, written with kiln tensors only: no nn module, no
// optimizer class, no gather. The data are synthetic: ten class centers in
// 784 dimensions, and each sample is its class's center plus Gaussian noise.
//
// Each step draws a fresh batch of 128, runs the forward pass, the loss and
// loss.backward() (which only records gradient nodes), then updates the
// parameters under NoGradGuard. Closing the guard evaluates the new
// parameters: the JIT runs the whole step (batch generation, two BLAS
// matmuls per pass and the fused elementwise and row kernels around them)
// as one evaluation, scheduled and compiled in the first step and reused by
// every later one.
//
// Build and run:  ./dev build && ./build/examples/mlp
#include <cmath>
#include <cstdio>
#include <vector>

#include "kiln/kiln.h"

namespace {

constexpr int64_t kInputs = 784, kHidden = 256, kClasses = 10;

// labels [n] (int64) -> one-hot rows [n, 10] (float32), by comparing each
// label with 0..9: a gather-free one-hot encoding. (kiln::one_hot and
// kiln::cross_entropy check their labels' range first, which evaluates the
// labels on their own; the labels here are in range by construction, and
// the whole step stays one evaluation.)
kiln::Tensor one_hot_rows(const kiln::Tensor& labels) {
  return (labels.unsqueeze(1) == kiln::arange(kClasses)).to(kiln::kFloat);
}

// PyTorch's nn.Linear initialization: uniform in [-1/sqrt(fan_in), 1/sqrt(fan_in)].
kiln::Tensor uniform_init(const kiln::Shape& shape, int64_t fan_in) {
  const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
  auto t = (kiln::rand(shape) * 2 - 1) * bound;
  t.eval();  // start from plain values, not a pending random graph
  return t.requires_grad_();
}

// A batch of n samples: random labels, inputs = centers[label] + noise.
// centers[label] is written as one_hot_rows(labels) @ centers (no gather).
struct Batch {
  kiln::Tensor inputs, labels;
};
Batch make_batch(const kiln::Tensor& centers, int64_t n, double noise) {
  auto labels = kiln::randint(kClasses, {n});
  auto inputs = one_hot_rows(labels).matmul(centers) + kiln::randn({n, kInputs}) * noise;
  return {inputs, labels};
}

}  // namespace

int main() {
  kiln::manual_seed(0);

  // The data: ten centers, close enough together (0.1 * randn per coordinate)
  // that the noise (standard deviation 1) makes the classes overlap a little.
  // They are evaluated once, here: left lazy, their random numbers would be
  // drawn again inside every batch's one-hot matmul.
  const auto centers = kiln::randn({kClasses, kInputs}) * 0.1;
  centers.eval();
  const double noise = 1.0;

  // The model, weights stored [in, out] so that a layer is x.matmul(W) + b.
  auto w1 = uniform_init({kInputs, kHidden}, kInputs);
  auto b1 = uniform_init({kHidden}, kInputs);
  auto w2 = uniform_init({kHidden, kClasses}, kHidden);
  auto b2 = uniform_init({kClasses}, kHidden);
  std::vector<kiln::Tensor> params = {w1, b1, w2, b2};
  auto model = [&](const kiln::Tensor& x) {
    auto h = kiln::relu(x.matmul(w1) + b1);
    return h.matmul(w2) + b2;  // logits
  };

  // Softmax cross-entropy, averaged over the batch.
  auto cross_entropy = [](const kiln::Tensor& logits, const kiln::Tensor& labels) {
    return -(kiln::log_softmax(logits, 1) * one_hot_rows(labels)).sum(1).mean();
  };

  const int64_t batch_size = 128;
  const int steps = 300;
  const double lr = 0.1;
  float first_loss = 0, last_loss = 0;
  for (int step = 1; step <= steps; ++step) {
    auto [x, labels] = make_batch(centers, batch_size, noise);
    auto loss = cross_entropy(model(x), labels);  // forward
    loss.backward();                               // gradient nodes, nothing computed
    {
      kiln::NoGradGuard no_grad;                   // the update is not recorded ...
      for (auto& p : params) {
        p -= lr * p.grad();
        p.mutable_grad().zero_();
      }
    }                                              // ... and is evaluated here
    if (step == 1 || step % 50 == 0) {
      const float l = loss.item<float>();
      if (step == 1) first_loss = l;
      last_loss = l;
      std::printf("step %3d  loss %.4f\n", step, l);
    }
  }
  std::printf("loss: %.4f at step 1 -> %.4f at step %d\n", first_loss, last_loss, steps);

  // Accuracy on a held-out batch drawn from the same distribution.
  kiln::NoGradGuard no_grad;
  auto [x_test, y_test] = make_batch(centers, 2000, noise);
  auto predicted = model(x_test).argmax(1);
  const float accuracy = (predicted == y_test).to(kiln::kFloat).mean().item<float>();
  std::printf("held-out accuracy: %.1f%% (2000 samples, chance is 10%%)\n", 100.0 * accuracy);
  return last_loss < first_loss ? 0 : 1;
}

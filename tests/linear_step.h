// One step of the tutorial's linear regression (examples/linear_regression.cpp)
// for the reliability tests (threads, determinism, bounded memory): forward,
// backward, and the SGD update under NoGradGuard, which evaluates the step.
#pragma once

#include "kiln/kiln.h"

namespace kiln_test {

// Updates w and b in place; returns the (lazy) loss.
inline kiln::Tensor linear_step(const kiln::Tensor& x, const kiln::Tensor& y, kiln::Tensor& w, kiln::Tensor& b,
                                double lr) {
  kiln::Tensor loss = (kiln::matmul(x, w) + b - y).pow(2).mean();
  loss.backward();
  kiln::NoGradGuard no_grad;
  w -= lr * w.grad();
  b -= lr * b.grad();
  w.mutable_grad().zero_();
  b.mutable_grad().zero_();
  return loss;
}

}  // namespace kiln_test

// save_graph: one training step of the tutorial's linear regression
// (examples/linear_regression.cpp), saved as JSON instead of evaluated, for
// tools/kiln-dump; the README's fusion plan and graph picture come from it:
//
//   build/examples/save_graph linreg.json
//   build/tools/kiln-dump --plan linreg.json
//   build/tools/kiln-dump --plan --render=linreg.png linreg.json   (Graphviz)
//
// It also prints kiln::explain() of the same step: the plan in-process.
#include <cstdio>
#include <iostream>

#include "kiln/kiln.h"

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : "linreg.json";
  kiln::manual_seed(42);
  auto x = kiln::linspace(0, 10, 100).reshape({-1, 1});
  auto y = 2.0 * x + 1.0 + kiln::randn_like(x) * 0.5;
  kiln::eval({x, y});  // the data, evaluated once as in the first epoch

  auto w = kiln::tensor({{1.0f}}, kiln::requires_grad());
  auto b = kiln::tensor({{0.0f}}, kiln::requires_grad());
  auto loss = (x.matmul(w) + b - y).pow(2).mean();
  loss.backward();
  {
    kiln::NoGradGuard no_grad;
    w -= 0.01 * w.grad();
    b -= 0.01 * b.grad();
    // Before the guard closes (and evaluates the step): what it will run.
    kiln::save_graph({w, b}, path);
    std::cout << kiln::explain({w, b});
  }
  std::printf("saved %s\n", path);
  return 0;
}

// Shape-generic kernels for the ops whose index arithmetic depends on a
// shape (core/ops_common.h shape_scalar): padding's clamps and masks,
// pooling's counts and flat positions, flip, roll, median, col2im
// (fold_windows: a transposed convolution, unfold's gradient) and the
// range checks of indexed ops read a dim's size as a runtime param, so a
// new image size lowers to the same kernels (equal kernel IR keys: the
// compile cache serves them) and compiles nothing, forward and backward.
// Values at the new size against the reference evaluator.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "codegen/backend.h"
#include "kiln/nn_functional.h"
#include "tests/jit_checks.h"

using namespace kiln;

namespace {

using Op = std::function<Tensor(const Tensor&)>;

Tensor data(const Shape& s, DType dt = kFloat32) { return kiln_test::sine_leaf(s, dt, 2.0); }

// The kernel IR keys of the schedule of t's pending graph.
std::vector<std::string> kernel_keys(const Tensor& t) {
  std::vector<std::string> keys;
  for (const jit::Step& st : kiln_test::plan(t).steps)
    keys.push_back(st.kind == jit::StepKind::Kernel ? st.code->ir.key() : jit::step_name(st));
  return keys;
}

// f of inputs of shapes a and b (the second evaluated after the first in
// this process): equal kernels, nothing compiled or read from the disk
// cache for the second (what its graph building evaluates included: a
// range check), and the second's values those of the reference evaluator.
void check_generic(const char* what, const Op& f, const Shape& a, const Shape& b, DType dt = kFloat32,
                   double eps = 0) {
  CAPTURE(std::string(what));
  const Tensor first = f(data(a, dt));
  const std::vector<std::string> keys = kernel_keys(first);
  first.eval();
  reset_stats();
  const Tensor second = f(data(b, dt));
  CHECK(kernel_keys(second) == keys);
  second.eval();
  if (codegen::cpu_backend().available()) {
    const JitStats s = stats();
    CHECK(s.kernels_compiled == 0);
    CHECK(s.cache_hits_disk == 0);
  }
  if (eps == 0) kiln_test::check_jit(f(data(b, dt)));
  else kiln_test::close_to_reference(f(data(b, dt)), eps);
}

// The gradient of sum(f(x)^2) with respect to x: each output's gradient
// is its own value (2 f(x)).
Op gradient_of(Op f) {
  return [f](const Tensor& x0) {
    const Tensor x = x0.detach().requires_grad_();
    const Tensor y = f(x);
    return grad({(y * y).sum()}, {x})[0];
  };
}

}  // namespace

TEST_CASE("jit: padding of every mode compiles nothing for a new size") {
  const Shape a{2, 3, 9, 8}, b{2, 3, 13, 11};
  check_generic("constant", [](const Tensor& x) { return pad(x, {1, 2, 2, 1}, PadMode::Constant, 0.5); }, a, b);
  check_generic("cropped", [](const Tensor& x) { return pad(x, {3, -2, -1, 4}, PadMode::Constant, -1.0) * 2; }, a,
                b);
  check_generic("reflect", [](const Tensor& x) { return pad(x, {2, 1, 1, 3}, PadMode::Reflect); }, a, b);
  check_generic("replicate", [](const Tensor& x) { return pad(x, {1, 1, 2, 2}, PadMode::Replicate); }, a, b);
  check_generic("circular", [](const Tensor& x) { return pad(x, {2, 3, 1, 0}, PadMode::Circular); }, a, b);
  check_generic("int64", [](const Tensor& x) { return pad(x, {1, 1}, PadMode::Constant, 7.0); }, {3, 5}, {4, 9},
                kInt64);
}

TEST_CASE("jit: convolutions and pooling compile nothing for a new image size") {
  const Shape a{2, 3, 9, 8}, b{2, 3, 12, 15};
  const Tensor w = data({4, 3, 3, 3}), bias = data({4});
  check_generic("conv2d padded", [&](const Tensor& x) { return conv2d(x, w, bias, {1}, {1}).relu(); }, a, b, kFloat32, 1e-5);
  check_generic("conv2d strided", [&](const Tensor& x) { return conv2d(x, w, bias, {2}, {1}, {2}); }, a, b, kFloat32, 1e-5);
  check_generic("conv_transpose2d",
                [&](const Tensor& x) { return conv_transpose2d(x, w.transpose(0, 1), {}, {2}, {1}); }, a, b, kFloat32,
                1e-5);
  check_generic("max_pool2d 3 s2 p1", [](const Tensor& x) { return max_pool2d(x, {3}, {2}, {1}); }, a, b);
  check_generic("max_pool2d indices",
                [](const Tensor& x) { return std::get<1>(max_pool2d_with_indices(x, {3}, {1}, {1})); }, a, b);
  check_generic("max_pool2d 4 (a reduction per window) indices",
                [](const Tensor& x) { return std::get<1>(max_pool2d_with_indices(x, {4}, {2}, {2})); }, a, b);
  check_generic("max_pool3d indices",
                [](const Tensor& x) { return std::get<1>(max_pool3d_with_indices(x, {2}, {1}, {1})); },
                {1, 2, 5, 6, 4}, {1, 2, 7, 5, 6});
  check_generic("avg_pool2d", [](const Tensor& x) { return avg_pool2d(x, {3}, {2}, {1}); }, a, b);
  check_generic("avg_pool2d without the padding",
                [](const Tensor& x) { return avg_pool2d(x, {3}, {1}, {1}, true, false); }, a, b);
  check_generic("adaptive_avg_pool2d global", [](const Tensor& x) { return adaptive_avg_pool2d(x, {1}); }, a, b);
  check_generic("adaptive_avg_pool2d", [](const Tensor& x) { return adaptive_avg_pool2d(x, {5, 4}); },
                {2, 3, 19, 17}, {2, 3, 23, 21}, kFloat32, 1e-6);
}

TEST_CASE("jit: their gradients compile nothing for a new image size") {
  const Shape a{2, 3, 16, 14}, b{2, 3, 21, 19};
  const Tensor w = data({4, 3, 3, 3});
  check_generic("conv2d", gradient_of([&](const Tensor& x) { return conv2d(x, w, {}, {2}, {1}); }), a, b, kFloat32,
                1e-4);  // float32 sums of BLAS and col2im in their own orders
  check_generic("max_pool2d", gradient_of([](const Tensor& x) { return max_pool2d(x, {3}, {2}, {1}); }), a, b, kFloat32, 1e-5);
  check_generic("avg_pool2d", gradient_of([](const Tensor& x) { return avg_pool2d(x, {3}, {1}, {1}); }), a, b, kFloat32, 1e-5);
  check_generic("pad reflect", gradient_of([](const Tensor& x) { return pad(x, {1, 1, 2, 2}, PadMode::Reflect); }),
                a, b, kFloat32, 1e-5);
  check_generic("unfold", gradient_of([](const Tensor& x) { return x.unfold(3, 3, 2); }), a, b, kFloat32, 1e-5);
}

TEST_CASE("jit: flip, roll, median and index range checks compile nothing for a new size") {
  const Shape a{3, 10}, b{5, 17};
  check_generic("flip", [](const Tensor& x) { return x.flip({0, 1}) * 2; }, a, b);
  check_generic("roll", [](const Tensor& x) { return x.roll({2, -3}, {0, 1}) * 2; }, a, b);
  check_generic("median", [](const Tensor& x) { return std::get<0>(x.median(1)); }, a, b);
  check_generic("median position", [](const Tensor& x) { return std::get<1>(x.median(1)); }, a, b);
  check_generic("nanmedian", [](const Tensor& x) { return std::get<0>((x * 3).floor().log().nanmedian(1)); }, a,
                b);
  check_generic("median int64", [](const Tensor& x) { return std::get<0>(x.median(1)); }, a, b, kInt64);
  // the range check of the class targets runs at graph building
  check_generic("cross_entropy",
                [](const Tensor& x) { return cross_entropy(x, (x.select(1, 0).abs() * 3).to(kInt64)); },
                a, b);
  check_generic("gather", [](const Tensor& x) { return x.gather(1, (x.abs() * 4).to(kInt64)); }, a, b);
}

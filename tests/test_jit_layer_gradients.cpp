// Layers' gradients as kernels. A convolution's weight gradient stores its
// column copy in the columns' own order (positions innermost, as the
// forward copy) and BLAS reads it transposed, not a copy in the product's
// order that walks the input across its rows; its input gradient's col2im
// (the window gradients summed back through unfold's rule: masked shifted
// reads per tap) is one kernel that reads the column gradient once,
// nothing stored between its two spatial dims. A transposed convolution's
// gradients unfold g, with no scatter per tap. A max pool's gradient
// scatters to window maxima computed first, in a kernel of their own.
// Values against the reference evaluator.
#include <doctest/doctest.h>

#include "jit/schedule.h"
#include "kiln/kiln.h"
#include "kiln/nn_functional.h"
#include "tests/jit_checks.h"

using namespace kiln;

namespace {

Tensor data(const Shape& s, double scale = 1.0) { return kiln_test::sine_leaf(s, kFloat32, scale); }

struct Conv {
  Tensor x, w, gy;  // the input, the weight, the output's gradient
  Tensor y;
};

// conv2d of [2, 3, 12, 10] by 20 filters 3 x 3 (K = 20 output channels,
// above the inline matmul's limit: both gradients are library calls).
Conv conv(int64_t stride, int64_t padding) {
  Conv c;
  c.x = data({2, 3, 12, 10}).requires_grad_();
  c.w = data({20, 3, 3, 3}, 0.5).requires_grad_();
  c.y = conv2d(c.x, c.w, {}, {stride}, {padding});
  c.gy = data(c.y.sizes(), 0.25);
  c.gy.eval();
  return c;
}

}  // namespace

TEST_CASE("jit: a convolution's weight gradient stores its columns in their own order, read transposed") {
  for (int64_t stride : {1, 2}) {
    CAPTURE(stride);
    const Conv c = conv(stride, 1);
    const Tensor gw = grad({c.y}, {c.w}, {c.gy})[0];
    const jit::Schedule s = kiln_test::plan(gw);
    const jit::Step* operand = nullptr;
    for (const jit::Step& st : s.steps)
      if (st.why.cut == jit::Cut::MatmulOperand) operand = &st;
    REQUIRE(operand != nullptr);
    // the columns as the forward lays them out, [taps, positions]: not the
    // product's [positions, taps] order
    CHECK(operand->outputs[0]->shape.back() == c.y.size(2) * c.y.size(3));
    CHECK(operand->outputs[0]->numel() == 2 * 27 * c.y.size(2) * c.y.size(3));
    CHECK(explain({gw}).find("(library call, trans b)") != std::string::npos);
    kiln_test::close_to_reference(gw, 1e-5);
  }
}

TEST_CASE("jit: a convolution's input gradient folds its columns back in one kernel") {
  for (int64_t stride : {1, 2}) {
    CAPTURE(stride);
    const Conv c = conv(stride, 1);
    const Tensor gx = grad({c.y}, {c.x}, {c.gy})[0];
    const jit::Schedule s = kiln_test::plan(gx);
    // the column gradient (BLAS), then col2im: one kernel reading only it
    REQUIRE(s.steps.size() == 2);
    CHECK(s.steps[0].kind == jit::StepKind::Matmul);
    CHECK(s.steps[1].kind == jit::StepKind::Kernel);
    REQUIRE(s.steps[1].inputs.size() == 1);
    CHECK(s.steps[1].inputs[0] == s.steps[0].outputs[0]);
    kiln_test::close_to_reference(gx, 1e-5);
  }
}

TEST_CASE("jit: a transposed convolution's gradients read windows of g, with no scatter") {
  // its forward folds windows (col2im); their gradient unfolds g (a view,
  // Col2ImBackward0) where the gathers' own gradient scattered each tap
  // into zeros: the columns' gradient (shared by both products), two BLAS
  // calls, and no scatter but the crop's (its padding's gradient)
  const Tensor x = data({2, 20, 6, 5}).requires_grad_(), w = data({20, 3, 4, 4}, 0.5).requires_grad_();
  const Tensor y = conv_transpose2d(x, w, {}, {2}, {1});
  const Tensor gy = data(y.sizes(), 0.25);
  gy.eval();
  const std::vector<Tensor> gs = grad({y}, {x, w}, {gy});
  const jit::Schedule s = kiln_test::plan(gs);
  size_t matmuls = 0;
  for (const jit::Step& st : s.steps) {
    matmuls += st.kind == jit::StepKind::Matmul;
    for (const Node* out : st.outputs) CHECK(out->op != Op::ScatterAdd);
  }
  CHECK(matmuls == 2);
  kiln_test::close_to_reference(gs[0], 1e-5);
  kiln_test::close_to_reference(gs[1], 1e-5);
}

TEST_CASE("jit: a max pool's gradient computes its window maxima' positions before its scatter") {
  // the scatter's loop is serial (positions may repeat): the positions
  // (a window argmax) are stored by their own kernel, the scatter reads them
  const Tensor x = data({2, 3, 11, 9}).requires_grad_();
  x.eval();
  const Tensor y = max_pool2d(x, {3}, {2}, {1});
  const Tensor gy = data(y.sizes(), 0.5);
  gy.eval();
  const Tensor gx = grad({y}, {x}, {gy})[0];
  const jit::Schedule s = kiln_test::plan(gx);
  const Node* positions = nullptr;
  for (const jit::Step& st : s.steps)
    if (st.why.cut == jit::Cut::ScatterIndex) positions = st.outputs[0];
  REQUIRE(positions != nullptr);
  CHECK(positions->dtype == kInt64);
  bool read = false;
  for (const jit::Step& st : s.steps)
    for (const Node* in : st.inputs) read = read || (in == positions && st.why.cut == jit::Cut::Write);
  CHECK(read);
  kiln_test::check_jit(gx);
}

// The gradients of views that fill a run of one dim (a slice, a select):
// the engine places the runs an input receives together (place_runs,
// core/autograd/rules.cpp). Strided slices' runs are interleaved by a cat
// of their step's phases. A split's pieces become one cat,
// each part computing its piece's gradient, with no zeros written and
// nothing summed; a run over at least half its dim is g padded, fused
// with what reads it; a short run is a cat with zeros. Overlapping runs,
// runs along two dims and runs beside a dense gradient are summed. A cat's
// parts are loop nests of their own: a chain they share (an RNN's, through
// unbind) is stored, not recomputed in each. Values against the reference
// evaluator and by hand.
#include <doctest/doctest.h>

#include "jit/schedule.h"
#include "kiln/kiln.h"
#include "tests/jit_checks.h"

using namespace kiln;

namespace {

Tensor data(const Shape& s, double scale = 1.0) { return kiln_test::sine_leaf(s, kFloat32, scale); }

// Whether every step of t's plan is a part of one cat (Cut::Join).
bool only_cat_parts(const Tensor& t) {
  const jit::Schedule s = kiln_test::plan(t);
  bool all = !s.steps.empty();
  for (const jit::Step& st : s.steps) all = all && st.why.cut == jit::Cut::Join && st.outputs[0]->op == Op::Cat;
  return all;
}

}  // namespace

TEST_CASE("autograd: a split's pieces' gradients are one cat") {
  const Tensor x = data({6, 20}).requires_grad_();
  const std::vector<Tensor> h = x.chunk(2, 1);
  const Tensor y = h[0] * h[1].sigmoid();  // GLU
  const Tensor gy = data({6, 10}, 0.5);
  const Tensor gx = grad({y}, {x}, {gy})[0];
  // one kernel per piece, each writing its half: no zeros, no sum (pieces
  // of at most 8 along the last dim would be one kernel: see the next case)
  CHECK(kiln_test::kernels(gx) == 2);
  CHECK(only_cat_parts(gx));
  kiln_test::close_to_reference(gx, 1e-6);
  // by hand: [gy * sigmoid(b), gy * a * sigmoid(b) * (1 - sigmoid(b))]
  const std::vector<float> xv = x.detach().to_vector<float>(), gv = gy.to_vector<float>(),
                           got = gx.to_vector<float>();
  for (int64_t r = 0; r < 6; ++r)
    for (int64_t c = 0; c < 10; ++c) {
      const double a = xv[r * 20 + c], b = xv[r * 20 + 10 + c], g = gv[r * 10 + c];
      const double s = 1 / (1 + std::exp(-b));
      CHECK(got[r * 20 + c] == doctest::Approx(g * s).epsilon(1e-5));
      CHECK(got[r * 20 + 10 + c] == doctest::Approx(g * a * s * (1 - s)).epsilon(1e-5));
    }
}

TEST_CASE("autograd: columns selected one by one get their gradients as one cat") {
  const Tensor x = data({5, 3}).requires_grad_();
  const Tensor y = x.select(1, 0) * x.select(1, 1) + x.select(1, 2);
  const Tensor gy = data({5}, 0.5);
  const Tensor gx = grad({y}, {x}, {gy})[0];
  // a cat along the last dim 3 wide: one kernel over the output, each
  // position its column's gradient (cat_in_one_kernel), not a kernel per
  // column writing at a stride of 3
  CHECK(kiln_test::kernels(gx) == 1);
  CHECK(only_cat_parts(gx));
  const std::vector<float> xv = x.detach().to_vector<float>(), gv = gy.to_vector<float>(),
                           got = gx.to_vector<float>();
  for (int64_t r = 0; r < 5; ++r) {
    CHECK(got[r * 3 + 0] == gv[r] * xv[r * 3 + 1]);
    CHECK(got[r * 3 + 1] == gv[r] * xv[r * 3 + 0]);
    CHECK(got[r * 3 + 2] == gv[r]);
  }
}

TEST_CASE("autograd: a run over most of its dim is g padded, fused with its consumer") {
  const Tensor x = data({4, 8}).requires_grad_();
  const Tensor w = data({4, 8}, 0.5);
  const Tensor y = (x * w).narrow(1, 1, 6);
  const Tensor gy = data({4, 6}, 0.25);
  const Tensor gx = grad({y}, {x}, {gy})[0];
  CHECK(kiln_test::kernels(gx) == 1);  // pad(gy) * w, one loop
  kiln_test::close_to_reference(gx, 0);
  const std::vector<float> wv = w.to_vector<float>(), gv = gy.to_vector<float>(), got = gx.to_vector<float>();
  for (int64_t r = 0; r < 4; ++r)
    for (int64_t c = 0; c < 8; ++c)
      CHECK(got[r * 8 + c] == (c >= 1 && c <= 6 ? gv[r * 6 + c - 1] * wv[r * 8 + c] : 0.0f));
}

TEST_CASE("autograd: a short run is a cat with zeros, computing g only where it lies") {
  // (rows past 16 elements: a cat of narrower rows is one kernel)
  const Tensor x = data({4, 32}).requires_grad_();
  const Tensor y = x.select(1, 3).exp();
  const Tensor gy = data({4}, 0.5);
  const Tensor gx = grad({y}, {x}, {gy})[0];
  CHECK(kiln_test::kernels(gx) == 3);  // zeros, the column, zeros
  CHECK(only_cat_parts(gx));
  kiln_test::close_to_reference(gx, 1e-6);
  const std::vector<float> got = gx.to_vector<float>();
  for (int64_t r = 0; r < 4; ++r)
    for (int64_t c = 0; c < 32; ++c)
      if (c != 3) CHECK(got[r * 32 + c] == 0.0f);
}

TEST_CASE("autograd: overlapping runs, runs along two dims and a dense gradient beside runs are summed") {
  const Tensor x = data({6, 8}).requires_grad_();
  const Tensor gy = data({6, 5}, 0.5);
  SUBCASE("overlapping") {
    const Tensor gx = grad({x.narrow(1, 0, 5) + x.narrow(1, 3, 5) * 2}, {x}, {gy})[0];
    kiln_test::close_to_reference(gx, 1e-6);
    const std::vector<float> gv = gy.to_vector<float>(), got = gx.to_vector<float>();
    for (int64_t c = 0; c < 8; ++c)  // row 2 by hand
      CHECK(got[2 * 8 + c] == doctest::Approx((c < 5 ? gv[2 * 5 + c] : 0.0) + (c >= 3 ? 2 * gv[2 * 5 + c - 3] : 0.0)));
  }
  SUBCASE("two dims") {
    const Tensor gx = grad({x.select(0, 1) * x.select(1, 2).sum()}, {x}, {data({8})})[0];
    kiln_test::close_to_reference(gx, 1e-5);
  }
  SUBCASE("dense beside runs") {
    const std::vector<Tensor> h = x.chunk(2, 1);
    const Tensor y = h[0] * 3 + h[1] * x.sum(1, true);
    const Tensor gx = grad({y}, {x}, {data({6, 4}, 0.5)})[0];
    kiln_test::close_to_reference(gx, 1e-5);
  }
}

// A slice of step > 1 (up to 8): its gradient interleaved with zero rows
// by a cat of the step's phases, one kernel writing each element once
// (a narrow cat along the last dim), where it scattered into zeros (two
// kernels, the zeros written first); x[..., ::2] and x[..., 1::2] (rotary
// embeddings' pairs) fill the two phases of one cat.
TEST_CASE("autograd: strided slices' gradients are one interleaving cat") {
  const Tensor x = data({4, 10}).requires_grad_();
  const Tensor w = data({4, 10}, 0.5);
  SUBCASE("one strided slice") {
    const Tensor gy = data({4, 3}, 0.25);
    const Tensor gx = grad({(x * w).slice(1, 1, 9, 3)}, {x}, {gy})[0];  // columns 1, 4, 7
    CHECK(kiln_test::kernels(gx) == 2);  // the cat of three phases [4, 3, 3], then pad(.) * w
    kiln_test::close_to_reference(gx, 0);
    const std::vector<float> wv = w.to_vector<float>(), gv = gy.to_vector<float>(), got = gx.to_vector<float>();
    for (int64_t r = 0; r < 4; ++r)
      for (int64_t c = 0; c < 10; ++c)
        CHECK(got[r * 10 + c] == (c % 3 == 1 && c < 9 ? gv[r * 3 + c / 3] * wv[r * 10 + c] : 0.0f));
  }
  SUBCASE("even and odd columns") {
    const Tensor a = x.slice(1, 0, 10, 2), b = x.slice(1, 1, 10, 2);
    const Tensor gy = data({4, 5}, 0.25);
    const Tensor gx = grad({a * 2 - b.exp()}, {x}, {gy})[0];
    CHECK(kiln_test::kernels(gx) == 1);
    CHECK(only_cat_parts(gx));
    kiln_test::close_to_reference(gx, 1e-6);
    const std::vector<float> xv = x.detach().to_vector<float>(), gv = gy.to_vector<float>(), got = gx.to_vector<float>();
    for (int64_t r = 0; r < 4; ++r)
      for (int64_t c = 0; c < 10; ++c) {
        const double g = gv[r * 5 + c / 2];
        CHECK(got[r * 10 + c] == doctest::Approx(c % 2 == 0 ? 2 * g : -g * std::exp(xv[r * 10 + c])).epsilon(1e-5));
      }
  }
  SUBCASE("phases of unequal length, one phase twice, a first dim, a step past the end, empty slices") {
    const Tensor y = data({4, 9}).requires_grad_();
    const Tensor g = grad({(y.slice(1, 0, 9, 2) * 3).sum() + (y.slice(1, 1, 9, 2) * 5).sum() +
                           (y.slice(1, 4, 9, 2) * 7).sum()}, {y})[0];  // 5, 4 and 3 columns
    const std::vector<float> gv = g.to_vector<float>();
    for (int64_t c = 0; c < 9; ++c) CHECK(gv[2 * 9 + c] == (c % 2 == 1 ? 5.0f : c >= 4 ? 10.0f : 3.0f));
    kiln_test::close_to_reference(g, 0);
    const Tensor gy = data({2, 10}, 0.25);
    const Tensor gr = grad({x.slice(0, 1, 4, 2) * 3}, {x}, {gy})[0];  // rows 1 and 3 of 4
    kiln_test::close_to_reference(gr, 0);
    const std::vector<float> gyv = gy.to_vector<float>(), got = gr.to_vector<float>();
    for (int64_t r = 0; r < 4; ++r)
      for (int64_t c = 0; c < 10; ++c) CHECK(got[r * 10 + c] == (r % 2 == 1 ? 3 * gyv[(r / 2) * 10 + c] : 0.0f));
    const std::vector<float> g2 = grad({x.slice(1, 8, 10, 5).sum()}, {x})[0].to_vector<float>();  // column 8
    for (int64_t i = 0; i < 40; ++i) CHECK(g2[i] == (i % 10 == 8 ? 1.0f : 0.0f));
    const Tensor g3 = grad({x.slice(1, 3, 3, 2).sum() + x.slice(1, 9, 10, 4).sum()}, {x})[0];
    const std::vector<float> g3v = g3.to_vector<float>();
    for (int64_t i = 0; i < 40; ++i) CHECK(g3v[i] == (i % 10 == 9 ? 1.0f : 0.0f));
    // a step above 8 scatters into zeros
    const std::vector<float> g4 = grad({x.slice(1, 0, 10, 9).sum()}, {x})[0].to_vector<float>();
    for (int64_t i = 0; i < 40; ++i) CHECK(g4[i] == (i % 10 == 0 || i % 10 == 9 ? 1.0f : 0.0f));
  }
}

TEST_CASE("autograd: a retained intermediate split into pieces gets the placed gradient") {
  const Tensor x = data({3, 4}).requires_grad_();
  Tensor z = x * 2;
  z.retain_grad();
  const std::vector<Tensor> h = z.split(Shape{1, 3}, 1);
  ((h[0] * 5).sum() + (h[1] * h[1]).sum()).backward();
  const std::vector<float> zv = z.detach().to_vector<float>(), got = z.grad().to_vector<float>();
  for (int64_t r = 0; r < 3; ++r) {
    CHECK(got[r * 4] == 5.0f);
    for (int64_t c = 1; c < 4; ++c) CHECK(got[r * 4 + c] == doctest::Approx(2 * zv[r * 4 + c]));
  }
  const std::vector<float> gx = x.grad().to_vector<float>();
  for (size_t i = 0; i < gx.size(); ++i) CHECK(gx[i] == doctest::Approx(2 * got[i]));
}

TEST_CASE("autograd: placed runs pass gradcheck and gradgradcheck") {
  const Tensor x = randn({3, 6}, TensorOptions(DType::Float64)).requires_grad_();
  auto glu = [](const std::vector<Tensor>& v) {
    const std::vector<Tensor> h = v[0].chunk(2, 1);
    // a strided slice's gradient (interleaved) beside the runs
    return h[0] * h[1].sigmoid() + v[0].select(1, 5).unsqueeze(1) * v[0].narrow(1, 0, 3) +
           v[0].slice(1, 1, 6, 2).sin();
  };
  CHECK(gradcheck(glu, {x}));
  CHECK(gradgradcheck(glu, {x}));
}

namespace {

// The gradient of an RNN unrolled over T steps of x [T, 3, 5], taken
// through unbind: a cat of T parts, each reading the shared backward chain.
Tensor rnn_gradient(int64_t steps) {
  const Tensor x = data({steps, 3, 5}, 0.5).requires_grad_();
  Tensor h = zeros({3, 5}), total;
  for (const Tensor& s : x.unbind(0)) {
    h = (h * 0.5 + s).tanh();
    total = total.defined() ? total + h : h;
  }
  return grad({total.sum()}, {x})[0];
}

size_t largest_kernel(const Tensor& t) {
  size_t most = 0;
  for (const jit::Step& st : kiln_test::plan(t).steps)
    if (st.kind == jit::StepKind::Kernel) most = std::max(most, st.code->ir.values.size());
  return most;
}

}  // namespace

TEST_CASE("jit: a cat's parts are loop nests of their own: a chain they share is stored, not recomputed in each") {
  // each step's gradient is a cat part; the hidden states and the backward
  // chain are shared by all later parts. Recomputed in every part, the
  // kernels grew with the steps (64 steps of [32, 256]: 64 kernels
  // compiled in 32 s); stored (Cut::SharedValue), the largest kernel is
  // the same at 8 steps and at 16
  const Tensor g8 = rnn_gradient(8), g16 = rnn_gradient(16);
  CHECK(largest_kernel(g16) == largest_kernel(g8));
  CHECK(!kiln_test::steps_cut_by(g16, jit::Cut::SharedValue).empty());
  kiln_test::close_to_reference(g16, 1e-5);
}

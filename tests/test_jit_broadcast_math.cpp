// Pins the scheduler's broadcast-math rule (jit/schedule.cpp,
// store_broadcast_math): costly math that a kernel reads through a broadcast
// along an outer dim is stored first, computed once per element of its own,
// rather than once per element of its reader; math broadcast along inner
// dims only (hoisted out of them), small readers and row reductions keep one
// kernel. Values against the reference evaluator.
#include <doctest/doctest.h>

#include <vector>

#include "tests/jit_checks.h"

using namespace kiln;
using kiln_test::check_jit;
using kiln_test::check_jit_close;
using kiln_test::kernels;
using kiln_test::output_kernel_computes;
using kiln_test::plan;
using kiln_test::ramp;

namespace {

// The ops of the steps stored for the broadcast-math rule, in order.
std::vector<Op> broadcast_math_steps(const Tensor& t) { return kiln_test::steps_cut_by(t, jit::Cut::BroadcastMath); }

// Data: ramp's values evaluated (a leaf, so that only the math written in a
// test is computed inline).
Tensor data(const Shape& s, double scale = 1.0) {
  Tensor t = ramp(s, scale).to(kFloat32);
  t.eval();
  return t;
}

}  // namespace

TEST_CASE("jit broadcast math: a value repeated along an outer dim is computed once per element of its own") {
  const Tensor x = data({128, 256}), c = data({256}, 0.5);
  // x * c.sigmoid(): sigmoid of 256 values, not of 32768
  const Tensor gate = x * c.sigmoid();
  CHECK(kernels(gate) == 2);
  CHECK(broadcast_math_steps(gate) == std::vector<Op>{Op::Sigmoid});
  CHECK(plan(gate).steps[0].outputs[0]->shape == Shape{256});
  CHECK(!output_kernel_computes(gate, jit::VOp::Sigmoid));
  check_jit_close(gate, 1e-6);
  // exp, division, square root: each stored once
  CHECK(broadcast_math_steps(x * c.exp()) == std::vector<Op>{Op::Exp});
  check_jit_close(x * c.exp(), 1e-6);
  const Tensor scaled = x * (c.abs() + 1.0f).reciprocal();
  CHECK(kernels(scaled) == 2);
  CHECK(broadcast_math_steps(scaled) == std::vector<Op>{Op::Div});
  check_jit(scaled);
  CHECK(broadcast_math_steps(x / (c * c + 1.0f).sqrt()) == std::vector<Op>{Op::Sqrt});
  check_jit(x / (c * c + 1.0f).sqrt());
  // float64 math broadcast into a float32 result: the cast's input is stored
  const Tensor c64 = data({256}).to(kFloat64).abs() + 1.0;
  c64.eval();
  const Tensor logs = x - c64.log().to(kFloat32);
  CHECK(kernels(logs) == 2);
  check_jit_close(logs, 1e-6);
  // a value read by two broadcasts is stored once
  const Tensor e = c.exp(), twice = x * e + (x + 1.0f) / e;
  CHECK(broadcast_math_steps(twice) == std::vector<Op>{Op::Exp});
  check_jit_close(twice, 1e-6);
}

TEST_CASE("jit broadcast math: inner-dim broadcasts, cheap math, small readers and row reductions keep one kernel") {
  const Tensor x = data({128, 256});
  // c[:, None] varies along the outer loop only: computed once per row
  const Tensor col = data({128, 1}, 0.5);
  CHECK(kernels(x * col.sigmoid()) == 1);
  check_jit_close(x * col.sigmoid(), 1e-6);
  // cheap math (add, multiply, max) is recomputed: no kernel more
  const Tensor c = data({256});
  CHECK(kernels(x * (c * 2.0f + 1.0f).relu()) == 1);
  check_jit(x * (c * 2.0f + 1.0f).relu());
  // a division of the reader's own elements by a broadcast value stays a
  // division per element (x / c is not x * (1 / c): their roundings differ)
  CHECK(kernels(x / c) == 1);
  check_jit(x / c);
  // under 8192 evaluations the kernel more costs more than the math
  const Tensor small = data({16, 256});
  CHECK(kernels(small * c.sigmoid()) == 1);
  check_jit_close(small * c.sigmoid(), 1e-6);
  // a reader with few rows evaluates the value fewer than 8 times per element
  const Tensor wide = data({4, 8192}), cw = data({8192});
  CHECK(kernels(wide * cw.exp()) == 1);
  // a row's log(sum) belongs to the row kernel: softmax and log_softmax over
  // rows stay one kernel each
  CHECK(kernels(x.softmax(1)) == 1);
  CHECK(kernels(x.log_softmax(1)) == 1);
}

TEST_CASE("jit broadcast math: column softmax, log_softmax and batch norm compute their per-column math once") {
  const Tensor x = data({1024, 64});
  // log_softmax(0): log of the column sums, 64 logs instead of 65536
  const Tensor lsm = x.log_softmax(0);
  CHECK(broadcast_math_steps(lsm) == std::vector<Op>{Op::Log});
  CHECK(!output_kernel_computes(lsm, jit::VOp::Log));
  check_jit_close(lsm, 1e-5);
  // softmax(0): the reciprocal of the column sums
  const Tensor sm = x.softmax(0);
  CHECK(broadcast_math_steps(sm) == std::vector<Op>{Op::Div});
  check_jit_close(sm, 1e-5);
  // batch norm in training: mean and 1 / sqrt(var + eps) per channel, once
  const Tensor bn = batch_norm(x, Tensor(), Tensor(), Tensor(), Tensor(), /*training=*/true);
  // (merged with the mean into one kernel of 64 elements)
  CHECK(!output_kernel_computes(bn, jit::VOp::Rsqrt));
  CHECK(!output_kernel_computes(bn, jit::VOp::Div));
  check_jit_close(bn, 1e-5);
  // Worked out by hand: batch_norm(x, training) of x = [[1, 2], [3, 6],
  // [5, 10]] repeated: per column mean (3, 6), biased variance (8/3, 32/3),
  // (x - mean) / sqrt(var + 1e-5) = -2 / sqrt(8/3 + 1e-5), -4 / sqrt(32/3 + 1e-5), ...
  const Tensor small = tensor(std::vector<double>{1, 2, 3, 6, 5, 10}).reshape({3, 2}).to(kFloat32);
  const std::vector<double> got =
      batch_norm(small.repeat({4096, 1}), Tensor(), Tensor(), Tensor(), Tensor(), true).to_vector<double>();
  const double want[6] = {-1.2247425750, -1.2247442973, 0.0, 0.0, 1.2247425750, 1.2247442973};
  REQUIRE(got.size() == 6 * 4096);
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(want[i % 6]).epsilon(1e-6));
}

TEST_CASE("jit broadcast math: random numbers repeated along an outer dim are drawn once, as the reference draws them") {
  const Tensor x = data({256, 128});
  manual_seed(7);
  const Tensor noisy = x * rand({128});
  CHECK(broadcast_math_steps(noisy) == std::vector<Op>{Op::RandUniform});
  const std::vector<double> got = noisy.to_vector<double>();
  const Evaluator was = evaluator();
  set_evaluator(Evaluator::Reference);
  manual_seed(7);
  const std::vector<double> want = (x * rand({128})).to_vector<double>();
  set_evaluator(was);
  CHECK(got == want);
}

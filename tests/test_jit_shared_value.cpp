// Pins the scheduler's shared-value rule (jit/schedule.cpp, fuse_rows,
// Cut::SharedValue): a value computed in several loop nests (kernels, or
// reductions' loops inside one kernel) is stored once where recomputing it
// costs more than kSharedRecomputeLimit cheap operations per element. Chained
// layers whose outputs each feed two reductions then compile kernels of a
// size that does not grow with the depth (they recomputed every earlier
// layer, and a 150-layer chain compiled for minutes); cheap shared values and
// the row kernels (softmax, a layer norm read by a softmax) keep their
// kernels. Values against the reference evaluator.
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "jit/kernel_cache.h"
#include "tests/jit_checks.h"

using namespace kiln;
using kiln_test::check_jit;
using kiln_test::check_jit_close;
using kiln_test::kernels;
using kiln_test::output_kernel_computes;
using kiln_test::plan;
using kiln_test::sine_leaf;

namespace {

// The ops of the steps stored for the shared-value rule, in order.
std::vector<Op> shared_value_steps(const Tensor& t) { return kiln_test::steps_cut_by(t, jit::Cut::SharedValue); }

// The most IR values any one kernel of t's plan has: what a kernel costs to
// compile grows with it.
size_t largest_kernel(const Tensor& t) {
  size_t most = 0;
  for (const jit::Step& s : plan(t).steps)
    if (s.kind == jit::StepKind::Kernel) most = std::max(most, s.code->ir.values.size());
  return most;
}

// y = y - y.mean(0) + y.sum(1) * 0.01, `layers` times: each layer's output
// feeds a column reduction, a row reduction and the next layer.
Tensor centered_chain(const Tensor& x, int layers) {
  Tensor y = x;
  for (int i = 0; i < layers; ++i) y = y - y.mean(0, true) + y.sum(1, true) * 0.01f;
  return y;
}

// softmax(y * 0.5 + 1) over rows, `layers` times, read by a full sum (which
// cannot compute the row statistics in its own loops).
Tensor softmax_chain(const Tensor& x, int layers) {
  Tensor y = x;
  for (int i = 0; i < layers; ++i) y = (y * 0.5f + 1.0f).softmax(1);
  return y.sum();
}

}  // namespace

TEST_CASE("jit shared value: chained layers compile kernels whose size does not grow with the depth") {
  const Tensor x = sine_leaf({24, 40});
  // Before the rule every later kernel recomputed every earlier layer: the
  // largest kernel grew with the depth (and took minutes to compile at 150).
  const Tensor c6 = centered_chain(x, 6), c12 = centered_chain(x, 12);
  CHECK(!shared_value_steps(c12).empty());
  CHECK(largest_kernel(c12) == largest_kernel(c6));
  CHECK(kernels(c12) <= 4 * 12 + 2);
  check_jit_close(c12, 1e-5);
  const Tensor s6 = softmax_chain(x, 6), s12 = softmax_chain(x, 12);
  CHECK(!shared_value_steps(s12).empty());
  CHECK(largest_kernel(s12) == largest_kernel(s6));
  CHECK(kernels(s12) <= 2 * 12 + 3);
  check_jit_close(s12, 1e-5);
}

TEST_CASE("jit shared value: a chain's layers reuse compiled kernels and its cold evaluation compiles a bounded number") {
  const Tensor x = sine_leaf({24, 40});
  jit::clear_schedule_cache();
  jit::clear_memory_kernel_cache();
  reset_stats();
  const std::vector<double> got = centered_chain(x, 40).to_vector<double>();
  // Each layer's kernels repeat the last one's: a few distinct kernels, not
  // three new ones per layer.
  CHECK(stats().kernels_compiled + stats().cache_hits_disk <= 24);
  CHECK(stats().kernels_launched >= 40);
  const Evaluator was = evaluator();
  set_evaluator(Evaluator::Reference);
  const std::vector<double> want = centered_chain(x, 40).to_vector<double>();
  set_evaluator(was);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-5));
}

TEST_CASE("jit shared value: costly math read by two kernels is computed once") {
  // e (three transcendental functions and a product per element) is read by
  // a column sum's loop and by the output's: stored, not computed twice.
  const Tensor x = sine_leaf({32, 48});
  const Tensor e = x.sin().exp().tanh() * x.cos();
  const Tensor out = e - e.sum(0, true);
  CHECK(shared_value_steps(out) == std::vector<Op>{Op::Mul});
  CHECK(kernels(out) == 2);
  CHECK(!output_kernel_computes(out, jit::VOp::Tanh));
  check_jit_close(out, 1e-5);
}

TEST_CASE("jit shared value: cheap shared values and row kernels are not split") {
  const Tensor x = sine_leaf({32, 48});
  // softmax's exp(x - max) is computed in its sum loop and its output loop
  CHECK(kernels(x.softmax(1)) == 1);
  CHECK(shared_value_steps(x.softmax(1)).empty());
  // a layer norm's output read by a softmax's three loops, its per-row
  // statistics read by all five: one row kernel
  const Tensor mean = x.mean(1, true);
  const Tensor normed = (x - mean) * ((x - mean).pow(2).mean(1, true) + 1e-5f).rsqrt();
  const Tensor sm = normed.softmax(1);
  CHECK(kernels(sm) == 1);
  check_jit_close(sm, 1e-5);
  // a cheap value read by a column sum's loop and the output's: recomputed
  const Tensor cheap = x * 2.0f + 1.0f, centered = cheap - cheap.sum(0, true);
  CHECK(kernels(centered) == 1);
  CHECK(shared_value_steps(centered).empty());
  check_jit(centered);
  // one exp read by two outputs evaluated together: one merged kernel
  const Tensor ex = x.exp();
  const jit::Schedule both = plan({ex + 1.0f, ex * 2.0f});
  CHECK(both.steps.size() == 1);
}

TEST_CASE("jit shared value: past the depth limit, a layer's tensors read the values its first evaluation computed") {
  // Each intermediate tensor a layer builds past kAutoEvalDepth is evaluated
  // on its own; the values near the frontier that the first of them computed
  // are kept (Node::realized), so the others do not recompute the
  // unevaluated layers behind them (1750 launches for 150 layers, now 175).
  const Tensor x = sine_leaf({8, 16});
  auto layers = [&](int n) {
    Tensor y = x;
    for (int i = 0; i < n; ++i) {
      const Tensor m = y.mean(1, true);
      y = ((y - m) * ((y - m).pow(2).mean(1, true) + 1e-5f).rsqrt()).tanh() + y;
    }
    return y;
  };
  reset_stats();
  const std::vector<double> got = layers(90).to_vector<double>();
  CHECK(stats().evaluations >= 3);  // the depth limit was crossed
  CHECK(stats().kernels_launched <= 2 * 90);
  const Evaluator was = evaluator();
  set_evaluator(Evaluator::Reference);
  const std::vector<double> want = layers(90).to_vector<double>();
  set_evaluator(was);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-4));
}

TEST_CASE("jit shared value: kernels compiled side by side are compiled once per distinct kernel") {
  // A chain's layers schedule steps with equal kernels; compiled ahead on
  // several threads, each distinct kernel is compiled once, as on one thread.
  const Tensor x = sine_leaf({24, 40});
  const int threads = get_num_threads();
  auto cold_kernels = [&](int n) {
    set_num_threads(n);
    jit::clear_schedule_cache();
    jit::clear_memory_kernel_cache();
    reset_stats();
    const std::vector<double> v = centered_chain(x, 8).to_vector<double>();
    CHECK(v.size() == 24 * 40);
    return stats().kernels_compiled + stats().cache_hits_disk;
  };
  const int64_t one = cold_kernels(1), two = cold_kernels(2);
  set_num_threads(threads);
  CHECK(one < 17);  // 8 layers of 2 or more steps share kernels
  CHECK(two == one);
}

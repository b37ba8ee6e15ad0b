// Pins the JIT's fusion rules by counting the kernels the scheduler makes
// (tinygrad's check_schedule), checks that kernels are shape-generic (the
// same IR key at every shape), and checks interpreted and compiled results
// against the reference evaluator.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <random>

#include "codegen/backend.h"
#include "core/reference/evaluate.h"
#include "core/tensor_impl.h"
#include "jit/executor.h"
#include "jit/schedule.h"
#include "kiln/kiln.h"

using namespace kiln;
using namespace kiln::indexing;

namespace {

// What evaluating t runs: its storage's value (t may be a permuted view of
// it, core/layout.h).
jit::Schedule plan(const Tensor& t, bool fusion = true) {
  jit::ScheduleOptions o;
  o.fusion = fusion;
  return jit::schedule({t.impl()->storage->node}, o);
}

size_t kernels(const Tensor& t, bool fusion = true) { return plan(t, fusion).steps.size(); }

// Data tensors (Buffer leaves) of a given shape with distinct values.
Tensor data(const Shape& s, double scale = 1.0) {
  std::vector<double> v(static_cast<size_t>(s.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = scale * std::sin(0.7 * static_cast<double>(i) + 0.3);
  return tensor(v).reshape(s).contiguous();
}

// The JIT (interpreted, and compiled when a backend exists) against the reference.
// `exact`: the interpreter must equal the reference bit for bit (not when a
// float matmul is involved: the JIT hands those to BLAS even when interpreting).
void check_values(const Tensor& t, double tol = 1e-5, bool exact = true) {
  NodePtr n = t.impl()->node();
  BufferPtr ref = reference::evaluate({n})[0];
  auto as_vec = [&](const BufferPtr& b) { return make_tensor(make_buffer_node(b, n->shape)).to_vector<double>(); };
  std::vector<double> r = as_vec(ref);
  std::vector<double> interp = as_vec(jit::evaluate({n}, true)[0]);
  REQUIRE(interp.size() == r.size());
  for (size_t i = 0; i < r.size(); ++i) {
    if (std::isnan(r[i])) CHECK(std::isnan(interp[i]));
    else if (exact) CHECK(interp[i] == r[i]);  // the interpreter follows the reference exactly
    else CHECK(interp[i] == doctest::Approx(r[i]).epsilon(tol));
  }
  if (!codegen::cpu_backend().available()) return;
  std::vector<double> comp = as_vec(jit::evaluate({n}, false)[0]);
  for (size_t i = 0; i < r.size(); ++i) {
    if (std::isnan(r[i])) CHECK(std::isnan(comp[i]));
    else CHECK(comp[i] == doctest::Approx(r[i]).epsilon(tol));
  }
}

// The tensors graph() builds from random numbers, evaluated by the JIT and
// by the reference evaluator from the same seed: equal bit for bit.
void check_random_graph(uint64_t seed, const std::function<std::vector<Tensor>()>& graph) {
  manual_seed(seed);
  std::vector<std::vector<double>> got;
  for (Tensor& t : graph()) got.push_back(t.to_vector<double>());
  const Evaluator was = evaluator();
  set_evaluator(Evaluator::Reference);
  manual_seed(seed);
  std::vector<Tensor> want = graph();
  for (size_t i = 0; i < want.size(); ++i) {
    CAPTURE(i);
    CHECK(want[i].to_vector<double>() == got[i]);
  }
  set_evaluator(was);
}

// reduce(v) against reduce of v evaluated into contiguous memory first (so
// no view is left for the reduction to rewrite): equal, or within float32
// rounding of another summation order (rel 1e-5) where not `exact`.
void check_against_copy(const Tensor& v, const std::function<Tensor(const Tensor&)>& reduce, bool exact) {
  const Tensor got = reduce(v);
  Tensor stored = v.contiguous();
  stored.eval();
  const Tensor want = reduce(stored);
  REQUIRE(got.sizes() == want.sizes());
  const std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  size_t bad = 0, first = w.size();
  for (size_t i = 0; i < w.size(); ++i) {
    const bool ok = exact ? g[i] == w[i] : g[i] == doctest::Approx(w[i]).epsilon(1e-5);
    if (!ok && bad++ == 0) first = i;
  }
  CAPTURE(first);
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("jit fusion: an elementwise chain is one kernel reading each input once") {
  Tensor a = data({8, 16}), b = data({8, 16}, 2), c = data({16}, 3), d = data({8, 16}, 0.5);
  Tensor y = relu(a * b + c) * exp(-d);
  jit::Schedule s = plan(y);
  REQUIRE(s.steps.size() == 1);
  CHECK(s.steps[0].inputs.size() == 4);
  CHECK(kernels(y, false) >= 5);  // fusion off: one kernel per op
  check_values(y);
}

TEST_CASE("jit fusion: the rounding and special-function ops and the activations built on them fuse") {
  Tensor x = data({6, 10}, 3);
  CHECK(kernels(x.floor() + x.ceil() * x.round() - x.trunc() + x.sign() + x.frac()) == 1);
  CHECK(kernels(x.round(2)) == 1);
  CHECK(kernels((x.log1p().abs() + x.expm1() + x.erf()).sum(1)) == 1);
  CHECK(kernels(gelu(x) + gelu(x, "tanh") + softplus(x) + elu(x) + selu(x) + celu(x, 2) + mish(x) +
                hardsigmoid(x) + hardswish(x)) == 1);
  check_values(gelu(x) + x.round(1) + x.erf().sign());
  // gelu's backward: erf, exp and the products of its rule, one kernel
  // (fused with the forward values it needs)
  Tensor xg = x.to(kFloat32).requires_grad_();
  const std::vector<Tensor> g = kiln::autograd::grad({gelu(xg).sum()}, {xg});
  CHECK(kernels(g[0]) == 1);
  check_values(g[0]);
}

TEST_CASE("jit fusion: sibling row reductions stored for one reader share a kernel") {
  // Both row sums are stored (their reader reduces over the rows), and
  // computed in one pass: two kernels, not three.
  Tensor x = data({6, 10}, 3), w = data({10}, 2);
  Tensor ratio = ((x * w).sum(1) / (x.exp() * w.abs()).sum(1)).sum();
  jit::Schedule s = plan(ratio);
  REQUIRE(s.steps.size() == 2);
  CHECK(s.steps[0].outputs.size() == 2);
  CHECK(s.steps[0].why.cut == jit::Cut::Merged);
  check_values(ratio, 1e-5, false);
}

TEST_CASE("jit fusion: reductions fuse with what feeds them and what reads them") {
  Tensor a = data({6, 10}), b = data({6, 10}, 2);
  CHECK(kernels((a * b).sum()) == 1);
  CHECK(kernels(a.sum(1) / 10) == 1);
  CHECK(kernels(a.sum(1, true) * 2 + 1) == 1);
  check_values((a * b).sum());
  check_values(a.sum(1) / 10);
}

TEST_CASE("jit fusion: chains of reductions over the same rows are one kernel") {
  Tensor x = data({5, 7}, 3);
  CHECK(kernels(x.softmax(1)) == 1);
  CHECK(kernels(x.softmax(0)) == 1);
  CHECK(kernels(x.log_softmax(1)) == 1);
  CHECK(kernels(x.logsumexp(1)) == 1);  // max, sum of exp, log, + max: one row kernel
  CHECK(kernels(x / x.norm(2, 1, true)) == 1);  // the norm and the division
  // compositions: the mask from the loop indices, the fill, the blend
  CHECK(kernels(x.tril(1) * 2) == 1);
  CHECK(kernels(x.masked_fill(x > 0, 0.0).softmax(1)) == 1);
  CHECK(kernels(x.lerp(x * x, 0.25).sum(1)) == 1);
  CHECK(kernels(silu(x) + leaky_relu(x) + hardtanh(x)) == 1);
  CHECK(kernels(x.addcdiv(x * 0.9, (x * x).sqrt() + 1e-8, -0.01)) == 1);  // an Adam-like step
  CHECK(kernels(x - x.mean(1, true)) == 1);
  CHECK(kernels(x.var(Shape{1})) == 1);
  CHECK(kernels(x.std()) == 1);
  Tensor mu = x.mean(1, true);
  Tensor layer_norm = (x - mu) * (x.var(Shape{1}, false, true) + 1e-5).rsqrt();
  CHECK(kernels(layer_norm) == 1);
  check_values(x.softmax(1));
  check_values(x.log_softmax(0));
  check_values(layer_norm);
}

TEST_CASE("jit fusion: softmax computes each exponential once") {
  // The sum's loop stores exp(x - max) into the output; the final loop reads
  // it back and scales it (one exp in the kernel, not two).
  auto exps = [](const Tensor& t) {
    jit::Schedule s = plan(t);
    REQUIRE(s.steps.size() == 1);
    int n = 0;
    for (const jit::Value& v : s.steps[0].code->ir.values) n += v.op == jit::VOp::Exp;
    return n;
  };
  Tensor x = data({5, 7}, 3), z = data({3, 4, 5}, 2);
  CHECK(exps(x.softmax(1)) == 1);
  CHECK(exps(data({8, 7}, 3).softmax(0)) == 1);
  CHECK(exps(data({3, 8, 5}, 2).softmax(1)) == 1);
  CHECK(exps(data({5, 1}).softmax(1)) == 1);  // a size-1 row has no loops: the same index, one value
  // rows of at most 6, unrolled (jit/lower_reduce.cpp): one exp per position,
  // read by the sum and by the output
  CHECK(exps(x.softmax(0)) == 5);
  CHECK(exps(z.softmax(1)) == 4);
  check_values(x.softmax(1));
  check_values(x.softmax(0));
  check_values(z.softmax(1));
  check_values(z.softmax(2) * 3 + 1);
  check_values(data({5, 1}).softmax(1));
  check_values(data({5, 1}).softmax(0));
  // a write into an existing tensor keeps computing the value twice (the
  // destination may be read by the kernel): same values
  Tensor w = data({5, 7}, 3);
  w.copy_(w.softmax(1));
  CHECK((w - data({5, 7}, 3).softmax(1)).abs().max().item<float>() < 1e-6f);
}

TEST_CASE("jit fusion: views fold into index arithmetic") {
  Tensor x = data({4, 6}), y = data({6, 4});
  CHECK(kernels(x.t() + y) == 1);
  CHECK(kernels(x.index({Slice(), Slice(None, None, 2)}) * 2) == 1);
  CHECK(kernels(x.unsqueeze(0).expand({3, 4, 6}) + 1) == 1);
  CHECK(kernels(x.t().reshape({-1}) * 3) == 1);  // a copying reshape still fuses
  CHECK(kernels(x.permute({1, 0}).sum(0)) == 1);
  check_values(x.t() + y);
  check_values(x.t().reshape({-1}) * 3);
  check_values(x.index({Slice(1, None), Slice(None, None, 2)}).sum(0));
}

TEST_CASE("jit fusion: a transposed read runs in square tiles") {
  // The output is written along its last dim while x.t() reads x down its
  // columns: the two dims are tiled (tiles of both, then a tile's rows and
  // columns), so each cache line of x is used whole while it is in L1.
  auto ir = [](const Tensor& t) {
    jit::Schedule s = plan(t);
    REQUIRE(s.steps.size() == 1);
    return s.steps[0].code->ir;
  };
  Tensor x = data({70, 40}), y = data({40, 70});
  CHECK(ir(x.t() + y).num_loops == 4);
  // x.t() * 2 keeps x.t()'s layout (PyTorch's strides (1, 70)): computed
  // over x's memory in order, no tiles (rows and columns one loop:
  // lower_merge.cpp)
  CHECK(ir(x.t() * 2).num_loops == 1);
  CHECK((x.t() * 2).strides() == Shape{1, 40});
  CHECK(ir(x + y.t()).num_loops == 4);
  CHECK(ir(x + 1).num_loops == 1);               // contiguous reads: one loop, no tiles
  // strided, no dim read contiguously: no tiles; x's buffer (1-D: x is a
  // reshape of it) read at 2 * q in one loop over both dims, whose strides
  // (40, 2) are row-major within the view (lower_merge.cpp)
  CHECK(ir(x.index({Slice(), Slice(None, None, 2)}) + 1).num_loops == 1);
  check_values(x.index({Slice(), Slice(None, None, 2)}) + 1);
  // rank 3, one operand read contiguously along a dim the output's rows
  // step across: dim 1, then tiles of the two, then the positions inside a
  // tile; where that dim has at most 8 elements (kTileNarrowLast), no
  // tiles: dim 1, the other dim, then that one innermost
  Tensor p = data({10, 6, 33}).permute({2, 1, 0}), q = data({33, 6, 10});
  CHECK(ir(p + q).num_loops == 5);
  Tensor p7 = data({7, 6, 33}).permute({2, 1, 0}), q7 = data({33, 6, 7});
  CHECK(ir(p7 + q7).num_loops == 3);
  check_values(p7 + q7);
  // every shape of the structure, incl. ragged edge tiles, the same kernel
  CHECK(ir(data({33, 65}).t() + data({65, 33})).key() == ir(x.t() + y).key());
  check_values(x.t() + y);
  check_values(data({33, 65}).t() + data({65, 33}) * 2);
  check_values(data({1, 50}).t() + data({50, 1}));
  check_values(p + q);
  check_values((x.t() + y).exp());
}

TEST_CASE("jit fusion: transcendental math read transposed runs inside the tiles") {
  // A tile stages its transposed reads into a local it reads along its
  // rows (lower_tiles.cpp), so math on them runs in the tile's vector loop:
  // one kernel, nothing stored in its own order first.
  Tensor x = data({70, 40}), y = data({40, 70}, 0.5);
  // y + x.t().exp(): x.t().exp() is exp(x) in x.t()'s layout, read
  // transposed by the row-major sum
  const Tensor ya = y + x.t().exp();  // alive while its schedule's nodes are read
  jit::Schedule a = plan(ya);
  REQUIRE(a.steps.size() == 1);
  CHECK(a.steps[0].code->ir.num_loops == 4);  // tiles, exp in them
  check_values(ya, 1e-6);
  // x.t().exp() + y: in x.t()'s layout, y is read transposed
  const Tensor yb = x.t().exp() + y;
  CHECK(plan(yb).steps.size() == 1);
  check_values(yb, 1e-6);
  // softmax of a transposed view (a row-major result, as PyTorch's): one
  // row kernel over x.t()'s rows, reading x down its columns
  const Tensor yc = x.t().softmax(1);
  CHECK(plan(yc).steps.size() == 1);
  check_values(yc, 1e-6);
  CHECK(kernels(y + x.t() * 2) == 1);
  CHECK(kernels(x.t() + y) == 1);
}

TEST_CASE("jit fusion: a large matmul calls BLAS and its consumers fuse after it") {
  Tensor a = data({24, 20}), w = data({20, 32}), bias = data({32});
  jit::Schedule s = plan(relu(matmul(a, w) + bias));
  REQUIRE(s.steps.size() == 2);
  CHECK(s.steps[0].kind == jit::StepKind::Matmul);
  CHECK(s.steps[1].kind == jit::StepKind::Kernel);
  check_values(relu(matmul(a, w) + bias), 1e-5, false);
}

TEST_CASE("jit fusion: a small matmul is a reduction fused with its producers and readers") {
  // K <= 16 (or M, N <= 4): computed inline as a sum over K (tests/test_jit_matmul_fusion.cpp)
  Tensor a = data({4, 3}), w = data({3, 5}), bias = data({5});
  jit::Schedule s = plan(relu(matmul(a.exp(), w.t().t()) + bias));
  REQUIRE(s.steps.size() == 1);
  CHECK(s.steps[0].kind == jit::StepKind::Kernel);
  CHECK(s.steps[0].inputs.size() == 3);
  check_values(relu(matmul(a.exp(), w) + bias));  // the interpreter is bit-exact here
}

TEST_CASE("jit fusion: a reduction read by two kernels is computed once") {
  Tensor x = data({4, 4});
  Tensor s = x.sum();
  Tensor a = x * s, b = x - s;
  jit::ScheduleOptions o;
  jit::Schedule sch = jit::schedule({a.impl()->node(), b.impl()->node()}, o);
  REQUIRE(sch.steps.size() == 2);  // the sum, then one kernel writing both outputs
  CHECK(sch.steps[1].outputs.size() == 2);
}

TEST_CASE("jit fusion: kernels are shape-generic") {
  auto keys = [](const Shape& s) {
    Tensor x = data(s), y = data({s.back()});
    std::vector<std::string> k;
    for (const auto& st : plan((x * 2 + y).softmax(1)).steps) k.push_back(st.code->ir.key());
    return k;
  };
  CHECK(keys({4, 9}) == keys({7, 12}));
  CHECK(keys({4, 9}) == keys({100, 33}));
  // rows of at most 6 are unrolled, their width a constant: a new N, not a new width
  CHECK(keys({4, 5}) == keys({70, 5}));
  CHECK(keys({4, 5}) != keys({4, 3}));
}

TEST_CASE("jit fusion: results agree with fusion on and off") {
  Tensor x = data({3, 5}), y = data({5}, 2);
  Tensor r = ((x * y).exp().sum(1, true) / (x.abs() + 1)).log_softmax(1);
  NodePtr n = r.impl()->node();
  std::vector<double> want = make_tensor(make_buffer_node(reference::evaluate({n})[0], n->shape)).to_vector<double>();
  for (bool fusion : {true, false}) {
    set_fusion_enabled(fusion);
    std::vector<double> got = make_tensor(make_buffer_node(jit::evaluate({n}, true)[0], n->shape)).to_vector<double>();
    CHECK(got == want);
  }
  set_fusion_enabled(true);
}

TEST_CASE("jit: compiled kernels, stats, and no recompilation for a new shape") {
  if (!codegen::cpu_backend().available()) {
    MESSAGE("skipped: kiln was built without the LLVM backend");
    return;
  }
  auto run = [](int64_t rows, int64_t cols) {
    Tensor x = data({rows, cols}), b = data({cols}, 2);
    return (x * b + 1).relu().mean(1).to_vector<float>();
  };
  // (rows of at most 6 elements are unrolled, their width a constant of
  // the kernel: jit/lowerer.h kNarrowUnrollMax; any N is the same kernel)
  run(3, 7);  // compiles
  run(3, 4);
  reset_stats();
  std::vector<float> v = run(5, 9);
  run(40, 4);
  JitStats s = stats();
  CHECK(s.kernels_compiled == 0);
  CHECK(s.kernels_launched >= 2);
  CHECK(s.cache_hits_memory >= 2);
  REQUIRE(v.size() == 5);
  Tensor x = data({5, 9}), b = data({9}, 2);
  std::vector<double> want = ((x * b + 1).relu().sum(1) / 9.0).to_vector<double>();
  for (size_t i = 0; i < v.size(); ++i) CHECK(v[i] == doctest::Approx(want[i]).epsilon(1e-5));
}

TEST_CASE("jit fusion: outputs evaluated together share a kernel (horizontal fusion)") {
  Tensor a = data({6, 5}), b = data({6, 5}, 2);
  Tensor s = a + b, p = a * b;
  jit::ScheduleOptions o;
  jit::Schedule sch = jit::schedule({s.impl()->node(), p.impl()->node()}, o);
  REQUIRE(sch.steps.size() == 1);
  CHECK(sch.steps[0].outputs.size() == 2);
  CHECK(sch.steps[0].inputs.size() == 2);  // a and b are read once for both
  // max over a dim: values and indices come out of one row kernel
  auto [v, i] = a.max(1);
  jit::Schedule mx = jit::schedule({v.impl()->node(), i.impl()->node()}, o);
  CHECK(mx.steps.size() == 1);
  // outputs that read each other are not merged
  Tensor r = a.sum(1, true), q = a / r;
  CHECK(jit::schedule({r.impl()->node(), q.impl()->node()}, o).steps.size() == 2);
  eval(s, p, v, i);
  CHECK(s.to_vector<float>() == (a.to_vector<float>()[0] + b.to_vector<float>()[0] == s.to_vector<float>()[0] ? s.to_vector<float>() : std::vector<float>{}));
  std::vector<float> av = a.to_vector<float>(), bv = b.to_vector<float>(), sv = s.to_vector<float>(), pv = p.to_vector<float>();
  for (size_t k = 0; k < av.size(); ++k) {
    CHECK(sv[k] == av[k] + bv[k]);
    CHECK(pv[k] == av[k] * bv[k]);
  }
}

TEST_CASE("jit: a graph seen before reuses its schedule") {
  auto step = [](double scale) {
    Tensor w = data({8, 3}, scale), x = data({8, 3}, 2 * scale);
    return ((w * x).sum(1) + w.mean(1)).relu();
  };
  Tensor first = step(1.0);
  jit::ScheduleOptions o;
  jit::Schedule a = jit::schedule({first.impl()->node()}, o);
  const int64_t hits = jit::schedule_cache_hits();
  Tensor second = step(3.0);  // same structure and shapes, other data
  jit::Schedule b = jit::schedule({second.impl()->node()}, o);
  CHECK(jit::schedule_cache_hits() == hits + 1);
  REQUIRE(a.steps.size() == b.steps.size());
  CHECK(a.steps[0].code == b.steps[0].code);  // the very same kernel, no lowering
  CHECK(b.steps[0].outputs[0] == second.impl()->node().get());  // bound to the new graph
  check_values(second);
  // A different shape is a different structure: scheduled anew (but compiles nothing new).
  Tensor w = data({5, 3}), x = data({5, 3}, 2);
  Tensor third = ((w * x).sum(1) + w.mean(1)).relu();
  const int64_t before = jit::schedule_cache_hits();
  jit::schedule({third.impl()->node()}, o);
  CHECK(jit::schedule_cache_hits() == before);
  check_values(third);
}

TEST_CASE("jit: a new floating-point constant reuses the schedule and the kernel") {
  // A learning-rate schedule: x * lr + 1.5 with a new lr each step. Float
  // constants are kernel params; integer ones are compiled in.
  Tensor x = data({64, 48}).to(kFloat64);
  x.eval();
  const std::vector<double> xs = x.to_vector<double>();
  (x * 0.2 + 1.5).eval();
  const JitStats s0 = stats();
  for (double lr : {0.1, 0.05, -3.5, 1e300, 0.0}) {
    const std::vector<double> got = (x * lr + 1.5).to_vector<double>();
    REQUIRE(got.size() == xs.size());
    bool same = true;
    for (size_t i = 0; i < xs.size(); ++i) same = same && got[i] == xs[i] * lr + 1.5;
    CHECK_MESSAGE(same, "lr " << lr);
  }
  // float32 and float16 round the value as a compiled-in constant did
  Tensor h = ones({1}, kFloat16);
  CHECK(float((h * 0.1).item<Half>()) == float(Half(0.1f)));
  CHECK((ones({3}) * 0.1).to_vector<float>() == std::vector<float>(3, 0.1f));
  const JitStats s1 = stats();
  if (kiln::codegen::cpu_backend().available()) {
    CHECK(s1.schedules - s0.schedules == 2);  // the two new dtypes' graphs
    CHECK(s1.schedules_reused - s0.schedules_reused == 5);
    CHECK(s1.kernels_compiled - s0.kernels_compiled <= 2);
  }
  // an integer constant is structure: a new one is a new schedule
  Tensor xi = ones({16}, kInt64);
  CHECK((xi * 3).sum().item<int64_t>() == 48);
  const int64_t schedules = stats().schedules;
  CHECK((xi * 4).sum().item<int64_t>() == 64);
  if (kiln::codegen::cpu_backend().available()) CHECK(stats().schedules == schedules + 1);
}

TEST_CASE("jit: a graph that draws random numbers reuses its schedule and draws new numbers") {
  // Dropout and noise as a training loop runs them: the Philox offset moves
  // on every step, but seeds and offsets are kernel params, not structure.
  Tensor x = data({64, 48});
  x.eval();
  auto step = [&] { return x * (rand({64, 48}) > 0.5f).to(kFloat32) * 2.0f + randn({64, 48}) * 0.1f; };
  manual_seed(11);
  std::vector<std::vector<double>> got{step().to_vector<double>()};
  const JitStats s0 = stats();
  for (int i = 0; i < 4; ++i) got.push_back(step().to_vector<double>());
  const JitStats s1 = stats();
  CHECK(s1.schedules == s0.schedules);
  CHECK(s1.schedules_reused - s0.schedules_reused == 4);
  CHECK(s1.kernels_compiled == s0.kernels_compiled);
  for (size_t i = 1; i < got.size(); ++i) CHECK(got[i] != got[i - 1]);
  // the numbers of each step are the reference evaluator's, bit for bit
  const Evaluator was = evaluator();
  set_evaluator(Evaluator::Reference);
  manual_seed(11);
  for (size_t i = 0; i < got.size(); ++i) CHECK(step().to_vector<double>() == got[i]);
  set_evaluator(was);
  // A training step: the gradient of the dropped-out weights is each step's
  // own mask, through a reused schedule.
  Tensor w = data({64, 48}).to(kFloat32).requires_grad_();
  manual_seed(5);
  std::vector<std::vector<float>> masks;
  int64_t reused = 0;
  for (int i = 0; i < 3; ++i) {
    Tensor mask = (rand({64, 48}) > 0.5f).to(kFloat32) * 2.0f;
    Tensor loss = (w * mask).sum();
    const int64_t before = stats().schedules_reused;
    loss.backward();
    CHECK(w.grad().to_vector<float>() == mask.to_vector<float>());
    masks.push_back(mask.to_vector<float>());
    w.mutable_grad().zero_();
    if (i > 0) reused += stats().schedules_reused - before;
  }
  CHECK(masks[1] != masks[0]);
  CHECK(reused >= 2);
}

TEST_CASE("jit: a full schedule cache keeps the structures a loop runs (the least recently used go)") {
  // More structures than the cache holds (1024, jit/schedule.cpp: an
  // integer constant is structure), then a loop alternating two new ones:
  // each is scheduled once, then reused. Erasing an arbitrary entry when
  // full (as before) erased the newest: every step was scheduled again.
  Tensor xi = ones({16}, kInt64);
  xi.eval();
  for (int k = 0; k < 1100; ++k) (void)plan(xi * (k + 1000));
  Tensor a = data({8, 4}), b = data({4, 8});
  const JitStats s0 = stats();
  for (int i = 0; i < 4; ++i) {
    CHECK(plan(a * 3.0f + 1.0f).steps.size() == 1);
    CHECK(plan(b.exp() * 2.0f).steps.size() == 1);
  }
  const JitStats s1 = stats();
  CHECK(s1.schedules - s0.schedules == 2);
  CHECK(s1.schedules_reused - s0.schedules_reused == 6);
}

TEST_CASE("jit: random values in rows narrower than a vector equal the reference") {
  // A random loop's last partial vector runs masked (lower_kernel.cpp);
  // rows of 1, 5 and 13 read through a slice (they cannot merge into one
  // long row) run all or part of each row in that masked tail.
  Tensor x = data({37, 16});
  x.eval();
  for (int64_t w : {1, 5, 13}) {
    CAPTURE(w);
    check_random_graph(23, [&] {
      Tensor s = x.slice(1, 0, w);
      return std::vector<Tensor>{s + rand({37, w}), s * randn({37, w}, kFloat64),
                                 (rand({37, w}, kFloat16) > 0.5).to(kFloat32) * s,
                                 randint(-3, 9, {37, w}) + s.to(kInt64)};
    });
  }
}

TEST_CASE("jit: random values drawn by scalar code equal the reference") {
  // The Philox rounds in scalar code, not in a vector loop with a folded
  // tail: a loop that stays scalar because it reads with a runtime stride
  // (every element; the generator's scalar body inline), and a row sum's
  // remainder after its last full vector (a loop that accumulates keeps a
  // scalar remainder, which calls the generator's twin, kiln_rt_philox).
  Tensor x = data({37, 26});
  x.eval();
  check_random_graph(31, [&] {
    Tensor strided = x.slice(1, 0, 26, 2);  // [37, 13], stride 2
    return std::vector<Tensor>{strided + rand({37, 13}), strided * randn({37, 13}, kFloat64),
                               (x + rand({37, 26})).sum(1), randn({37, 13}).sum(1, true) * strided};
  });
}

TEST_CASE("jit fusion: a full reduction of a large tensor runs in two stages over fixed blocks") {
  // Blocks: the leading dim's rows (parallel), then the reduction of the
  // partials; a 1-D tensor is cut into 256..16 equal blocks of >= 1024
  // elements; no split below 32768 elements or without such a divisor.
  Tensor a = data({300, 200}), b = data({300, 200}, 2);
  Tensor dot = (a * b).sum();
  jit::Schedule s = plan(dot);
  REQUIRE(s.steps.size() == 2);
  CHECK(s.steps[0].parallel_extent == 300);
  CHECK(s.steps[1].parallel_extent == 1);
  // By hand, in double: a[i] * b[i] = 2 sin^2(0.7 i + 0.3).
  double want = 0;
  for (int i = 0; i < 300 * 200; ++i) want += 2 * std::pow(std::sin(0.7 * i + 0.3), 2);
  CHECK(dot.item<float>() == doctest::Approx(want).epsilon(1e-6));
  check_values(dot, 1e-6);
  check_values(a.max());
  check_values(a.mean(), 1e-6);
  check_values((a > 0).all());
  CHECK(kernels(a.max()) == 2);
  CHECK(kernels(data({8, 16}).sum()) == 1);  // small: one kernel

  Tensor v = data({65536});
  CHECK(kernels(v.sum()) == 2);
  jit::Schedule sv = plan(v.sum());
  CHECK(sv.steps[0].parallel_extent == 64);  // 64 blocks of 1024
  double want_v = 0;
  for (int i = 0; i < 65536; ++i) want_v += std::sin(0.7 * i + 0.3);
  CHECK(v.sum().item<float>() == doctest::Approx(want_v).epsilon(1e-5));
  check_values(v.sum(), 1e-6);
  CHECK(kernels(data({65537}).sum()) == 1);  // a prime length: no equal blocks
  // argmax: the max in two stages, then its first position (an int64 min) in two
  CHECK(kernels(data({65536}).argmax()) == 4);
  check_values(data({65536}).argmax());
}

TEST_CASE("jit fusion: a column reduction runs as levels of contiguous row-block sums") {
  // sum(0) of a (300, 60) matrix (a view of stored memory): 300 rows -> 18
  // (+12 leftover) in blocks of 16 rows, then 8 at a time (18 rows) -> 2
  // (+2), each level an elementwise kernel over contiguous rows (no index
  // division), stored; then one short reduction folding in the leftovers.
  Tensor x = data({300, 60});
  Tensor s = x.sum(0);
  jit::Schedule p = plan(s);
  REQUIRE(p.steps.size() >= 3);
  CHECK(p.steps[0].parallel_extent == 18);
  CHECK(p.steps[1].parallel_extent == 2);
  // rows computed inline are combined 8 at a time, the stored partials
  // 16: 300 -> 37 (+4) -> 2 (+5); rows of a few additions and products of
  // stored ones 16 (x * 2: 300 -> 18, as x's own)
  const Tensor computed = x.exp();
  jit::Schedule pc = plan(computed.sum(0));
  REQUIRE(pc.steps.size() >= 3);
  CHECK(pc.steps[0].parallel_extent == 37);
  CHECK(pc.steps[1].parallel_extent == 2);
  CHECK(plan((x * 2.0f).sum(0)).steps[0].parallel_extent == 18);
  check_values((x * 2.0f).sum(0), 1e-6);
  check_values(computed.sum(0), 1e-6);
  check_values(computed.amax({0}));
  for (size_t k = 0; k < 2; ++k)
    for (const jit::Value& v : p.steps[k].code->ir.values)
      CHECK((v.op != jit::VOp::Div && v.op != jit::VOp::Mod));
  // By hand, in double.
  std::vector<double> want(60, 0.0);
  for (int i = 0; i < 300; ++i)
    for (int j = 0; j < 60; ++j) want[j] += std::sin(0.7 * (i * 60 + j) + 0.3);
  std::vector<float> got = s.to_vector<float>();
  for (int j = 0; j < 60; ++j) CHECK(got[j] == doctest::Approx(want[j]).epsilon(1e-6));
  check_values(s, 1e-6);
  check_values(x.mean(0, true), 1e-6);
  check_values(x.amax({0}));
  check_values((x * 3).to(kLong).sum(0));  // integers: exact
  check_values(data({12, 50, 32}).sum(1), 1e-6);
  check_values(data({600, 32}).prod(0), 1e-6);
  // NaN in a column wins the max, in any level.
  Tensor y = data({1100, 16}).clone();
  y.index({77, 5}) = std::nan("");
  std::vector<float> m = y.amax({0}).to_vector<float>();
  CHECK(std::isnan(m[5]));
  CHECK(!std::isnan(m[4]));
  // Not blocked: the innermost dim reduced, few rows, narrow rows' maxima
  // of random numbers, small inputs (narrow rows' sums and maxima are,
  // read as rows of 16 or more: test_jit_column_reduction.cpp).
  CHECK(kernels(x.sum(1)) == 1);
  CHECK(kernels(data({12, 1400}).sum(0)) == 1);   // few rows
  CHECK(kernels((data({3000, 8}) * rand({3000, 8})).amax({0})) == 1);
  CHECK(kernels(data({3000, 8}).amax({0})) > 1);
  CHECK(kernels((data({3000, 8}) * 2.0).amax({0})) > 1);
  CHECK(kernels(data({3000, 8}).sum(0)) > 1);
  CHECK(kernels(data({100, 100}).sum(0)) == 1);   // small: cache-resident
}

TEST_CASE("jit fusion: a reduction over several dims, some not innermost, runs in stages") {
  // sum({0, 1}) of [16, 64, 32]: one node would read each of the 32 outputs'
  // 1024 elements 32 apart, on one thread per output. Staged: the adjacent
  // dims 0 and 1 merge (a [1024, 32] view), then a blocked column reduction:
  // 1024 rows -> 64 (16 at a time: x's own rows, cast to float64 inline)
  // -> 4 (16 at a time, stored), then the 4.
  Tensor x = data({16, 64, 32});
  Tensor s = x.sum({0, 1});
  jit::Schedule p = plan(s);
  REQUIRE(p.steps.size() == 3);
  CHECK(p.steps[0].outputs[0]->shape == Shape{64, 32});
  CHECK(p.steps[1].outputs[0]->shape == Shape{4, 32});
  for (const jit::Value& v : p.steps[0].code->ir.values) CHECK((v.op != jit::VOp::Div && v.op != jit::VOp::Mod));
  // By hand, in double.
  std::vector<double> want(32, 0.0);
  for (int i = 0; i < 16 * 64; ++i)
    for (int j = 0; j < 32; ++j) want[j] += std::sin(0.7 * (i * 32 + j) + 0.3);
  std::vector<float> got = s.to_vector<float>();
  for (int j = 0; j < 32; ++j) CHECK(got[j] == doctest::Approx(want[j]).epsilon(1e-6));
  check_values(s, 1e-6);
  // The trailing reduced dim first (a row reduction), then dim 0.
  Tensor r = x.sum({0, 2}, true);
  CHECK(r.sizes() == Shape{1, 64, 1});
  REQUIRE(kernels(r) == 2);
  CHECK(plan(r).steps[0].outputs[0]->shape == Shape{16, 64, 1});
  check_values(r, 1e-6);
  check_values(x.mean({0, 1}), 1e-6);
  check_values(x.amax({0, 1}));
  check_values(x.amin({0, 2}));
  check_values((x * 3).to(kLong).sum({0, 1}));  // integers: exact
  check_values(data({4, 6, 40, 24}).sum({0, 2}), 1e-6);
  check_values(data({4, 6, 40, 24}).sum({0, 1, 3}, true), 1e-6);
  check_values((data({8, 40, 64}) * data({40, 64}, 2)).sum({0, 1}), 1e-6);  // computed input, merged
  // One node: only trailing dims, a single dim, or a small input.
  CHECK(kernels(x.sum({1, 2})) == 1);
  CHECK(kernels(data({4, 8, 16}).sum({0, 1})) == 1);
}

TEST_CASE("jit fusion: a reduction of a permuted view runs over the dims in memory order") {
  // x.t().sum(1) is x's column sum: read row by row of x.t(), each element
  // would be a new cache line. It runs as x.sum(0) does, levels of
  // contiguous row-block sums (300 rows -> 18 -> 2), with no index division.
  Tensor x = data({300, 60});
  Tensor s = x.t().sum(1);
  CHECK(s.sizes() == Shape{60});
  jit::Schedule p = plan(s);
  REQUIRE(p.steps.size() == plan(x.sum(0)).steps.size());
  CHECK(p.steps[0].parallel_extent == 18);
  CHECK(p.steps[1].parallel_extent == 2);
  for (size_t k = 0; k < 2; ++k)
    for (const jit::Value& v : p.steps[k].code->ir.values) CHECK((v.op != jit::VOp::Div && v.op != jit::VOp::Mod));
  std::vector<double> want(60, 0.0);  // by hand, in double
  for (int i = 0; i < 300; ++i)
    for (int j = 0; j < 60; ++j) want[j] += std::sin(0.7 * (i * 60 + j) + 0.3);
  std::vector<float> got = s.to_vector<float>();
  for (int j = 0; j < 60; ++j) CHECK(got[j] == doctest::Approx(want[j]).epsilon(1e-6));
  check_values(s, 1e-6);
  check_values(x.t().sum(1, true), 1e-6);
  CHECK(kernels(x.t().sum(0)) == 1);  // x's row sums: one kernel, as x.sum(1)
  check_values(x.t().sum(0), 1e-6);
  check_values(x.t().amax({1}));
  check_values((x * 3).to(kLong).t().sum(1));  // integers: exact
  // elementwise work on the view: the same levels, computing exp inline
  Tensor e = x.t().exp().sum(1);
  jit::Schedule pe = plan(e);
  CHECK(pe.steps.size() == plan(x.exp().sum(0)).steps.size());
  for (const jit::Value& v : pe.steps[0].code->ir.values) CHECK((v.op != jit::VOp::Div && v.op != jit::VOp::Mod));
  check_values(e, 1e-6);
  check_values((x.t() * data({60, 300}, 2)).sum(1), 1e-6);
  // a result in x.t()'s layout (core/layout.h) is a view of a value computed
  // in x's order: its reductions run in that order as well
  Tensor y = x.t() * 2;
  CHECK(plan(y.sum(1)).steps.size() == plan((x * 2).sum(0)).steps.size());
  CHECK(plan(y.sum(1)).steps[0].parallel_extent == 18);  // x * 2: 16 rows a level, as x's
  check_values(y.sum(1), 1e-6);
  check_values(y.exp().amax({1}));
  // three dims: the kept dim's elements in place ([32, 16, 64] over x's
  // [16, 64, 32] reduces x's dims 0 and 1: staged as x.sum({0, 1}))
  Tensor x3 = data({16, 64, 32});
  Tensor z = x3.permute({2, 0, 1}).sum({1, 2});
  CHECK(kernels(z) == kernels(x3.sum({0, 1})));
  check_values(z, 1e-6);
  // kept dims in another order than in memory: the result is viewed back
  Tensor w = data({8, 40, 64}).permute({2, 1, 0});  // [64, 40, 8]
  CHECK(w.sum(1).sizes() == Shape{64, 8});
  check_values(w.sum(1), 1e-6);
  check_values(w.sum(1, true) + 1, 1e-6);
  check_values(w.amin({0}), 1e-6);
  // small inputs (cache-resident) keep one kernel
  CHECK(kernels(data({10, 10}).t().sum(1)) == 1);
}

TEST_CASE("jit fusion: reductions of random permuted views equal those of an evaluated copy") {
  // The oracle reduces the same values stored contiguously (evaluated
  // first, so no permutation is left to rewrite): sum and mean within
  // float32 rounding of another order, amax / amin exactly.
  std::mt19937 rng(20261201);
  const int64_t sizes[] = {1, 3, 8, 17, 32, 64, 130, 300};
  for (int round = 0; round < 30; ++round) {
    const int64_t rank = 2 + static_cast<int64_t>(rng() % 3);
    Shape s(static_cast<size_t>(rank));
    do {
      for (int64_t& d : s) d = sizes[rng() % 8];
    } while (s.numel() < (1 << 14) || s.numel() > (1 << 18));
    Shape p(static_cast<size_t>(rank));
    std::iota(p.begin(), p.end(), int64_t{0});
    std::shuffle(p.begin(), p.end(), rng);
    Shape dims;
    for (int64_t d = 0; d < rank; ++d)
      if (rng() % 2) dims.push_back(d);
    if (dims.empty()) dims.push_back(static_cast<int64_t>(rng() % static_cast<uint32_t>(rank)));
    const bool keep = rng() % 2;
    const int form = static_cast<int>(rng() % 3), op = static_cast<int>(rng() % 4);
    CAPTURE(s);
    CAPTURE(p);
    CAPTURE(dims);
    CAPTURE(keep);
    CAPTURE(form);
    CAPTURE(op);
    auto values = [&](const Tensor& v) {
      return form == 0 ? v : form == 1 ? v * 2 + 1 : (v * 0.5).exp();
    };
    auto reduce = [&](const Tensor& t) {
      switch (op) {
        case 0: return t.sum(dims, keep);
        case 1: return t.amax(dims, keep);
        case 2: return t.amin(dims, keep);
        default: return t.mean(dims, keep);
      }
    };
    check_against_copy(values(data(s).permute(p)), reduce, /*exact=*/op == 1 || op == 2);
  }
  // views that are not plain permutations: strided and offset slices of a
  // transpose (a permutation of strides that skip), a broadcast (a zero
  // stride: left as it is), an overlapping as_strided (equal strides: left)
  Tensor x = data({512, 300});
  const std::vector<Tensor> views = {x.index({Slice(None, None, 2), Slice()}).t(),
                                     x.index({Slice(1, None), Slice(2, 200, 3)}).t(),
                                     x.index({0}).expand({200, 300}).t(), x.as_strided({300, 500}, {1, 1}),
                                     x.as_strided({300, 500}, {1, 300})};
  for (size_t k = 0; k < views.size(); ++k) {
    CAPTURE(k);
    check_against_copy(views[k], [](const Tensor& t) { return t.sum(1); }, /*exact=*/false);
  }
}

TEST_CASE("jit fusion: a strided slice or a permutation of a computed value maps dim by dim, without division") {
  Tensor a = data({12, 10}), b = data({12, 10}, 2);
  Tensor c = data({4, 6, 5});
  for (const Tensor& v : {(a * b).index({Slice(1, None, 3), Slice(None, None, 2)}),
                          (a + 1).index({Slice(2, 9), Slice(3, 4)}), (a * b).select(0, 5).unsqueeze(0),
                          (a * b).t(), (c + 1).permute({2, 0, 1}), (c * 2).permute({1, 2, 0}).unsqueeze(1)}) {
    jit::Schedule p = plan(v * 2);
    REQUIRE(p.steps.size() == 1);
    for (const jit::Value& x : p.steps[0].code->ir.values)
      CHECK((x.op != jit::VOp::Div && x.op != jit::VOp::Mod));
    check_values(v * 2);
  }
  // A view that merges dims still goes through the flat position.
  check_values((a * b).t().reshape({120}) + 1);
}

TEST_CASE("jit: stats count the bytes each kernel reads and stores") {
  if (!codegen::cpu_backend().available()) {
    MESSAGE("skipped: kiln was built without the LLVM backend");
    return;
  }
  auto f32 = [](const Shape& s) {
    Tensor t = data(s).to(kFloat32);
    t.eval();
    return t;
  };
  Tensor a = f32({2, 16}), b = f32({3, 16}), c = f32({1, 16});
  reset_stats();
  Tensor s = a + a;  // one kernel: reads a (128 B), writes 128 B
  s.eval();
  CHECK(stats().bytes_read == 128);
  CHECK(stats().bytes_written == 128);
  // A cat runs one kernel per part, each storing its part of the output:
  // 6 rows of 64 B in all, not the whole output once per part.
  reset_stats();
  Tensor y = cat({a, b, c}, 0);
  y.eval();
  CHECK(stats().kernels_launched == 3);
  CHECK(stats().bytes_read == 6 * 64);
  CHECK(stats().bytes_written == 6 * 64);
  CHECK(y.to_vector<float>()[2 * 16] == b.to_vector<float>()[0]);
  // A write into a tensor whose old value is still held (by `keep`) copies
  // the tensor (384 B), then scatters the row (64 B).
  Tensor keep = y * 1;
  reset_stats();
  y[1] = 7;
  y.eval();
  CHECK(stats().writes_in_place == 0);
  CHECK(stats().kernels_launched == 2);
  CHECK(stats().bytes_written == 6 * 64 + 64);
  CHECK(y.to_vector<float>()[16] == 7.0f);
  CHECK(keep.to_vector<float>()[16] == a.to_vector<float>()[16]);
}

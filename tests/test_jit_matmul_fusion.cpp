// Pins how the JIT schedules matmuls: a memory-bound matmul (K <= 16, or
// M <= 4, or N <= 4; jit::matmul_inline) is computed inline as a sum over K
// inside a fused kernel, with its operands' producers and its readers fused
// around it; larger ones stay BLAS / library steps, which read transposed,
// sliced and batch-broadcast operands in place (no copy kernel). Values are checked
// against the reference evaluator (the IR interpreter bit for bit, compiled
// kernels within the float tolerances).
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

#include "codegen/backend.h"
#include "core/reference/evaluate.h"
#include "core/tensor_impl.h"
#include "jit/executor.h"
#include "jit/matmul.h"
#include "jit/schedule.h"
#include "graph_gen.h"
#include "kiln/kiln.h"

using namespace kiln;

namespace {

jit::Schedule plan(const std::vector<Tensor>& ts, bool fusion = true) {
  jit::ScheduleOptions o;
  o.fusion = fusion;
  std::vector<NodePtr> roots;
  for (const Tensor& t : ts) roots.push_back(t.impl()->node());
  return jit::schedule(roots, o);
}
jit::Schedule plan(const Tensor& t, bool fusion = true) { return plan(std::vector<Tensor>{t}, fusion); }
size_t kernels(const Tensor& t) { return plan(t).steps.size(); }
size_t matmul_steps(const jit::Schedule& s) {
  size_t n = 0;
  for (const auto& st : s.steps) n += st.kind == jit::StepKind::Matmul;
  return n;
}

// Data tensors (Buffer leaves) with distinct values.
Tensor data(const Shape& s, double scale = 1.0, DType dt = DType::Float32) {
  std::vector<double> v(static_cast<size_t>(s.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = scale * std::sin(0.7 * static_cast<double>(i) + 0.3);
  return tensor(v, dt).reshape(s).contiguous();
}
Tensor idata(const Shape& s, int64_t mod = 7, DType dt = DType::Int64) {
  std::vector<int64_t> v(static_cast<size_t>(s.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int64_t>((i * 5 + 3) % static_cast<size_t>(mod)) - mod / 2;
  return tensor(v, dt).reshape(s).contiguous();
}

std::vector<double> values_of(const BufferPtr& b, const NodePtr& n) {
  return make_tensor(make_buffer_node(b, n->shape)).to_vector<double>();
}

// The JIT, interpreted and compiled, against the reference evaluator. The
// interpreter must agree bit for bit when no matmul goes to BLAS.
void check_values(const Tensor& t, double tol = 1e-5, bool exact = true) {
  NodePtr n = t.impl()->node();
  std::vector<double> r = values_of(reference::evaluate({n})[0], n);
  std::vector<double> interp = values_of(jit::evaluate({n}, true)[0], n);
  REQUIRE(interp.size() == r.size());
  for (size_t i = 0; i < r.size(); ++i) {
    CAPTURE(i);
    if (exact) CHECK(interp[i] == r[i]);
    else CHECK(interp[i] == doctest::Approx(r[i]).epsilon(tol));
  }
  if (!codegen::cpu_backend().available()) return;
  std::vector<double> comp = values_of(jit::evaluate({n}, false)[0], n);
  for (size_t i = 0; i < r.size(); ++i) {
    CAPTURE(i);
    CHECK(comp[i] == doctest::Approx(r[i]).epsilon(tol));
  }
}

// Several outputs evaluated together (one schedule), interpreted, against the reference.
void check_together(const std::vector<Tensor>& ts) {
  std::vector<NodePtr> roots;
  for (const Tensor& t : ts) roots.push_back(t.impl()->node());
  std::vector<BufferPtr> ref = reference::evaluate(roots);
  for (bool interpret : {true, false}) {
    if (!interpret && !codegen::cpu_backend().available()) continue;
    std::vector<BufferPtr> got = jit::evaluate(roots, interpret);
    for (size_t j = 0; j < roots.size(); ++j) {
      std::vector<double> r = values_of(ref[j], roots[j]), g = values_of(got[j], roots[j]);
      REQUIRE(g.size() == r.size());
      for (size_t i = 0; i < r.size(); ++i) {
        CAPTURE(j);
        CAPTURE(i);
        if (interpret) CHECK(g[i] == r[i]);
        else CHECK(g[i] == doctest::Approx(r[i]).epsilon(1e-5));
      }
    }
  }
}

// The value through the public API with the reference evaluator selected.
std::vector<double> reference_values(const Tensor& t) {
  set_evaluator(Evaluator::Reference);
  std::vector<double> v = t.clone().to_vector<double>();
  set_evaluator(Evaluator::Jit);
  return v;
}

}  // namespace

TEST_CASE("jit matmul: the decision rule") {
  auto inl = [](const Shape& a, const Shape& b) {
    Tensor x = data(a), y = data(b);
    NodePtr n = matmul(x, y).impl()->node();
    while (n->op != Op::Matmul) n = n->inputs[0];  // under the reshape of 1-D operands
    return jit::matmul_inline(*n);
  };
  auto inl_t = [](const Shape& a, const Shape& bt) {  // a @ bt.t()
    Tensor x = data(a), y = data(bt);
    NodePtr n = matmul(x, y.t()).impl()->node();
    while (n->op != Op::Matmul) n = n->inputs[0];
    return jit::matmul_inline(*n);
  };
  CHECK(inl({100, 1}, {1, 1}));
  CHECK(inl({1, 100}, {100, 1}));
  CHECK(inl({64, 300}, {300}));        // matrix-vector (N = 1)
  CHECK(inl({300}, {300}));            // dot
  CHECK(inl({64, 16}, {16, 64}));      // K = 16, whatever the layout
  CHECK(inl({512, 16}, {16, 512}));
  CHECK(inl_t({300}, {64, 300}));      // vector-matrix x @ W.t(): B read along K
  CHECK(inl_t({4, 300}, {64, 300}));   // M = 4
  CHECK(inl_t({64, 300}, {4, 300}));   // N = 4
  CHECK(inl({300}, {300, 4}));         // tiny: 1 x 300 x 4
  // M or N <= 4 but B row-major [K, N]: read down its columns, BLAS is faster
  CHECK_FALSE(inl({300}, {300, 64}));
  CHECK_FALSE(inl({4, 64}, {64, 64}));
  CHECK_FALSE(inl({64, 64}, {64, 4}));
  CHECK_FALSE(inl_t({64, 64}, {64, 64}));
  CHECK_FALSE(inl({64, 17}, {17, 64}));
  CHECK_FALSE(inl({5, 17}, {17, 5}));
  CHECK_FALSE(inl({64, 64}, {64, 64}));
  CHECK_FALSE(inl({2, 64, 64}, {64, 64}));
}

TEST_CASE("jit matmul: linear regression's forward X @ w + b is one kernel") {
  Tensor X = data({100, 1}), w = data({1, 1}, 2), b = data({1, 1}, 3);
  Tensor y = matmul(X, w) + b;
  jit::Schedule s = plan(y);
  REQUIRE(s.steps.size() == 1);
  CHECK(s.steps[0].kind == jit::StepKind::Kernel);
  CHECK(s.steps[0].inputs.size() == 3);
  check_values(y);
  // Through the public API: the JIT's value equals the reference evaluator's.
  std::vector<double> want = reference_values(y);
  std::vector<double> got = y.to_vector<double>();
  REQUIRE(got.size() == 100);
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-6));
  // Hand-computed: X[i] * w + b.
  std::vector<double> xv = X.to_vector<double>();
  const double wv = w.item<float>(), bv = b.item<float>();
  for (size_t i = 0; i < got.size(); ++i)
    CHECK(got[i] == doctest::Approx(static_cast<float>(static_cast<float>(xv[i] * wv) + bv)).epsilon(1e-6));
}

TEST_CASE("jit matmul: linear regression's gradient X^T @ g is one kernel with g's producer") {
  Tensor X = data({100, 1}), pred = data({100, 1}, 2), target = data({100, 1}, 0.5);
  Tensor g = (pred - target) * (2.0 / 100);
  Tensor grad = matmul(X.t(), g);
  jit::Schedule s = plan(grad);
  REQUIRE(s.steps.size() == 1);
  CHECK(s.steps[0].kind == jit::StepKind::Kernel);
  CHECK(s.steps[0].inputs.size() == 3);  // X (read transposed in place), pred, target
  check_values(grad);
  // Hand-computed.
  std::vector<double> xv = X.to_vector<double>(), gv = g.to_vector<double>();
  double want = 0;
  for (size_t i = 0; i < xv.size(); ++i) want += xv[i] * gv[i];
  CHECK(grad.item<float>() == doctest::Approx(want).epsilon(1e-5));
}

TEST_CASE("jit matmul: matrix-vector, vector-matrix, dot and outer products fuse") {
  Tensor A = data({64, 300}), v = data({300}, 2), u = data({64}, 3);
  Tensor mv = matmul(relu(A), v * 2) + u;  // [64]
  jit::Schedule s = plan(mv);
  REQUIRE(s.steps.size() == 1);
  CHECK(s.steps[0].inputs.size() == 3);
  CHECK(matmul_steps(s) == 0);
  check_values(mv);
  Tensor vm = matmul(v.exp(), A.t());  // [64]: x @ W.t()
  CHECK(kernels(vm) == 1);
  check_values(vm, 1e-5);
  Tensor dot = matmul(v, v.sin());  // []
  CHECK(kernels(dot) == 1);
  check_values(dot);
  Tensor outer = matmul(u.unsqueeze(1), v.unsqueeze(0));  // [64, 300], K = 1
  CHECK(kernels(outer) == 1);
  check_values(outer);
  Tensor thin = matmul(A, data({3, 300}, 0.5).t()).tanh();  // [64, 3]: N = 3, B transposed
  CHECK(kernels(thin) == 1);
  check_values(thin, 1e-5);
  // A row-major B [K, N] with M or N <= 4 stays BLAS (its columns would be walked)
  CHECK(matmul_steps(plan(matmul(u.exp(), A))) == 1);
  check_values(matmul(u.exp(), A), 1e-5, false);
}

TEST_CASE("jit matmul: large matmuls still call BLAS") {
  Tensor a = data({64, 64}), b = data({64, 64}, 2), bias = data({64}, 3);
  jit::Schedule s = plan(matmul(a, b));
  REQUIRE(s.steps.size() == 1);
  CHECK(s.steps[0].kind == jit::StepKind::Matmul);
  jit::Schedule s2 = plan(relu(matmul(a, b) + bias));
  REQUIRE(s2.steps.size() == 2);
  CHECK(s2.steps[0].kind == jit::StepKind::Matmul);
  CHECK(s2.steps[1].kind == jit::StepKind::Kernel);
  check_values(relu(matmul(a, b) + bias), 1e-5, false);
  // The library step for other dtypes and batches (a loop for integers).
  Tensor ia = idata({2, 20, 24}, 9), ib = idata({24, 30}, 11);
  CHECK(matmul_steps(plan(matmul(ia, ib))) == 1);
  check_values(matmul(ia, ib));
  check_values(matmul(data({2, 20, 24}, 1, DType::Float64), data({24, 30}, 2, DType::Float64)), 1e-12, false);
  // Just above every threshold: BLAS; at K = 16: inline.
  CHECK(matmul_steps(plan(matmul(data({5, 17}), data({17, 5})))) == 1);
  CHECK(matmul_steps(plan(matmul(data({5, 16}), data({16, 5})))) == 0);
}

TEST_CASE("jit matmul: float64, integers and batches equal the reference") {
  for (DType dt : {DType::Float64, DType::Float32, DType::Float16, DType::BFloat16}) {
    CAPTURE(dt);
    Tensor X = data({100, 1}, 1, dt), w = data({1, 1}, 2, dt), b = data({1, 1}, 3, dt);
    CHECK(kernels(matmul(X, w) + b) == 1);
    const double tol = dt == DType::Float64 ? 1e-12 : dt == DType::Float32 ? 1e-5 : 1e-2;
    check_values(matmul(X, w) + b, tol);
    check_values(matmul(X.t(), X * 2), tol);
    check_values(matmul(data({7, 12}, 1, dt), data({12, 9}, 2, dt)), tol);
  }
  for (DType dt : {DType::Int64, DType::Int32, DType::UInt8}) {
    CAPTURE(dt);
    Tensor X = idata({100, 1}, 7, dt), w = idata({1, 1}, 5, dt), b = idata({1, 1}, 3, dt);
    CHECK(kernels(matmul(X, w) + b) == 1);
    check_values(matmul(X, w) + b);
    check_values(matmul(X.t(), X * 3));
    check_values(matmul(idata({7, 12}, 9, dt), idata({12, 9}, 11, dt)));
  }
  // Batched: [2, 3, 4] @ [4, 1] (the right operand broadcast over the batch).
  for (DType dt : {DType::Float32, DType::Float64, DType::Int64}) {
    CAPTURE(dt);
    Tensor A = dt == DType::Int64 ? idata({2, 3, 4}) : data({2, 3, 4}, 1, dt);
    Tensor B = dt == DType::Int64 ? idata({4, 1}, 5) : data({4, 1}, 2, dt);
    Tensor y = matmul(A, B);
    CHECK(y.sizes() == Shape{2, 3, 1});
    CHECK(kernels(y) == 1);
    check_values(y, dt == DType::Float64 ? 1e-12 : 1e-5);
    check_values(matmul(A.transpose(1, 2), A) * 2, dt == DType::Float64 ? 1e-12 : 1e-5);  // [2, 4, 4], K = 3
    std::vector<double> want = reference_values(y), got = y.to_vector<double>();
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-5));
  }
  // Zero-size dims: K = 0 gives zeros; M = 0 gives an empty result.
  check_values(matmul(data({3, 0}), data({0, 2})));
  check_values(matmul(data({0, 3}), data({3, 2})));
}

TEST_CASE("jit matmul: a new M reuses the compiled kernel") {
  auto keys = [](int64_t m) {
    Tensor X = data({m, 1}), w = data({1, 1}, 2), b = data({1, 1}, 3);
    std::vector<std::string> k;
    for (const auto& st : plan(matmul(X, w) + b).steps) k.push_back(st.code->ir.key());
    return k;
  };
  CHECK(keys(100) == keys(1000));
  CHECK(keys(100) == keys(7));
  if (!codegen::cpu_backend().available()) {
    MESSAGE("skipped: kiln was built without the LLVM backend");
    return;
  }
  auto run = [](int64_t m) {
    Tensor X = data({m, 1}), w = data({1, 1}, 2), b = data({1, 1}, 3);
    return (matmul(X, w) + b).to_vector<double>();
  };
  run(100);
  reset_stats();
  std::vector<double> v = run(1000);
  JitStats st = stats();
  CHECK(st.kernels_compiled == 0);
  CHECK(st.cache_hits_disk == 0);
  CHECK(st.cache_hits_memory >= 1);
  CHECK(st.library_calls == 0);
  REQUIRE(v.size() == 1000);
  // the gradient's kernel likewise
  auto grad = [](int64_t m) {
    Tensor X = data({m, 1}), p = data({m, 1}, 2), t = data({m, 1}, 0.5);
    return matmul(X.t(), (p - t) * 0.02).item<float>();
  };
  grad(100);
  reset_stats();
  grad(1000);
  CHECK(stats().kernels_compiled == 0);
}

TEST_CASE("jit matmul: an inline matmul read by several kernels is stored once") {
  Tensor X = data({50, 3}), w = data({3, 2}, 2);
  Tensor y = matmul(X, w);
  Tensor a = y + 1, b = y.sum(0);
  jit::Schedule s = plan({a, b});
  CHECK(matmul_steps(s) == 0);
  CHECK(s.steps.size() <= 3);
  eval(a, b);
  std::vector<double> av = a.to_vector<double>(), yv = reference_values(y);
  for (size_t i = 0; i < av.size(); ++i) CHECK(av[i] == doctest::Approx(yv[i] + 1).epsilon(1e-5));
  // and inside a cat, fusion off, and a matmul of matmuls
  check_values(cat({matmul(X, w), data({2, 2})}, 0));
  check_values(matmul(matmul(X, w), data({2, 5})).relu());
  check_values(matmul(X.t(), matmul(X, w)));
  for (bool fusion : {false, true}) {
    set_fusion_enabled(fusion);
    check_values(matmul(X * 2, w) + matmul(X, w * 3).exp());
  }
  set_fusion_enabled(true);
}

TEST_CASE("jit matmul: a following reduction runs the matmul nested in its loop") {
  Tensor X = data({100, 1}), w = data({1, 1}, 2), b = data({1, 1}, 3), y = data({100, 1}, 0.5);
  Tensor pred = matmul(X, w) + b;
  Tensor loss = (pred - y).pow(2).mean();  // the matmul runs inside the sum's loop
  CHECK(kernels(loss) == 1);
  check_values(loss);
  Tensor g = (pred - y) * (2.0 / 100);
  Tensor gw = matmul(X.t(), g);  // X @ w runs inside X^T @ g's loop over K
  REQUIRE(kernels(gw) == 1);
  CHECK(plan(gw).steps[0].inputs.size() == 4);  // X, w, b, y: nothing stored in between
  check_values(gw);
  Tensor centered = pred - pred.mean();  // in the sum's loop and in the final per-element loop
  CHECK(kernels(centered) == 1);
  check_values(centered);
  Tensor A = data({64, 300}), v = data({300}, 2);
  CHECK(kernels(matmul(A, v).sum()) == 1);
  check_values(matmul(A, v).sum());
  // Read in three loops (softmax's max, sum and output): K = 300 is stored once
  // rather than computed three times; K = 16 is recomputed.
  CHECK(kernels(matmul(A, v).softmax(0)) == 2);
  check_values(matmul(A, v).softmax(0), 1e-5, false);  // exp: compare within tolerance
  Tensor A16 = data({64, 16}), v16 = data({16}, 2);
  CHECK(kernels(matmul(A16, v16).softmax(0)) == 1);
  check_values(matmul(A16, v16).softmax(0), 1e-5, false);
  // Read at indices that do not walk the sum's loops (a broadcast row): nesting
  // would compute it again per row, so it is stored.
  Tensor u = data({1, 3}), W = data({3, 5}, 2), x = data({8, 5}, 3);
  Tensor bc = (x * matmul(u, W)).sum();
  CHECK(kernels(bc) == 2);
  check_values(bc);
}

TEST_CASE("jit matmul: an outer product (K = 1) read by several kernels is recomputed in each") {
  Tensor X = data({100, 1}), w = data({1, 1}, 2);
  Tensor y = matmul(X, w);
  Tensor a = y + 1, s = y.sum();
  jit::Schedule sch = plan({a, s});
  CHECK(sch.steps.size() == 1);  // and the two outputs then share one kernel
  for (const auto& st : sch.steps)
    for (const Node* in : st.inputs) CHECK(in->op != Op::Matmul);  // nothing stored for y
  check_together({a, s});
  // K = 2: stored once, read by both
  Tensor X2 = data({100, 2}), w2 = data({2, 1}, 2);
  Tensor y2 = matmul(X2, w2);
  jit::Schedule sch2 = plan({y2 + 1, y2.sum()});
  REQUIRE(sch2.steps.size() >= 2);
  CHECK(sch2.steps[0].outputs[0]->op == Op::Matmul);
  check_together({y2 + 1, y2.sum()});
}

TEST_CASE("jit matmul: kernel counts of a linear-regression step") {
  Tensor X = data({100, 1}), w = data({1, 1}, 2), b = data({1, 1}, 3), y = data({100, 1}, 0.5);
  Tensor pred = matmul(X, w) + b;
  Tensor loss = (pred - y).pow(2).mean();
  Tensor g = (pred - y) * (2.0 / 100);
  Tensor gw = matmul(X.t(), g), gb = g.sum(0, true);
  Tensor w2 = w - 0.01 * gw, b2 = b - 0.01 * gb;
  // Before small matmuls were inlined: 2 steps for pred (BLAS + add), 6 for
  // {loss, gw, gb} (2 BLAS calls, X^T and g copied for BLAS, loss, gb).
  MESSAGE("forward " << kernels(pred) << ", loss " << kernels(loss) << ", grad w " << kernels(gw)
                     << ", epoch " << plan({loss, w2, b2}).steps.size() << " kernels");
  CHECK(kernels(pred) == 1);
  CHECK(kernels(loss) == 1);
  CHECK(kernels(gw) == 1);
  jit::Schedule epoch = plan({loss, w2, b2});
  CHECK(epoch.steps.size() <= 2);
  CHECK(matmul_steps(epoch) == 0);
  check_together({loss, w2, b2});
}

TEST_CASE("jit matmul: random graphs of small matmuls and reductions equal the reference bit for bit") {
  // tests/graph_gen.h's programs, weighted to matmuls read by reductions and
  // views; every matmul it makes is small, so all run inline (nested ones
  // included), and the IR interpreter must equal the reference exactly.
  kiln_diff::Weights wt;
  wt.leaf = 1; wt.unary = 2; wt.binary = 2; wt.scalar_binary = 1; wt.where_clamp = 1; wt.cast = 1;
  wt.view = 3; wt.reduce = 5; wt.matmul = 6;
  wt.indexed = 0;  // sorts are library calls too
  int compared = 0;
  reset_stats();
  for (uint64_t seed = 70000; seed < 70800; ++seed) {
    kiln_diff::Gen gen(seed, wt);
    kiln_diff::Program p;
    try {
      p = gen.generate(4 + static_cast<int>(seed % 9));
    } catch (const std::exception&) {
      continue;
    }
    const kiln_diff::Env& env = gen.env();
    std::vector<int> roots = kiln_diff::sinks(p, env, seed % 2 ? 4 : 1);
    std::vector<NodePtr> nodes;
    for (int r : roots) nodes.push_back(env.vars[kiln_diff::result_var(p, r)].impl()->node());
    CAPTURE(seed);
    std::vector<BufferPtr> ref = reference::evaluate(nodes);
    for (bool fusion : {true, false}) {
      CAPTURE(fusion);
      set_fusion_enabled(fusion);
      std::vector<BufferPtr> got = jit::evaluate(nodes, true);
      set_fusion_enabled(true);
      for (size_t j = 0; j < nodes.size(); ++j) {
        std::vector<double> r = values_of(ref[j], nodes[j]), g = values_of(got[j], nodes[j]);
        REQUIRE(g.size() == r.size());
        bool same = true;
        for (size_t i = 0; i < r.size(); ++i)
          same = same && (std::isnan(r[i]) ? std::isnan(g[i]) : g[i] == r[i] && std::signbit(g[i]) == std::signbit(r[i]));
        if (!same) {
          std::string text;
          for (const auto& ins : p) text += "  " + ins.text + "\n";
          FAIL_CHECK("seed " << seed << (fusion ? " fused" : " unfused") << ", root " << j << ":\n" << text);
        }
      }
    }
    ++compared;
  }
  CHECK(compared >= 700);
  CHECK(stats().library_calls == 0);
}

TEST_CASE("jit: merging an output into a step merged before keeps all its outputs") {
  // Found by the random graphs above (seed 70315): the matmul v10 and the view
  // v3 merged first; v7 then merged with that step, which used to drop v3.
  Tensor v0 = tensor(std::vector<double>{1.3256741660079197}, DType::Float16).reshape({1});
  Tensor v1 = arange(0.0, 5.0, 0.5, DType::Float16).reshape({2, 5, 1});
  Tensor v3 = v0.matmul(v1.transpose(-1, -2));
  Tensor v5 = v1.matmul(tensor(std::vector<double>{0.375, -2.093054602757122}, DType::Float16).reshape({2, 1, 1}));
  Tensor v6 = -2.0 + v0;
  Tensor v7 = v5.all();
  Tensor v10 = v5.matmul(tensor(std::vector<double>{-1.625, 1.927410482185465}, DType::Float16).reshape({2, 1, 1}).transpose(-1, -2));
  jit::Schedule s = plan({v10, v7, v6, v3});
  size_t outputs = 0;
  for (const auto& st : s.steps) outputs += st.outputs.size();
  CHECK(outputs == 4);
  check_together({v10, v7, v6, v3});
}

// ---- library matmuls read strided and transposed operands in place ----

namespace {
// A library matmul whose operands BLAS reads in place: one library call and
// no kernel (no copy of an operand), with the reference's values.
void check_in_place(const Tensor& t, double tol) {
  CAPTURE(t.sizes());
  jit::Schedule s = plan(t);
  CHECK(s.steps.size() == 1);
  CHECK(matmul_steps(s) == 1);
  check_values(t, tol, false);
  reset_stats();
  t.eval();
  CHECK(stats().kernels_launched == 0);
  CHECK(stats().library_calls == 1);
}
// A library matmul with one operand BLAS cannot walk: copied by a kernel first.
void check_copied(const Tensor& t, double tol) {
  CAPTURE(t.sizes());
  jit::Schedule s = plan(t);
  REQUIRE(s.steps.size() == 2);
  CHECK(s.steps[0].why.cut == jit::Cut::MatmulOperand);
  CHECK(s.steps[1].kind == jit::StepKind::Matmul);
  check_values(t, tol, false);
}
}  // namespace

TEST_CASE("jit matmul: a computed value read transposed is stored in its own order for BLAS") {
  // (x * 2).t() and x.t() * 2 (a result in x.t()'s layout, core/layout.h) as
  // the left operand: the product is stored as it is computed, row by row
  // with no transposing tiles, and the library call reads it transposed.
  Tensor x = data({40, 24}), w = data({40, 32}, 0.5);
  for (const Tensor& a : {(x * 2).t(), x.t() * 2}) {
    const Tensor y = matmul(a, w);
    jit::Schedule s = plan(y);
    REQUIRE(s.steps.size() == 2);
    CHECK(s.steps[0].why.cut == jit::Cut::MatmulOperand);
    CHECK(s.steps[0].outputs[0]->op == Op::Mul);   // the product, not a transposed copy of it
    CHECK(s.steps[0].code->ir.num_loops == 1);     // in order (rows and columns one loop), no tiles
    CHECK(s.steps[1].kind == jit::StepKind::Matmul);
    CHECK(explain({y}).find("k1 matmul (library call, trans a)") != std::string::npos);
    check_values(y, 1e-5, false);
  }
  // part of a computed value: the part is stored (a copy), not the whole value
  const Tensor part = matmul((data({40, 48}) * 2).slice(1, 0, 24).t(), w);
  jit::Schedule s = plan(part);
  REQUIRE(s.steps.size() == 2);
  CHECK(s.steps[0].outputs[0]->op == Op::AsStrided);
  check_values(part, 1e-5, false);
}

TEST_CASE("jit matmul: BLAS reads transposed, sliced and broadcast operands without a copy") {
  for (DType dt : {DType::Float32, DType::Float64}) {
    CAPTURE(dt);
    const double tol = dt == DType::Float32 ? 1e-4 : 1e-12;  // K = 48 float sums
    Tensor x = data({48, 40}, 1, dt), y = data({48, 36}, 2, dt), w = data({36, 48}, 3, dt);
    check_in_place(matmul(x.t(), y), tol);         // A transposed
    CHECK(explain({matmul(x.t(), w.t())}).find("k0 matmul (library call, trans a, trans b)") != std::string::npos);
    check_in_place(matmul(x.t(), w.t()), tol);     // both transposed
    check_in_place(matmul(y.t(), x), tol);
    check_in_place(matmul(x.t(), y.t().t()), tol);
    check_in_place(matmul(x.t(), x), tol);         // one buffer read twice
    Tensor xr = data({40, 48}, 1, dt);
    check_in_place(matmul(xr, w.t()), tol);        // x @ w.t(): B transposed
    // A matmul's result read transposed by the next: two library calls, no kernel.
    Tensor chained = matmul(matmul(xr, data({48, 50}, 0.5, dt)).t(), data({40, 36}, 0.5, dt));
    jit::Schedule cs = plan(chained);
    CHECK(cs.steps.size() == 2);
    CHECK(matmul_steps(cs) == 2);
    check_values(chained, tol, false);
    // Column slices: a row stride (ld) above the column count, and an offset.
    Tensor wide = data({40, 70}, 4, dt), tall = data({60, 36}, 5, dt);
    check_in_place(matmul(wide.slice(1, 5, 53), tall.slice(0, 7, 55)), tol);
    check_in_place(matmul(wide.slice(1, 22, 70).t().slice(1, 3, 39).t(), y.slice(1, 1, 30)), tol);
    // Batched: transposed last two dims, a permuted batch stride.
    Tensor a3 = data({3, 48, 40}, 1, dt), b3 = data({3, 48, 36}, 2, dt);
    check_in_place(matmul(a3.transpose(1, 2), b3), tol);
    check_in_place(matmul(data({40, 3, 48}, 6, dt).permute({1, 0, 2}), data({3, 36, 48}, 7, dt).transpose(1, 2)), tol);
    // Batch broadcast: a [M, K] or [1, M, K] operand against [B, K, N] (batch stride 0),
    // also through a transpose (an expand view over a transposed view).
    check_in_place(matmul(xr, b3), tol);
    check_in_place(matmul(xr.unsqueeze(0), b3), tol);
    check_in_place(matmul(x.t(), b3), tol);
    check_in_place(matmul(a3.transpose(1, 2), w.t()), tol);
    check_in_place(matmul(data({2, 1, 40, 48}, 8, dt), data({1, 3, 48, 36}, 9, dt)), tol);
    // Views BLAS cannot walk are still copied: both strides != 1, a stride 0 in the matrix.
    Tensor every2 = data({40, 96}, 4, dt).slice(1, std::nullopt, std::nullopt, 2);
    REQUIRE(every2.sizes() == Shape{40, 48});
    check_copied(matmul(every2, y), tol);
    check_copied(matmul(data({1, 48}, 4, dt).expand({40, 48}), y), tol);
    check_copied(matmul(xr, data({48, 1}, 4, dt).expand({48, 36})), tol);
  }
}

TEST_CASE("jit matmul: the loop for other dtypes reads the same strided operands") {
  // One rule for every dtype: the integer loop walks the strides BLAS would.
  Tensor ia = idata({2, 24, 20}, 9), ib = idata({30, 24}, 11);
  for (const Tensor& t : {matmul(ia.transpose(1, 2), ib.t()), matmul(ia.transpose(1, 2)[0], idata({24, 30}))}) {
    jit::Schedule s = plan(t);
    CHECK(s.steps.size() == 1);
    CHECK(matmul_steps(s) == 1);
    check_values(t);
  }
  Tensor every2 = idata({40, 48}, 5, DType::Int32).slice(1, std::nullopt, std::nullopt, 2);
  check_values(matmul(every2, idata({24, 30}, 7, DType::Int32)));  // copied first
}

TEST_CASE("jit matmul: strided library matmuls with size-1 and empty dims") {
  for (DType dt : {DType::Float32, DType::Float64}) {
    CAPTURE(dt);
    const double tol = dt == DType::Float32 ? 1e-4 : 1e-12;  // K = 48 float sums
    Tensor b3 = data({3, 48, 36}, 2, dt);
    check_in_place(matmul(data({1, 48, 40}, 1, dt).transpose(1, 2), b3), tol);  // a batch of 1 broadcast
    check_in_place(matmul(data({1, 48, 40}, 1, dt).transpose(1, 2), data({1, 36, 48}, 2, dt).transpose(1, 2)), tol);
    check_values(matmul(data({0, 48, 40}, 1, dt).transpose(1, 2), data({0, 48, 36}, 2, dt)), tol, false);
    check_values(matmul(data({48, 1}, 1, dt).t(), data({48, 36}, 2, dt)), tol, false);  // M = 1: inline
    check_values(matmul(data({0, 40}, 1, dt).t(), data({0, 36}, 2, dt)), tol, false);   // K = 0: zeros
  }
  // The ld BLAS is given: >= max(1, cols) row-major, >= max(1, rows)
  // transposed, whatever stride a size-1 dim has.
  auto ld = [](int64_t r, int64_t c, int64_t sr, int64_t sc) {
    std::optional<jit::BlasMatrix> m = jit::blas_matrix(r, c, sr, sc);
    return m ? (m->trans ? -m->ld : m->ld) : 0;  // negative: transposed; 0: copy
  };
  CHECK(ld(4, 6, 6, 1) == 6);
  CHECK(ld(4, 6, 9, 1) == 9);
  CHECK(ld(4, 6, 1, 4) == -4);
  CHECK(ld(4, 6, 1, 7) == -7);
  CHECK(ld(1, 6, 0, 1) == 6);    // one row: its stride is never used
  CHECK(ld(1, 6, 0, 3) == -3);   // one row with a column stride: column-major, ld 3
  CHECK(ld(5, 1, 7, 0) == 7);    // one column
  CHECK(ld(5, 1, 1, 0) == 1);
  CHECK(ld(1, 1, 0, 0) == 1);
  CHECK(ld(0, 6, 0, 0) == 6);    // nothing is read
  CHECK(ld(4, 6, 2, 2) == 0);    // both strides != 1
  CHECK(ld(4, 6, 5, 1) == 0);    // rows overlap
  CHECK(ld(4, 6, 1, 3) == 0);    // columns overlap
  CHECK(ld(4, 6, 0, 1) == 0);    // a broadcast row
  CHECK(ld(5, 1, 0, 0) == 0);
  CHECK(ld(4, 6, -6, 1) == 0);
  // K = 0 reaches no library step (K <= 16 is inline), but run_matmul itself gives zeros.
  for (DType dt : {DType::Float32, DType::Float64, DType::Int32}) {
    Tensor a = zeros({5, 0}, dt), b = zeros({0, 7}, dt);
    NodePtr n = matmul(a, b).impl()->node();
    REQUIRE(n->op == Op::Matmul);
    BufferPtr ab = Buffer::allocate(dt, 0, Device()), bb = Buffer::allocate(dt, 0, Device());
    BufferPtr out = Buffer::allocate(dt, 35, Device());
    std::memset(out->data(), 0xFF, out->nbytes());  // NaN or -1: each must be overwritten
    jit::run_matmul(*n, jit::matmul_operand(*n, 0, *n->inputs[0], *ab), jit::matmul_operand(*n, 1, *n->inputs[1], *bb),
                    *out);
    for (double v : values_of(out, n)) CHECK(v == 0);
  }
}

TEST_CASE("jit matmul: the schedule cache keys a matmul's operand layout") {
  // Same ops and shapes, other strides: the strides are part of each node's
  // structural hash, so a readable and a copied layout never share a schedule,
  // and the layout BLAS uses is derived from the nodes at every run.
  auto f = [](const Tensor& src, int64_t step) {
    Tensor a = src.slice(1, 0, 48 * step, step);
    return (matmul(a, data({48, 36}, 2)) * 2).sum(1);
  };
  jit::clear_schedule_cache();  // a full cache drops an arbitrary entry
  Tensor base = data({40, 96});
  jit::ScheduleOptions o;
  auto steps_of = [&](const Tensor& t) { return jit::schedule({t.impl()->node()}, o).steps.size(); };
  const Tensor contiguous_cols = f(base, 1), strided_cols = f(base, 2);
  CHECK(steps_of(contiguous_cols) == 2);  // matmul, then the fused readers
  CHECK(steps_of(strided_cols) == 3);     // the copy of the strided columns first
  const int64_t hits = jit::schedule_cache_hits();
  CHECK(steps_of(f(base, 2)) == 3);  // the same structure again: a hit
  CHECK(steps_of(f(base, 1)) == 2);
  CHECK(jit::schedule_cache_hits() == hits + 2);
  for (int round = 0; round < 2; ++round) {
    check_values(f(data({40, 96}, 1.0 + round), 1), 1e-4, false);
    check_values(f(data({40, 96}, 1.0 + round), 2), 1e-4, false);
    check_values(f(data({40, 96}, 1.0 + round).t().contiguous().t(), 1), 1e-4, false);  // column-major source
  }
}

TEST_CASE("jit matmul: the backward of a library matmul reads transposes in place") {
  for (DType dt : {DType::Float32, DType::Float64}) {
    CAPTURE(dt);
    const double tol = dt == DType::Float32 ? 1e-4 : 1e-12;  // K = 48 float sums
    Tensor x = data({40, 48}, 1, dt), v = data({36, 20}, 3, dt);
    Tensor w = data({48, 36}, 2, dt).requires_grad_(true);
    Tensor loss = matmul(matmul(x, w).tanh(), v).sum();
    loss.backward();
    // dw = x.t() @ (g @ v.t() * (1 - tanh^2)): x.t() and v.t() are read in place.
    jit::Schedule s = plan(w.grad());
    for (const jit::Step& st : s.steps)
      for (const Node* o : st.outputs)  // no copy of a view of a stored tensor (x.t(), v.t())
        CHECK_FALSE((o->op == Op::AsStrided && jit::has_value(*o->inputs[0])));
    CHECK(matmul_steps(s) >= 2);
    check_values(w.grad(), tol, false);
  }
}

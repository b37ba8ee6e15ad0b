// Helpers shared by the op tests (test_ops_indexed.cpp,
// test_ops_advanced_index.cpp, test_ops_math.cpp): the JIT, compiled and
// interpreted, against the reference evaluator with equal bits (the scatters
// write in the reference's order, also on several threads); a kernel count;
// inputs.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/reference/evaluate.h"
#include "core/tensor_impl.h"
#include "jit/executor.h"
#include "jit/schedule.h"
#include "kiln/kiln.h"

namespace kiln_test {

inline void check_jit(const kiln::Tensor& t) {
  kiln::NodePtr n = t.impl()->node();
  // NaN as a value of its own (a NaN where the reference has one is equal)
  auto as_vec = [&](const kiln::BufferPtr& b) {
    std::vector<double> v = kiln::make_tensor(kiln::make_buffer_node(b, n->shape)).to_vector<double>();
    for (double& e : v)
      if (std::isnan(e)) e = -1234567.0;
    return v;
  };
  const std::vector<double> ref = as_vec(kiln::reference::evaluate({n})[0]);
  CHECK(as_vec(kiln::jit::evaluate({n}, true)[0]) == ref);
  CHECK(as_vec(kiln::jit::evaluate({n}, false)[0]) == ref);
}

// As check_jit for ops whose compiled float32 form is kiln's own function
// (codegen/llvm/float_math.cpp), within an ulp or two of libm's: the
// interpreter (libm, as the reference) has equal bits, the compiled kernel
// a relative difference below eps (absolute near zero).
inline void check_jit_close(const kiln::Tensor& t, double eps) {
  kiln::NodePtr n = t.impl()->node();
  auto as_vec = [&](const kiln::BufferPtr& b) {
    return kiln::make_tensor(kiln::make_buffer_node(b, n->shape)).to_vector<double>();
  };
  const std::vector<double> ref = as_vec(kiln::reference::evaluate({n})[0]);
  const std::vector<double> interpreted = as_vec(kiln::jit::evaluate({n}, true)[0]);
  const std::vector<double> compiled = as_vec(kiln::jit::evaluate({n}, false)[0]);
  REQUIRE(compiled.size() == ref.size());
  size_t bad = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const bool nan = std::isnan(ref[i]);
    const bool same = nan ? std::isnan(interpreted[i]) : interpreted[i] == ref[i];
    const bool close = nan ? std::isnan(compiled[i])
                           : compiled[i] == ref[i] ||
                                 std::fabs(compiled[i] - ref[i]) <= eps * (1 + std::fabs(ref[i]));
    if ((!same || !close) && bad++ < 5) {
      CAPTURE(i);
      CAPTURE(ref[i]);
      CAPTURE(interpreted[i]);
      CAPTURE(compiled[i]);
      CHECK(same);
      CHECK(close);
    }
  }
  CHECK(bad == 0);
}

// The JIT's values of t within eps (relative, absolute near zero) of the
// reference evaluator's: sums in another order (BLAS's, vector lanes'),
// float32 math of kiln's own.
inline void close_to_reference(const kiln::Tensor& t, double eps) {
  const kiln::NodePtr n = t.impl()->node();
  auto values = [&](const kiln::BufferPtr& b) {
    return kiln::make_tensor(kiln::make_buffer_node(b, n->shape)).to_vector<double>();
  };
  const std::vector<double> want = values(kiln::reference::evaluate({n})[0]);
  const std::vector<double> got = values(kiln::jit::evaluate({n}, false)[0]);
  REQUIRE(got.size() == want.size());
  size_t bad = 0;
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double err = std::fabs(got[i] - want[i]) / (1 + std::fabs(want[i]));
    worst = std::max(worst, std::isnan(err) ? 1e300 : err);
    bad += !(err <= eps);
  }
  CAPTURE(worst);
  CHECK(bad == 0);
}

// The schedule of these tensors' pending graph (nothing compiled or run).
inline kiln::jit::Schedule plan(const std::vector<kiln::Tensor>& roots) {
  std::vector<kiln::NodePtr> nodes;
  for (const kiln::Tensor& t : roots) nodes.push_back(t.impl()->storage->node);
  return kiln::jit::schedule(nodes, kiln::jit::ScheduleOptions{});
}
inline kiln::jit::Schedule plan(const kiln::Tensor& t) { return plan(std::vector<kiln::Tensor>{t}); }

// The ops of the steps t's plan stores for `cut`, in order.
inline std::vector<kiln::Op> steps_cut_by(const kiln::Tensor& t, kiln::jit::Cut cut) {
  std::vector<kiln::Op> ops;
  for (const kiln::jit::Step& s : plan(t).steps)
    if (s.why.cut == cut) ops.push_back(s.outputs[0]->op);
  return ops;
}

// The kernels t's pending graph schedules into.
inline size_t kernels(const kiln::Tensor& t) { return plan(t).steps.size(); }

// The kernel IR of t's last step (its output's), valid until the next call.
inline const kiln::jit::Kernel& output_kernel(const kiln::Tensor& t) {
  static kiln::jit::Schedule keep;  // (the kernel outlives the call)
  keep = plan(t);
  return keep.steps.back().code->ir;
}

// Whether the kernel that writes t (its plan's last step) computes op.
inline bool output_kernel_computes(const kiln::Tensor& t, kiln::jit::VOp op) {
  for (const kiln::jit::Value& v : plan(t).steps.back().code->ir.values)
    if (v.op == op) return true;
  return false;
}

// Kernel k's innermost loop, following the first loop at each level
// (null: k has no loop).
inline const kiln::jit::Stmt* innermost_loop(const kiln::jit::Kernel& k) {
  const std::vector<kiln::jit::Stmt>* body = &k.body;
  const kiln::jit::Stmt* inner = nullptr;
  for (bool deeper = true; deeper;) {
    deeper = false;
    for (const kiln::jit::Stmt& s : *body)
      if (s.kind == kiln::jit::StmtKind::Loop) {
        inner = &s;
        body = &s.body;
        deeper = true;
        break;
      }
  }
  return inner;
}

// The innermost loop's extent in kernel k, if it is an integer constant
// (a narrow side's loop), else -1.
inline int64_t innermost_constant(const kiln::jit::Kernel& k) {
  const kiln::jit::Stmt* inner = innermost_loop(k);
  if (!inner || k.values[static_cast<size_t>(inner->extent)].op != kiln::jit::VOp::IntConst) return -1;
  return k.values[static_cast<size_t>(inner->extent)].i;
}

// The stores in kernel k's innermost loop body (a narrow cat's: one per
// position of its block, each at a constant offset from the row's start).
inline int innermost_stores(const kiln::jit::Kernel& k) {
  const kiln::jit::Stmt* inner = innermost_loop(k);
  int n = 0;
  for (const kiln::jit::Stmt& s : inner ? inner->body : k.body) n += s.kind == kiln::jit::StmtKind::Store;
  return n;
}

// sin(0.7 i + 0.3) * scale in row-major order: distinct values of both signs.
inline kiln::Tensor ramp(const kiln::Shape& s, double scale = 1.0) {
  return (kiln::arange(0.0, static_cast<double>(s.numel())).reshape(s) * 0.7 + 0.3).sin() * scale;
}
// sin(0.7 i + 0.3) * scale in row-major order computed here in double, then
// cast to dt: a leaf and a cast, so only the math a test writes is computed
// by the kernels it checks (ramp's values are themselves computed).
inline kiln::Tensor sine_leaf(const kiln::Shape& s, kiln::DType dt = kiln::kFloat32, double scale = 1.0) {
  std::vector<double> v(static_cast<size_t>(s.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = scale * std::sin(0.7 * static_cast<double>(i) + 0.3);
  return kiln::tensor(v).reshape(s).to(dt).contiguous();
}
inline kiln::Tensor ids(const std::vector<int64_t>& v, const kiln::Shape& s) { return kiln::tensor(v).reshape(s); }

}  // namespace kiln_test

// Guarded loads (jit/lower_guard.cpp): constant padding's masked read of
// clamped positions is one Load at the unclamped index, read only where
// the mask holds. Pinned: the kernels that read through padding (a
// convolution's column copy, a padded pooling window, pad itself) carry
// the guard and no clamp, the compiled loop loads under a mask instead of
// gathering, a guarded load never uses memory where its guard is false
// (nor reads a page without a lane it uses: test_llvm_partial_vectors.cpp),
// and every program gives the reference evaluator's values, compiled and
// interpreted.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "jit/ir_interpreter.h"
#include "kernel_builder.h"
#include "kiln/nn_functional.h"
#include "tests/check_values.h"
#include "tests/jit_checks.h"

using namespace kiln;
using namespace kiln::test;

namespace {

Tensor data(const Shape& s, DType dt = kFloat32) { return kiln_test::sine_leaf(s, dt, 3.0); }

// The number of guarded loads, and of Min / Max index values, among the
// values a kernel's statements use (the IR keeps the clamped read it
// replaced, unused: no backend computes it).
struct Reads {
  int guarded = 0, clamps = 0;
};
Reads reads_of(const jit::Kernel& k) {
  std::vector<bool> live(k.values.size());
  std::vector<ValueId> stack;
  auto walk = [&](auto&& self, const std::vector<jit::Stmt>& body) -> void {
    for (const jit::Stmt& s : body) {
      for (ValueId id : {s.extent, s.index, s.value, s.lane})
        if (id >= 0) stack.push_back(id);
      self(self, s.body);
    }
  };
  walk(walk, k.body);
  Reads r;
  while (!stack.empty()) {
    const ValueId id = stack.back();
    stack.pop_back();
    if (live[id]) continue;
    live[id] = true;
    const jit::Value& v = k.values[id];
    r.guarded += v.op == VOp::Load && v.args[1] >= 0;
    r.clamps += (v.op == VOp::Min || v.op == VOp::Max) && v.dtype == kInt64;
    for (ValueId a : v.args)
      if (a >= 0) stack.push_back(a);
  }
  return r;
}

}  // namespace

TEST_CASE("jit: constant padding reads through one guarded load per read, without clamps") {
  const Tensor x = data({2, 3, 9, 8}), w = data({4, 3, 3, 3}), b = data({4});
  x.eval(), w.eval(), b.eval();
  // pad: 2-D constant padding, a guard per read
  {
    const jit::Kernel& k = kiln_test::plan(pad(x, {1, 2, 2, 1}, PadMode::Constant, 0.5)).steps.back().code->ir;
    CHECK(reads_of(k).guarded == 1);
    CHECK(reads_of(k).clamps == 0);
  }
  // the convolution's column copy (its first step) reads x under the guard
  {
    const jit::Schedule s = kiln_test::plan(conv2d(x, w, b, {1}, {1}));
    REQUIRE(s.steps.size() == 3);
    CHECK(reads_of(s.steps.front().code->ir).guarded == 1);
    CHECK(reads_of(s.steps.front().code->ir).clamps == 0);
  }
  // a padded 3 x 3 pooling window: the padded input stored first (one
  // guarded load), then the taps load it plainly
  {
    const jit::Schedule s = kiln_test::plan(max_pool2d(x, {3}, {2}, {1}));
    REQUIRE(s.steps.size() == 2);
    CHECK(s.steps.front().why.cut == jit::Cut::ByDesign);
    CHECK(reads_of(s.steps.front().code->ir).guarded == 1);
    CHECK(reads_of(s.steps.back().code->ir).guarded == 0);
    CHECK(reads_of(s.steps.back().code->ir).clamps == 0);
  }
  // replicate padding clamps and reads everywhere: no guard
  CHECK(reads_of(kiln_test::plan(pad(x, {1, 1, 1, 1}, PadMode::Replicate)).steps.back().code->ir).guarded == 0);
}

TEST_CASE("jit: padded reads give the reference evaluator's values, compiled and interpreted") {
  const Tensor x = data({2, 3, 9, 8}), w = data({4, 3, 3, 3}), b = data({4});
  x.eval(), w.eval(), b.eval();
  kiln_test::check_jit(pad(x, {1, 2, 2, 1}, PadMode::Constant, 0.5));
  kiln_test::check_jit(pad(x, {3, -2, -1, 4}, PadMode::Constant, -1.0) * 2);  // cropped on one side
  kiln_test::check_jit(pad(x, {9, 9}, PadMode::Constant, 7.0));                // wider than the row
  kiln_test::check_jit(pad(x.reshape({6, 9, 8}), {1, 1, 2, 2, 1, 3}, PadMode::Constant, 0.0) * 3 - 1);
  kiln_test::check_jit(pad(x.transpose(2, 3), {2, 1}, PadMode::Constant, 0.0));  // a transposed read
  kiln_test::check_jit(pad(x + 1, {2, 1}, PadMode::Constant, 0.0));  // a computed input: no load to guard
  for (DType dt : {kFloat16, kBFloat16, kFloat64, kInt32, kInt64, kUInt8, kBool})
    kiln_test::check_jit(pad(data({3, 17}, dt), {2, 3, 1, 1}, PadMode::Constant, 1.0));
  // a convolution's columns (its products are sgemm's, summed in its own
  // order; their values against PyTorch's: test_nn_layers.cpp)
  kiln_test::check_jit(pad(x, {1, 1, 1, 1}, PadMode::Constant, 0.0).unfold(2, 3, 1).unfold(3, 3, 1) * 1);
  kiln_test::check_jit(conv2d(x, w, b, {2}, {2}, {2}).relu());
  kiln_test::check_jit(max_pool2d(x, {3}, {2}, {1}, {1}, true));
  kiln_test::check_jit(avg_pool2d(x, {3}, {2}, {1}, true, true));
  kiln_test::check_jit(std::get<1>(max_pool2d_with_indices(x, {3}, {1}, {1})));
}

TEST_CASE("llvm: a guarded load reads only where its guard holds, under a mask in the vector loop") {
  KILN_SKIP_WITHOUT_LLVM();
  // out[i] = (i >= p1 && i < p2) ? in[i - p1] : -1 for i < p0: the index
  // is out of range (negative, or past the input) where the guard is false
  KB kb("guarded_shift");
  const int in = kb.buffer(kFloat32, false), out = kb.buffer(kFloat32, true);
  const ValueId i = kb.idx(0);
  const ValueId lo = kb.param(1), hi = kb.param(2);
  const ValueId inside = kb.val(VOp::Where, kBool,
                                {kb.val(VOp::Ge, kBool, {i, lo}), kb.val(VOp::Lt, kBool, {i, hi}),
                                 kb.val(VOp::Const, kBool)});
  jit::Value neg_one{VOp::Const, kFloat32};
  neg_one.f = -1.0;
  const ValueId fill = kb.k.add(neg_one);
  const ValueId at = kb.val(VOp::Sub, kInt64, {i, lo});
  jit::Value g{VOp::Load, kFloat32};
  g.a = in;
  g.args[0] = at, g.args[1] = inside, g.args[2] = fill;
  const ValueId v = kb.k.add(g);
  kb.k.body.push_back(loop(0, kb.param(0), true, {store(out, i, v)}));
  const codegen::CompiledKernel ck = be().compile(kb.k, true);
  REQUIRE(static_cast<bool>(ck.fn));
  const std::string id = be().target_id();
  if (id.find("+avx512f") != std::string::npos || id.find("+avx2") != std::string::npos) {
    CAPTURE(id);
    CHECK(ck.llvm_ir.find("llvm.masked.load") != std::string::npos);
    CHECK(ck.llvm_ir.find("llvm.masked.gather") == std::string::npos);
    // the tail is folded: the row's last partial vector is masked too, no
    // scalar remainder loop (loop_hints.cpp)
    CHECK(ck.llvm_ir.find("store float ") == std::string::npos);
    CHECK(ck.llvm_ir.find("llvm.masked.store") != std::string::npos);
  }
  // 40 elements, the input's 13 placed from 20: a value read outside the
  // guard would be from 20 elements before the input's start (the input is
  // its own allocation of 13; the values below would show it)
  for (const int64_t shift : {int64_t{20}, int64_t{0}, int64_t{35}}) {
    const int64_t n = 40, m = 13;
    Buf a(kFloat32, m), o(kFloat32, n), oi(kFloat32, n);
    for (int64_t j = 0; j < m; ++j) a.as<float>()[j] = static_cast<float>(j) + 0.5f;
    run(ck.fn, {&a, &o}, {n, shift, shift + m}, 0, n);
    std::vector<char*> ptrs{a.ptr(), oi.ptr()};
    const std::vector<int64_t> params{n, shift, shift + m};
    jit::interpret(kb.k, ptrs.data(), params.data(), 0, n);
    for (int64_t j = 0; j < n; ++j) {
      const float want = j >= shift && j < shift + m ? static_cast<float>(j - shift) + 0.5f : -1.0f;
      CAPTURE(shift);
      CAPTURE(j);
      CHECK(o.as<float>()[j] == want);
      CHECK(oi.as<float>()[j] == want);
    }
  }
}

// The LLVM backend's code generation pipelines are built once per thread and
// run on every module (codegen/llvm/pipeline.cpp, emit_code): a compile must
// not depend on what the pipeline compiled before it, nor on the thread.
// The oracle is the backend itself: the same kernel compiled again, after
// other kernels through the same and the other pipelines, and on a fresh
// thread, gives the same object bytes, and the objects compute.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <thread>

#include "kernel_builder.h"

using namespace kiln;
using namespace kiln::test;

namespace {

// out[i * p1 + j] = 2 a[i * p2 + j * p3]: a scalar loop over a runtime stride.
jit::Kernel strided_double() {
  KB kb("reuse_strided");
  const int a = kb.buffer(kFloat32, false), out = kb.buffer(kFloat32, true);
  const ValueId i = kb.idx(0), j = kb.idx(1);
  const ValueId v = kb.load(a, kb.add(kb.mul(i, kb.param(2)), kb.mul(j, kb.param(3))));
  kb.k.body.push_back(loop(0, kb.param(0), true,
                           {loop(1, kb.param(1), false, {store(out, kb.add(kb.mul(i, kb.param(1)), j), kb.add(v, v))})}));
  return kb.k;
}

std::string object_of(const jit::Kernel& k, const std::string& symbol, jit::KernelFn* fn = nullptr) {
  std::string object;
  jit::KernelFn f = be().compile_object(k, symbol, &object);
  REQUIRE(static_cast<bool>(f));
  if (fn) *fn = f;
  return object;
}

}  // namespace

TEST_CASE("llvm: a kernel compiles to the same object whatever the code generation pipeline compiled before") {
  KILN_SKIP_WITHOUT_LLVM();
  // a vectorized loop with a lane function, a row maximum, a scalar strided loop
  const jit::Kernel e = map_kernel("reuse_exp", VOp::Exp, kFloat32, kFloat32),
                    m = row_reduction("reuse_rowmax", jit::Combiner::Max, kFloat32), s = strided_double();
  const std::string e1 = object_of(e, "kiln_reuse_e"), m1 = object_of(m, "kiln_reuse_m");
  const std::string s1 = object_of(s, "kiln_reuse_s");
  REQUIRE(!e1.empty());
  // again, in another order, after the others
  jit::KernelFn fe = nullptr, fm = nullptr, fs = nullptr;
  const std::string s2 = object_of(s, "kiln_reuse_s", &fs);
  const std::string e2 = object_of(e, "kiln_reuse_e", &fe);
  const std::string m2 = object_of(m, "kiln_reuse_m", &fm);
  CHECK(e2 == e1);
  CHECK(m2 == m1);
  CHECK(s2 == s1);
  // a thread of its own builds its own pipelines: the same bytes
  std::string e3, m3;
  std::thread t([&] {
    m3 = object_of(m, "kiln_reuse_m");
    e3 = object_of(e, "kiln_reuse_e");
  });
  t.join();
  CHECK(e3 == e1);
  CHECK(m3 == m1);
  // and what was compiled last computes: 37 elements (vector loop and
  // remainder), 3 rows of 37, and the strided copy
  Buf in(kFloat32, 111), o(kFloat32, 111);
  for (int x = 0; x < 111; ++x) in.as<float>()[x] = static_cast<float>(x % 37) * 0.25f - 4.0f;
  run(fe, {&in, &o}, {37}, 0, 37);
  for (int x = 0; x < 37; ++x) CHECK(o.as<float>()[x] == doctest::Approx(std::exp(in.as<float>()[x])).epsilon(1e-6));
  run(fm, {&in, &o}, {3, 37}, 0, 3);
  for (int r = 0; r < 3; ++r) CHECK(o.as<float>()[r] == 5.0f);  // (36 * 0.25 - 4)
  run(fs, {&in, &o}, {3, 12, 37, 3}, 0, 3);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 12; ++c) CHECK(o.as<float>()[r * 12 + c] == 2.0f * in.as<float>()[r * 37 + c * 3]);
}

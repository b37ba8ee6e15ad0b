// The vector width of a float32 sum of lane function values (softmax's
// exp(x - max) summed in float64; codegen/llvm/lower_kernel.cpp): 16 lanes,
// one vector a step, where the host runs 512-bit vectors at full clock
// (AVX-512 with AVX512_VBMI2), LLVM's own choice elsewhere. The oracles: the
// host's features as the backend's target id lists them, and libm's exp
// summed in double.
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>
#include <string>

#include "kernel_builder.h"

using namespace kiln;
using namespace kiln::test;

namespace {

// Whether the backend's target ("llvm-<version>/<cpu>/+f1,+f2,...") has
// every 512-bit feature the wide rule asks for.
bool host_runs_wide_vectors() {
  const std::string id = be().target_id();
  std::stringstream features(id.substr(id.rfind('/') + 1));
  int found = 0;
  for (std::string f; std::getline(features, f, ',');)
    for (const char* want : {"+avx512f", "+avx512bw", "+avx512dq", "+avx512vl", "+avx512vbmi2"})
      found += f == want;
  return found == 5;
}

// out[r] = sum_j exp(in[r * p1 + j]) in float64, r < p0.
jit::Kernel exp_row_sums() {
  KB kb("exp_row_sums");
  const int in = kb.buffer(kFloat32, false), out = kb.buffer(kFloat64, true);
  const int acc = kb.acc(jit::Combiner::Sum, kFloat64);
  const ValueId r = kb.idx(0), j = kb.idx(1);
  const ValueId e = kb.val(VOp::Exp, kFloat32, {kb.load(in, kb.add(kb.mul(r, kb.param(1)), j))});
  const ValueId wide = kb.val(VOp::Cast, kFloat64, {e});
  kb.k.body.push_back(loop(0, kb.param(0), true,
                           {acc_init(acc), loop(1, kb.param(1), false, {acc_update(acc, wide)}),
                            store(out, r, kb.val(VOp::AccRead, kFloat64, {}, acc))}));
  return kb.k;
}

}  // namespace

TEST_CASE("llvm: a float32 sum of exp values runs 16 lanes a step where 512-bit vectors run at full clock") {
  KILN_SKIP_WITHOUT_LLVM();
  const codegen::CompiledKernel ck = be().compile(exp_row_sums(), true);
  REQUIRE(static_cast<bool>(ck.fn));
  const bool wide = host_runs_wide_vectors();
  CAPTURE(be().target_id());
  // the exp polynomial in 16 float lanes, widened into 16 doubles; no
  // second copy of 8 lanes (LLVM's 2 x 8)
  CHECK((ck.llvm_ir.find("fpext <16 x float>") != std::string::npos) == wide);
  if (wide) CHECK(ck.llvm_ir.find("<8 x float> @llvm.fma.") == std::string::npos);
  CHECK(ck.llvm_ir.find("kiln_rt_expf") != std::string::npos);  // the remainder's twin
  // and it sums: rows of 0 (no vector step), 5 (remainder only), 16, 37
  // and 1000 elements
  for (int64_t cols : {0, 5, 16, 37, 1000}) {
    const int64_t rows = 3;
    Buf a(kFloat32, static_cast<size_t>(rows * cols)), o(kFloat64, rows);
    for (int64_t x = 0; x < rows * cols; ++x)
      a.as<float>()[x] = std::sin(0.37f * static_cast<float>(x)) * 4.0f;
    run(ck.fn, {&a, &o}, {rows, cols}, 0, rows);
    for (int64_t y = 0; y < rows; ++y) {
      double want = 0;
      for (int64_t x = 0; x < cols; ++x) want += std::exp(static_cast<double>(a.as<float>()[y * cols + x]));
      CAPTURE(cols);
      CHECK(o.as<double>()[y] == doctest::Approx(want).epsilon(1e-6));
    }
  }
}

// Software prefetch of the loops that widen float32 to float64 as they sum
// (codegen/llvm/prefetch_streams.h): each stream of vector loads in such a
// loop prefetches kPrefetchBytes (8 KiB) ahead, one prefetch per 64 bytes a step;
// a split sum's tail loop, a loop that stores (a copy into float64), a loop that does
// not widen (a float32 max, a float64 sum) and a local's loads do not.
// The oracles: the compiled IR's prefetch calls, sums and dot products in
// double by hand (the prefetch must not change a value).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kernel_builder.h"
#include "tests/jit_checks.h"

using namespace kiln;
using namespace kiln::test;

namespace {

const std::string kPrefetch = "call void @llvm.prefetch";

float value_at(int64_t i) { return static_cast<float>(std::sin(0.37 * static_cast<double>(i)) * 3.0 + 0.25); }

}  // namespace

TEST_CASE("llvm: a float32 sum widened to float64 prefetches each input stream 8 KiB ahead") {
  KILN_SKIP_WITHOUT_LLVM();
  for (const bool dot : {false, true}) {
    CAPTURE(dot);
    const codegen::CompiledKernel ck = be().compile(widening_row_sums(dot ? "row_dots" : "row_sums", dot), true);
    REQUIRE(static_cast<bool>(ck.fn));
    CAPTURE(ck.llvm_ir);
    // one prefetch per input stream (a step of 16 floats: one 64-byte
    // line), in the vector loop only (the masked tail has none), 8192
    // bytes past the step's first load
    CHECK(occurrences(ck.llvm_ir, kPrefetch) == (dot ? 2u : 1u));
    CHECK(occurrences(ck.llvm_ir, "i64 8192") == (dot ? 2u : 1u));
    CHECK(occurrences(ck.llvm_ir, "i32 0, i32 3, i32 1)") == (dot ? 2u : 1u));  // read, every cache level, data
    // and the values are the sums': rows of 0, 5 (the tail only), 16, 37
    // and 3000 (past the prefetch distance, the last rows prefetching
    // beyond the buffer's end, which never faults)
    for (const int64_t cols : {0, 5, 16, 37, 3000}) {
      CAPTURE(cols);
      const int64_t rows = 4;
      const size_t n = static_cast<size_t>(rows * cols);
      Buf a(kFloat32, n), b(kFloat32, n), o(kFloat64, rows);
      for (size_t i = 0; i < n; ++i) {
        a.as<float>()[i] = value_at(static_cast<int64_t>(i));
        b.as<float>()[i] = value_at(static_cast<int64_t>(i) + 11) - 0.5f;
      }
      if (dot) run(ck.fn, {&a, &b, &o}, {rows, cols}, 0, rows);
      else run(ck.fn, {&a, &o}, {rows, cols}, 0, rows);
      for (int64_t y = 0; y < rows; ++y) {
        double want = 0;
        for (int64_t x = 0; x < cols; ++x) {
          const size_t i = static_cast<size_t>(y * cols + x);
          want += dot ? static_cast<double>(a.as<float>()[i] * b.as<float>()[i]) : static_cast<double>(a.as<float>()[i]);
        }
        CHECK(o.as<double>()[y] == doctest::Approx(want).epsilon(1e-12));
      }
    }
  }
}

TEST_CASE("llvm: loops that store, do not widen or read a local prefetch nothing") {
  KILN_SKIP_WITHOUT_LLVM();
  // a copy into float64 widens and stores (a scan down columns, which
  // also stores, ran slower prefetched)
  const codegen::CompiledKernel copy = be().compile(map_kernel("widening_copy", VOp::Cast, kFloat32, kFloat64), true);
  REQUIRE(static_cast<bool>(copy.fn));
  CHECK(copy.llvm_ir.find("fpext <") != std::string::npos);  // (vectorized: a loop the rule must skip)
  CHECK(copy.llvm_ir.find(kPrefetch) == std::string::npos);
  // a float32 maximum and a float64 sum convert nothing
  for (const auto& [c, dt] : {std::pair{jit::Combiner::Max, kFloat32}, std::pair{jit::Combiner::Sum, kFloat64}}) {
    const codegen::CompiledKernel ck = be().compile(row_reduction("row_reduction", c, dt), true);
    REQUIRE(static_cast<bool>(ck.fn));
    CHECK(ck.llvm_ir.find(kPrefetch) == std::string::npos);
  }
  // the copy still copies
  const int64_t n = 1000;
  Buf a(kFloat32, n), o(kFloat64, n);
  for (int64_t i = 0; i < n; ++i) a.as<float>()[i] = value_at(i);
  run(copy.fn, {&a, &o}, {n}, 0, n);
  int64_t wrong = 0;
  for (int64_t i = 0; i < n; ++i) wrong += o.as<double>()[i] != static_cast<double>(a.as<float>()[i]);
  CHECK(wrong == 0);
}

TEST_CASE("llvm: whole programs' float32 sums, means and dot products prefetch, float64 sums do not") {
  KILN_SKIP_WITHOUT_LLVM();
  // the prefetches in all of a program's compiled kernels
  auto prefetches = [](const Tensor& t) {
    const jit::Schedule s = kiln_test::plan(t);
    size_t n = 0;
    for (const jit::Step& st : s.steps)
      if (st.code) n += occurrences(be().compile(st.code->ir, true).llvm_ir, kPrefetch);
    return n;
  };
  Tensor x = kiln_test::ramp({64, 4096}).eval(), y = (kiln_test::ramp({64, 4096}) * 0.5).eval();
  Tensor big = kiln_test::ramp({1 << 16}).eval();
  CHECK(prefetches(x.sum(1)) == 1);
  CHECK(prefetches(x.mean(1)) == 1);
  CHECK(prefetches((x * y).sum()) == 2);  // two streams; the partials' sum (float64) none
  CHECK(prefetches(big.sum()) == 1);      // two stages: the blocks' float32 sums
  Tensor x64 = x.to(kFloat64).eval();
  CHECK(prefetches(x64.sum(1)) == 0);
  CHECK(prefetches(x.amax({1})) == 0);
  // and the values: the sums of the ramp by hand, in double
  const std::vector<float> v = x.to_vector<float>();
  const std::vector<float> got = x.sum(1).to_vector<float>();
  for (int64_t r = 0; r < 64; ++r) {
    double want = 0;
    for (int64_t c = 0; c < 4096; ++c) want += static_cast<double>(v[static_cast<size_t>(r * 4096 + c)]);
    CHECK(got[static_cast<size_t>(r)] == static_cast<float>(want));
  }
}

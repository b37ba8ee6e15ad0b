// Streaming stores (codegen/llvm/stream_stores.h): a kernel of one cheap
// pass (no division or transcendental math on its elements, no row passes;
// a tiled transpose qualifies) carries the bytes it moves as a param
// (kernel_ir.h, footprint_param); where they reach 32 MiB its aligned
// vector stores are non-temporal. The tests pin which kernels carry the
// param and its value (0 where an inner loop's rows do not fill whole
// lines, jit/lower_footprint.cpp), that crossing the threshold compiles
// nothing, that the x86 code has both store forms and a fence, and the
// values of large results at aligned and misaligned destinations (a cat's
// parts), on one thread and two, against values worked out by hand.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "codegen/backend.h"
#include "kiln/jit.h"
#include "tests/jit_checks.h"

using namespace kiln;

namespace {

// The footprint param's value in the plan of t's last kernel, -1 without one.
int64_t footprint(const Tensor& t) {
  jit::Schedule s = kiln_test::plan(t);
  const jit::Step& st = s.steps.back();
  const int32_t slot = st.code->ir.footprint_param;
  return slot < 0 ? -1 : st.params[static_cast<size_t>(slot)];
}

// Elements past 32 MiB of float32 input and output together.
constexpr int64_t kLarge = (int64_t{1} << 22) + 37;

// Sets the pool's thread count for a scope, then restores the one before.
struct Threads {
  int before = get_num_threads();
  explicit Threads(int n) { set_num_threads(n); }
  ~Threads() { set_num_threads(before); }
};

}  // namespace

TEST_CASE("jit stream stores: one-pass kernels without math carry the bytes they move") {
  Tensor x = kiln_test::ramp({1024, 1024}).eval(), y = kiln_test::ramp({1024}).eval();
  // read x and y, write the sum: 4 MiB + 4 KiB + 4 MiB
  CHECK(footprint(x + y.unsqueeze(0)) == 2 * 1024 * 1024 * 4 + 1024 * 4);
  CHECK(footprint(x.to(kFloat64) * 2) == 1024 * 1024 * (4 + 8));
  CHECK(footprint(x.slice(1, 0, 1024, 2) * 2) == 1024 * 1024 * 4 + 1024 * 512 * 4);  // the buffer viewed
  // tiled transposes: their tile count divides, but once, not per element
  CHECK(footprint(x.t().contiguous()) == 2 * 1024 * 1024 * 4);
  CHECK(footprint(x.t() + x) == 2 * 1024 * 1024 * 4);  // x read once, as two views
  Tensor nhwc = kiln_test::ramp({2, 8, 8, 16}).eval();
  CHECK(footprint(nhwc.permute({0, 3, 1, 2}).contiguous()) == 2 * 2048 * 4);
  // math or a row's passes: stores stay plain (streaming slowed them)
  CHECK(footprint(x.exp()) == -1);
  CHECK(footprint(x / 3) == -1);
  CHECK(footprint(x.softmax(1)) == -1);
  CHECK(footprint(x - x.mean(1, true)) == -1);
  CHECK(footprint(x.sum(1)) == -1);
  // rows of 4 summed position by position (so is the last level of x.sum(0)):
  // one pass, no math (jit/lower_reduce.cpp)
  CHECK(footprint(x.reshape({262144, 4}).sum(1)) == 1024 * 1024 * 4 + 262144 * 4);
}

TEST_CASE("jit stream stores: rows that do not fill whole lines store plain") {
  // [rows, w] of a wider tensor: the kernel's inner loop runs over one row;
  // a row of w elements of `dt` is w * size bytes, and the output's rows
  // follow each other, so unless that is a multiple of 64 (or at least
  // 3072 bytes) lines are shared by two rows or by a vector and a remainder
  auto rows = [](int64_t w, DType dt) {
    Tensor a = kiln_test::ramp({64, w + 3}).eval();
    return a.slice(1, 0, w).to(dt) * 2;
  };
  auto bytes = [](int64_t w, int64_t size) { return 64 * (w + 3) * 4 + 64 * w * size; };
  CHECK(footprint(rows(10, kFloat32)) == 0);    // 40 bytes a row
  CHECK(footprint(rows(10, kFloat64)) == 0);    // 80
  CHECK(footprint(rows(100, kFloat64)) == 0);   // 800
  CHECK(footprint(rows(500, kFloat32)) == 0);   // 2000
  CHECK(footprint(rows(750, kFloat32)) == 0);   // 3000
  CHECK(footprint(rows(16, kFloat32)) == bytes(16, 4));      // 64
  CHECK(footprint(rows(8, kFloat64)) == bytes(8, 8));        // 64
  CHECK(footprint(rows(8, kFloat32)) == bytes(8, 4));        // 32: two rows a line, a vector each
  CHECK(footprint(rows(24, kFloat64)) == bytes(24, 8));      // 192
  CHECK(footprint(rows(32, kFloat16)) == bytes(32, 2));      // 64
  CHECK(footprint(rows(768, kFloat32)) == bytes(768, 4));    // 3072: long
  CHECK(footprint(rows(1000, kFloat32)) == bytes(1000, 4));  // 4000: long
  // a flat loop's rows are the whole output: any length streams
  Tensor f = kiln_test::ramp({64, 10}).eval();
  CHECK(footprint(f * 2) == 64 * 10 * 8);
  // a blocked column sum's levels over float64 rows of 10 (26-37 ms
  // streamed against 6 plain at [2^20, 10]): rows that cannot be read as
  // wider ones (random numbers, drawn at their own positions)
  Tensor b = kiln_test::ramp({4, 4096, 10}).eval();
  const Tensor v = (b * rand({4, 4096, 10})).sum(1);
  const jit::Schedule levels = kiln_test::plan(v);
  int narrow = 0;
  for (const jit::Step& st : levels.steps) {
    const Node* o = st.outputs.front();
    if (st.kind != jit::StepKind::Kernel || st.code->ir.footprint_param < 0 || o->shape.back() != 10 ||
        o->dtype != kFloat64 || o->numel() < 1000)
      continue;
    ++narrow;
    CHECK(st.params[static_cast<size_t>(st.code->ir.footprint_param)] == 0);
  }
  CHECK(narrow > 0);
  kiln_test::check_jit_close(v, 1e-6);
}

TEST_CASE("jit stream stores: crossing 32 MiB compiles nothing new, values bit for bit") {
  if (!codegen::cpu_backend().available()) {
    MESSAGE("kiln was built without LLVM: test skipped");
    return;
  }
  for (int threads : {1, 2}) {
    CAPTURE(threads);
    Threads t(threads);
    // the kernel compiled at a small size, then run past the threshold
    Tensor small = arange(100, TensorOptions().dtype(kFloat32)).eval();
    (small * 2 + 1).eval();
    Tensor big = arange(kLarge, TensorOptions().dtype(kFloat32)).eval();
    reset_stats();
    Tensor r = (big * 2 + 1).eval();
    CHECK(stats().kernels_compiled == 0);
    CHECK(footprint(big * 2 + 1) == kLarge * 8);
    const float* p = r.data_ptr<float>();
    int64_t wrong = 0;
    for (int64_t i = 0; i < kLarge; ++i) wrong += p[i] != static_cast<float>(2 * i + 1);
    CHECK(wrong == 0);
  }
}

TEST_CASE("jit stream stores: rows of 10 float64 past 32 MiB, after rows of 16: no new kernel, values bit for bit") {
  if (!codegen::cpu_backend().available()) {
    MESSAGE("kiln was built without LLVM: test skipped");
    return;
  }
  auto rows = [](int64_t r, int64_t w) {
    Tensor a = arange(r * (w + 3), TensorOptions().dtype(kFloat32)).reshape({r, w + 3}).eval();
    return a.slice(1, 0, w).to(kFloat64) * 2;
  };
  for (int threads : {1, 2}) {
    CAPTURE(threads);
    Threads t(threads);
    rows(40, 16).eval();
    constexpr int64_t R = 260000, W = 10;  // 13.5 MB read, 20.8 MB written
    Tensor y = rows(R, W);
    CHECK(footprint(y) == 0);
    reset_stats();
    y.eval();
    CHECK(stats().kernels_compiled == 0);
    const double* p = y.data_ptr<double>();
    int64_t wrong = 0;
    for (int64_t r = 0; r < R; ++r)
      for (int64_t c = 0; c < W; ++c) wrong += p[r * W + c] != 2.0 * static_cast<double>(r * (W + 3) + c);
    CHECK(wrong == 0);
  }
}

TEST_CASE("jit stream stores: misaligned parts, float64, float16 and int32 results") {
  if (!codegen::cpu_backend().available()) {
    MESSAGE("kiln was built without LLVM: test skipped");
    return;
  }
  Threads t(2);
  Tensor big = arange(kLarge, TensorOptions().dtype(kFloat32)).eval();
  Tensor head = arange(5, TensorOptions().dtype(kFloat32)).eval();
  // the big part starts 5 floats (20 bytes) into the result: every vector
  // of it is misaligned for a 64-byte store, so it stores plain
  Tensor c = cat({head - 10, big + 3}).eval();
  REQUIRE(c.numel() == kLarge + 5);
  const float* pc = c.data_ptr<float>();
  int64_t wrong = 0;
  for (int64_t i = 0; i < 5; ++i) wrong += pc[i] != static_cast<float>(i - 10);
  for (int64_t i = 0; i < kLarge; ++i) wrong += pc[5 + i] != static_cast<float>(i + 3);
  CHECK(wrong == 0);
  // a slice's offset in the input, the output aligned
  Tensor s = (big.slice(0, 3) - 1).eval();
  const float* ps = s.data_ptr<float>();
  wrong = 0;
  for (int64_t i = 0; i < kLarge - 3; ++i) wrong += ps[i] != static_cast<float>(i + 2);
  CHECK(wrong == 0);
  // 8 doubles (64 bytes), 16 halves (32 bytes), 16 int32 a vector
  Tensor d = (big.to(kFloat64) * 0.5).eval();
  Tensor h = (big.slice(0, 0, 2048).to(kFloat16).expand({4096, 2048}) + 0).eval();
  Tensor n = (big.to(kInt32) - 7).eval();
  CHECK(footprint(big.to(kInt32) - 7) == kLarge * 8);
  const double* pd = d.data_ptr<double>();
  const int32_t* pn = n.data_ptr<int32_t>();
  wrong = 0;
  for (int64_t i = 0; i < kLarge; ++i)
    wrong += (pd[i] != static_cast<double>(i) * 0.5) + (pn[i] != static_cast<int32_t>(i - 7));
  CHECK(wrong == 0);
  // float16 holds integers to 2048 exactly
  Tensor hf = h.to(kFloat32).eval();
  const float* ph = hf.data_ptr<float>();
  wrong = 0;
  for (int64_t r = 0; r < 4096; ++r)
    for (int64_t k = 0; k < 2048; ++k) wrong += ph[r * 2048 + k] != static_cast<float>(k);
  CHECK(wrong == 0);
}

TEST_CASE("jit stream stores: a tiled transposed copy past 32 MiB, edge tiles included") {
  if (!codegen::cpu_backend().available()) {
    MESSAGE("kiln was built without LLVM: test skipped");
    return;
  }
  Threads t(2);
  // 2900 x 1500 elements: neither side a multiple of a tile's, 34.8 MB moved
  constexpr int64_t R = 2900, C = 1500;
  Tensor x = arange(R * C, TensorOptions().dtype(kFloat32)).reshape({R, C}).eval();
  CHECK(footprint(x.t().contiguous()) == R * C * 8);
  Tensor y = x.t().contiguous().eval();
  REQUIRE(y.sizes() == Shape{C, R});
  const float* p = y.data_ptr<float>();
  int64_t wrong = 0;
  for (int64_t j = 0; j < C; ++j)
    for (int64_t i = 0; i < R; ++i) wrong += p[j * R + i] != static_cast<float>(i * C + j);
  CHECK(wrong == 0);
}

#if defined(__x86_64__)
TEST_CASE("llvm stream stores: the x86 code has non-temporal and plain stores, and a fence") {
  if (!codegen::cpu_backend().available()) {
    MESSAGE("kiln was built without LLVM: test skipped");
    return;
  }
  Tensor x = kiln_test::ramp({256, 256}).eval();
  const jit::Schedule cheap_plan = kiln_test::plan(x * 2 + 1), math_plan = kiln_test::plan(x.exp());
  const jit::Kernel& cheap = cheap_plan.steps.back().code->ir;
  REQUIRE(cheap.footprint_param >= 0);
  codegen::CompiledKernel ck = codegen::cpu_backend().compile(cheap, false, true);
  CHECK(ck.assembly.find("vmovntp") != std::string::npos);  // vmovntps / vmovntpd
  CHECK(ck.assembly.find("sfence") != std::string::npos);
  CHECK(ck.assembly.find("vmovups") != std::string::npos);  // below the threshold, misaligned
  // a tiled transpose's rows leave its tile as vector stores that stream,
  // not as calls of memcpy (which would store through the cache)
  const jit::Schedule tile_plan = kiln_test::plan(x.t().contiguous());
  const jit::Kernel& tile = tile_plan.steps.back().code->ir;
  REQUIRE(tile.footprint_param >= 0);
  codegen::CompiledKernel ct = codegen::cpu_backend().compile(tile, false, true);
  CHECK(ct.assembly.find("vmovntp") != std::string::npos);
  CHECK(ct.assembly.find("memcpy") == std::string::npos);
  const jit::Kernel& math = math_plan.steps.back().code->ir;
  codegen::CompiledKernel cm = codegen::cpu_backend().compile(math, false, true);
  CHECK(cm.assembly.find("movnt") == std::string::npos);
  CHECK(cm.assembly.find("sfence") == std::string::npos);
}
#endif

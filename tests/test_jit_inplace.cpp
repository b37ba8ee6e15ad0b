// In-place writes through the JIT: a write into part of a tensor (an Assign
// node: the old value with a region replaced) scatters into the tensor's own
// buffer when nothing can read the old value any more, instead of copying the
// whole tensor first. Pins when the copy is skipped (kernel counts and
// stats().writes_in_place), when it must not be (a pending reader, caller
// memory), and the values, which are worked out by hand or taken from
// PyTorch 1.13 for the same program.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "codegen/backend.h"
#include "core/tensor_impl.h"
#include "jit/schedule.h"
#include "kiln/kiln.h"

using namespace kiln;
using namespace kiln::indexing;

namespace {

bool have_jit() {
  if (codegen::cpu_backend().available()) return true;
  MESSAGE("skipped: kiln was built without the LLVM backend");
  return false;
}

double at(int64_t i) { return std::sin(0.7 * static_cast<double>(i) + 0.3); }

// An evaluated float32 tensor with element i = sin(0.7 i + 0.3).
Tensor data(const Shape& s) {
  std::vector<float> v(static_cast<size_t>(s.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(at(static_cast<int64_t>(i)));
  Tensor t = tensor(v).reshape(s).contiguous();
  t.eval();
  return t;
}

std::vector<float> expected(const Shape& s) {
  std::vector<float> v(static_cast<size_t>(s.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(at(static_cast<int64_t>(i)));
  return v;
}

// The schedule that evaluating t's storage runs (what x.eval() does).
jit::Schedule plan(const Tensor& t) { return jit::schedule({t.impl()->storage->node}, jit::ScheduleOptions{}); }

}  // namespace

TEST_CASE("jit in-place: a write into an evaluated tensor scatters into its buffer, without a copy") {
  if (!have_jit()) return;
  for (int round = 0; round < 2; ++round) {  // the second reuses the schedule
    Tensor x = data({64, 32});
    void* before = x.data_ptr();
    reset_stats();
    x[3] = 5;
    x.eval();
    const JitStats s = stats();
    CHECK(s.kernels_launched == 1);  // the scatter of 32 elements, no copy of 2048
    CHECK(s.writes_in_place == 1);
    if (round == 1) CHECK(s.schedules_reused == 1);
    CHECK(x.data_ptr() == before);  // the same memory, as PyTorch
    std::vector<float> want = expected({64, 32});
    for (int j = 0; j < 32; ++j) want[3 * 32 + j] = 5;
    CHECK(x.to_vector<float>() == want);
  }
}

TEST_CASE("jit in-place: a scatter's work and footprint are its source's, not the whole tensor's") {
  // The executor splits a step over the threads by its work, and a
  // footprint of 32 MiB makes its stores bypass the cache: a row written
  // into a large tensor counted the tensor's 2^18 elements and woke the
  // pool for 256 (3.6x slower on two threads).
  Tensor x = data({1024, 256});
  Tensor c = arange(256.0).to(kFloat32).eval();
  x[7] = c;
  const jit::Schedule p = plan(x);
  REQUIRE(p.steps.size() == 2);  // the copy (skipped in place), the scatter
  CHECK(p.steps[0].base_copy);
  const jit::Step& scatter = p.steps[1];
  CHECK(scatter.work == 256);
  REQUIRE(scatter.code->ir.footprint_param >= 0);
  CHECK(scatter.params[static_cast<size_t>(scatter.code->ir.footprint_param)] == 256 * 4 * 2);
  // a source that views a row of another large tensor: the row's bytes,
  // not the tensor's
  Tensor y = data({1024, 256}), z = data({1024, 256});
  y[0] = z[3] * 2;
  const jit::Schedule r = plan(y);
  const jit::Step& own = r.steps.back();
  CHECK(own.work == 256);
  REQUIRE(own.code->ir.footprint_param >= 0);
  CHECK(own.params[static_cast<size_t>(own.code->ir.footprint_param)] == 256 * 4 * 2);
  // a cat's small part: its own elements
  Tensor big = data({1000, 256}), small = arange(512.0).to(kFloat32).reshape({2, 256}).eval();
  const jit::Schedule q = plan(cat({big * 2, small}));
  REQUIRE(q.steps.size() == 2);  // a kernel per part
  CHECK(q.steps[0].work + q.steps[1].work == 1002 * 256);
  CHECK(std::min(q.steps[0].work, q.steps[1].work) == 512);
  if (!have_jit()) return;
  x.eval();
  std::vector<float> want = expected({1024, 256});
  for (int j = 0; j < 256; ++j) want[7 * 256 + j] = static_cast<float>(j);
  CHECK(x.to_vector<float>() == want);
  want = expected({1024, 256});
  for (int j = 0; j < 256; ++j) want[j] = 2 * want[3 * 256 + j];  // exact: a doubling
  CHECK(y.to_vector<float>() == want);
}

TEST_CASE("jit in-place: a source computed from the written tensor is stored, then written in place") {
  if (!have_jit()) return;
  for (bool fusion : {true, false}) {
    CAPTURE(fusion);
    set_fusion_enabled(fusion);
    Tensor x = data({16, 8});
    void* before = x.data_ptr();
    x.index({Slice(), 1}) += 1;
    const jit::Schedule p = plan(x);
    REQUIRE(p.steps.size() >= 3);
    CHECK(p.steps[p.steps.size() - 2].base_copy);
    if (fusion) {
      REQUIRE(p.steps.size() == 3);  // the column + 1, the copy (skipped), the scatter
      CHECK(p.steps[0].why.cut == jit::Cut::WriteSource);
      CHECK(std::string(jit::cut_name(p.steps[0].why.cut)) == "write-source");
    }
    reset_stats();
    x.eval();
    CHECK(stats().writes_in_place == 1);
    if (fusion) CHECK(stats().kernels_launched == 2);
    CHECK(x.data_ptr() == before);
    std::vector<float> want = expected({16, 8});
    for (int i = 0; i < 16; ++i) want[i * 8 + 1] = static_cast<float>(static_cast<double>(want[i * 8 + 1]) + 1.0);
    std::vector<float> got = x.to_vector<float>();
    for (size_t i = 0; i < want.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-6));
  }
  set_fusion_enabled(true);

  // A region read at other indices than it is written (PyTorch 1.13:
  // x = arange(16.).reshape(4, 4); x[:, 0] += x[0]).
  Tensor x = arange(16.0).reshape({4, 4}).contiguous();
  x.eval();
  reset_stats();
  x.index({Slice(), 0}) += x[0];
  CHECK(x.to_vector<float>() ==
        std::vector<float>{0, 1, 2, 3, 5, 5, 6, 7, 10, 9, 10, 11, 15, 13, 14, 15});
  CHECK(stats().writes_in_place == 1);
  // A row from another row: x[0] = x[3] * 2.
  x[0] = x[3] * 2;
  CHECK(x.to_vector<float>() ==
        std::vector<float>{30, 26, 28, 30, 5, 5, 6, 7, 10, 9, 10, 11, 15, 13, 14, 15});
  CHECK(stats().writes_in_place == 2);
}

TEST_CASE("jit in-place: the copy runs when something can still read the old value") {
  if (!have_jit()) return;
  // A pending value computed from the old tensor.
  Tensor x = data({8, 8});
  Tensor y = x * 2;
  x[0] = 7;
  reset_stats();
  x.eval();
  CHECK(stats().writes_in_place == 0);
  CHECK(stats().kernels_launched == 2);  // copy, scatter
  std::vector<float> old = expected({8, 8});
  std::vector<float> got = y.to_vector<float>();
  for (size_t i = 0; i < old.size(); ++i) CHECK(got[i] == doctest::Approx(2.0 * old[i]).epsilon(1e-6));
  CHECK(x[0][5].item<float>() == 7);
  CHECK(x[1][5].item<float>() == old[13]);

  // The written value itself, held by a tensor: reading it later must see the
  // old row, so the base stays.
  x = data({8, 8});
  Tensor t = x[1] + 1;
  x[1] = t;
  reset_stats();
  x.eval();
  CHECK(stats().writes_in_place == 0);
  got = t.to_vector<float>();
  for (int j = 0; j < 8; ++j) CHECK(got[j] == doctest::Approx(old[8 + j] + 1.0).epsilon(1e-6));
  CHECK(x[1][2].item<float>() == doctest::Approx(old[10] + 1.0).epsilon(1e-6));
}

TEST_CASE("jit in-place: a write into caller memory scatters into it unless a pending graph reads it") {
  if (!have_jit()) return;
  std::vector<float> mem(64 * 64);
  for (size_t i = 0; i < mem.size(); ++i) mem[i] = static_cast<float>(i);
  std::vector<float> want = mem;
  Tensor b = from_blob(mem.data(), {64, 64});
  // Nothing else reads b's old values: the row lands in the caller's array,
  // with no copy of the other 63 rows and no copy back.
  reset_stats();
  b[1] = 0;
  for (int j = 0; j < 64; ++j) want[64 + j] = 0;
  CHECK(stats().writes_in_place == 1);
  CHECK(stats().bytes_written == 64 * 4);
  CHECK(mem == want);
  // A graph built before the write keeps the old values: the write is
  // computed into a new buffer, the pending graph gets a snapshot, and the
  // result is copied into the caller's array.
  Tensor y = b * 2;
  reset_stats();
  b[2] = -1;
  for (int j = 0; j < 64; ++j) want[128 + j] = -1;
  CHECK(stats().writes_in_place == 0);
  CHECK(mem == want);
  CHECK(y[2][3].item<float>() == 2.0f * 131);
  CHECK(y[1][3].item<float>() == 0.0f);
  // A write whose value reads the memory it overwrites: row 3 from rows 3
  // and 4, and the first column from the transposed first row.
  b.index_put_({3}, b[4] * 2 + b[3]);
  for (int j = 0; j < 64; ++j) want[3 * 64 + j] += 2 * want[4 * 64 + j];
  CHECK(mem == want);
  b.index({Slice(), 0}).copy_(b[0] + 1);
  const std::vector<float> row0(want.begin(), want.begin() + 64);
  for (int i = 0; i < 64; ++i) want[i * 64] = row0[i] + 1;
  CHECK(mem == want);
  CHECK(b.data_ptr<float>() == mem.data());
  // A write refused at the call (shapes that do not broadcast) leaves the
  // caller's array and the tensor as they were.
  CHECK_THROWS_AS(b.index_put_({0}, ones({64}, kFloat32).expand({2, 64})), Error);
  CHECK(mem == want);
  // A write whose evaluation fails (its value is read from a library
  // matmul's 4 TiB output) raises and leaves them as they were too.
  const int64_t n = int64_t{1} << 20;
  Tensor huge = ones({n, 17}).matmul(ones({17, n}));
  std::string msg;
  try {
    b.index_put_({5, 5}, huge[3][4]);
  } catch (const Error& e) {
    msg = e.what();
  }
  CHECK(msg.rfind("[allocate] out of memory: could not allocate 4398046511104 bytes", 0) == 0);
  CHECK(mem == want);
  CHECK(b.sum().item<double>() == std::accumulate(want.begin(), want.end(), 0.0));
  b[5][5] = 1.5;
  want[5 * 64 + 5] = 1.5f;
  CHECK(mem == want);
  CHECK(b[5][5].item<float>() == 1.5f);
}

TEST_CASE("jit in-place: many writes evaluated together run one scatter each") {
  if (!have_jit()) return;
  Tensor x = data({700, 4});
  void* before = x.data_ptr();
  reset_stats();
  // 600 writes cross the depth limit (512): one evaluation happens on the way.
  for (int i = 0; i < 600; ++i) x[i][i % 4] = -i;
  x.eval();
  const JitStats s = stats();
  CHECK(s.evaluations == 2);
  CHECK(s.writes_in_place == 600);
  CHECK(s.kernels_launched == 600);
  CHECK(x.data_ptr() == before);
  std::vector<float> want = expected({700, 4});
  for (int i = 0; i < 600; ++i) want[i * 4 + i % 4] = static_cast<float>(-i);
  CHECK(x.to_vector<float>() == want);
}

TEST_CASE("jit in-place: a write into a non-leaf keeps its gradient") {
  // PyTorch 1.13: w = ones(3, 2, requires_grad); v = tensor([2., 5.], requires_grad);
  // a = w * 3; a[0] *= v; a.sum().backward()
  // a = [[6, 15], [3, 3], [3, 3]]; w.grad = [[6, 15], [3, 3], [3, 3]]; v.grad = [3, 3].
  Tensor w = ones({3, 2}).requires_grad_();
  Tensor v = tensor({2.0f, 5.0f}).requires_grad_();
  Tensor a = w * 3;
  a[0] *= v;
  CHECK(a.to_vector<float>() == std::vector<float>{6, 15, 3, 3, 3, 3});
  a.sum().backward();
  CHECK(w.grad().to_vector<float>() == std::vector<float>{6, 15, 3, 3, 3, 3});
  CHECK(v.grad().to_vector<float>() == std::vector<float>{3, 3});
}

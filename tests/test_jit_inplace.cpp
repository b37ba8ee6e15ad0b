// In-place writes through the JIT: a write into part of a tensor (an Assign
// node: the old value with a region replaced) scatters into the tensor's own
// buffer when nothing can read the old value any more, instead of copying the
// whole tensor first. Pins when the copy is skipped (kernel counts and
// stats().writes_in_place), when it must not be (a pending reader, caller
// memory), and the values, which are worked out by hand or taken from
// PyTorch 1.13 for the same program.
#include <doctest/doctest.h>

#include <cmath>

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

  // Caller memory (from_blob) is written back through its own path.
  float mem[6] = {1, 2, 3, 4, 5, 6};
  Tensor b = from_blob(mem, {2, 3});
  reset_stats();
  b[1] = 0;
  CHECK(stats().writes_in_place == 0);
  CHECK(std::vector<float>(mem, mem + 6) == std::vector<float>{1, 2, 3, 0, 0, 0});
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

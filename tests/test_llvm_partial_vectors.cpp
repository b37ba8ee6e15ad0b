// A row's last, partial vector (codegen/llvm/pipeline.cpp,
// UnmaskFullVectors): its loads are plain where the vector's bytes lie in
// one page and some lane is active, masked where they cross a page or no
// lane is active; its stores stay masked. Pinned: the compiled loops carry
// both paths, and data placed against a page that cannot be read (before
// it: a row's end; after it: a padded read's start) gives the right values
// without a fault, compiled kernels and whole programs over from_blob
// memory alike. A load that reached into the fenced page would kill the
// test binary. The oracles: sums, maxima and exp in double by hand, the
// reference evaluator.
#include <doctest/doctest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernel_builder.h"
#include "kiln/nn_functional.h"
#include "tests/jit_checks.h"

using namespace kiln;
using namespace kiln::test;

namespace {

// `bytes` of writable memory between two pages that cannot be read, placed
// against the one after it (at_end) or the one before it.
class Fenced {
 public:
  Fenced(size_t bytes, bool at_end) {
    page_ = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    const size_t pages = (bytes + page_ - 1) / page_ + 2;
    span_ = pages * page_;
    void* p = ::mmap(nullptr, span_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(p != MAP_FAILED);
    base_ = static_cast<char*>(p);
    REQUIRE(::mprotect(base_, page_, PROT_NONE) == 0);
    REQUIRE(::mprotect(base_ + span_ - page_, page_, PROT_NONE) == 0);
    data_ = at_end ? base_ + span_ - page_ - bytes : base_ + page_;
  }
  Fenced(const Fenced&) = delete;
  Fenced& operator=(const Fenced&) = delete;
  ~Fenced() { ::munmap(base_, span_); }
  char* data() const { return data_; }
  template <typename T> T* as() const { return reinterpret_cast<T*>(data_); }

 private:
  size_t page_ = 0, span_ = 0;
  char* base_ = nullptr;
  char* data_ = nullptr;
};

float value_at(int64_t i) { return std::sin(0.37f * static_cast<float>(i)) * 4.0f; }

void run_on(jit::KernelFn fn, std::vector<char*> ptrs, std::vector<int64_t> params, int64_t end) {
  params.push_back(0);  // never empty
  fn(ptrs.data(), params.data(), 0, end);
}

const int64_t kCols[] = {1, 5, 12, 15, 16, 17, 37, 56, 100};

}  // namespace

TEST_CASE("llvm: a split sum's partial vector loads plain within a page, masked against an unreadable one") {
  KILN_SKIP_WITHOUT_LLVM();
  // a split float sum (loop_hints.cpp), the row's rest one partial vector
  const codegen::CompiledKernel ck = be().compile(widening_row_sums("row_sums"), true);
  REQUIRE(static_cast<bool>(ck.fn));
  CAPTURE(ck.llvm_ir);
  const std::string id = be().target_id();
  if (id.find("+avx512f") != std::string::npos) {
    // both paths: the masked load, the plain one (the row's rest is one
    // 16-lane vector: lower_kernel.cpp) and their test (in one page, the
    // first lane active: scalar compares, no reduction of the mask)
    CHECK(occurrences(ck.llvm_ir, "call <16 x float> @llvm.masked.load") == 1);
    CHECK(occurrences(ck.llvm_ir, "= load <16 x float>") == 1);
    CHECK(ck.llvm_ir.find("!kiln.page.test") != std::string::npos);
    CHECK(ck.llvm_ir.find(", 4095") != std::string::npos);
    CHECK(ck.llvm_ir.find("llvm.vector.reduce.or") == std::string::npos);
  }
  for (const bool at_end : {true, false})
    for (const int64_t cols : kCols) {
      const int64_t rows = 3;
      Fenced in(static_cast<size_t>(rows * cols) * sizeof(float), at_end);
      std::vector<double> out(rows, -1.0);
      for (int64_t i = 0; i < rows * cols; ++i) in.as<float>()[i] = value_at(i);
      run_on(ck.fn, {in.data(), reinterpret_cast<char*>(out.data())}, {rows, cols}, rows);
      for (int64_t y = 0; y < rows; ++y) {
        double want = 0;
        for (int64_t x = 0; x < cols; ++x) want += static_cast<double>(value_at(y * cols + x));
        CAPTURE(at_end);
        CAPTURE(cols);
        CHECK(out[y] == doctest::Approx(want).epsilon(1e-12));
      }
    }
}

TEST_CASE("llvm: folded loops' partial vectors read a row against an unreadable page (maximum, exp)") {
  KILN_SKIP_WITHOUT_LLVM();
  const codegen::CompiledKernel max = be().compile(row_reduction("row_max", jit::Combiner::Max, kFloat32), true);
  KB kb("exp_loop");
  const int in = kb.buffer(kFloat32, false), out = kb.buffer(kFloat32, true);
  kb.k.body.push_back(
      loop(0, kb.param(0), true, {store(out, kb.idx(0), kb.val(VOp::Exp, kFloat32, {kb.load(in, kb.idx(0))}))}));
  const codegen::CompiledKernel exp = be().compile(kb.k, true);
  REQUIRE(static_cast<bool>(max.fn));
  REQUIRE(static_cast<bool>(exp.fn));
  if (be().target_id().find("+avx512f") != std::string::npos) {
    CAPTURE(exp.llvm_ir);
    // the store of a partial vector stays masked (the lanes past the row
    // are someone else's); its load is plain within a page
    CHECK(exp.llvm_ir.find("llvm.masked.store") != std::string::npos);
    CHECK(exp.llvm_ir.find("llvm.masked.load") != std::string::npos);
    CHECK(exp.llvm_ir.find("!kiln.page.test") != std::string::npos);
  }
  for (const bool at_end : {true, false})
    for (const int64_t cols : kCols) {
      const int64_t rows = 3, n = rows * cols;
      Fenced x(static_cast<size_t>(n) * sizeof(float), at_end);
      Fenced e(static_cast<size_t>(n) * sizeof(float), at_end);
      for (int64_t i = 0; i < n; ++i) x.as<float>()[i] = value_at(i);
      std::vector<float> m(rows, 0.0f);
      run_on(max.fn, {x.data(), reinterpret_cast<char*>(m.data())}, {rows, cols}, rows);
      run_on(exp.fn, {x.data(), e.data()}, {n}, n);
      CAPTURE(at_end);
      CAPTURE(cols);
      for (int64_t y = 0; y < rows; ++y)
        CHECK(m[y] == *std::max_element(x.as<float>() + y * cols, x.as<float>() + (y + 1) * cols));
      for (int64_t i = 0; i < n; ++i)
        CHECK(e.as<float>()[i] == doctest::Approx(std::exp(static_cast<double>(value_at(i)))).epsilon(1e-6));
    }
}

TEST_CASE("llvm: a guarded read starting before its input, right after an unreadable page, does not fault") {
  KILN_SKIP_WITHOUT_LLVM();
  // out[i] = (i >= p1 && i < p2) ? in[i - p1] : -1, i < p0: the vectors
  // before the input's start read no lane (their bytes all in the fenced
  // page) or cross into it
  KB kb("guarded_shift");
  const int in = kb.buffer(kFloat32, false), out = kb.buffer(kFloat32, true);
  const ValueId i = kb.idx(0);
  const ValueId inside =
      kb.val(VOp::Where, kBool,
             {kb.val(VOp::Ge, kBool, {i, kb.param(1)}), kb.val(VOp::Lt, kBool, {i, kb.param(2)}),
              kb.val(VOp::Const, kBool)});
  jit::Value neg_one{VOp::Const, kFloat32};
  neg_one.f = -1.0;
  jit::Value g{VOp::Load, kFloat32};
  g.a = in;
  g.args[0] = kb.val(VOp::Sub, kInt64, {i, kb.param(1)});
  g.args[1] = inside;
  g.args[2] = kb.k.add(neg_one);
  const ValueId v = kb.k.add(g);
  kb.k.body.push_back(loop(0, kb.param(0), true, {store(out, i, v)}));
  const codegen::CompiledKernel ck = be().compile(kb.k, true);
  REQUIRE(static_cast<bool>(ck.fn));
  for (const int64_t shift : {int64_t{0}, int64_t{3}, int64_t{20}, int64_t{40}})
    for (const int64_t m : {int64_t{5}, int64_t{13}, int64_t{64}}) {
      const int64_t n = shift + m + 21;
      Fenced a(static_cast<size_t>(m) * sizeof(float), /*at_end=*/false);
      std::vector<float> o(static_cast<size_t>(n), 0.0f);
      for (int64_t j = 0; j < m; ++j) a.as<float>()[j] = static_cast<float>(j) + 0.5f;
      run_on(ck.fn, {a.data(), reinterpret_cast<char*>(o.data())}, {n, shift, shift + m}, n);
      for (int64_t j = 0; j < n; ++j) {
        CAPTURE(shift);
        CAPTURE(m);
        CAPTURE(j);
        CHECK(o[j] == (j >= shift && j < shift + m ? static_cast<float>(j - shift) + 0.5f : -1.0f));
      }
    }
}

TEST_CASE("jit: programs over from_blob rows that end against an unreadable page give the reference's values") {
  KILN_SKIP_WITHOUT_LLVM();
  for (const int64_t cols : {int64_t{5}, int64_t{12}, int64_t{37}, int64_t{56}})
    for (const bool at_end : {true, false}) {
      const int64_t rows = 4;
      Fenced mem(static_cast<size_t>(rows * cols) * sizeof(float), at_end);
      for (int64_t i = 0; i < rows * cols; ++i) mem.as<float>()[i] = value_at(i);
      const Tensor x = from_blob(mem.data(), {rows, cols});
      CAPTURE(cols);
      CAPTURE(at_end);
      kiln_test::check_jit(x.sum(1));
      kiln_test::check_jit(x.amax(1));
      kiln_test::check_jit((x * 2).sum(1, true) + x);
      kiln_test::check_jit(pad(x.view({1, rows, cols}), {1, 1, 1, 1}, PadMode::Constant, 0.0) * 3);
      kiln_test::check_jit_close(x.softmax(1), 1e-6);
      kiln_test::check_jit_close(x.exp(), 1e-6);
    }
}

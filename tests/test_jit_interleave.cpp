// A kernel and the batched matmul that alone reads its output run chunk by
// chunk (jit/interleave.h): a convolution's im2col and GEMM image by image,
// the im2col never stored whole. Pinned: when it happens (the counter),
// when it must not (another reader, a result, a small output, rows not
// written in order), the IR check on hand-built kernels, and the values
// against the reference evaluator.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "jit/interleave.h"
#include "jit/stats.h"
#include "kiln/nn_functional.h"
#include "tests/jit_checks.h"
#include "tests/kernel_builder.h"

using namespace kiln;
using kiln::test::KB;
using kiln::test::loop;
using kiln::test::store;
using jit::ValueId;

namespace {

int64_t interleaved(const std::vector<Tensor>& ts) {
  jit::counters().interleaved.store(0);
  eval(ts);
  return jit::counters().interleaved.load();
}

// out[((i0 * p1 + i1) * p2 + i2)] = in[same], i0 < p0: a row-major copy
// over three loops; `swap` stores at (i0 * p2 + i2) * p1 + i1 instead (the
// inner two transposed).
jit::Kernel nest(bool swap) {
  KB kb("nest");
  const int in = kb.buffer(kFloat32, false), out = kb.buffer(kFloat32, true);
  const ValueId p0 = kb.param(0), p1 = kb.param(1), p2 = kb.param(2);
  const ValueId i0 = kb.idx(0), i1 = kb.idx(1), i2 = kb.idx(2);
  const ValueId at = swap ? kb.add(kb.mul(kb.add(kb.mul(i0, p2), i2), p1), i1)
                          : kb.add(kb.mul(kb.add(kb.mul(i0, p1), i1), p2), i2);
  kb.k.body.push_back(loop(0, p0, true, {loop(1, p1, false, {loop(2, p2, false, {store(out, at, kb.load(in, at))})})}));
  return kb.k;
}

}  // namespace

TEST_CASE("interleave: the IR check, rows written in order by one parallel loop") {
  const std::vector<int64_t> params{8, 3, 5};
  CHECK(jit::writes_rows_in_order(nest(false), params, 1, 8, 15));
  CHECK_FALSE(jit::writes_rows_in_order(nest(false), params, 1, 8, 16));   // not its rows' size
  CHECK_FALSE(jit::writes_rows_in_order(nest(false), params, 1, 4, 15));   // not its parallel extent
  CHECK_FALSE(jit::writes_rows_in_order(nest(false), params, 0, 8, 15));   // not the buffer it writes
  CHECK_FALSE(jit::writes_rows_in_order(nest(true), params, 1, 8, 15));    // inner loops transposed
  // a second store in the nest
  jit::Kernel two = nest(false);
  two.body[0].body[0].body[0].body.push_back(two.body[0].body[0].body[0].body[0]);
  CHECK_FALSE(jit::writes_rows_in_order(two, params, 1, 8, 15));
  // the parallel loop's extent a constant of the kernel, a size-1 loop folded (x 1)
  {
    KB kb("ones");
    const int in = kb.buffer(kFloat32, false), out = kb.buffer(kFloat32, true);
    const ValueId i0 = kb.idx(0), i1 = kb.idx(1), i2 = kb.idx(2), one = kb.iconst(1), p1 = kb.param(1);
    const ValueId at = kb.add(kb.mul(kb.add(i0, i1), p1), i2);
    kb.k.body.push_back(
        loop(0, kb.iconst(6), true, {loop(1, one, false, {loop(2, p1, false, {store(out, at, kb.load(in, at))})})}));
    CHECK(jit::writes_rows_in_order(kb.k, {0, 7}, 1, 6, 7));
  }
}

TEST_CASE("interleave: a convolution's im2col and GEMM run image by image, the values as the reference's") {
  // [32, 16, 32, 32] with a 3 x 3 kernel: an im2col of 18 MiB, 576 KiB an image
  const Tensor x = kiln_test::sine_leaf({32, 16, 32, 32}).eval();
  const Tensor w = kiln_test::sine_leaf({24, 16, 3, 3}, kFloat32, 0.2).eval();
  const Tensor b = kiln_test::sine_leaf({24}).eval();
  const Tensor y = conv2d(x, w, b, {1}, {1});
  CHECK(interleaved({y}) == 1);
  kiln_test::check_jit_close(y, 1e-5);
  const Tensor block = max_pool2d(conv2d(x, w, b, {1}, {1}).relu(), {2});
  CHECK(interleaved({block}) == 1);
  kiln_test::check_jit_close(block, 1e-5);
  // by hand, in double, a few outputs of the convolution
  const std::vector<float> xv = x.to_vector<float>(), wv = w.to_vector<float>(), bv = b.to_vector<float>();
  const std::vector<float> got = y.to_vector<float>();
  int64_t wrong = 0;
  for (int64_t n : {0, 13, 31})
    for (int64_t oc : {0, 23})
      for (int64_t h : {0, 17, 31})
        for (int64_t v : {0, 5, 31}) {
          double s = bv[static_cast<size_t>(oc)];
          for (int64_t c = 0; c < 16; ++c)
            for (int64_t kh = 0; kh < 3; ++kh)
              for (int64_t kw = 0; kw < 3; ++kw) {
                const int64_t ih = h + kh - 1, iw = v + kw - 1;
                if (ih < 0 || ih >= 32 || iw < 0 || iw >= 32) continue;
                s += static_cast<double>(wv[static_cast<size_t>(((oc * 16 + c) * 3 + kh) * 3 + kw)]) *
                     xv[static_cast<size_t>(((n * 16 + c) * 32 + ih) * 32 + iw)];
              }
          wrong += std::abs(got[static_cast<size_t>(((n * 24 + oc) * 32 + h) * 32 + v)] - s) > 1e-4 * (1 + std::abs(s));
        }
  CHECK(wrong == 0);
  // a small batch stays stored whole (in the caches either way)
  const Tensor small = conv2d(kiln_test::sine_leaf({4, 16, 32, 32}).eval(), w, b, {1}, {1});
  CHECK(interleaved({small}) == 0);
  kiln_test::check_jit_close(small, 1e-5);
}

TEST_CASE("interleave: a batched matmul's left operand, and where it must not interleave") {
  // (a * 2 + 1) of [64, 128, 256] (8 MiB, 128 KiB an entry: chunks of 4)
  // @ w of [64, 256, 48] (a batched product: one GEMM an entry)
  const Tensor a = kiln_test::sine_leaf({64, 128, 256}).eval(), w = kiln_test::sine_leaf({64, 256, 48}).eval();
  // on one thread; on two a chunk's kernel would run on the pool between
  // GEMMs on BLAS's threads: stored whole there
  const int threads = get_num_threads();
  set_num_threads(1);
  const Tensor left = a * 2.0f + 1.0f;
  const Tensor p = left.matmul(w);
  CHECK(interleaved({p}) == 1);
  kiln_test::check_jit_close(p, 1e-5);
  set_num_threads(2);
  CHECK(interleaved({(a * 2.0f + 1.0f).matmul(w)}) == 0);
  set_num_threads(1);
  // read by another step too, or a result itself: stored whole
  const Tensor left2 = a * 3.0f - 1.0f;
  CHECK(interleaved({left2.matmul(w), left2.sum()}) == 0);
  const Tensor left3 = a * 0.5f + 2.0f;
  const Tensor p3 = left3.matmul(w);
  CHECK(interleaved({p3, left3}) == 0);
  kiln_test::check_jit_close(p3, 1e-5);
  set_num_threads(threads);
}

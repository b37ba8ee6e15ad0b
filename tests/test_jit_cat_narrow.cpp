// A cat of narrow parts (jit/schedule.h: cat_in_one_kernel, its dim and
// the dims after it at most 16 elements; jit/lower.cpp: lower_cat_whole)
// is one kernel over its output whose innermost loop stores each position
// of those dims from the part it lies in, at a constant offset, not a
// kernel per part writing at the output's stride. Pins the plan and the
// stores, and checks values, compiled and interpreted, against the
// reference evaluator bit for bit: part widths, zero-width parts, views and
// broadcasts as parts, nodes of lower rank, dtypes, ranks, several threads.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "jit/schedule.h"
#include "kiln/kiln.h"
#include "tests/jit_checks.h"

using namespace kiln;
using kiln_test::check_jit;

namespace {

Tensor data(const Shape& s, double scale = 1.0) { return kiln_test::sine_leaf(s, kFloat32, scale); }

// The plan's one step for t, its kernel.
jit::Kernel only_kernel(const Tensor& t) {
  const jit::Schedule s = kiln_test::plan(t);
  REQUIRE(s.steps.size() == 1);
  CHECK(s.steps[0].why.cut == jit::Cut::Join);
  CHECK(s.steps[0].outputs[0]->op == Op::Cat);
  return s.steps[0].code->ir;
}

}  // namespace

TEST_CASE("jit cat: narrow parts along the last dim are one kernel storing each position of a row") {
  const Tensor a = data({1000}), b = data({1000}, 0.5), c = data({1000}, 2);
  const Tensor y = stack({a * b, b + c, a.neg()}, 1);  // [1000, 3]
  const jit::Kernel k = only_kernel(y);
  CHECK(k.num_loops == 1);
  CHECK(kiln_test::innermost_stores(k) == 3);
  check_jit(y);
  // by hand: row 7
  const std::vector<float> av = a.to_vector<float>(), bv = b.to_vector<float>(), cv = c.to_vector<float>();
  const std::vector<float> got = y.to_vector<float>();
  CHECK(got[21] == av[7] * bv[7]);
  CHECK(got[22] == bv[7] + cv[7]);
  CHECK(got[23] == -av[7]);
  // it reads each part's inputs and writes the output once
  reset_stats();
  stack({a, b, c}, 1).eval();
  CHECK(stats().kernels_launched == 1);
  CHECK(stats().bytes_read == 3 * 1000 * 4);
  CHECK(stats().bytes_written == 3 * 1000 * 4);
  // another row count compiles nothing; another split of the width a kernel of its own
  const Tensor a2 = data({5000}), b2 = data({5000}, 0.5), c2 = data({5000}, 2);
  CHECK(only_kernel(stack({a2 * b2, b2 + c2, a2.neg()}, 1)).key() == k.key());
  CHECK(only_kernel(cat({(a * b).unsqueeze(1), (b + c).unsqueeze(1), a.neg().unsqueeze(1)}, 1)).key() == k.key());
  const jit::Kernel k12 = only_kernel(cat({data({9, 1}), data({9, 2})}, 1));
  CHECK(only_kernel(cat({data({70, 1}), data({70, 2})}, 1)).key() == k12.key());
  CHECK(only_kernel(cat({data({9, 2}), data({9, 1})}, 1)).key() != k12.key());
}

TEST_CASE("jit cat: a cat whose dim and the dims after it hold more than 16 elements is a kernel per part") {
  const Tensor x = data({50, 4}), y = data({50, 5});
  CHECK(kiln_test::kernels(cat({x, y}, 1)) == 1);  // 9 wide
  CHECK(kiln_test::innermost_stores(only_kernel(cat({x, y}, 1))) == 9);
  CHECK(kiln_test::kernels(cat({data({50, 8}), data({50, 9})}, 1)) == 2);  // 17 wide
  CHECK(kiln_test::kernels(cat({x, x * 2}, 0)) == 2);
  CHECK(kiln_test::kernels(cat({data({3, 2, 2}), data({3, 1, 2})}, 1)) == 1);  // 3 x 2 from dim 1 on
  CHECK(kiln_test::kernels(cat({data({3, 2, 3}), data({3, 1, 3})}, 1)) == 1);  // 3 x 3
  CHECK(kiln_test::kernels(cat({data({3, 3, 3}), data({3, 3, 3})}, 1)) == 2);  // 6 x 3
  // [N, 2] pairs stacked along dim 1: four positions a row (the pairs,
  // nodes of rank 2, align their last dim with the output's: their row
  // stride a constant too)
  const jit::Kernel k = only_kernel(stack({x.narrow(1, 0, 2) * 2, y.narrow(1, 1, 2).neg()}, 1));
  CHECK(k.num_loops == 1);
  CHECK(kiln_test::innermost_stores(k) == 4);
  check_jit(cat({x, y}, 1));
  check_jit(cat({data({50, 8}), data({50, 9}) * 2}, 1));
  check_jit(cat({x.narrow(1, 0, 3), y.narrow(1, 0, 5)}, 1));  // 8 wide: one kernel
  CHECK(kiln_test::kernels(cat({x.narrow(1, 0, 3), y.narrow(1, 0, 5)}, 1)) == 1);
  // one part that is not empty: no cat kernel of its own to choose parts in
  CHECK(kiln_test::kernels(cat({data({5, 0}), data({5, 3}) * 2}, 1)) <= 2);
  check_jit(cat({data({5, 0}), data({5, 3}) * 2}, 1));
  const NodePtr lone = cat({data({5, 0}), data({5, 3}) * 2}, 1).impl()->node();
  CHECK(lone->op == Op::Cat);
  CHECK_FALSE(jit::cat_in_one_kernel(*lone));
  CHECK(jit::cat_in_one_kernel(*cat({data({5, 1}), data({5, 3}) * 2}, 1).impl()->node()));
  // a tiny 1-D cat: one kernel of seven stores
  const Tensor t = cat({data({3}), data({4}) * 2}, 0);
  CHECK(kiln_test::innermost_stores(only_kernel(t)) == 7);
  check_jit(t);
}

TEST_CASE("jit cat: 3 x 3 and 4 x 4 matrices stacked from columns are one kernel") {
  // rotation matrices about z then y from two angles (9 parts, sharing
  // their cos and sin), and 4 x 4 transforms of constants and columns (16)
  const int64_t n = 37;
  const Tensor a = data({n}), b = data({n}, 0.5);
  const Tensor ca = a.cos(), sa = a.sin(), cb = b.cos(), sb = b.sin();
  const Tensor r = stack({ca * cb, -sa, ca * sb, sa * cb, ca, sa * sb, -sb, zeros_like(a), cb}, 1).reshape({n, 3, 3});
  const jit::Kernel k = only_kernel(r);
  CHECK(k.num_loops == 1);
  CHECK(kiln_test::innermost_stores(k) == 9);
  kiln_test::check_jit_close(r, 1e-6);  // the compiled sin and cos are kiln's (float_math.cpp)
  // by hand: the matrix of row 5 is orthonormal, r r^T = I
  const std::vector<float> m = r.to_vector<float>();
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      double dot = 0;
      for (int q = 0; q < 3; ++q) dot += double(m[45 + i * 3 + q]) * m[45 + j * 3 + q];
      CHECK(dot == doctest::Approx(i == j ? 1.0 : 0.0).epsilon(1e-6));
    }
  CHECK(m[45 + 7] == 0.0f);
  CHECK(m[45 + 4] == ca.to_vector<float>()[5]);
  const Tensor z = zeros_like(a), o = ones_like(a);
  const Tensor t = stack({a, b, z, a * 2, -b, a, z, b.exp(), z, z, o, a - b, z, z, z, o}, 1).reshape({n, 4, 4});
  CHECK(kiln_test::innermost_stores(only_kernel(t)) == 16);
  kiln_test::check_jit_close(t, 1e-6);
  const std::vector<float> tv = t.to_vector<float>();
  CHECK(tv[16 * 3 + 15] == 1.0f);
  CHECK(tv[16 * 3 + 12] == 0.0f);
  CHECK(tv[16 * 3 + 3] == a.to_vector<float>()[3] * 2);
  // [N, 3] rows stacked into [N, 3, 3]; [N, 4, 4] blocks of two [N, 2, 4] halves
  const Tensor p = data({n, 3}), q = data({n, 3}, 2);
  kiln_test::check_jit_close(stack({p * 2, q - p, q.exp()}, 1), 1e-6);
  check_jit(cat({data({n, 2, 4}), data({n, 2, 4}, 3).neg()}, 1));
  CHECK(kiln_test::kernels(cat({data({n, 2, 4}), data({n, 2, 4}, 3).neg()}, 1)) == 1);
  for (DType dt : {DType::Float64, DType::Float16, DType::Int64, DType::Bool}) {
    CAPTURE(dt);
    check_jit(stack({a.to(dt), b.to(dt), z.to(dt), a.to(dt), o.to(dt), b.to(dt), a.to(dt), z.to(dt), b.to(dt), o.to(dt),
                     a.to(dt), b.to(dt), z.to(dt)}, 1));
  }
}

TEST_CASE("jit cat: narrow cats' values against the reference: widths, empty parts, views, dtypes, ranks") {
  for (int64_t rows : {1, 2, 15, 16, 17, 1000}) {
    CAPTURE(rows);
    const Tensor a = data({rows, 1}), b = data({rows, 2}, 0.5), c = data({rows, 5}, 3);
    check_jit(cat({a, b}, 1));
    check_jit(cat({a, b, c}, 1));
    check_jit(cat({c, a, a * 2}, 1) - 1);  // read by an op: the cat is stored, then read
    check_jit(cat({a, data({rows, 0}), b}, 1));  // a zero-width part
    check_jit(cat({b.flip({1}), a.expand({rows, 3}), data({1, 2}).expand({rows, 2})}, 1));
    check_jit(cat({data({2, rows}).t(), a.exp() > 0.5}, 1));  // a transposed part; bool promoted
    check_jit(stack({a.squeeze(1), b.select(1, 1), c.select(1, 4) * c.select(1, 0)}, -1));
    // rank 3: the outer dims params, the last the positions; along dim 1
    // with a dim after it (both dims' positions, or parts past 16)
    const Tensor u = data({3, rows, 2}), v = data({3, 1, 1});
    check_jit(cat({u, v.expand({3, rows, 1}), u.narrow(2, 1, 1) * v}, 2));
    check_jit(stack({b, b * 2, data({rows, 2}, 7).t().t()}, 1));  // [rows, 3, 2]
    check_jit(cat({data({rows, 1, 3}), data({rows, 3, 2}).transpose(1, 2) * 3}, 1));
    // along dim 1 of parts from nodes of lower rank, broadcasts and transposes
    check_jit(stack({b * 2, data({2}).expand({rows, 2}), data({2, rows}).t() - b}, 1));
    check_jit(cat({data({rows, 1, 2}), (b * data({2})).unsqueeze(1), data({rows, 1, 1}).expand({rows, 1, 2})}, 1));
    check_jit(cat({data({1, rows, 2, 1}).expand({3, rows, 2, 1}), data({3, 1, 2, 1}).expand({3, rows, 2, 1}) + 1}, 2));
    check_jit(cat({data({rows, 1, 1, 2}), data({rows, 2, 1, 2}) * 3 - 1}, 1));
    kiln_test::check_jit_close(cat({data({rows, 1, 1, 2}), data({rows, 2, 1, 2}).exp()}, 1), 1e-6);
  }
  for (DType dt : {DType::Float16, DType::BFloat16, DType::Float64, DType::Int32, DType::Int64, DType::UInt8, DType::Bool}) {
    CAPTURE(dt);
    const Tensor p = (data({33, 2}, 9) + 9).to(dt), q = (data({33, 3}, 9) + 9).to(dt);
    check_jit(cat({p, q, p}, 1));
    check_jit(stack({p.select(1, 0), q.select(1, 2)}, 1));
  }
  // mixed dtypes promote as PyTorch's cat: int32 and float32 to float32
  const Tensor i = tensor(std::vector<int32_t>{1, 2, 3}).reshape({3, 1});
  const Tensor f = tensor(std::vector<float>{0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f}).reshape({3, 2});
  const Tensor m = cat({i, f}, 1);
  CHECK(m.dtype() == DType::Float32);
  CHECK(m.to_vector<float>() == std::vector<float>{1, 0.5f, 1.5f, 2, 2.5f, 3.5f, 3, 4.5f, 5.5f});
  check_jit(m);
}

TEST_CASE("jit cat: a narrow cat split over threads") {
  const int before = get_num_threads();
  set_num_threads(2);
  const Tensor a = data({1 << 16}), b = data({1 << 16}, 0.5);
  check_jit(stack({a * b, a - b}, 1));
  check_jit(stack({data({64, 1024}), data({64, 1024}, 2).sqrt()}, 2));
  check_jit(stack({data({1000, 2}), data({1000, 2}, 2).sqrt()}, 1));
  // a leading dim of 1 (a batch of one) opens no loop: the rows split
  const Tensor one = stack({data({1, 4096}), data({1, 4096}, 2)}, 2);
  CHECK(kiln_test::plan(one).steps[0].parallel_extent == 4096);
  CHECK(kiln_test::plan(stack({data({4, 5, 6}), data({4, 5, 6})}, 2)).steps[0].parallel_extent == 4);
  check_jit(one);
  set_num_threads(before);
}

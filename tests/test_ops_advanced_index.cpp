// scatter / index_add / index_copy / index_fill (core/gather.cpp: the
// Scatter and ScatterAdd ops) and advanced indexing with position tensors
// and masks, nonzero, masked_select, index_put_ (core/advanced_index.cpp)
// against PyTorch 1.13: values and gradients printed by a script run with
// /usr/bin/python3 and pasted in; the JIT against the reference evaluator;
// kernel counts.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "core/tensor_impl.h"
#include "jit/schedule.h"
#include "tests/check_values.h"
#include "tests/jit_checks.h"

using namespace kiln;
using kiln_test::check_jit;
using kiln_test::ids;
using kiln_test::kernels;
using kiln_test::ramp;
using kiln::indexing::Ellipsis;
using kiln::indexing::None;
using kiln::indexing::Slice;

TEST_CASE("ops: scatter writes where the index says (a value or src), index_add / index_copy / index_fill, gradients") {
  Tensor x = ramp({3, 4}).requires_grad_();
  Tensor src = ramp({2, 4}, 2.0).requires_grad_();
  const Tensor idx = ids({2, 0, 1, 0, 1, 2, 0, 1}, {2, 4});
  Tensor y = x.scatter(0, idx, src);
  CHECK_T(y, kFloat32, {3, 4}, {0.29552021622657776, 1.6829419136047363, -1.9550602436065674, 1.3509265184402466, 0.08316151797771454, -0.6118578314781189, 1.9833295345306396, -1.7669090032577515, 0.5910404324531555, -1.2237156629562378, 0.8504367470741272, 0.9893582463264465});
  CHECK(y.grad_fn()->name() == "ScatterBackward0");
  (y * arange(1.0, 13.0).reshape({3, 4})).sum().backward();
  CHECK_T(x.grad(), kFloat32, {3, 4}, {1.0, 0.0, 0.0, 0.0, 0.0, 6.0, 0.0, 0.0, 0.0, 0.0, 11.0, 12.0});
  CHECK_T(src.grad(), kFloat32, {2, 4}, {9.0, 2.0, 7.0, 4.0, 5.0, 10.0, 3.0, 8.0});
  x.set_grad(Tensor());
  Tensor y1 = x.scatter(1, ids({3, 0, 1}, {3, 1}), 5.0);
  CHECK_T(y1, kFloat32, {3, 4}, {0.29552021622657776, 0.8414709568023682, 0.9916647672653198, 5.0, 5.0, -0.6118578314781189, -0.9775301218032837, -0.8834545016288757, -0.37387657165527344, 5.0, 0.8504367470741272, 0.9893582463264465});
  CHECK(y1.grad_fn()->name() == "ScatterBackward1");
  (y1 * arange(1.0, 13.0).reshape({3, 4})).sum().backward();
  CHECK_T(x.grad(), kFloat32, {3, 4}, {1.0, 2.0, 3.0, 0.0, 0.0, 6.0, 7.0, 8.0, 9.0, 0.0, 11.0, 12.0});
  x.set_grad(Tensor());
  Tensor s = ramp({4, 3}).requires_grad_();
  Tensor a = x.index_add(1, ids({3, 0, 3}, {3}), s.narrow(0, 0, 3), 2);
  CHECK_T(a, kFloat32, {3, 4}, {1.9784621000289917, 0.8414709568023682, 0.9916647672653198, 3.249833106994629, 0.12474227696657181, -0.6118578314781189, -0.9775301218032837, -0.7562436461448669, -2.1407856941223145, 0.31154128909111023, 0.8504367470741272, -1.7134552001953125});
  (a * arange(1.0, 13.0).reshape({3, 4})).sum().backward();
  CHECK_T(x.grad(), kFloat32, {3, 4}, {1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0});
  CHECK_T(s.grad(), kFloat32, {4, 3}, {8.0, 2.0, 8.0, 16.0, 10.0, 16.0, 24.0, 18.0, 24.0, 0.0, 0.0, 0.0});
  const Tensor xd = x.detach();
  CHECK_T(xd.index_copy(0, ids({2, 0}, {2}), ramp({2, 4}, 3.0)), kFloat32, {3, 4}, {0.12474227696657181, -1.835573434829712, -2.9325904846191406, -2.6503634452819824, 0.04158075898885727, -0.6118578314781189, -0.9775301218032837, -0.8834545016288757, 0.8865606784820557, 2.5244128704071045, 2.97499418258667, 2.0263898372650146});
  CHECK_T(xd.index_fill(1, ids({1, 3}, {2}), -1.5), kFloat32, {3, 4}, {0.29552021622657776, -1.5, 0.9916647672653198, -1.5, 0.04158075898885727, -1.5, -0.9775301218032837, -1.5, -0.37387657165527344, -1.5, 0.8504367470741272, -1.5});
  CHECK_T(arange(12).reshape({3, 4}).scatter(1, ids({0, 2, 1, 3, 3, 0}, {3, 2}), 7), kInt64, {3, 4}, {7, 1, 7, 3, 4, 7, 6, 7, 7, 9, 10, 7});
  // repeated positions: the last write wins (worked by hand), in the JIT too
  CHECK_T(zeros({5}).scatter(0, ids({1, 3, 1, 3, 0}, {5}), arange(1.0, 6.0)), kFloat32, {5}, {5, 3, 0, 4, 0});
  // the in-place forms write the same values
  Tensor b = xd.clone();
  b.scatter_(0, idx, src.detach()).index_add_(1, ids({3, 0, 3}, {3}), s.detach().narrow(0, 0, 3), 2);
  CHECK(b.equal(xd.scatter(0, idx, src.detach()).index_add(1, ids({3, 0, 3}, {3}), s.detach().narrow(0, 0, 3), 2)));
  Tensor c = xd.clone();
  c.scatter_add_(1, ids({0, 0, 1}, {3, 1}), ones({3, 1})).index_fill_(0, ids({2}, {1}), 4).index_copy_(1, ids({1}, {1}), zeros({3, 1}));
  CHECK_T(c.select(1, 0), kFloat32, {3}, {1.2955202162265778, 1.0415807589888573, 4});
  CHECK_T(c.select(1, 1), kFloat32, {3}, {0, 0, 0});
  CHECK_T(tensor(2.5).scatter(0, tensor(int64_t{0}), tensor(4.0)), kFloat32, {}, {4.0});
}

TEST_CASE("ops: advanced indexing with position tensors and masks, NumPy's placement of the indexed dims, gradients") {
  Tensor x = arange(60.0).reshape({3, 4, 5}).requires_grad_();
  const Tensor i = ids({2, 0, -1}, {3}), j = ids({1, 3}, {2, 1});
  Tensor y = x.index({Slice(), j, i});  // j and i broadcast to [2, 3], in place of dims 1 and 2
  CHECK_T(y, kFloat32, {3, 2, 3}, {7.0, 5.0, 9.0, 17.0, 15.0, 19.0, 27.0, 25.0, 29.0, 37.0, 35.0, 39.0, 47.0, 45.0, 49.0, 57.0, 55.0, 59.0});
  (y * ramp({3, 2, 3})).sum().backward();
  CHECK_T(x.grad(), kFloat32, {3, 4, 5}, {0.0, 0.0, 0.0, 0.0, 0.0, 0.8414709568023682, 0.0, 0.29552021622657776, 0.0, 0.9916647672653198, 0.0, 0.0, 0.0, 0.0, 0.0, 0.04158075898885727, 0.0, 0.6754632592201233, 0.0, -0.6118578314781189, 0.0, 0.0, 0.0, 0.0, 0.0, -0.8834545016288757, 0.0, -0.9775301218032837, 0.0, -0.37387657165527344, 0.0, 0.0, 0.0, 0.0, 0.0, 0.8504367470741272, 0.0, 0.31154128909111023, 0.0, 0.9893582463264465, 0.0, 0.0, 0.0, 0.0, 0.0, 0.024775806814432144, 0.0, 0.6629693508148193, 0.0, -0.6250709295272827, 0.0, 0.0, 0.0, 0.0, 0.0, -0.8754521608352661, 0.0, -0.9809362888336182, 0.0, -0.35822945833206177});
  const Tensor xd = x.detach();
  CHECK_T(xd.index({i}), kFloat32, {3, 4, 5}, {40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0, 48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0, 48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0});
  CHECK_T(xd.index({i, Slice(), ids({4, 0, 1}, {3})}), kFloat32, {3, 4}, {44.0, 49.0, 54.0, 59.0, 0.0, 5.0, 10.0, 15.0, 41.0, 46.0, 51.0, 56.0});
  CHECK_T(xd.index({0, Slice(), ids({1, -2}, {2})}), kFloat32, {4, 2}, {1.0, 3.0, 6.0, 8.0, 11.0, 13.0, 16.0, 18.0});
  CHECK_T(xd.index({Slice(), ids({3, 1}, {2}), Ellipsis, None}), kFloat32, {3, 2, 5, 1}, {15.0, 16.0, 17.0, 18.0, 19.0, 5.0, 6.0, 7.0, 8.0, 9.0, 35.0, 36.0, 37.0, 38.0, 39.0, 25.0, 26.0, 27.0, 28.0, 29.0, 55.0, 56.0, 57.0, 58.0, 59.0, 45.0, 46.0, 47.0, 48.0, 49.0});
  const Tensor m = xd.index({Slice(), Slice(), 0}) > 22;
  CHECK_T(xd.index({m}), kFloat32, {7, 5}, {25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0, 48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0});
  CHECK_T(xd.index({Slice(), m.narrow(0, 1, 1).squeeze(0), 4}), kFloat32, {3, 3}, {9.0, 14.0, 19.0, 29.0, 34.0, 39.0, 49.0, 54.0, 59.0});
  CHECK_T(xd.index({tensor({true, false, true}), 1}), kFloat32, {2, 5}, {5.0, 6.0, 7.0, 8.0, 9.0, 45.0, 46.0, 47.0, 48.0, 49.0});
  CHECK_T(xd.masked_select(xd.sin() > 0.9), kFloat32, {10}, {2.0, 8.0, 14.0, 20.0, 27.0, 33.0, 39.0, 46.0, 52.0, 58.0});
  CHECK_T((xd.sin() > 0.9).nonzero(), kInt64, {10, 3}, {0, 0, 2, 0, 1, 3, 0, 2, 4, 1, 0, 0, 1, 1, 2, 1, 2, 3, 1, 3, 4, 2, 1, 1, 2, 2, 2, 2, 3, 3});
  CHECK_T(tensor({0, 3, 0, 1}).nonzero(), kInt64, {2, 1}, {1, 3});
  // PyTorch 1.13's: trailing zeros, an empty row, all zeros / ones, 0-dim and empty inputs
  CHECK_T(tensor({0, 1, 0, 0, 0, 0, 1, 1, 0}).reshape({3, 3}).nonzero(), kInt64, {3, 2}, {0, 1, 2, 0, 2, 1});
  CHECK_T(tensor({0, 0, 0, 1, 1, 0, 0, 0}).reshape({2, 2, 2}).nonzero(), kInt64, {2, 3}, {0, 1, 1, 1, 0, 0});
  CHECK(zeros({2, 3}).nonzero().sizes() == Shape{0, 2});
  CHECK_T(ones({2, 2}).nonzero(), kInt64, {4, 2}, {0, 0, 0, 1, 1, 0, 1, 1});
  CHECK(tensor(5.0).nonzero().sizes() == Shape{1, 0});
  CHECK(tensor(0.0).nonzero().sizes() == Shape{0, 0});
  CHECK(zeros({2, 0, 3}).nonzero().sizes() == Shape{0, 3});
  CHECK_T(tensor({0.0, -0.0, std::nan(""), 2.0}).nonzero(), kInt64, {2, 1}, {2, 3});
  // a 0-dim int64 index selects (the dim goes), as an integer
  CHECK(xd.index({tensor(int64_t{1})}).sizes() == Shape{4, 5});
  CHECK_T(xd.index({tensor(int64_t{1}), 2, tensor(int64_t{-1})}), kFloat32, {}, {34});
  // a 0-dim mask as a bool: a new dim of 1, or of 0
  CHECK(xd.index({tensor(true)}).sizes() == Shape{1, 3, 4, 5});
  CHECK(xd.index({tensor(false).to(kUInt8)}).sizes() == Shape{0, 3, 4, 5});
}

TEST_CASE("ops: index_put_ with position tensors and masks, accumulate, gradients through the writes") {
  const Tensor i = ids({2, 0, -1}, {3});
  Tensor y = arange(60.0).reshape({3, 4, 5});
  const Tensor m = y.index({Slice(), Slice(), 0}) > 22;
  y.index_put_({i, Slice(), ids({4, 0, 1}, {3})}, -ones({3, 4}));
  CHECK_T(y, kFloat32, {3, 4, 5}, {-1.0, 1.0, 2.0, 3.0, 4.0, -1.0, 6.0, 7.0, 8.0, 9.0, -1.0, 11.0, 12.0, 13.0, 14.0, -1.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 40.0, -1.0, 42.0, 43.0, -1.0, 45.0, -1.0, 47.0, 48.0, -1.0, 50.0, -1.0, 52.0, 53.0, -1.0, 55.0, -1.0, 57.0, 58.0, -1.0});
  y.index_put_({m}, 1000.0);
  CHECK_T(y, kFloat32, {3, 4, 5}, {-1.0, 1.0, 2.0, 3.0, 4.0, -1.0, 6.0, 7.0, 8.0, 9.0, -1.0, 11.0, 12.0, 13.0, 14.0, -1.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0});
  y.index_put_({Slice(), ids({0, 1, 1, 2}, {2, 2})}, tensor(-7.0));
  CHECK_T(y, kFloat32, {3, 4, 5}, {-7.0, -7.0, -7.0, -7.0, -7.0, -7.0, -7.0, -7.0, -7.0, -7.0, -7.0, -7.0, -7.0, -7.0, -7.0, -1.0, 16.0, 17.0, 18.0, 19.0, -7.0, -7.0, -7.0, -7.0, -7.0, -7.0, -7.0, -7.0, -7.0, -7.0, -7.0, -7.0, -7.0, -7.0, -7.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0, -7.0, -7.0, -7.0, -7.0, -7.0, -7.0, -7.0, -7.0, -7.0, -7.0, -7.0, -7.0, -7.0, -7.0, -7.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0});
  const Tensor z = zeros({5});
  CHECK_T(z.index_put({ids({0, 1, 1, 4}, {4})}, tensor({1.0, 2.0, 3.0, 4.0}, kFloat32), true), kFloat32, {5}, {1.0, 5.0, 0.0, 0.0, 4.0});
  Tensor w = ramp({4, 3}).requires_grad_();
  Tensor v = ramp({2, 3}, 2.0).requires_grad_();
  Tensor u = w * 1;
  u.index_put_({ids({3, 1}, {2})}, v);
  u.index_put_({tensor({true, false, true}).reshape({1, 3}).expand({4, 3})}, 0.5);
  CHECK_T(u, kFloat32, {4, 3}, {0.5, 0.8414709568023682, 0.5, 0.5, 0.08316151797771454, 0.5, 0.5, -0.8834545016288757, 0.5, 0.5, 1.6829419136047363, 0.5});
  (u * arange(1.0, 13.0).reshape({4, 3})).sum().backward();
  CHECK_T(w.grad(), kFloat32, {4, 3}, {0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 8.0, 0.0, 0.0, 0.0, 0.0});
  CHECK_T(v.grad(), kFloat32, {2, 3}, {0.0, 11.0, 0.0, 0.0, 5.0, 0.0});
}

TEST_CASE("jit: scatter and advanced indexing equal the reference, compiled, interpreted and on threads") {
  const int threads = get_num_threads();
  set_num_threads(2);
  manual_seed(5);
  const Tensor x = randn({300, 70});
  const Tensor i0 = randint(0, 300, {120, 70}), i1 = randint(0, 70, {300, 90});
  for (DType dt : {kFloat32, kFloat16, kFloat64, kInt32}) {
    CAPTURE(dtype_name(dt));
    const Tensor xd = (x * 10).to(dt);
    // repeated positions: the last write wins in the JIT as in the reference
    check_jit(zeros({300, 70}, dt).scatter(0, i0, xd.narrow(0, 0, 120)));
    check_jit(zeros({300, 8}, dt).scatter(1, randint(0, 8, {300, 70}), xd) * 2);
    check_jit(xd.scatter(1, i1.narrow(1, 0, 50), 3));
    check_jit(xd.index_add(0, randint(0, 300, {40}), xd.narrow(0, 0, 40)));
    check_jit(xd.index({randint(-300, 300, {7, 9}), Slice(None, None, 2)}));
    check_jit(xd.index({Slice(), randint(0, 70, {50})}).sum(1));
    check_jit(xd.index({randint(0, 300, {20}), randint(0, 70, {20})}));
    check_jit(xd.reshape({30, 10, 70}).index({randint(0, 30, {6}), Slice(), randint(0, 70, {6})}));
    check_jit(xd.index_put({randint(0, 300, {60}), randint(0, 70, {60})}, xd.narrow(0, 0, 60).select(1, 0), true));
  }
  set_num_threads(threads);
}

TEST_CASE("jit fusion: an advanced index reads in place and fuses, a scatter is a copy and a write, a mask fill is a where") {
  const Tensor x = ramp({40, 30});
  x.eval();
  const Tensor i = ids({3, 1, 0}, {3});
  CHECK(kernels((x.index({Slice(), i}) * 2 + 1).sum(1)) == 1);
  CHECK(kernels(x.exp().index({i, ids({2, 2, 9}, {3})})) == 1);
  CHECK(kernels(x.scatter(1, ids({0, 2, 1}, {3, 1}), x.narrow(1, 0, 1) * 3)) == 2);
  Tensor y = x.clone();
  y.index_put_({y > 0.5}, 0.0);
  CHECK(kernels(y) == 1);
}

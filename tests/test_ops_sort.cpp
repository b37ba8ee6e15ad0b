// sort, argsort, msort, topk, kthvalue, median, nanmedian (core/sort.cpp:
// an ArgSort node, a library step of the JIT, and gathers) against PyTorch
// 1.13: values, positions, grad_fn names and gradients printed by a script
// run with /usr/bin/python3 and pasted in (stable order where ties occur);
// the JIT against the reference evaluator; how a sort is scheduled.
#include <doctest/doctest.h>

#include <cmath>

#include "core/sort_rows.h"
#include "tests/check_values.h"
#include "tests/jit_checks.h"

using namespace kiln;
using kiln_test::check_jit;
using kiln_test::ramp;

TEST_CASE("ops: sort along each dim, ascending and descending, NaN above numbers, gradients") {
  Tensor x = ramp({3, 5}).requires_grad_();
  auto [v, i] = x.sort(1);
  CHECK_T(v, kFloat32, {3, 5}, {0.04158075898885727, 0.29552021622657776, 0.6754632592201233, 0.8414709568023682, 0.9916647672653198, -0.9775301218032837, -0.8834545016288757, -0.6118578314781189, -0.37387657165527344, 0.31154128909111023, -0.6250709295272827, 0.024775806814432144, 0.6629693508148193, 0.8504367470741272, 0.9893582463264465});
  CHECK_T(i, kInt64, {3, 5}, {4, 0, 3, 1, 2, 1, 2, 0, 3, 4, 4, 3, 2, 0, 1});
  CHECK(v.grad_fn()->name() == "SortBackward0");
  (v * arange(1.0, 16.0).reshape({3, 5})).sum().backward();
  CHECK_T(x.grad(), kFloat32, {3, 5}, {2.0, 4.0, 5.0, 3.0, 1.0, 8.0, 6.0, 7.0, 9.0, 10.0, 14.0, 15.0, 13.0, 12.0, 11.0});
  auto [vd, id] = sort(ramp({3, 5}), 0, true);
  CHECK_T(vd, kFloat32, {3, 5}, {0.8504367470741272, 0.9893582463264465, 0.9916647672653198, 0.6754632592201233, 0.31154128909111023, 0.29552021622657776, 0.8414709568023682, 0.6629693508148193, 0.024775806814432144, 0.04158075898885727, -0.6118578314781189, -0.9775301218032837, -0.8834545016288757, -0.37387657165527344, -0.6250709295272827});
  CHECK_T(id, kInt64, {3, 5}, {2, 2, 0, 0, 1, 0, 0, 2, 2, 0, 1, 1, 1, 1, 2});
  const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
  const Tensor y = tensor({1.0, nan, -0.0, 0.0, -inf, 2.0, nan}, kFloat32);
  CHECK_T(std::get<1>(y.sort()), kInt64, {7}, {4, 2, 3, 0, 5, 1, 6});
  CHECK_T(y.argsort(0, true), kInt64, {7}, {1, 6, 5, 0, 2, 3, 4});
  CHECK_T(std::get<1>(tensor({3, 1, 2, 1, 0}, kInt32).sort(0, true)), kInt64, {5}, {0, 2, 1, 3, 4});
  CHECK_T(ramp({3, 2}).msort(), kFloat32, {3, 2}, {0.04158075898885727, -0.6118578314781189, 0.29552021622657776, 0.6754632592201233, 0.9916647672653198, 0.8414709568023682});
  CHECK_T(std::get<1>(tensor(5.0).sort()), kInt64, {}, {0});
  CHECK_T(std::get<0>(zeros({0}).sort()), kFloat32, {0}, {});
}

TEST_CASE("ops: topk and kthvalue, their gradients") {
  Tensor x = ramp({4, 6}).requires_grad_();
  auto [v, i] = x.topk(2, 1);
  CHECK_T(v, kFloat32, {4, 2}, {0.9916647672653198, 0.8414709568023682, 0.9893582463264465, 0.8504367470741272, 0.6629693508148193, 0.024775806814432144, 0.9867719411849976, 0.8591620326042175});
  CHECK_T(i, kInt64, {4, 2}, {2, 1, 5, 4, 0, 1, 2, 1});
  CHECK(v.grad_fn()->name() == "TopkBackward0");
  (v * tensor({1.0f, 2.0f}).reshape({1, 2})).sum().backward();
  CHECK_T(x.grad(), kFloat32, {4, 6}, {0.0, 2.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0, 1.0, 1.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0, 1.0, 0.0, 0.0, 0.0});
  auto [vs, is] = topk(ramp({4, 6}), 3, 0, false);
  CHECK_T(vs, kFloat32, {3, 6}, {-0.9775301218032837, -0.8834545016288757, -0.6250709295272827, -0.9809362888336182, -0.8754521608352661, -0.6381064057350159, 0.29552021622657776, 0.024775806814432144, -0.37387657165527344, 0.31154128909111023, 0.007963374257087708, -0.6118578314781189, 0.32747408747673035, 0.8414709568023682, 0.9867719411849976, 0.6502878665924072, 0.04158075898885727, -0.35822945833206177});
  CHECK_T(is, kInt64, {3, 6}, {1, 1, 2, 2, 2, 3, 0, 2, 1, 1, 3, 0, 3, 0, 3, 3, 0, 2});
  Tensor k = ramp({4, 6}).requires_grad_();
  auto [kv, ki] = k.kthvalue(3, 1);
  CHECK_T(kv, kFloat32, {4}, {0.29552021622657776, -0.37387657165527344, -0.6250709295272827, 0.32747408747673035});
  CHECK_T(ki, kInt64, {4}, {0, 2, 2, 0});
  CHECK(kv.grad_fn()->name() == "KthvalueBackward0");
  kv.sum().backward();
  CHECK_T(k.grad(), kFloat32, {4, 6}, {1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0});
  auto [kv0, ki0] = kthvalue(ramp({4, 6}), 2, 0, true);
  CHECK_T(kv0, kFloat32, {1, 6}, {0.29552021622657776, 0.024775806814432144, -0.37387657165527344, 0.31154128909111023, 0.007963374257087708, -0.6118578314781189});
  CHECK_T(ki0, kInt64, {1, 6}, {0, 2, 1, 1, 3, 0});
  CHECK_T(std::get<1>(tensor({3, 1, 3, 2, 3}).topk(0)), kInt64, {0}, {});
}

TEST_CASE("ops: median and nanmedian, the lower middle, NaN rows, gradients") {
  Tensor x = ramp({4, 6}).requires_grad_();
  auto [v, i] = x.median(1);
  CHECK_T(v, kFloat32, {4}, {0.29552021622657776, -0.37387657165527344, -0.6250709295272827, 0.32747408747673035});
  CHECK_T(i, kInt64, {4}, {0, 2, 2, 0});
  CHECK(v.grad_fn()->name() == "MedianBackward1");
  v.sum().backward();
  CHECK_T(x.grad(), kFloat32, {4, 6}, {1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0});
  Tensor a = ramp({5, 4}).requires_grad_();
  Tensor m = a.median();
  CHECK_T(m, kFloat32, {}, {0.04158075898885727});
  CHECK(m.grad_fn()->name() == "MedianBackward0");
  m.backward();
  CHECK_T(a.grad(), kFloat32, {5, 4}, {0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0});
  const double nan = std::nan("");
  const Tensor y = tensor({1.0, nan, 3.0, 0.0, nan, 2.0, nan, 5.0, 4.0, 3.0, 2.0, 1.0}, kFloat32).reshape({3, 4});
  auto [yv, yi] = y.median(1);
  CHECK_T(yi, kInt64, {3}, {1, 0, 2});
  CHECK(std::isnan(yv.to_vector<float>()[0]));
  CHECK(yv.to_vector<float>()[2] == 2.0f);
  auto [nv, ni] = y.nanmedian(1);
  CHECK_T(nv, kFloat32, {3}, {1.0, 2.0, 2.0});
  CHECK_T(ni, kInt64, {3}, {0, 1, 2});
  CHECK_T(tensor({1.0, nan, 3.0}, kFloat32).nanmedian(), kFloat32, {}, {1.0});
  CHECK(std::isnan(tensor({1.0, nan, 3.0}, kFloat32).median().item<float>()));
  const Tensor t = tensor({3, 1, 2, 7, 5, 5, 1, 0}).reshape({2, 4});
  CHECK_T(std::get<0>(t.median(1)), kInt64, {2}, {2, 1});
  CHECK_T(std::get<1>(t.median(1)), kInt64, {2}, {2, 2});
  CHECK(std::isnan(zeros({0}).median().item<float>()));
}

TEST_CASE("jit: a sort is a library step on its stored input, its values a gather that fuses") {
  const int threads = get_num_threads();
  set_num_threads(2);
  manual_seed(13);
  Tensor x = (randn({37, 29, 5}) * 3).round();  // ties
  x = where(rand({37, 29, 5}) < 0.05, std::nan(""), x);
  x.eval();
  for (DType dt : {kFloat32, kFloat64, kFloat16, kBFloat16, kInt32, kInt64, kBool}) {
    CAPTURE(dtype_name(dt));
    const Tensor xd = x.to(dt);
    for (int64_t d = 0; d < 3; ++d)
      for (bool desc : {false, true}) {
        check_jit(xd.argsort(d, desc));
        check_jit(std::get<0>(xd.sort(d, desc)));
      }
    check_jit(std::get<0>(xd.permute({2, 0, 1}).topk(3, 1)));
    check_jit(std::get<1>(xd.median(0)));
  }
  // many rows: split over the thread pool
  const Tensor big = rand({300, 257});
  big.eval();
  check_jit(big.argsort(1));
  check_jit(big.argsort(0, true));
  const Tensor y = rand({64, 300});
  y.eval();
  auto [v, i] = y.sort(1);
  const jit::Schedule s = jit::schedule({(v * 2).sum(1).impl()->node()}, jit::ScheduleOptions{});
  REQUIRE(s.steps.size() == 2);  // the sort, then the gather fused with the sum
  CHECK(s.steps[0].kind == jit::StepKind::Sort);
  CHECK(s.steps[1].kind == jit::StepKind::Kernel);
  const jit::Schedule c = jit::schedule({std::get<0>((y * 2).sort(0)).impl()->node()}, jit::ScheduleOptions{});
  REQUIRE(c.steps.size() == 3);  // y * 2 stored for the sort to read
  CHECK(c.steps[0].why.cut == jit::Cut::SortInput);
  // median, nanmedian and kthvalue select one position (nth_element), sort nothing
  for (const NodePtr& n : {std::get<1>(y.median(1, true)).impl()->node(), std::get<1>(y.nanmedian(0, true)).impl()->node(),
                           std::get<1>(y.kthvalue(7, 1, true)).impl()->node()}) {
    CHECK(n->op == Op::ArgSort);
    CHECK(n->attrs.ints.size() == 4);
    CHECK(n->shape[static_cast<size_t>(n->attrs.ints[0])] == 1);
  }
  CHECK(std::get<1>(y.median(1, true)).impl()->node()->attrs.ints[3] == static_cast<int64_t>(SortSelect::Median));
  check_jit(std::get<1>(y.median(1)));
  check_jit(std::get<1>(y.nanmedian(0)));
  check_jit(std::get<1>(y.kthvalue(300, 1)));
  // topk sorts only its k positions (a partial sort)
  const NodePtr top = std::get<1>(y.topk(5, 1)).impl()->node();
  CHECK(top->op == Op::ArgSort);
  CHECK(top->shape == Shape{64, 5});
  check_jit(std::get<1>(y.topk(5, 1)));
  check_jit(std::get<0>(y.kthvalue(7, 0)));
  const int64_t before = stats().library_calls;
  std::get<0>(y.sort(1)).eval();
  CHECK(stats().library_calls - before == 1);
  set_num_threads(threads);
}

TEST_CASE("ops: topk of a few of long rows (a heap of k) gives the stable sort's first k") {
  // Rows of 200 (k at most an eighth of them: core/sort_rows.cpp, first_keys)
  // with NaNs, -0 and +0, infinities and many ties, along either dim (a
  // strided row), both orders: the positions of the sort, which orders the
  // whole row, cut to k.
  const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
  std::vector<double> v(7 * 200);
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = static_cast<double>(static_cast<int64_t>(i * 37 % 23) - 11);
    if (i % 17 == 0) v[i] = nan;
    else if (i % 19 == 0) v[i] = -0.0;
    else if (i % 29 == 0) v[i] = inf;
    else if (i % 31 == 0) v[i] = -inf;
  }
  const Tensor base = tensor(v).reshape({7, 200});
  for (DType dt : {kFloat32, kFloat16, kBFloat16, kInt32, kUInt8, kBool}) {
    CAPTURE(dtype_name(dt));
    const Tensor x = (is_floating_point(dt) ? base : base.nan_to_num(5.0, 9.0, -9.0).abs()).to(dt).eval();
    for (int64_t dim : {0, 1}) {
      const Tensor xd = dim == 1 ? x : x.t().contiguous().eval();  // rows along dim 0: strided
      for (bool largest : {true, false})
        for (int64_t k : {1, 5, 25}) {
          CAPTURE(dim);
          CAPTURE(largest);
          CAPTURE(k);
          const std::vector<int64_t> got = std::get<1>(xd.topk(k, dim, largest)).contiguous().to_vector<int64_t>();
          const std::vector<int64_t> want =
              std::get<1>(xd.sort(dim, largest)).narrow(dim, 0, k).contiguous().to_vector<int64_t>();
          CHECK(got == want);
        }
    }
  }
}

// The scans (core/scan.cpp: cumsum, cumprod, logcumsumexp, cummax, cummin) against PyTorch 1.13:
// values, dtypes, grad_fn names and gradients printed by a script run with
// /usr/bin/python3 and pasted in; the JIT against the reference evaluator
// bit for bit; kernel counts (the work feeding a scan runs in its loop).
#include <doctest/doctest.h>

#include <limits>

#include "tests/check_values.h"
#include "jit/stats.h"
#include "tests/jit_checks.h"

using namespace kiln;
using kiln_test::check_jit;
using kiln_test::kernels;
using kiln_test::ramp;

TEST_CASE("ops: cumsum along each dim, integer and bool sums in int64, dtype, gradients") {
  Tensor x = ramp({3, 4}).requires_grad_();
  Tensor y = x.cumsum(1);
  CHECK_T(y, kFloat32, {3, 4}, {0.29552021622657776, 1.1369911432266235, 2.1286559104919434, 2.804119110107422, 0.04158075898885727, -0.5702770948410034, -1.547807216644287, -2.4312617778778076, -0.37387657165527344, -0.06233528256416321, 0.7881014347076416, 1.777459740638733});
  CHECK(y.grad_fn()->name() == "CumsumBackward0");
  (y * arange(1.0, 13.0).reshape({3, 4})).sum().backward();
  CHECK_T(x.grad(), kFloat32, {3, 4}, {10.0, 9.0, 7.0, 4.0, 26.0, 21.0, 15.0, 8.0, 42.0, 33.0, 23.0, 12.0});
  CHECK_T(ramp({3, 4}).cumsum(0), kFloat32, {3, 4}, {0.29552021622657776, 0.8414709568023682, 0.9916647672653198, 0.6754632592201233, 0.3371009826660156, 0.22961312532424927, 0.014134645462036133, -0.20799124240875244, -0.03677559643983841, 0.5411543846130371, 0.8645713925361633, 0.7813670039176941});
  CHECK_T(tensor({1, -2, 3, 4, 5, -6}, kInt32).reshape({2, 3}).cumsum(-1), kInt64, {2, 3}, {1, -1, 2, 4, 9, 3});
  CHECK_T(tensor({true, false, true, true}).cumsum(0), kInt64, {4}, {1, 1, 2, 3});
  CHECK_T(tensor({1, 2, 3}).cumsum(0, kFloat64), kFloat64, {3}, {1, 3, 6});
  CHECK_T(tensor(2.5).cumsum(0), kFloat32, {}, {2.5});
  CHECK_T(zeros({2, 0}).cumsum(1), kFloat32, {2, 0}, {});
  // float32 runs in a float64 accumulator, as PyTorch's CPU kernel: no drift
  CHECK_T((ones({100000}) * 0.1).cumsum(0).narrow(0, 99997, 3), kFloat32, {3}, {9999.7998046875, 9999.900390625, 10000.0}, 0);
}

TEST_CASE("jit: cumsum equals the reference bit for bit, and what feeds it runs in its loop") {
  const int threads = get_num_threads();
  set_num_threads(2);
  manual_seed(11);
  const Tensor x = randn({37, 29, 5}) * 10;
  for (DType dt : {kFloat32, kFloat64, kFloat16, kBFloat16, kInt32, kInt64}) {
    CAPTURE(dtype_name(dt));
    const Tensor xd = x.to(dt);
    for (int64_t d = 0; d < 3; ++d) check_jit(xd.cumsum(d));
    check_jit(xd.permute({2, 0, 1}).cumsum(1) * 2);
    check_jit(xd.select(2, 1).cumsum(0).narrow(1, 3, 10));
    // scans of an outer dim run in tiles of 16 columns, then the rest one by one
    check_jit(xd.reshape({37, 145}).cumsum(0));
    check_jit(xd.reshape({5, 37, 29}).cumsum(1) + 1);
    check_jit(xd.reshape({37, 5, 29}).permute({1, 2, 0}).cumsum(0));
  }
  const Tensor y = randn({64, 300});
  y.eval();
  CHECK(kernels((y * 2 + 1).exp().cumsum(1)) == 1);
  CHECK(kernels(y.cumsum(1) * 2) == 2);                 // the scan is stored, then read
  CHECK(kernels((y - y.mean(1, true)).cumsum(1)) == 2);  // a reduction's loops come first
  set_num_threads(threads);
}

TEST_CASE("ops: cumprod along each dim, integers in int64, gradients with and without zeros") {
  Tensor x = ramp({3, 4}).requires_grad_();
  Tensor y = x.cumprod(1);
  CHECK_T(y, kFloat32, {3, 4}, {0.29552021622657776, 0.24867168068885803, 0.24659894406795502, 0.16656853258609772, 0.04158075898885727, -0.02544151246547699, 0.024869846180081367, -0.02197137661278248, -0.37387657165527344, -0.11647798866033554, -0.0990571603178978, -0.09800302237272263});
  CHECK(y.grad_fn()->name() == "CumprodBackward0");
  (y * arange(1.0, 13.0).reshape({3, 4})).sum().backward();
  CHECK_T(x.grad(), kFloat32, {3, 4}, {7.440893650054932, 2.2620081901550293, 1.4178893566131592, 0.9863958358764648, 1.2883998155593872, 0.25223368406295776, 0.0017207529162988067, 0.19895875453948975, 18.17534065246582, -11.011204719543457, -2.6641194820404053, -1.1886858940124512}, 1e-5);
  CHECK_T(ramp({3, 4}).cumprod(0), kFloat32, {3, 4}, {0.29552021622657776, 0.8414709568023682, 0.9916647672653198, 0.6754632592201233, 0.012287954799830914, -0.5148605704307556, -0.9693821668624878, -0.5967410802841187, -0.004594178404659033, -0.16040033102035522, -0.8243982195854187, -0.590390682220459});
  CHECK_T(tensor({1, -2, 3, 4, 5, -6}, kInt32).reshape({2, 3}).cumprod(-1), kInt64, {2, 3}, {1, -2, -6, 4, 20, -120});
  CHECK_T(tensor({true, true, false, true}).cumprod(0), kInt64, {4}, {1, 1, 0, 0});
  CHECK_T(tensor({1, 2, 3}).cumprod(0, kFloat64), kFloat64, {3}, {1, 2, 6});
  CHECK_T(cumprod(tensor(2.5), 0), kFloat32, {}, {2.5});
  // zeros: two in a row, one first, one last, none; the first zero's
  // gradient is the product of the others
  Tensor z = tensor({2.f, 0.f, 3.f, 0.f, 4.f, 0.f, 2.f, 3.f, 4.f, 5.f, 1.f, 2.f, 3.f, 4.f, 0.f, 1.5f, -2.f, 0.5f, 3.f, -1.f}).reshape({4, 5}).requires_grad_();
  z.cumprod(1).backward(tensor({1.f, 2.f, 3.f, 4.f, 5.f, .5f, .25f, 1.f, 2.f, 3.f, 1.f, -1.f, 2.f, -2.f, 3.f, 0.5f, 1.5f, -2.f, 1.f, 0.25f}).reshape({4, 5}));
  CHECK_T(z.grad(), kFloat32, {4, 5}, {1.0, 22.0, 0.0, 0.0, 0.0, 415.0, 0.0, 0.0, 0.0, 0.0, -37.0, -19.0, -12.0, -12.0, 72.0, -2.75, 2.4375, -0.75, -1.125, -1.125});
  Tensor z0 = tensor({2.f, 0.f, 3.f, 0.f, 2.f, 3.f}).reshape({2, 3}).requires_grad_();
  z0.cumprod(0).backward(tensor({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}).reshape({2, 3}));
  CHECK_T(z0.grad(), kFloat32, {2, 3}, {1.0, 12.0, 21.0, 8.0, 0.0, 18.0});
}

TEST_CASE("ops: logcumsumexp without overflow, infinities and NaN as PyTorch, gradients") {
  Tensor x = ramp({3, 4}, 30.0).requires_grad_();
  Tensor y = x.logcumsumexp(1);
  CHECK_T(y, kFloat32, {3, 4}, {8.865606307983398, 25.244129180908203, 29.760927200317383, 29.761001586914062, 1.2474228143692017, 1.2474228143692017, 1.2474228143692017, 1.2474228143692017, -11.216297149658203, 9.34623908996582, 25.51310157775879, 29.696117401123047}, 1e-6);
  CHECK(y.grad_fn()->name() == "LogcumsumexpBackward0");
  (y * arange(1.0, 13.0).reshape({3, 4}) * tensor({1.0f, -1.0f, 1.0f, -0.5f})).sum().backward();
  CHECK_T(x.grad(), kFloat32, {3, 4}, {0.9999998211860657, -1.9890761375427246, 0.989220380783081, -0.0001501377992099151, 2.0, -9.195574079967628e-09, 1.5823231397024684e-13, -3.5475522259381664e-12, 9.0, -9.999999046325684, 10.908491134643555, -5.9084882736206055}, 1e-4);
  CHECK_T(logcumsumexp(ramp({3, 4}), 0), kFloat32, {3, 4}, {0.29552021622657776, 0.8414709568023682, 0.9916647672653198, 0.6754632592201233, 0.8697367310523987, 1.0515623092651367, 1.1223150491714478, 0.8663840889930725, 1.123091697692871, 1.441645622253418, 1.688734531402588, 1.6229075193405151}, 1e-6);
  const double inf = std::numeric_limits<double>::infinity();
  CHECK_T(tensor({-inf, -inf, 1.0, inf, 2.0, inf}, kFloat32).logcumsumexp(0), kFloat32, {6}, {-inf, -inf, 1.0, inf, inf, inf});
  CHECK_T(tensor({-1000.0, 0.0, -1000.0}, kFloat32).logcumsumexp(0), kFloat32, {3}, {-1000.0, 0.0, 0.0});
  CHECK(std::isnan(tensor({1.0, std::nan(""), 2.0}, kFloat32).logcumsumexp(0).to_vector<float>()[2]));
  CHECK_T(tensor({1.0, 2.0, 3.0}, kFloat64).logcumsumexp(0), kFloat64, {3}, {1.0, 2.313261687518223, 3.4076059644443806}, 1e-15);
}

TEST_CASE("ops: cummax and cummin keep the last of equal values, NaN once met, gradients to the kept positions") {
  Tensor x = ramp({3, 5}).requires_grad_();
  auto [v, i] = x.cummax(1);
  CHECK_T(v, kFloat32, {3, 5}, {0.29552021622657776, 0.8414709568023682, 0.9916647672653198, 0.9916647672653198, 0.9916647672653198, -0.6118578314781189, -0.6118578314781189, -0.6118578314781189, -0.37387657165527344, 0.31154128909111023, 0.8504367470741272, 0.9893582463264465, 0.9893582463264465, 0.9893582463264465, 0.9893582463264465});
  CHECK_T(i, kInt64, {3, 5}, {0, 1, 2, 2, 2, 0, 0, 0, 3, 4, 0, 1, 1, 1, 1});
  CHECK(v.grad_fn()->name() == "CummaxBackward0");
  (v * arange(1.0, 16.0).reshape({3, 5})).sum().backward();
  CHECK_T(x.grad(), kFloat32, {3, 5}, {1.0, 2.0, 12.0, 0.0, 0.0, 21.0, 0.0, 0.0, 9.0, 10.0, 11.0, 54.0, 0.0, 0.0, 0.0});
  Tensor x2 = ramp({3, 5}).requires_grad_();
  auto [v2, i2] = cummin(x2, 0);
  CHECK_T(v2, kFloat32, {3, 5}, {0.29552021622657776, 0.8414709568023682, 0.9916647672653198, 0.6754632592201233, 0.04158075898885727, -0.6118578314781189, -0.9775301218032837, -0.8834545016288757, -0.37387657165527344, 0.04158075898885727, -0.6118578314781189, -0.9775301218032837, -0.8834545016288757, -0.37387657165527344, -0.6250709295272827});
  CHECK_T(i2, kInt64, {3, 5}, {0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 1, 1, 1, 1, 2});
  CHECK(v2.grad_fn()->name() == "CumminBackward0");
  (v2 * arange(1.0, 16.0).reshape({3, 5})).sum().backward();
  CHECK_T(x2.grad(), kFloat32, {3, 5}, {1.0, 2.0, 3.0, 4.0, 15.0, 17.0, 19.0, 21.0, 23.0, 0.0, 0.0, 0.0, 0.0, 0.0, 15.0});
  // ties keep the later position; a NaN replaces everything, then only a NaN replaces it
  const double nan = std::nan("");
  Tensor n = tensor({1.0, 3.0, 3.0, nan, 2.0, nan, 5.0}, kFloat32);
  auto [nv, ni] = n.cummax(0);
  CHECK_T(ni, kInt64, {7}, {0, 1, 2, 3, 3, 5, 5});
  CHECK(nv.to_vector<float>()[2] == 3.0f);
  CHECK(std::isnan(nv.to_vector<float>()[4]));
  CHECK_T(std::get<1>(n.cummin(0)), kInt64, {7}, {0, 0, 0, 3, 3, 5, 5});
  Tensor t = tensor({2, 1, 2, 3, 3, 0});
  CHECK_T(std::get<0>(t.cummax(0)), kInt64, {6}, {2, 2, 2, 3, 3, 3});
  CHECK_T(std::get<1>(t.cummax(0)), kInt64, {6}, {0, 0, 2, 3, 4, 4});
  CHECK_T(std::get<0>(t.cummin(0)), kInt64, {6}, {2, 1, 1, 1, 1, 0});
  CHECK_T(std::get<1>(t.cummin(0)), kInt64, {6}, {0, 1, 1, 1, 1, 5});
  CHECK_T(std::get<1>(tensor({true, false, true}).cummax(0)), kInt64, {3}, {0, 0, 2});
  // -0 and +0 are equal: each replaces the other (PyTorch keeps the sign it met last)
  const std::vector<float> signed_zeros = std::get<0>(tensor({0.0, -0.0, 0.0}, kFloat32).cummax(0)).to_vector<float>();
  CHECK(!std::signbit(signed_zeros[0]));
  CHECK(std::signbit(signed_zeros[1]));
  CHECK(!std::signbit(signed_zeros[2]));
  // a NaN of either sign is a NaN: taken, then only a NaN replaces it (the JIT
  // compares keys in which every NaN is one: lower_kernel.cpp); its bits are kept
  const double neg_nan = std::copysign(std::nan(""), -1.0);
  for (DType dt : {kFloat32, kFloat64}) {
    const Tensor s = tensor({1.0, neg_nan, 2.0, nan, 0.0}, dt);
    CHECK_T(std::get<1>(s.cummax(0)), kInt64, {5}, {0, 1, 1, 3, 3});
    CHECK_T(std::get<1>(s.cummin(0)), kInt64, {5}, {0, 1, 1, 3, 3});
    const std::vector<double> kept = std::get<0>(s.cummax(0)).to(kFloat64).to_vector<double>();
    CHECK((std::isnan(kept[1]) && std::signbit(kept[1]) && std::signbit(kept[2]) && !std::signbit(kept[3])));
    CHECK(s.argmax().item<int64_t>() == 1);
    CHECK(s.argmin().item<int64_t>() == 1);
  }
  // the dtype's extremes (the kernel's starting values) are taken at once and as ties
  const double inf = std::numeric_limits<double>::infinity();
  for (DType dt : {kFloat32, kFloat16, kBFloat16, kFloat64}) {
    CHECK_T(std::get<1>(tensor({-inf, -inf, 1.0}, dt).cummax(0)), kInt64, {3}, {0, 1, 2});
    CHECK_T(std::get<1>(tensor({inf, inf, -1.0}, dt).cummin(0)), kInt64, {3}, {0, 1, 2});
  }
  CHECK_T(std::get<1>(tensor({0, 0, 3}, kUInt8).cummax(0)), kInt64, {3}, {0, 1, 2});
  CHECK_T(std::get<1>(tensor({255, 255, 3}, kUInt8).cummin(0)), kInt64, {3}, {0, 1, 2});
  CHECK_T(std::get<1>(tensor({-2147483648.0, -2147483648.0}, kInt32).cummax(0)), kInt64, {2}, {0, 1});
  CHECK_T(std::get<1>(tensor({false, false}).cummax(0)), kInt64, {2}, {0, 1});
  CHECK_T(std::get<1>(tensor({true, true}).cummin(0)), kInt64, {2}, {0, 1});
  CHECK_T(std::get<1>(tensor(4.0).cummax(0)), kInt64, {}, {0});
  CHECK_T(std::get<0>(zeros({2, 0}).cummin(1)), kFloat32, {2, 0}, {});
}

TEST_CASE("jit: cumprod, logcumsumexp, cummax and cummin equal the reference bit for bit, values and positions in one kernel") {
  const int threads = get_num_threads();
  set_num_threads(2);
  manual_seed(12);
  // repeated values (ties) and NaNs in float; small products that stay finite
  Tensor x = (randn({37, 29, 5}) * 3).round();
  x = where(rand({37, 29, 5}) < 0.05, std::nan(""), x);
  const Tensor near_one = 1.0 + randn({37, 29, 5}) * 0.05;
  x.eval();  // the JIT's normals may differ from the reference's by an ulp
  near_one.eval();
  for (DType dt : {kFloat32, kFloat64, kFloat16, kBFloat16, kInt32, kInt64, kBool}) {
    CAPTURE(dtype_name(dt));
    const Tensor xd = x.to(dt);
    for (int64_t d = 0; d < 3; ++d) {
      check_jit(std::get<0>(xd.cummax(d)));
      check_jit(std::get<1>(xd.cummax(d)));
      check_jit(std::get<0>(xd.cummin(d)));
      check_jit(std::get<1>(xd.cummin(d)));
      check_jit(near_one.to(is_floating_point(dt) ? dt : kFloat32).cumprod(d));
      if (is_floating_point(dt)) check_jit(xd.logcumsumexp(d));  // NaNs and repeats included
    }
    check_jit(std::get<1>(xd.permute({2, 0, 1}).cummax(1)) * 2);
    check_jit(std::get<0>(xd.reshape({37, 145}).cummin(0)));
    check_jit(xd.reshape({5, 37, 29}).cumprod(1));
  }
  const Tensor y = randn({64, 300});
  y.eval();
  auto [v, i] = (y * 2).cummax(1);
  const int64_t before = stats().kernels_launched;
  eval(v, i);
  CHECK(stats().kernels_launched - before == 1);  // one kernel computes both
  CHECK(kernels((y * 2 + 1).cumprod(1)) == 1);
  set_num_threads(threads);
}

TEST_CASE("jit: a scan of an outer dim keeps a row of running values, walks whole rows, and splits wide rows into parallel blocks") {
  const int threads = get_num_threads();
  set_num_threads(2);
  manual_seed(13);
  // 8192 float64 sums fit the kernel's frame: 8229 columns are two blocks
  // (the second of 37); cummax keeps 5456 values and positions, cumsum of
  // float16 16384 float32 sums
  Tensor x = (randn({6, 8229}) * 3).round();
  x = where(rand({6, 8229}) < 0.05, std::nan(""), x);
  x.eval();
  for (DType dt : {kFloat32, kFloat64, kFloat16, kInt64, kBool}) {
    CAPTURE(dtype_name(dt));
    const Tensor xd = x.to(dt);
    check_jit(xd.cumsum(0));
    check_jit(std::get<0>(xd.cummax(0)));
    check_jit(std::get<1>(xd.cummin(0)));
    check_jit(xd.reshape({3, 2, 8229}).cumsum(1));          // a row per batch, the batch parallel
    check_jit(xd.reshape({2, 3, 8229}).transpose(0, 1).cumsum(0) * 2);
    if (is_floating_point(dt)) check_jit(xd.logcumsumexp(0));
  }
  check_jit(randn({3, 16390}).to(kFloat16).cumsum(0));
  check_jit(randn({0, 9000}).cumsum(0));
  check_jit(randn({5, 0}).cumsum(0));

  // the kernel: one accumulator with lanes (as many as the row's columns,
  // at most 8192), updated once a step in the loop over a row's columns,
  // inside the loop over rows
  const Tensor y = randn({64, 3000});
  y.eval();
  const jit::Schedule p = kiln_test::plan(y.cumsum(0));
  REQUIRE(p.steps.size() == 1);
  const jit::Kernel& k = p.steps[0].code->ir;
  REQUIRE(k.accs.size() == 1);
  CHECK(k.accs[0].lanes >= 0);
  REQUIRE(k.body.size() == 1);
  CHECK(k.body[0].parallel);  // the blocks of columns
  int updates_in_row_loop = 0;
  for (const jit::Stmt& rows : k.body[0].body)
    if (rows.kind == jit::StmtKind::Loop)
      for (const jit::Stmt& cols : rows.body)
        if (cols.kind == jit::StmtKind::Loop)
          for (const jit::Stmt& s : cols.body) updates_in_row_loop += s.kind == jit::StmtKind::AccUpdate && s.lane >= 0;
  CHECK(updates_in_row_loop == 1);

  // rows wider than one block run on both threads, with the same bits
  auto parallel = [](const Tensor& t) {
    reset_stats();
    t.eval();
    return jit::counters().parallel_launches.load();
  };
  const Tensor wide = randn({64, 20000});
  wide.eval();
  const Tensor two = wide.cumsum(0);
  CHECK(parallel(two) == 1);
  // a large scan whose row fits one block is split into one per thread
  // (2 x 2000 columns); a small one (under 2^17 elements) keeps one block
  const Tensor mid = randn({64, 4000});
  mid.eval();
  const Tensor split = mid.cumsum(0);
  CHECK(parallel(split) == 1);
  CHECK(kiln_test::plan(mid.cumsum(0)).steps[0].parallel_extent == 2);
  CHECK(parallel(randn({16, 4000}).cumsum(0)) == 0);
  set_num_threads(1);
  const Tensor one = wide.cumsum(0);
  one.eval();
  CHECK(one.equal(two));
  // on one thread (another graph, scheduled now): one block; the same
  // bits as the two blocks
  const Tensor whole = (mid * 1.0f).cumsum(0);
  CHECK(kiln_test::plan(whole).steps.back().parallel_extent == 1);
  CHECK(whole.equal(split));
  set_num_threads(threads);
}

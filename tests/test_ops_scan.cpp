// cumsum (core/scan.cpp: the CumSum op, a scan) against PyTorch 1.13:
// values, dtypes, grad_fn names and gradients printed by a script run with
// /usr/bin/python3 and pasted in; the JIT against the reference evaluator
// bit for bit; kernel counts (the work feeding a scan runs in its loop).
#include <doctest/doctest.h>

#include "tests/check_values.h"
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
    // scans of an inner dim run in tiles of 8 columns, then the rest one by one
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

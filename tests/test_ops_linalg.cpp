// Linear algebra helpers (core/linalg.cpp) and composed math and
// reductions (core/composite_math.cpp, core/statistics.cpp): dot, vdot, mv,
// bmm, addmm, addmv, baddbmm, trace, diag, diag_embed, kron, cross; hypot,
// logaddexp(2), xlogy, deg2rad / rad2deg, sinc, logit, heaviside,
// nan_to_num, float_power, diff, logspace; var_mean, std_mean, aminmax,
// count_nonzero, nansum, nanmean. Expected values, dtypes and gradients were
// printed by a script run with /usr/bin/python3 (torch 1.13) and pasted in.
#include <doctest/doctest.h>

#include <string>
#include <tuple>
#include <vector>

#include "tests/check_values.h"
#include "tests/jit_checks.h"

using namespace kiln;
using kiln_test::kInf;
using kiln_test::kNaN;

TEST_CASE("ops: dot, vdot, mv, bmm, addmm, addmv, baddbmm, trace, diag, diag_embed, kron and cross as PyTorch") {
  const Tensor A = kiln_test::mk({-1.25, 0.5, -0.5, 1.25, 0.25, -0.75, 1.0, 0.0, -1.0, 0.75, -0.25, -1.25}, {3, 4}, kFloat32);
  const Tensor S = kiln_test::mk({-0.75, 0.0, 0.75, -0.25, 0.5, -0.5, 0.25, -0.75, 0.0, 0.75, -0.25, 0.5, -0.5, 0.25, -0.75, 0.0}, {4, 4}, kFloat32);
  const Tensor V = kiln_test::mk({1.0, 2.0, 3.0}, {3}, kFloat32);
  const Tensor W = kiln_test::mk({4.0, -5.0, 6.0}, {3}, kFloat32);
  const Tensor M1 = kiln_test::mk({-0.5, 0.25, 1.0, 0.0, 0.75, -0.25}, {2, 3}, kFloat32);
  const Tensor M2 = kiln_test::mk({-1.0, 0.25, -0.75, 0.5, -0.5, 0.75, -0.25, 1.0, 0.0, -1.0, 0.25, -0.75}, {3, 4}, kFloat32);
  const Tensor M3 = kiln_test::mk({-0.5, 0.25, -0.25, 0.5, 0.0, -0.5, 0.25, -0.25}, {2, 4}, kFloat32);
  const Tensor BT1 = kiln_test::mk({-0.5, 0.25, 1.0, 0.0, 0.75, -0.25, 0.5, -0.5, 0.25, 1.0, 0.0, 0.75, -0.25, 0.5, -0.5, 0.25, 1.0, 0.0, 0.75, -0.25, 0.5, -0.5, 0.25, 1.0}, {2, 3, 4}, kFloat32);
  const Tensor BT2 = kiln_test::mk({-1.0, 0.25, -0.75, 0.5, -0.5, 0.75, -0.25, 1.0, 0.0, -1.0, 0.25, -0.75, 0.5, -0.5, 0.75, -0.25, 1.0, 0.0, -1.0, 0.25, -0.75, 0.5, -0.5, 0.75, -0.25, 1.0, 0.0, -1.0, 0.25, -0.75, 0.5, -0.5, 0.75, -0.25, 1.0, 0.0, -1.0, 0.25, -0.75, 0.5}, {2, 4, 5}, kFloat32);
  const Tensor C = kiln_test::mk({-1.25, 0.5, -0.5, 1.25}, {2, 2}, kFloat32);
  const Tensor I = kiln_test::mki({3, 0, -2, 5, 0, 1, 0, -7}, {2, 4}, kInt64);
  const Tensor T3 = kiln_test::mk({-1.25, 0.5, -0.5, 1.25, 0.25, -0.75}, {2, 3}, kFloat32);
  const Tensor TD = kiln_test::mk({-1.25, 0.5, -0.5, 1.25, 0.25, -0.75}, {2, 3}, kFloat64);
  CHECK_T(V.dot(W), kFloat32, {}, {12.0});
  CHECK_T(kiln::dot(V, V), kFloat32, {}, {14.0});
  CHECK_T(V.vdot(W), kFloat32, {}, {12.0});
  CHECK_T(kiln::tensor({1, 2, 3}).dot(kiln::tensor({4, -5, 6})), kInt64, {}, {12.0});
  CHECK_T(M1.mv(V), kFloat32, {2}, {3.0, 0.75});
  CHECK_T(kiln::mv(M2.t(), V), kFloat32, {4}, {-2.0, -1.25, -0.5, 0.25});
  CHECK_T(BT1.bmm(BT2), kFloat32, {2, 3, 5}, {0.9375, -0.9375, 1.125, -0.75, 0.75, -0.6875, -0.625, -0.5625, 0.625, 0.125, 0.3125, 0.5625, 0.8125, -0.625, -0.9375, 0.4375, -0.125, -0.6875, -0.125, -0.6875, -0.375, 0.375, 0.0, 0.75, 0.375, -0.75, -0.875, 0.6875, -0.5625, 1.0});
  CHECK_T(kiln::bmm(BT1, BT2), kFloat32, {2, 3, 5}, {0.9375, -0.9375, 1.125, -0.75, 0.75, -0.6875, -0.625, -0.5625, 0.625, 0.125, 0.3125, 0.5625, 0.8125, -0.625, -0.9375, 0.4375, -0.125, -0.6875, -0.125, -0.6875, -0.375, 0.375, 0.0, 0.75, 0.375, -0.75, -0.875, 0.6875, -0.5625, 1.0});
  CHECK_T(A.addmm(M1.t(), M3), kFloat32, {3, 4}, {-1.0, 0.375, -0.375, 1.0, 0.125, -1.0625, 1.125, -0.0625, -1.5, 1.125, -0.5625, -0.6875});
  CHECK_T(A[0].addmm(M1.t(), M3, 0.5, 2), kFloat32, {3, 4}, {-0.125, 0.0, 0.0, 0.125, -0.875, -0.375, 0.0, 0.5, -1.625, 1.0, -0.875, 1.75});
  CHECK_T(kiln::full({3, 4}, kNaN).addmm(M1.t(), M3, 0), kFloat32, {3, 4}, {0.25, -0.125, 0.125, -0.25, -0.125, -0.3125, 0.125, -0.0625, -0.5, 0.375, -0.3125, 0.5625});
  CHECK_T(kiln::addmm(A, M1.t(), M3, 1, -1), kFloat32, {3, 4}, {-1.5, 0.625, -0.625, 1.5, 0.375, -0.4375, 0.875, 0.0625, -0.5, 0.375, 0.0625, -1.8125});
  CHECK_T(V.slice(0, 0, 2).addmv(M1, V, 2, 3), kFloat32, {2}, {11.0, 6.25});
  CHECK_T(kiln::zeros({2, 3, 5}).baddbmm(BT1, BT2, 1, 0.5), kFloat32, {2, 3, 5}, {0.46875, -0.46875, 0.5625, -0.375, 0.375, -0.34375, -0.3125, -0.28125, 0.3125, 0.0625, 0.15625, 0.28125, 0.40625, -0.3125, -0.46875, 0.21875, -0.0625, -0.34375, -0.0625, -0.34375, -0.1875, 0.1875, 0.0, 0.375, 0.1875, -0.375, -0.4375, 0.34375, -0.28125, 0.5});
  CHECK_T(A.trace(), kFloat32, {}, {-2.25});
  CHECK_T(S.trace(), kFloat32, {}, {-1.5});
  CHECK_T(kiln::trace(I), kInt64, {}, {4.0});
  CHECK_T(V.diag(), kFloat32, {3, 3}, {1.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 3.0});
  CHECK_T(V.diag(1), kFloat32, {4, 4}, {0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 3.0, 0.0, 0.0, 0.0, 0.0});
  CHECK_T(V.diag(-2), kFloat32, {5, 5}, {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 3.0, 0.0, 0.0});
  CHECK_T(A.diag(), kFloat32, {3}, {-1.25, -0.75, -0.25});
  CHECK_T(A.diag(-1), kFloat32, {2}, {0.25, 0.75});
  CHECK_T(kiln::diag(S, 2), kFloat32, {2}, {0.75, -0.75});
  CHECK_T(T3.diag_embed(), kFloat32, {2, 3, 3}, {-1.25, 0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 0.0, -0.5, 1.25, 0.0, 0.0, 0.0, 0.25, 0.0, 0.0, 0.0, -0.75});
  CHECK_T(T3.diag_embed(1), kFloat32, {2, 4, 4}, {0.0, -1.25, 0.0, 0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 0.0, -0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 1.25, 0.0, 0.0, 0.0, 0.0, 0.25, 0.0, 0.0, 0.0, 0.0, -0.75, 0.0, 0.0, 0.0, 0.0});
  CHECK_T(T3.diag_embed(-1, 0, 2), kFloat32, {4, 2, 4}, {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.25, 0.0, 0.0, 0.0, 1.25, 0.0, 0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 0.25, 0.0, 0.0, 0.0, 0.0, -0.5, 0.0, 0.0, 0.0, -0.75, 0.0});
  CHECK_T(kiln::diag_embed(V, 0, 1, 0), kFloat32, {3, 3}, {1.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 3.0});
  CHECK_T(C.kron(T3), kFloat32, {4, 6}, {1.5625, -0.625, 0.625, -0.625, 0.25, -0.25, -1.5625, -0.3125, 0.9375, 0.625, 0.125, -0.375, 0.625, -0.25, 0.25, -1.5625, 0.625, -0.625, -0.625, -0.125, 0.375, 1.5625, 0.3125, -0.9375});
  CHECK_T(V.kron(C), kFloat32, {2, 6}, {-1.25, 0.5, -2.5, 1.0, -3.75, 1.5, -0.5, 1.25, -1.0, 2.5, -1.5, 3.75});
  CHECK_T(kiln::kron(I, kiln::tensor({{1, -1}})), kInt64, {2, 8}, {3.0, -3.0, 0.0, 0.0, -2.0, 2.0, 5.0, -5.0, 0.0, 0.0, 1.0, -1.0, 0.0, 0.0, -7.0, 7.0});
  CHECK_T(V.cross(W), kFloat32, {3}, {27.0, 6.0, -13.0});
  CHECK_T(kiln::cross(T3, T3.flip({1}), 1), kFloat32, {2, 3}, {-0.375, -1.3125, -0.375, 0.5, -1.0, 0.5});
  CHECK_T(T3.t().cross(kiln::ones({3, 2})), kFloat32, {3, 2}, {1.0, 1.0, 0.75, -2.0, -1.75, 1.0});
  CHECK_T(TD.cross(TD * 2 + 1, -1), kFloat64, {2, 3}, {1.0, 0.75, -1.75, 1.0, -2.0, 1.0});
  CHECK(V.dot(W).grad_fn() == nullptr);
}

TEST_CASE("autograd: dot, vdot, bmm, addmm, trace, diag, kron and cross: PyTorch's gradients and names") {
  {
    Tensor a = kiln_test::mk({-0.75, 0.0, 0.75}, {3}, kFloat32).requires_grad_();
    Tensor b = kiln_test::mk({-0.75, 0.5, -0.5}, {3}, kFloat32).requires_grad_();
    Tensor y = a.dot(b);
    CHECK(y.grad_fn()->name() == std::string("DotBackward0"));
    (y * arange(1.0, 2.0).reshape(y.sizes())).sum().backward();
    CHECK_T(a.grad(), kFloat32, {3}, {-0.75, 0.5, -0.5});
    CHECK_T(b.grad(), kFloat32, {3}, {-0.75, 0.0, 0.75});
  }
  {
    Tensor a = kiln_test::mk({-0.75, 0.0, 0.75}, {3}, kFloat32).requires_grad_();
    Tensor b = kiln_test::mk({-0.75, 0.5, -0.5}, {3}, kFloat32).requires_grad_();
    Tensor y = a.vdot(b);
    (y * arange(1.0, 2.0).reshape(y.sizes())).sum().backward();
    CHECK_T(a.grad(), kFloat32, {3}, {-0.75, 0.5, -0.5});
    CHECK_T(b.grad(), kFloat32, {3}, {-0.75, 0.0, 0.75});
  }
  {
    Tensor a = kiln_test::mk({-0.75, 0.0, 0.75, -0.25, 0.5, -0.5, 0.25, -0.75, 0.0, 0.75, -0.25, 0.5}, {2, 2, 3}, kFloat32).requires_grad_();
    Tensor b = kiln_test::mk({-0.75, 0.5, -0.5, 0.75, -0.25, 1.0, 0.0, 1.25, 0.25, -0.75, 0.5, -0.5}, {2, 3, 2}, kFloat32).requires_grad_();
    Tensor y = a.bmm(b);
    CHECK(y.grad_fn()->name() == std::string("BmmBackward0"));
    (y * arange(1.0, 9.0).reshape(y.sizes())).sum().backward();
    CHECK_T(a.grad(), kFloat32, {2, 2, 3}, {0.25, 1.0, 1.75, -0.25, 1.5, 3.25, 7.5, -3.25, -0.5, 10.0, -4.25, -0.5});
    CHECK_T(b.grad(), kFloat32, {2, 3, 2}, {-1.5, -2.5, 1.5, 2.0, -0.75, -0.5, 6.5, 7.5, -5.5, -6.5, 3.5, 4.0});
  }
  {
    Tensor s = kiln_test::mk({-0.75, 0.0, 0.75, -0.25}, {2, 2}, kFloat32).requires_grad_();
    Tensor a = kiln_test::mk({-0.75, 0.5, -0.5, 0.75, -0.25, 1.0}, {2, 3}, kFloat32).requires_grad_();
    Tensor b = kiln_test::mk({-0.75, 1.0, 0.0, 1.75, 0.75, -0.25}, {3, 2}, kFloat32).requires_grad_();
    Tensor y = s.addmm(a, b, 0.5, 2);
    (y * arange(1.0, 5.0).reshape(y.sizes())).sum().backward();
    CHECK_T(s.grad(), kFloat32, {2, 2}, {0.5, 1.0, 1.5, 2.0});
    CHECK_T(a.grad(), kFloat32, {2, 3}, {2.5, 7.0, 0.5, 3.5, 14.0, 2.5});
    CHECK_T(b.grad(), kFloat32, {3, 2}, {3.0, 3.0, -0.5, 0.0, 5.0, 6.0});
  }
  {
    Tensor a = kiln_test::mk({-0.75, 0.0, 0.75, -0.25, 0.5, -0.5, 0.25, -0.75, 0.0}, {3, 3}, kFloat32).requires_grad_();
    Tensor y = a.trace();
    (y * arange(1.0, 2.0).reshape(y.sizes())).sum().backward();
    CHECK_T(a.grad(), kFloat32, {3, 3}, {1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0});
  }
  {
    Tensor a = kiln_test::mk({-0.75, 0.0, 0.75}, {3}, kFloat32).requires_grad_();
    Tensor y = a.diag(1);
    (y * arange(1.0, 17.0).reshape(y.sizes())).sum().backward();
    CHECK_T(a.grad(), kFloat32, {3}, {2.0, 7.0, 12.0});
  }
  {
    Tensor a = kiln_test::mk({-0.75, 0.0, 0.75, -0.25, 0.5, -0.5, 0.25, -0.75, 0.0, 0.75, -0.25, 0.5}, {3, 4}, kFloat32).requires_grad_();
    Tensor y = a.diag(-1);
    (y * arange(1.0, 3.0).reshape(y.sizes())).sum().backward();
    CHECK_T(a.grad(), kFloat32, {3, 4}, {0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0});
  }
  {
    Tensor a = kiln_test::mk({-0.75, 0.0, 0.75, -0.25}, {2, 2}, kFloat32).requires_grad_();
    Tensor b = kiln_test::mk({-0.75, 0.5, -0.5, 0.75, -0.25, 1.0}, {2, 3}, kFloat32).requires_grad_();
    Tensor y = a.kron(b);
    (y * arange(1.0, 25.0).reshape(y.sizes())).sum().backward();
    CHECK_T(a.grad(), kFloat32, {2, 2}, {11.0, 13.25, 20.0, 22.25});
    CHECK_T(b.grad(), kFloat32, {2, 3}, {5.0, 4.75, 4.5, 3.5, 3.25, 3.0});
  }
  {
    Tensor a = kiln_test::mk({-0.75, 0.0, 0.75, -0.25, 0.5, -0.5}, {2, 3}, kFloat32).requires_grad_();
    Tensor b = kiln_test::mk({-0.75, 0.5, -0.5, 0.75, -0.25, 1.0}, {2, 3}, kFloat32).requires_grad_();
    Tensor y = a.cross(b, 1);
    (y * arange(1.0, 7.0).reshape(y.sizes())).sum().backward();
    CHECK_T(a.grad(), kFloat32, {2, 3}, {2.5, 1.75, -2.0, -6.5, -0.5, 4.75});
    CHECK_T(b.grad(), kFloat32, {2, 3}, {1.5, -3.0, 1.5, -5.5, 0.5, 3.25});
  }
}

TEST_CASE("ops: hypot, logaddexp, logaddexp2, xlogy, deg2rad, rad2deg, sinc, logit, heaviside, nan_to_num, float_power as PyTorch") {
  const Tensor X = kiln_test::mk({0.0, 0.5, -1.5, 2.0, 3.000000060122632e+20, -0.0, 1.0000000031710769e-30, kInf, kNaN, 4.0}, {10}, kFloat32);
  const Tensor Y = kiln_test::mk({0.0, 2.0, 0.25, -3.0, 4.0000000801635094e+20, 1.0, kNaN, kNaN, 1.0, -kInf}, {10}, kFloat32);
  const Tensor P = kiln_test::mk({0.0, 0.10000000149011612, 0.5, 0.8999999761581421, 1.0, -0.20000000298023224, 1.2999999523162842, kNaN}, {8}, kFloat32);
  const Tensor N = kiln_test::mk({1.5, kNaN, -2.0, kInf, -kInf, 0.0, kNaN, 3.25}, {2, 4}, kFloat32);
  const Tensor I = kiln_test::mki({3, 0, -2, 5, 0, 1, 0, -7}, {2, 4}, kInt64);
  const Tensor A = kiln_test::mk({-1.25, 0.5, -0.5, 1.25, 0.25, -0.75, 1.0, 0.0, -1.0, 0.75, -0.25, -1.25}, {3, 4}, kFloat32);
  CHECK_T(X.hypot(Y), kFloat32, {10}, {0.0, 2.0615527629852295, 1.520690679550171, 3.605551242828369, 5.000000100204387e+20, 1.0, kNaN, kInf, kNaN, kInf});
  CHECK_T(X.to(kFloat64).hypot(Y.to(kFloat64)), kFloat64, {10}, {0.0, 2.0615528128088303, 1.5206906325745548, 3.605551275463989, 5.000000100204387e+20, 1.0, kNaN, kInf, kNaN, kInf});
  CHECK_T(kiln::hypot(X.to(kBFloat16), Y.to(kBFloat16)), kBFloat16, {10}, {0.0, 2.0625, 1.5234375, 3.609375, 4.980620899901579e+20, 1.0, kNaN, kInf, kNaN, kInf});
  CHECK_T(X.logaddexp(Y), kFloat32, {10}, {0.6931471824645996, 2.20141339302063, 0.41022419929504395, 2.0067152976989746, 4.0000000801635094e+20, 1.31326162815094, kNaN, kNaN, kNaN, 4.0});
  CHECK_T(kiln::logaddexp(Y, kiln::tensor(-kInf)), kFloat32, {10}, {0.0, 2.0, 0.25, -3.0, 4.0000000801635094e+20, 1.0, kNaN, kNaN, 1.0, -kInf});
  CHECK_T(X.logaddexp2(Y), kFloat32, {10}, {1.0, 2.4367518424987793, 0.6255141496658325, 2.044394016265869, 4.0000000801635094e+20, 1.5849624872207642, kNaN, kNaN, kNaN, 4.0});
  CHECK_T(X.to(kFloat64).logaddexp(Y.to(kFloat64)), kFloat64, {10}, {0.6931471805599453, 2.2014132779827524, 0.41022415043808713, 2.006715348489118, 4.0000000801635094e+20, 1.3132616875182228, kNaN, kNaN, kNaN, 4.0});
  CHECK_T(X.xlogy(Y), kFloat32, {10}, {0.0, 0.3465735912322998, 2.079441547393799, kNaN, 1.4231399592288718e+22, 0.0, kNaN, kNaN, kNaN, kNaN});
  CHECK_T(X.xlogy(3), kFloat32, {10}, {0.0, 0.5493061542510986, -1.647918462753296, 2.1972246170043945, 3.2958369456762284e+20, 0.0, 1.0986123183011066e-30, kInf, kNaN, 4.394449234008789});
  CHECK_T(I.xlogy(I), kFloat32, {2, 4}, {3.295836925506592, 0.0, kNaN, 8.047189712524414, 0.0, 0.0, 0.0, kNaN});
  CHECK_T(kiln::xlogy(P, kiln::tensor(kNaN)), kFloat32, {8}, {kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN});
  CHECK_T(X.deg2rad(), kFloat32, {10}, {0.0, 0.008726646192371845, -0.02617993950843811, 0.03490658476948738, 5.235987621166973e+18, -0.0, 1.7453291963788074e-32, kInf, kNaN, 0.06981316953897476});
  CHECK_T(I.deg2rad(), kFloat32, {2, 4}, {0.05235987901687622, 0.0, -0.03490658476948738, 0.0872664600610733, 0.0, 0.01745329238474369, 0.0, -0.12217304855585098});
  CHECK_T(X.rad2deg(), kFloat32, {10}, {0.0, 28.647890090942383, -85.94367218017578, 114.59156036376953, 1.7188734449497735e+22, -0.0, 5.729577788122619e-29, kInf, kNaN, 229.18312072753906});
  CHECK_T(X.to(kFloat64).rad2deg(), kFloat64, {10}, {0.0, 28.64788975654116, -85.94366926962348, 114.59155902616465, 1.7188734198402003e+22, -0.0, 5.729577969477164e-29, kInf, kNaN, 229.1831180523293});
  CHECK_T(X.sinc(), kFloat32, {10}, {1.0, 0.6366197466850281, -0.21220658719539642, 2.7827534054836178e-08, -9.822794007874212e-22, 1.0, 1.0, kNaN, kNaN, 2.7827534054836178e-08});
  CHECK_T(A.sinc(), kFloat32, {3, 4}, {-0.18006327748298645, 0.6366197466850281, 0.6366197466850281, -0.18006327748298645, 0.9003162980079651, 0.30010542273521423, -2.7827534054836178e-08, 1.0, -2.7827534054836178e-08, 0.30010542273521423, 0.9003162980079651, -0.18006327748298645});
  CHECK_T(I.sinc(), kFloat32, {2, 4}, {-2.530538223410872e-09, 1.0, 2.7827534054836178e-08, -4.300573053228618e-08, 1.0, -2.7827534054836178e-08, 1.0, -6.035224231482061e-08});
  CHECK_T(A.to(kFloat64).sinc(), kFloat64, {3, 4}, {-0.18006326323142122, 0.6366197723675814, 0.6366197723675814, -0.18006326323142122, 0.9003163161571061, 0.3001054387190354, 3.8981718325193755e-17, 1.0, 3.8981718325193755e-17, 0.3001054387190354, 0.9003163161571061, -0.18006326323142122});
  CHECK_T(P.logit(), kFloat32, {8}, {-kInf, -2.1972246170043945, 0.0, 2.1972243785858154, kInf, kNaN, kNaN, kNaN});
  CHECK_T(P.logit(0.25), kFloat32, {8}, {-1.0986123085021973, -1.0986123085021973, 0.0, 1.0986123085021973, 1.0986123085021973, -1.0986123085021973, 1.0986123085021973, kNaN});
  CHECK_T(kiln::logit(P, 1e-6), kFloat32, {8}, {-13.815509796142578, -2.1972246170043945, 0.0, 2.1972243785858154, 13.80231761932373, -13.815509796142578, 13.80231761932373, kNaN});
  CHECK_T(X.heaviside(kiln::tensor(0.5)), kFloat32, {10}, {0.5, 1.0, 0.0, 1.0, 1.0, 0.5, 1.0, 1.0, 0.0, 1.0});
  CHECK_T(I.heaviside(I.flip({1})), kInt64, {2, 4}, {1.0, -2.0, 0.0, 1.0, -7.0, 1.0, 1.0, 0.0});
  CHECK_T(N.nan_to_num(), kFloat32, {2, 4}, {1.5, 0.0, -2.0, 3.4028234663852886e+38, -3.4028234663852886e+38, 0.0, 0.0, 3.25});
  CHECK_T(N.nan_to_num(1.5, 100, -100), kFloat32, {2, 4}, {1.5, 1.5, -2.0, 100.0, -100.0, 0.0, 1.5, 3.25});
  CHECK_T(N.to(kFloat64).nan_to_num(std::nullopt, 7), kFloat64, {2, 4}, {1.5, 0.0, -2.0, 7.0, -1.7976931348623157e+308, 0.0, 0.0, 3.25});
  CHECK_T(N.to(kFloat16).nan_to_num(), kFloat16, {2, 4}, {1.5, 0.0, -2.0, 65504.0, -65504.0, 0.0, 0.0, 3.25});
  CHECK_T(N.to(kBFloat16).nan_to_num(), kBFloat16, {2, 4}, {1.5, 0.0, -2.0, 3.3895313892515355e+38, -3.3895313892515355e+38, 0.0, 0.0, 3.25});
  CHECK_T(I.nan_to_num(), kInt64, {2, 4}, {3.0, 0.0, -2.0, 5.0, 0.0, 1.0, 0.0, -7.0});
  CHECK_T(I.float_power(2), kFloat64, {2, 4}, {9.0, 0.0, 4.0, 25.0, 0.0, 1.0, 0.0, 49.0});
  CHECK_T(A.float_power(A.abs()), kFloat64, {3, 4}, {kNaN, 0.7071067811865475, kNaN, 1.3217140793007052, 0.7071067811865475, kNaN, 1.0, 1.0, -1.0, 0.8059274488676564, kNaN, kNaN});
  CHECK_T(kiln::float_power(X, Y), kFloat64, {10}, {1.0, 0.25, kNaN, 0.125, kInf, -0.0, kNaN, kNaN, kNaN, 0.0});
  CHECK_T(I.true_divide(2), kFloat32, {2, 4}, {1.5, 0.0, -1.0, 2.5, 0.0, 0.5, 0.0, -3.5});
  CHECK_T(kiln::true_divide(I, I.abs() + 1), kFloat32, {2, 4}, {0.75, 0.0, -0.6666666865348816, 0.8333333134651184, 0.0, 0.5, 0.0, -0.875});
}

TEST_CASE("ops: diff, logspace, var_mean, std_mean, aminmax, count_nonzero, nansum and nanmean as PyTorch") {
  const Tensor A = kiln_test::mk({-1.25, 0.5, -0.5, 1.25, 0.25, -0.75, 1.0, 0.0, -1.0, 0.75, -0.25, -1.25}, {3, 4}, kFloat32);
  const Tensor B = kiln_test::mk({-1.5, -0.25, 1.0, -1.0, 0.25, 1.5, -0.5, 0.75, -1.25, 0.0, 1.25, -0.75, 0.5, -1.5, -0.25, 1.0, -1.0, 0.25, 1.5, -0.5, 0.75, -1.25, 0.0, 1.25}, {2, 3, 4}, kFloat32);
  const Tensor N = kiln_test::mk({1.5, kNaN, -2.0, kInf, -kInf, 0.0, kNaN, 3.25}, {2, 4}, kFloat32);
  const Tensor I = kiln_test::mki({3, 0, -2, 5, 0, 1, 0, -7}, {2, 4}, kInt64);
  const Tensor BO = kiln_test::mki({1, 0, 0, 1, 1}, {5}, kBool);
  const Tensor V = kiln_test::mk({1.0, 2.0, 3.0}, {3}, kFloat32);
  CHECK_T(A.diff(), kFloat32, {3, 3}, {1.75, -1.0, 1.75, -1.0, 1.75, -1.0, 1.75, -1.0, -1.0});
  CHECK_T(A.diff(2), kFloat32, {3, 2}, {-2.75, 2.75, 2.75, -2.75, -2.75, 0.0});
  CHECK_T(A.diff(1, 0), kFloat32, {2, 4}, {1.5, -1.25, 1.5, -1.25, -1.25, 1.5, -1.25, -1.25});
  CHECK_T(A.diff(5), kFloat32, {3, 0}, {});
  CHECK_T(A.diff(0), kFloat32, {3, 4}, {-1.25, 0.5, -0.5, 1.25, 0.25, -0.75, 1.0, 0.0, -1.0, 0.75, -0.25, -1.25});
  CHECK_T(B.diff(1, 1, B.slice(1, 0, 1), B.slice(1, 2, 3)), kFloat32, {2, 4, 4}, {0.0, 0.0, 0.0, 0.0, 1.75, 1.75, -1.5, 1.75, -1.5, -1.5, 1.75, -1.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.5, 1.75, 1.75, -1.5, 1.75, -1.5, -1.5, 1.75, 0.0, 0.0, 0.0, 0.0});
  CHECK_T(I.diff(), kInt64, {2, 3}, {-3.0, -2.0, 7.0, 1.0, -1.0, -7.0});
  CHECK_T(BO.diff(), kBool, {4}, {1.0, 0.0, 1.0, 0.0});
  CHECK_T(V.diff(1, 0, kiln::tensor({10.0})), kFloat32, {3}, {-9.0, 1.0, 1.0});
  CHECK_T(logspace(0, 3, 4), kFloat32, {4}, {1.0, 10.0, 100.0, 1000.0});
  CHECK_T(logspace(-2, 2, 5, 2.0), kFloat32, {5}, {0.25, 0.5, 1.0, 2.0, 4.0});
  CHECK_T(logspace(0.1, 1.7, 9, 10.0, kFloat64), kFloat64, {9}, {1.2589254117941673, 1.9952623149688795, 3.1622776601683795, 5.011872336272722, 7.943282347242816, 12.589254117941675, 19.952623149688797, 31.622776601683793, 50.11872336272722});
  CHECK_T(logspace(0, 4, 5, 10.0, kInt64), kInt64, {5}, {1.0, 10.0, 100.0, 1000.0, 10000.0});
  CHECK_T(logspace(1, 2, 1), kFloat32, {1}, {10.0});
  CHECK_T(logspace(1, 2, 0), kFloat32, {0}, {});
  CHECK_T(std::get<0>(var_mean(A, {1})), kFloat32, {3}, {1.2083333730697632, 0.5208333134651184, 0.8072916865348816});
  CHECK_T(std::get<1>(var_mean(A, {1})), kFloat32, {3}, {0.0, 0.125, -0.4375});
  CHECK_T(std::get<0>(var_mean(B, {0, 2}, false, true)), kFloat32, {1, 3, 1}, {0.921875, 0.7568359375, 0.921875});
  CHECK_T(std::get<1>(var_mean(B, {0, 2}, false, true)), kFloat32, {1, 3, 1}, {-0.25, 0.28125, 0.0});
  CHECK_T(std::get<0>(var_mean(A)), kFloat32, {}, {0.7552083134651184});
  CHECK_T(std::get<1>(var_mean(A)), kFloat32, {}, {-0.1041666641831398});
  CHECK_T(std::get<0>(std_mean(A, {0})), kFloat32, {4}, {0.8036375641822815, 0.8036375641822815, 0.8036375641822815, 1.25});
  CHECK_T(std::get<1>(std_mean(A, {0})), kFloat32, {4}, {-0.6666666865348816, 0.1666666716337204, 0.0833333358168602, 0.0});
  CHECK_T(std::get<0>(std_mean(B, false)), kFloat32, {}, {0.9560093879699707});
  CHECK_T(std::get<1>(std_mean(B, false)), kFloat32, {}, {0.010416666977107525});
  CHECK_T(std::get<0>(A.aminmax()), kFloat32, {}, {-1.25});
  CHECK_T(std::get<1>(A.aminmax()), kFloat32, {}, {1.25});
  CHECK_T(std::get<0>(A.aminmax(1)), kFloat32, {3}, {-1.25, -0.75, -1.25});
  CHECK_T(std::get<1>(A.aminmax(1)), kFloat32, {3}, {1.25, 1.0, 0.75});
  CHECK_T(std::get<0>(B.aminmax(-1, true)), kFloat32, {2, 3, 1}, {-1.5, -0.5, -1.25, -1.5, -1.0, -1.25});
  CHECK_T(std::get<1>(B.aminmax(-1, true)), kFloat32, {2, 3, 1}, {1.0, 1.5, 1.25, 1.0, 1.5, 1.25});
  CHECK_T(std::get<0>(A.aminmax(std::nullopt, true)), kFloat32, {1, 1}, {-1.25});
  CHECK_T(std::get<1>(A.aminmax(std::nullopt, true)), kFloat32, {1, 1}, {1.25});
  CHECK_T(std::get<0>(kiln::aminmax(I, 0)), kInt64, {4}, {0.0, 0.0, -2.0, -7.0});
  CHECK_T(std::get<1>(kiln::aminmax(I, 0)), kInt64, {4}, {3.0, 1.0, 0.0, 5.0});
  CHECK_T(std::get<0>(N.aminmax(1)), kFloat32, {2}, {kNaN, kNaN});
  CHECK_T(std::get<1>(N.aminmax(1)), kFloat32, {2}, {kNaN, kNaN});
  CHECK_T(A.count_nonzero(), kInt64, {}, {11.0});
  CHECK_T(A.count_nonzero(1), kInt64, {3}, {4.0, 3.0, 4.0});
  CHECK_T(B.count_nonzero({0, 2}), kInt64, {3}, {8.0, 8.0, 6.0});
  CHECK_T(N.count_nonzero(0), kInt64, {4}, {2.0, 1.0, 2.0, 2.0});
  CHECK_T(BO.count_nonzero(), kInt64, {}, {3.0});
  CHECK_T(N.nansum(), kFloat32, {}, {kNaN});
  CHECK_T(N.nansum(1), kFloat32, {2}, {kInf, -kInf});
  CHECK_T(N.nansum(0, true), kFloat32, {1, 4}, {-kInf, 0.0, -2.0, kInf});
  CHECK_T(I.nansum(1), kInt64, {2}, {6.0, -6.0});
  CHECK_T(N.nanmean(), kFloat32, {}, {kNaN});
  CHECK_T(N.nanmean(1), kFloat32, {2}, {kInf, -kInf});
  CHECK_T(kiln::nanmean(kiln::full({2, 2}, kNaN), {0}), kFloat32, {2}, {kNaN, kNaN});
  CHECK_T(N.to(kFloat64).nanmean(0, true), kFloat64, {1, 4}, {-kInf, 0.0, -2.0, kInf});
  CHECK_T(N.nansum({}, false, kFloat64), kFloat64, {}, {kNaN});
}

TEST_CASE("autograd: hypot, logaddexp, xlogy, sinc, logit, nan_to_num, diff, nansum, nanmean: PyTorch's gradients") {
  {
    Tensor a = kiln_test::mk({-0.75, 0.0, 0.75, -0.25, 0.5}, {5}, kFloat32).requires_grad_();
    Tensor b = kiln_test::mk({-0.75, 0.5, -0.5, 0.75, -0.25}, {5}, kFloat32).requires_grad_();
    Tensor y = a.hypot(b);
    (y * arange(1.0, 6.0).reshape(y.sizes())).sum().backward();
    CHECK_T(a.grad(), kFloat32, {5}, {-0.7071068286895752, 0.0, 2.4961509704589844, -1.2649110555648804, 4.4721360206604}, 1e-5);
    CHECK_T(b.grad(), kFloat32, {5}, {-0.7071068286895752, 2.0, -1.6641006469726562, 3.7947330474853516, -2.2360680103302}, 1e-5);
  }
  {
    Tensor a = kiln_test::mk({-0.75, 0.0, 0.75, -0.25, 0.5}, {5}, kFloat32).requires_grad_();
    Tensor b = kiln_test::mk({-0.75, 0.5, -0.5, 0.75, -0.25}, {5}, kFloat32).requires_grad_();
    Tensor y = a.logaddexp(b);
    (y * arange(1.0, 6.0).reshape(y.sizes())).sum().backward();
    CHECK_T(a.grad(), kFloat32, {5}, {0.5, 0.7550813555717468, 2.331899642944336, 1.0757657289505005, 3.3958933353424072}, 1e-5);
    CHECK_T(b.grad(), kFloat32, {5}, {0.5, 1.244918704032898, 0.6681004166603088, 2.924234390258789, 1.6041064262390137}, 1e-5);
  }
  {
    Tensor a = kiln_test::mk({-0.75, 0.0, 0.75, -0.25, 0.5}, {5}, kFloat32).requires_grad_();
    Tensor b = kiln_test::mk({-0.75, 0.5, -0.5, 0.75, -0.25}, {5}, kFloat32).requires_grad_();
    Tensor y = a.logaddexp2(b);
    (y * arange(1.0, 6.0).reshape(y.sizes())).sum().backward();
    CHECK_T(a.grad(), kFloat32, {5}, {0.5, 0.8284270763397217, 2.1120095252990723, 1.3333333730697632, 3.135575532913208}, 1e-5);
    CHECK_T(b.grad(), kFloat32, {5}, {0.5, 1.1715728044509888, 0.8879905939102173, 2.6666667461395264, 1.864424467086792}, 1e-5);
  }
  {
    Tensor a = kiln_test::mk({-0.75, 0.0, 0.75, -0.25, 0.5}, {5}, kFloat32).requires_grad_();
    Tensor b = kiln_test::mk({-0.75, 0.5, -0.5, 0.75, -0.25}, {5}, kFloat32).requires_grad_();
    Tensor y = a.xlogy(b.abs() + 0.5);
    (y * arange(1.0, 6.0).reshape(y.sizes())).sum().backward();
    CHECK_T(a.grad(), kFloat32, {5}, {0.2231435477733612, 0.0, 0.0, 0.8925741910934448, -1.4384104013442993}, 1e-5);
    CHECK_T(b.grad(), kFloat32, {5}, {0.6000000238418579, 0.0, -2.25, -0.800000011920929, -3.3333332538604736}, 1e-5);
  }
  {
    Tensor a = kiln_test::mk({-0.75, 0.0, 0.75, -0.25, 0.5}, {5}, kFloat32).requires_grad_();
    Tensor y = a.sinc();
    (y * arange(1.0, 6.0).reshape(y.sizes())).sum().backward();
    CHECK_T(a.grad(), kFloat32, {5}, {1.3429495096206665, 0.0, -4.028848648071289, 3.0913519859313965, -6.3661980628967285}, 1e-5);
  }
  {
    Tensor a = kiln_test::mk({-0.75, 0.0, 0.75, -0.25, 0.5}, {5}, kFloat32).requires_grad_();
    Tensor y = (a.abs() * 0.3 + 0.05).logit();
    (y * arange(1.0, 6.0).reshape(y.sizes())).sum().backward();
    CHECK_T(a.grad(), kFloat32, {5}, {-1.5047023296356201, 0.0, 4.514106750488281, -10.971429824829102, 9.375}, 1e-5);
  }
  {
    Tensor a = kiln_test::mk({-0.75, 0.0, 0.75, -0.25, 0.5}, {5}, kFloat32).requires_grad_();
    Tensor y = a.nan_to_num();
    (y * arange(1.0, 6.0).reshape(y.sizes())).sum().backward();
    CHECK_T(a.grad(), kFloat32, {5}, {1.0, 2.0, 3.0, 4.0, 5.0}, 1e-5);
  }
  {
    Tensor a = kiln_test::mk({-0.75, 0.0, 0.75, -0.25, 0.5, -0.5, 0.25, -0.75}, {2, 4}, kFloat32).requires_grad_();
    Tensor y = a.diff(2, 1);
    (y * arange(1.0, 5.0).reshape(y.sizes())).sum().backward();
    CHECK_T(a.grad(), kFloat32, {2, 4}, {1.0, 0.0, -3.0, 2.0, 3.0, -2.0, -5.0, 4.0}, 1e-5);
  }
  {
    Tensor a = kiln_test::mk({-0.75, 0.0, 0.75, -0.25, 0.5, -0.5, 0.25, -0.75}, {2, 4}, kFloat32).requires_grad_();
    Tensor y = a.nansum(1);
    (y * arange(1.0, 3.0).reshape(y.sizes())).sum().backward();
    CHECK_T(a.grad(), kFloat32, {2, 4}, {1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0}, 1e-5);
  }
  {
    Tensor a = kiln_test::mk({-0.75, 0.0, 0.75, -0.25, 0.5, -0.5, 0.25, -0.75}, {2, 4}, kFloat32).requires_grad_();
    Tensor y = a.nanmean(0);
    (y * arange(1.0, 5.0).reshape(y.sizes())).sum().backward();
    CHECK_T(a.grad(), kFloat32, {2, 4}, {0.5, 1.0, 1.5, 2.0, 0.5, 1.0, 1.5, 2.0}, 1e-5);
  }
  {
    Tensor a = kiln_test::mk({-0.75, 0.0, 0.75, -0.25, 0.5}, {5}, kFloat32).requires_grad_();
    Tensor y = a.deg2rad();
    (y * arange(1.0, 6.0).reshape(y.sizes())).sum().backward();
    CHECK_T(a.grad(), kFloat32, {5}, {0.01745329238474369, 0.03490658476948738, 0.05235987901687622, 0.06981316953897476, 0.0872664600610733}, 1e-5);
  }
  {
    Tensor a = kiln_test::mk({-0.75, 0.0, 0.75, -0.25, 0.5}, {5}, kFloat32).requires_grad_();
    Tensor b = kiln_test::mk({-0.75, 0.5, -0.5, 0.75, -0.25}, {5}, kFloat32).requires_grad_();
    Tensor y = a.float_power(b);
    (y * arange(1.0, 6.0).reshape(y.sizes())).sum().backward();
    CHECK_T(a.grad(), kFloat32, {5}, {kNaN, kInf, -2.309401035308838, kNaN, -2.973017692565918}, 1e-5);
    CHECK_T(b.grad(), kFloat32, {5}, {kNaN, 0.0, -0.9965599179267883, kNaN, -4.1214776039123535}, 1e-5);
  }
}

TEST_CASE("jit: addmm's bias and scaling fuse after the BLAS call, hypot / logaddexp / nansum chains are one kernel") {
  manual_seed(11);
  const Tensor x = randn({64, 48}), w = randn({48, 40}), b = randn({40});
  kiln::eval(x, w, b);
  const Tensor y = b.addmm(x, w, 0.5, 2).relu();
  CHECK(kiln_test::kernels(y) == 2);  // the BLAS call (K = 48), then one kernel for the rest
  // (values: the PyTorch ones above; here the same formula spelled out)
  CHECK(y.allclose((x.mm(w) * 2 + b * 0.5).relu(), 1e-6, 1e-6));
  const Tensor a = randn({33, 17}), c = randn({33, 17});
  kiln::eval(a, c);
  const Tensor z = a.hypot(c) + a.logaddexp(c) * a.sinc() + where(a > 1, kNaN, c).nansum(1, true);
  CHECK(kiln_test::kernels(z) == 1);
  kiln_test::check_jit_close(z, 1e-5);
  auto [v, m] = var_mean(a, {1});
  kiln_test::check_jit(v);
  kiln_test::check_jit(m);
}

// The math ops PyTorch users reach for beyond the basic ones: floor, ceil,
// round (half to even, with decimals), trunc, frac, sign, log1p, expm1 and
// erf (primitive ops: core/op.h), and the activations built on them
// (core/composite.cpp): gelu (erf and tanh forms), softplus, elu / selu /
// celu, mish, hardsigmoid, hardswish; isclose / allclose / equal, isnan /
// isinf / isfinite and the logical ops. Expected values, dtypes, grad_fn names
// and gradients were printed by a script run with /usr/bin/python3 (torch
// 1.13) and pasted in; values compare at check_values' ulp-level tolerance.
// The float32 functions' ulp bounds against libm are in test_llvm_backend.cpp.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "tests/check_values.h"
#include "tests/jit_checks.h"

using namespace kiln;
using kiln_test::kInf;
using kiln_test::kNaN;

namespace {
bool neg_zero(const Tensor& t, int64_t i) {
  const double v = t.to_vector<double>()[static_cast<size_t>(i)];
  return v == 0 && std::signbit(v);
}
}  // namespace

TEST_CASE("ops: floor, ceil, round, trunc, frac and sign of floats: half to even, NaN and -0 as PyTorch") {
  for (DType d : {kFloat32, kFloat64}) {
    CAPTURE(dtype_name(d));
    const Tensor v = tensor(std::vector<double>{-0.0, 0.0, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.4999999701976776, -3.700000047683716, 3.700000047683716, 8388609.0, kNaN, kInf, -kInf}, d);
    CHECK_T(v.floor(), d, {15}, {-0.0, 0.0, -3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 0.0, -4.0, 3.0, 8388609.0, kNaN, kInf, -kInf}, 0);
    CHECK_T(v.ceil(), d, {15}, {-0.0, 0.0, -2.0, -1.0, -0.0, 1.0, 2.0, 3.0, 1.0, -3.0, 4.0, 8388609.0, kNaN, kInf, -kInf}, 0);
    CHECK_T(v.round(), d, {15}, {-0.0, 0.0, -2.0, -2.0, -0.0, 0.0, 2.0, 2.0, 0.0, -4.0, 4.0, 8388609.0, kNaN, kInf, -kInf}, 0);
    CHECK_T(v.trunc(), d, {15}, {-0.0, 0.0, -2.0, -1.0, -0.0, 0.0, 1.0, 2.0, 0.0, -3.0, 3.0, 8388609.0, kNaN, kInf, -kInf}, 0);
    CHECK_T(v.sign(), d, {15}, {0.0, 0.0, -1.0, -1.0, -1.0, 1.0, 1.0, 1.0, 1.0, -1.0, 1.0, 1.0, 0.0, 1.0, -1.0}, 0);
    CHECK_T(v.frac(), d, {15}, {0.0, 0.0, -0.5, -0.5, -0.5, 0.5, 0.5, 0.5, 0.4999999701976776, -0.7000000476837158, 0.7000000476837158, 0.0, kNaN, kNaN, kNaN}, 0);
    // -0 stays -0 through floor / ceil / round / trunc (and -0.5 rounds to it); sign gives +0
    CHECK(neg_zero(v.floor(), 0));
    CHECK(neg_zero(v.ceil(), 4));
    CHECK(neg_zero(v.round(), 4));
    CHECK(neg_zero(v.trunc(), 0));
    CHECK(!neg_zero(v.sign(), 0));
  }
  // float16 / bfloat16 keep their dtype; the results are exact there too
  CHECK_T(tensor(std::vector<double>{-2.5, 0.5, 1.5, 3.75}, kFloat16).round(), kFloat16, {4}, {-2, 0, 2, 4}, 0);
  CHECK_T(tensor(std::vector<double>{-2.5, 0.5, 1.5, 3.75}, kBFloat16).floor(), kBFloat16, {4}, {-3, 0, 1, 3}, 0);
  // the functional forms
  CHECK_T(kiln::floor(tensor(std::vector<double>{-0.5, 0.5})), kFloat32, {2}, {-1, 0}, 0);
  CHECK_T(kiln::round(tensor(std::vector<double>{0.5, 1.5})), kFloat32, {2}, {0, 2}, 0);
  CHECK_T(kiln::sign(tensor(std::vector<double>{-0.5, 0.5})), kFloat32, {2}, {-1, 1}, 0);
}

TEST_CASE("ops: rounding ops copy integers, sign keeps the dtype, and their gradients are zero") {
  const Tensor i = tensor(std::vector<int64_t>{-3, 0, 5});
  CHECK_T(i.floor(), kInt64, {3}, {-3, 0, 5});
  CHECK_T(i.ceil(), kInt64, {3}, {-3, 0, 5});
  CHECK_T(i.round(), kInt64, {3}, {-3, 0, 5});
  CHECK_T(i.trunc(), kInt64, {3}, {-3, 0, 5});
  CHECK_T(i.sign(), kInt64, {3}, {-1, 0, 1});
  Tensor c = i.floor();  // a copy, not an alias: writing it leaves i alone
  c.add_(1);
  CHECK_T(i, kInt64, {3}, {-3, 0, 5});
  CHECK_T(tensor(std::vector<bool>{true, false}).sign(), kBool, {2}, {1, 0});
  CHECK_T(tensor(std::vector<int64_t>{-7, 7}, kInt32).sign(), kInt32, {2}, {-1, 1});
  // flat steps: zero gradients, under PyTorch's grad_fn names
  using Step = std::pair<const char*, std::function<Tensor(const Tensor&)>>;
  const Step steps[] = {{"FloorBackward0", [](const Tensor& t) { return t.floor(); }},
                        {"CeilBackward0", [](const Tensor& t) { return t.ceil(); }},
                        {"RoundBackward0", [](const Tensor& t) { return t.round(); }},
                        {"TruncBackward0", [](const Tensor& t) { return t.trunc(); }},
                        {"SignBackward0", [](const Tensor& t) { return t.sign(); }}};
  for (const auto& [name, f] : steps) {
    CAPTURE(name);
    Tensor x = tensor(std::vector<double>{-1.5, 0.3, 2.0}).requires_grad_();
    Tensor y = f(x);
    CHECK(y.grad_fn()->name() == std::string(name));
    y.sum().backward();
    CHECK_T(x.grad(), kFloat32, {3}, {0, 0, 0}, 0);
  }
}

TEST_CASE("ops: round with decimals scales by 10^d as PyTorch") {
  const Tensor x = tensor(std::vector<double>{1234.5677490234375, -0.125, 0.125, 2.674999952316284, -0.0010000000474974513});
  CHECK_T(x.round(2), kFloat32, {5}, {1234.5699462890625, -0.11999999731779099, 0.11999999731779099, 2.680000066757202, -0.0}, 0);
  CHECK_T(x.round(1), kFloat32, {5}, {1234.5999755859375, -0.10000000149011612, 0.10000000149011612, 2.700000047683716, -0.0}, 0);
  CHECK_T(x.round(-1), kFloat32, {5}, {1230.0, -0.0, 0.0, 0.0, -0.0}, 0);
  CHECK_T(x.round(-2), kFloat32, {5}, {1200.0, -0.0, 0.0, 0.0, -0.0}, 0);
  CHECK_T(x.round(3), kFloat32, {5}, {1234.5679931640625, -0.125, 0.125, 2.674999952316284, -0.0010000000474974513}, 0);
  CHECK_T(x.to(kFloat64).round(2), kFloat64, {5}, {1234.57, -0.12, 0.12, 2.67, -0.0}, 0);
  CHECK_T(kiln::round(x, -1), kFloat32, {5}, {1230.0, -0.0, 0.0, 0.0, -0.0}, 0);
}

TEST_CASE("ops: log1p, expm1 and erf: PyTorch's values in float32 and float64, integers promote") {
  {
    const Tensor x = tensor(std::vector<double>{-0.9999999403953552, -0.5, -1.000000013351432e-10, -0.0, 0.0, 1.000000013351432e-10, 9.999999747378752e-06, 0.30000001192092896, 1.0, 2.5, 10.0, 88.0, 89.0, -30.0, 3.9000000953674316, 3.950000047683716, 4.5, -4.5, -1.0, -2.0}, kFloat32);
    CHECK_T(x.log1p(), kFloat32, {20}, {-16.63553237915039, -0.6931471824645996, -1.000000013351432e-10, -0.0, 0.0, 1.000000013351432e-10, 9.999949725170154e-06, 0.2623642683029175, 0.6931471824645996, 1.2527629137039185, 2.397895336151123, 4.488636493682861, 4.499809741973877, kNaN, 1.5892351865768433, 1.5993876457214355, 1.7047480344772339, kNaN, -kInf, kNaN});
    CHECK_T(x.expm1(), kFloat32, {20}, {-0.6321205496788025, -0.39346933364868164, -1.000000013351432e-10, -0.0, 0.0, 1.000000013351432e-10, 1.0000049769587349e-05, 0.349858820438385, 1.718281865119934, 11.182494163513184, 22025.46484375, 1.6516362661361307e+38, kInf, -1.0, 48.4024543762207, 50.935367584228516, 89.01712799072266, -0.9888910055160522, -0.6321205496788025, -0.8646647334098816});
    CHECK_T(x.erf(), kFloat32, {20}, {-0.8427007794380188, -0.5204998850822449, -1.1283791956362421e-10, -0.0, 0.0, 1.1283791956362421e-10, 1.1283791536698118e-05, 0.3286267817020416, 0.8427007794380188, 0.9995930194854736, 1.0, 1.0, 1.0, -1.0, 0.9999999403953552, 1.0, 1.0, -1.0, -0.8427007794380188, -0.9953222870826721});
    // through a strided read the loop stays scalar: the same values from the scalar twins
    CHECK_T(x.reshape({10, 2}).t().log1p().t().reshape({20}), kFloat32, {20}, {-16.63553237915039, -0.6931471824645996, -1.000000013351432e-10, -0.0, 0.0, 1.000000013351432e-10, 9.999949725170154e-06, 0.2623642683029175, 0.6931471824645996, 1.2527629137039185, 2.397895336151123, 4.488636493682861, 4.499809741973877, kNaN, 1.5892351865768433, 1.5993876457214355, 1.7047480344772339, kNaN, -kInf, kNaN});
    CHECK_T(x.reshape({10, 2}).t().expm1().t().reshape({20}), kFloat32, {20}, {-0.6321205496788025, -0.39346933364868164, -1.000000013351432e-10, -0.0, 0.0, 1.000000013351432e-10, 1.0000049769587349e-05, 0.349858820438385, 1.718281865119934, 11.182494163513184, 22025.46484375, 1.6516362661361307e+38, kInf, -1.0, 48.4024543762207, 50.935367584228516, 89.01712799072266, -0.9888910055160522, -0.6321205496788025, -0.8646647334098816});
    CHECK_T(x.reshape({10, 2}).t().erf().t().reshape({20}), kFloat32, {20}, {-0.8427007794380188, -0.5204998850822449, -1.1283791956362421e-10, -0.0, 0.0, 1.1283791956362421e-10, 1.1283791536698118e-05, 0.3286267817020416, 0.8427007794380188, 0.9995930194854736, 1.0, 1.0, 1.0, -1.0, 0.9999999403953552, 1.0, 1.0, -1.0, -0.8427007794380188, -0.9953222870826721});
    CHECK(neg_zero(x.log1p(), 3));
    CHECK(neg_zero(x.expm1(), 3));
    CHECK(neg_zero(x.erf(), 3));
  }
  {
    const Tensor x = tensor(std::vector<double>{-0.99999994, -0.5, -1e-10, -0.0, 0.0, 1e-10, 1e-05, 0.3, 1.0, 2.5, 10.0, 88.0, 89.0, -30.0, 3.9, 3.95, 4.5, -4.5, -1.0, -2.0}, kFloat64);
    CHECK_T(x.log1p(), kFloat64, {20}, {-16.628921275250665, -0.6931471805599453, -1.00000000005e-10, -0.0, 0.0, 9.999999999500001e-11, 9.999950000333332e-06, 0.26236426446749106, 0.6931471805599453, 1.252762968495368, 2.3978952727983707, 4.48863636973214, 4.499809670330265, kNaN, 1.589235205116581, 1.599387576580599, 1.7047480922384253, kNaN, -kInf, kNaN});
    CHECK_T(x.expm1(), kFloat64, {20}, {-0.6321205367557906, -0.3934693402873666, -9.999999999500001e-11, -0.0, 0.0, 1.00000000005e-10, 1.0000050000166668e-05, 0.3498588075760031, 1.7182818284590453, 11.182493960703473, 22025.465794806718, 1.6516362549940018e+38, 4.4896128191743455e+38, -0.9999999999999064, 48.40244910553017, 50.93536683483144, 89.01713130052181, -0.9888910034617577, -0.6321205588285577, -0.8646647167633873});
    CHECK_T(x.erf(), kFloat64, {20}, {-0.8427007680432635, -0.5204998778130465, -1.1283791670955126e-10, -0.0, 0.0, 1.1283791670955126e-10, 1.1283791670579e-05, 0.3286267594591274, 0.8427007929497149, 0.999593047982555, 1.0, 1.0, 1.0, -1.0, 0.9999999652077514, 0.9999999767832678, 0.9999999998033839, -0.9999999998033839, -0.8427007929497149, -0.9953222650189527});
    // through a strided read the loop stays scalar: the same values from the scalar twins
    CHECK_T(x.reshape({10, 2}).t().log1p().t().reshape({20}), kFloat64, {20}, {-16.628921275250665, -0.6931471805599453, -1.00000000005e-10, -0.0, 0.0, 9.999999999500001e-11, 9.999950000333332e-06, 0.26236426446749106, 0.6931471805599453, 1.252762968495368, 2.3978952727983707, 4.48863636973214, 4.499809670330265, kNaN, 1.589235205116581, 1.599387576580599, 1.7047480922384253, kNaN, -kInf, kNaN});
    CHECK_T(x.reshape({10, 2}).t().expm1().t().reshape({20}), kFloat64, {20}, {-0.6321205367557906, -0.3934693402873666, -9.999999999500001e-11, -0.0, 0.0, 1.00000000005e-10, 1.0000050000166668e-05, 0.3498588075760031, 1.7182818284590453, 11.182493960703473, 22025.465794806718, 1.6516362549940018e+38, 4.4896128191743455e+38, -0.9999999999999064, 48.40244910553017, 50.93536683483144, 89.01713130052181, -0.9888910034617577, -0.6321205588285577, -0.8646647167633873});
    CHECK_T(x.reshape({10, 2}).t().erf().t().reshape({20}), kFloat64, {20}, {-0.8427007680432635, -0.5204998778130465, -1.1283791670955126e-10, -0.0, 0.0, 1.1283791670955126e-10, 1.1283791670579e-05, 0.3286267594591274, 0.8427007929497149, 0.999593047982555, 1.0, 1.0, 1.0, -1.0, 0.9999999652077514, 0.9999999767832678, 0.9999999998033839, -0.9999999998033839, -0.8427007929497149, -0.9953222650189527});
    CHECK(neg_zero(x.log1p(), 3));
    CHECK(neg_zero(x.expm1(), 3));
    CHECK(neg_zero(x.erf(), 3));
  }
  const Tensor i = tensor(std::vector<int64_t>{-3, 0, 5});
  const Tensor b = tensor(std::vector<bool>{true, false});
  CHECK_T(log1p(i), kFloat32, {3}, {kNaN, 0.0, 1.7917594909667969});
  CHECK_T(log1p(b), kFloat32, {2}, {0.6931471824645996, 0.0});
  CHECK_T(expm1(i), kFloat32, {3}, {-0.9502129554748535, 0.0, 147.4131622314453});
  CHECK_T(expm1(b), kFloat32, {2}, {1.718281865119934, 0.0});
  CHECK_T(erf(i), kFloat32, {3}, {-0.9999778866767883, 0.0, 1.0});
  CHECK_T(erf(b), kFloat32, {2}, {0.8427007794380188, 0.0});
  // gradients: 1 / (1 + x), e^x, 2 / sqrt(pi) e^(-x^2)
  struct Grad {
    const char* name;
    std::function<Tensor(const Tensor&)> f;
    std::vector<double> want;  // the gradient of sum(f(g) * [1, 2, 3, 4, 5])
  };
  const Grad grads[] = {{"Log1PBackward0", [](const Tensor& t) { return t.log1p(); }, {2.0, 2.0, 2.307692289352417, 1.1428571939468384, -2.5}},
                        {"Expm1Backward0", [](const Tensor& t) { return t.expm1(); }, {0.6065306663513184, 2.0, 4.049576282501221, 48.729976654052734, 0.24893522262573242}},
                        {"ErfBackward0", [](const Tensor& t) { return t.erf(); }, {0.8787826299667358, 2.256758451461792, 3.093782901763916, 0.008713137358427048, 0.0006962652551010251}}};
  for (const Grad& gr : grads) {
    CAPTURE(gr.name);
    Tensor g = tensor(std::vector<double>{-0.5, 0.0, 0.30000001192092896, 2.5, -3.0}).requires_grad_();
    Tensor y = gr.f(g);
    CHECK(y.grad_fn()->name() == std::string(gr.name));
    (y * arange(1.0, 6.0)).sum().backward();
    CHECK_T(g.grad(), kFloat32, {5}, gr.want);
  }
}

TEST_CASE("ops: gelu, softplus, elu, selu, celu, mish, hardsigmoid, hardswish and their gradients") {
  // the joins of the piecewise ones (-3, 0, 3) and softplus's threshold included
  const Tensor x = tensor(std::vector<double>{-4.0, -3.0, -2.5, -1.0, -0.5, 0.0, 0.5, 1.0, 2.5, 3.0, 4.0, 25.0});
  const Tensor w = arange(1.0, 13.0);
  struct Act {
    const char* call;
    std::function<Tensor(const Tensor&)> f;
    std::vector<double> y, grad;  // values, and the gradient of sum(y * w)
  };
  const Act acts[] = {
      {"gelu(a)", [](const Tensor& a) { return gelu(a); },
       {-0.00012671947479248047, -0.004049867391586304, -0.015524178743362427, -0.1586552858352661, -0.1542687863111496, 0.0, 0.3457311987876892, 0.8413447141647339, 2.48447585105896, 2.995950222015381, 3.999873161315918, 25.0},
       {-0.0005036294460296631, -0.023891210556030273, -0.11283320188522339, -0.33326172828674316, 0.6625245809555054, 3.0, 6.072465419769287, 8.666522979736328, 9.338499069213867, 10.11945629119873, 11.005539894104004, 12.0}},
      {"gelu(a, \"tanh\")", [](const Tensor& a) { return gelu(a, "tanh"); },
       {-7.021427154541016e-05, -0.0036374330520629883, -0.015084296464920044, -0.15880799293518066, -0.1542859971523285, 0.0, 0.3457140028476715, 0.8411920070648193, 2.4849157333374023, 2.9963626861572266, 3.999929904937744, 25.0},
       {-0.00033497207914479077, -0.023168593645095825, -0.11385495960712433, -0.331856369972229, 0.6631505489349365, 3.0, 6.071589469909668, 8.663712501525879, 9.341565132141113, 10.115842819213867, 11.003684997558594, 12.0}},
      {"softplus(a)", [](const Tensor& a) { return softplus(a); },
       {0.018149929121136665, 0.04858735203742981, 0.07888973504304886, 0.3132616877555847, 0.4740769863128662, 0.6931471824645996, 0.9740769863128662, 1.31326162815094, 2.578889846801758, 3.0485873222351074, 4.0181498527526855, 25.0},
       {0.01798621006309986, 0.09485174715518951, 0.22757454216480255, 1.0757657289505005, 1.8877032995224, 3.0, 4.35721492767334, 5.848468780517578, 8.317276000976562, 9.525741577148438, 10.802151679992676, 12.0}},
      {"softplus(a, 2, 5)", [](const Tensor& a) { return softplus(a, 2, 5); },
       {0.00016770318325143307, 0.0012378426035866141, 0.003357674228027463, 0.06346400082111359, 0.15663084387779236, 0.3465735912322998, 0.65663081407547, 1.0634640455245972, 2.5033576488494873, 3.0, 4.0, 25.0},
       {0.00033535013790242374, 0.0049452465027570724, 0.02007855288684368, 0.4768116772174835, 1.3447071313858032, 3.0, 5.117410182952881, 7.046376705169678, 8.939764976501465, 10.0, 11.0, 12.0}},
      {"elu(a)", [](const Tensor& a) { return elu(a); },
       {-0.9816843867301941, -0.9502129554748535, -0.9179149866104126, -0.6321205496788025, -0.39346933364868164, 0.0, 0.5, 1.0, 2.5, 3.0, 4.0, 25.0},
       {0.018315639346837997, 0.09957413375377655, 0.24625499546527863, 1.47151780128479, 3.032653331756592, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0}},
      {"elu(a, 0.5)", [](const Tensor& a) { return elu(a, 0.5); },
       {-0.49084219336509705, -0.47510647773742676, -0.4589574933052063, -0.31606027483940125, -0.19673466682434082, 0.0, 0.5, 1.0, 2.5, 3.0, 4.0, 25.0},
       {0.009157819673418999, 0.049787066876888275, 0.12312749773263931, 0.735758900642395, 1.516326665878296, 3.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0}},
      {"selu(a)", [](const Tensor& a) { return selu(a); },
       {-1.7258986234664917, -1.6705687046051025, -1.613785743713379, -1.1113307476043701, -0.6917581558227539, 0.0, 0.5253505110740662, 1.0507010221481323, 2.6267526149749756, 3.1521029472351074, 4.202804088592529, 26.26752471923828},
       {0.03220071271061897, 0.1750612109899521, 0.4329407215118408, 2.5870745182037354, 5.3317060470581055, 10.548595428466797, 7.354907035827637, 8.405608177185059, 9.45630931854248, 10.507010459899902, 11.557711601257324, 12.60841178894043}},
      {"celu(a, 2)", [](const Tensor& a) { return celu(a, 2); },
       {-1.7293294668197632, -1.5537396669387817, -1.4269903898239136, -0.7869386672973633, -0.44239842891693115, 0.0, 0.5, 1.0, 2.5, 3.0, 4.0, 25.0},
       {0.1353352814912796, 0.44626033306121826, 0.8595144152641296, 2.4261226654052734, 3.8940038681030273, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0}},
      {"mish(a)", [](const Tensor& a) { return mish(a); },
       {-0.07259175181388855, -0.14564746618270874, -0.19681619107723236, -0.3034014403820038, -0.22074376046657562, 0.0, 0.37524524331092834, 0.8650983572006226, 2.4713923931121826, 2.98653507232666, 3.997412919998169, 25.0},
       {-0.05377320572733879, -0.1867862492799759, -0.3292306959629059, 0.23686692118644714, 1.4475531578063965, 3.6000001430511475, 6.204970836639404, 8.392290115356445, 9.370166778564453, 10.211069107055664, 11.048759460449219, 12.0}},
      {"hardsigmoid(a)", [](const Tensor& a) { return hardsigmoid(a); },
       {0.0, 0.0, 0.0833333358168602, 0.3333333432674408, 0.4166666567325592, 0.5, 0.5833333134651184, 0.6666666865348816, 0.9166666865348816, 1.0, 1.0, 1.0},
       {0.0, 0.0, 0.5, 0.6666666865348816, 0.8333333730697632, 1.0, 1.1666667461395264, 1.3333333730697632, 1.5, 0.0, 0.0, 0.0}},
      {"hardswish(a)", [](const Tensor& a) { return hardswish(a); },
       {-0.0, -0.0, -0.2083333283662796, -0.3333333432674408, -0.2083333283662796, 0.0, 0.2916666567325592, 0.6666666865348816, 2.2916667461395264, 3.0, 4.0, 25.0},
       {0.0, -1.0, -0.9999999403953552, 0.6666666269302368, 1.6666665077209473, 3.0, 4.6666669845581055, 6.6666669845581055, 11.999999046325684, 15.0, 11.0, 12.0}},
  };
  for (const Act& act : acts) {
    INFO(act.call);
    Tensor a = x.clone().requires_grad_();
    Tensor y = act.f(a);
    CHECK_T(y, kFloat32, {12}, act.y);
    (y * w).sum().backward();
    CHECK_T(a.grad(), kFloat32, {12}, act.grad);
  }
  // float64 keeps its dtype
  CHECK_T(gelu(x.to(kFloat64)), kFloat64, {12}, {-0.00012668496733247991, -0.00404969409489031, -0.015524163314440398, -0.15865525393145702, -0.15426876936299344, 0.0, 0.34573123063700656, 0.841344746068543, 2.4844758366855597, 2.99595030590511, 3.9998733150326675, 25.0});
  CHECK(hardswish(x)[0].item<double>() == 0.0);
  CHECK(neg_zero(hardswish(x), 0));  // x * 0 below -3, as PyTorch
}

TEST_CASE("ops: isclose, allclose, equal, isnan / isinf / isfinite and the logical ops as PyTorch") {
  const Tensor a = tensor({1.0, kNaN, kInf, -kInf, 0.0, 1e-9, 2.0, 100.0}, kFloat32);
  const Tensor b = tensor({1.0 + 1e-6, kNaN, kInf, kInf, 1e-9, 0.0, 2.1, 100.001}, kFloat32);
  // values printed by torch 1.13
  CHECK_T(a.isclose(b), kBool, {8}, {1, 0, 1, 0, 1, 1, 0, 1});
  CHECK_T(a.isclose(b, 1e-5, 1e-8, true), kBool, {8}, {1, 1, 1, 0, 1, 1, 0, 1});
  CHECK_T(a.isclose(b, 0.1, 0.0), kBool, {8}, {1, 0, 1, 0, 0, 0, 1, 1});
  CHECK_T(a.isnan(), kBool, {8}, {0, 1, 0, 0, 0, 0, 0, 0});
  CHECK_T(a.isinf(), kBool, {8}, {0, 0, 1, 1, 0, 0, 0, 0});
  CHECK_T(a.isfinite(), kBool, {8}, {1, 0, 0, 0, 1, 1, 1, 1});
  CHECK_T(tensor({1, 2}).isinf(), kBool, {2}, {0, 0});
  CHECK(!a.allclose(b));
  CHECK(!a.allclose(b, 1e-5, 1e-8, true));
  CHECK(a.narrow(0, 4, 2).allclose(b.narrow(0, 4, 2)));
  CHECK(tensor({1, 2}).equal(tensor({1, 2})));
  CHECK(!tensor({1, 2}).equal(tensor({1, 3})));
  CHECK(!tensor({1, 2}).equal(tensor({1, 2, 3})));
  CHECK_T(tensor({1, 5}).isclose(tensor({1, 6}), 0.1, 0), kBool, {2}, {1, 0});
  const Tensor x = tensor({0, 3, -1, 0});
  const Tensor y = tensor({0.0, 0.0, 2.5, kNaN}, kFloat32);
  CHECK_T(x.logical_and(y), kBool, {4}, {0, 0, 1, 0});
  CHECK_T(x.logical_or(y), kBool, {4}, {0, 1, 1, 1});
  CHECK_T(x.logical_xor(y), kBool, {4}, {0, 1, 0, 1});
}

TEST_CASE("ops: fmod, remainder, div with rounding_mode and floor_divide: signs, zeros, infinities, integers, gradients") {
  const Tensor a = tensor({7.5, -7.5, 7.5, -7.5, 0.0, -0.0, 5.0, 1e30, kInf, 3.0, -3.0}, kFloat32);
  const Tensor b = tensor({2.0, 2.0, -2.0, -2.0, 3.0, 3.0, 0.0, 3.0, 2.0, kInf, kInf}, kFloat32);
  // values printed by torch 1.13
  CHECK_T(a.fmod(b), kFloat32, {11}, {1.5, -1.5, 1.5, -1.5, 0.0, -0.0, kNaN, 0.0, kNaN, 3.0, -3.0});
  CHECK_T(a.remainder(b), kFloat32, {11}, {1.5, 0.5, -0.5, -1.5, 0.0, -0.0, kNaN, 0.0, kNaN, 3.0, kInf});
  CHECK_T(a.div(b, "trunc"), kFloat32, {11}, {3.0, -3.0, -3.0, 3.0, 0.0, -0.0, kInf, 3.333333383491554e+29, kInf, 0.0, -0.0});
  CHECK_T(a.div(b, "floor"), kFloat32, {11}, {3.0, -4.0, -4.0, 3.0, 0.0, -0.0, kInf, 3.333333383491554e+29, kNaN, 0.0, -1.0});
  CHECK(neg_zero(a.fmod(b), 5));
  CHECK(neg_zero(a.div(b, "floor"), 5));
  CHECK(neg_zero(a.div(b, "trunc"), 10));
  const Tensor ai = tensor({7, -7, 7, -7, 0, -9, 9, 5});
  const Tensor bi = tensor({2, 2, -2, -2, 3, -1, 3, -1});
  CHECK_T(ai.fmod(bi), kInt64, {8}, {1, -1, 1, -1, 0, 0, 0, 0});
  CHECK_T(ai.remainder(bi), kInt64, {8}, {1, 1, -1, -1, 0, 0, 0, 0});
  CHECK_T(ai.div(bi, "trunc"), kInt64, {8}, {3, -3, -3, 3, 0, 9, 3, -5});
  CHECK_T(ai.floor_divide(bi), kInt64, {8}, {3, -4, -4, 3, 0, 9, 3, -5});
  CHECK_T(tensor({-7, 7}, kInt32).remainder(3), kInt32, {2}, {2, 1});
  CHECK_T(tensor({-7, 7}, kInt32).floor_divide(-2), kInt32, {2}, {3, -4});
  CHECK_T(tensor({200, 7}, kUInt8).floor_divide(tensor({3, 255}, kUInt8)), kUInt8, {2}, {66, 0});
  CHECK_T(tensor({200, 7}, kUInt8).remainder(tensor({3, 255}, kUInt8)), kUInt8, {2}, {2, 7});
  CHECK_T(tensor({5.5, -4.25}, kFloat32).remainder(-2), kFloat32, {2}, {-0.5, -0.25});
  CHECK_T(tensor({5, -4}).remainder(2.5), kFloat32, {2}, {0.0, 1.0});
  CHECK_T(tensor({5, -4}).fmod(2), kInt64, {2}, {1, 0});
  // INT64_MIN / -1 wraps (PyTorch's CPU kernel traps on it)
  CHECK_T(tensor({std::numeric_limits<int64_t>::min()}).div(tensor({int64_t{-1}}), "trunc"), kInt64, {1},
          {static_cast<double>(std::numeric_limits<int64_t>::min())});
  // gradients: fmod's divisor gets -g trunc(a / b), remainder's -g floor(a / b)
  Tensor x = tensor({5.5, -4.25, 3.0}, kFloat32).requires_grad_();
  Tensor y = tensor({2.0, 1.5, -2.0}, kFloat32).requires_grad_();
  const Tensor w = tensor({1.0, 2.0, 3.0}, kFloat32);
  (x.fmod(y) * w).sum().backward();
  CHECK_T(x.grad(), kFloat32, {3}, {1.0, 2.0, 3.0});
  CHECK_T(y.grad(), kFloat32, {3}, {-2.0, 4.0, 3.0});
  x.set_grad(Tensor());
  y.set_grad(Tensor());
  (x.remainder(y) * w).sum().backward();
  CHECK_T(x.grad(), kFloat32, {3}, {1.0, 2.0, 3.0});
  CHECK_T(y.grad(), kFloat32, {3}, {-2.0, 6.0, 6.0});
}

TEST_CASE("jit: fmod, remainder and the rounded divisions equal the reference bit for bit, one kernel each") {
  manual_seed(9);
  const Tensor x = randn({67, 45}) * 40, y = randn({67, 45}) * 6;
  for (DType dt : {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32}) {
    CAPTURE(dtype_name(dt));
    const Tensor a = x.to(dt);
    // integers: no zero divisor; -1 and negative ones included
    const Tensor b = is_floating_point(dt) ? y.to(dt) : where(y.abs() < 1, Scalar(-1), y).to(dt);
    kiln_test::check_jit(a.fmod(b));
    kiln_test::check_jit(a.remainder(b) * 2);
    kiln_test::check_jit(a.div(b, "trunc"));
    kiln_test::check_jit(a.floor_divide(b));
    kiln_test::check_jit(a.remainder(3));
    CHECK(kiln_test::kernels(a.floor_divide(b) + a.remainder(b)) == 1);
  }
}

// NaN, infinities and zero-size tensors through every op (the second half
// of the hostile-input tests; sizes are in test_hostile.cpp). Expected values
// are PyTorch 1.13's for float32 (the ulp-level tolerance of check_values);
// the other floating dtypes must give the same bits under the JIT (fused and
// unfused) as under the reference evaluator. "Never trapping": no op raises,
// crashes or (under UBSan, ./dev test-asan) executes undefined behaviour on
// these values: float-to-integer casts of NaN and infinities included, whose
// result C++ leaves undefined (kiln gives the x86 "integer indefinite" value,
// as PyTorch on x86 does).
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <sstream>
#include <vector>

#include "check_values.h"
#include "kiln/kiln.h"

using namespace kiln;
using kiln_test::kInf;
using kiln_test::kNaN;

namespace {

// Every op of the NaN/infinity table on v and w (and m = stack({v, w})).
void nan_inf_table(Evaluator e) {
  set_evaluator(e);
  const Tensor v = tensor({kNaN, kInf, -kInf, 0.0, -0.0, 1.0, -1.0, 2.5}, kFloat32);
  const Tensor w = tensor({1.0, kNaN, kInf, -kInf, 0.0, -0.0, 2.0, -1.0}, kFloat32);
  const Tensor m = stack({v, w});
  CHECK_T(v.exp(), kFloat32, {8}, {kNaN, kInf, 0.0, 1.0, 1.0, 2.7182817459106445, 0.3678794503211975, 12.182494163513184});
  CHECK_T(v.log(), kFloat32, {8}, {kNaN, kInf, kNaN, -kInf, -kInf, 0.0, kNaN, 0.9162907600402832});
  CHECK_T(v.sqrt(), kFloat32, {8}, {kNaN, kInf, kNaN, 0.0, -0.0, 1.0, kNaN, 1.5811388492584229});
  CHECK_T(v.rsqrt(), kFloat32, {8}, {kNaN, 0.0, kNaN, kInf, -kInf, 1.0, kNaN, 0.6324555277824402});
  CHECK_T(v.abs(), kFloat32, {8}, {kNaN, kInf, kInf, 0.0, 0.0, 1.0, 1.0, 2.5});
  CHECK_T(v.sin(), kFloat32, {8}, {kNaN, kNaN, kNaN, 0.0, -0.0, 0.8414709568023682, -0.8414709568023682, 0.5984721183776855});
  CHECK_T(v.cos(), kFloat32, {8}, {kNaN, kNaN, kNaN, 1.0, 1.0, 0.5403023362159729, 0.5403023362159729, -0.8011435866355896});
  CHECK_T(v.tanh(), kFloat32, {8}, {kNaN, 1.0, -1.0, 0.0, -0.0, 0.7615941762924194, -0.7615941762924194, 0.9866142868995667});
  CHECK_T(v.sigmoid(), kFloat32, {8}, {kNaN, 1.0, 0.0, 0.5, 0.5, 0.7310585975646973, 0.2689414322376251, 0.9241418242454529});
  CHECK_T(v.relu(), kFloat32, {8}, {kNaN, kInf, 0.0, 0.0, -0.0, 1.0, 0.0, 2.5});
  CHECK_T(v.log1p(), kFloat32, {8}, {kNaN, kInf, kNaN, 0.0, -0.0, 0.6931471824645996, -kInf, 1.2527629137039185});
  CHECK_T(v.expm1(), kFloat32, {8}, {kNaN, kInf, -1.0, 0.0, -0.0, 1.718281865119934, -0.6321205496788025, 11.182494163513184});
  CHECK_T(v.erf(), kFloat32, {8}, {kNaN, 1.0, -1.0, 0.0, -0.0, 0.8427007794380188, -0.8427007794380188, 0.9995930194854736});
  CHECK_T(v.floor(), kFloat32, {8}, {kNaN, kInf, -kInf, 0.0, -0.0, 1.0, -1.0, 2.0});
  CHECK_T(v.ceil(), kFloat32, {8}, {kNaN, kInf, -kInf, 0.0, -0.0, 1.0, -1.0, 3.0});
  CHECK_T(v.round(), kFloat32, {8}, {kNaN, kInf, -kInf, 0.0, -0.0, 1.0, -1.0, 2.0});
  CHECK_T(v.trunc(), kFloat32, {8}, {kNaN, kInf, -kInf, 0.0, -0.0, 1.0, -1.0, 2.0});
  CHECK_T(v.sign(), kFloat32, {8}, {0.0, 1.0, -1.0, 0.0, 0.0, 1.0, -1.0, 1.0});
  CHECK_T(v.frac(), kFloat32, {8}, {kNaN, kNaN, kNaN, 0.0, 0.0, 0.0, 0.0, 0.5});
  CHECK_T(v.neg(), kFloat32, {8}, {kNaN, -kInf, kInf, -0.0, 0.0, -1.0, 1.0, -2.5});
  CHECK_T(v.logical_not(), kBool, {8}, {0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0});
  CHECK_T(v.square(), kFloat32, {8}, {kNaN, kInf, kInf, 0.0, 0.0, 1.0, 1.0, 6.25});
  CHECK_T(v + w, kFloat32, {8}, {kNaN, kNaN, kNaN, -kInf, 0.0, 1.0, 1.0, 1.5});
  CHECK_T(v - w, kFloat32, {8}, {kNaN, kNaN, -kInf, kInf, -0.0, 1.0, -3.0, 3.5});
  CHECK_T(v * w, kFloat32, {8}, {kNaN, kNaN, -kInf, kNaN, -0.0, -0.0, -2.0, -2.5});
  CHECK_T(v / w, kFloat32, {8}, {kNaN, kNaN, kNaN, -0.0, kNaN, -kInf, -0.5, -2.5});
  CHECK_T(v.pow(w), kFloat32, {8}, {kNaN, kNaN, kInf, kInf, 1.0, 1.0, 1.0, 0.4000000059604645});
  CHECK_T(maximum(v, w), kFloat32, {8}, {kNaN, kNaN, kInf, 0.0, -0.0, 1.0, 2.0, 2.5});
  CHECK_T(minimum(v, w), kFloat32, {8}, {kNaN, kNaN, -kInf, -kInf, -0.0, -0.0, -1.0, -1.0});
  CHECK_T(v == w, kBool, {8}, {0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0});
  CHECK_T(v != w, kBool, {8}, {1.0, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0});
  CHECK_T(v < w, kBool, {8}, {0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0});
  CHECK_T(v <= w, kBool, {8}, {0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0});
  CHECK_T(v > w, kBool, {8}, {0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0});
  CHECK_T(v >= w, kBool, {8}, {0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0});
  CHECK_T(where(v > 0, v, w), kFloat32, {8}, {1.0, kInf, kInf, -kInf, 0.0, 1.0, 2.0, 2.5});
  CHECK_T(v.clamp(-1, 1), kFloat32, {8}, {kNaN, 1.0, -1.0, 0.0, -0.0, 1.0, -1.0, 1.0});
  CHECK_T(m.sum(1), kFloat32, {2}, {kNaN, kNaN});
  CHECK_T(m.sum(0), kFloat32, {8}, {kNaN, kNaN, kNaN, -kInf, 0.0, 1.0, 1.0, 1.5});
  CHECK_T(m.prod(1), kFloat32, {2}, {kNaN, kNaN});
  CHECK_T(m.mean(0), kFloat32, {8}, {kNaN, kNaN, kNaN, -kInf, 0.0, 0.5, 0.5, 0.75});
  CHECK_T(std::get<0>(m.max(1)), kFloat32, {2}, {kNaN, kNaN});
  CHECK_T(std::get<1>(m.max(1)), kInt64, {2}, {0.0, 1.0});
  CHECK_T(std::get<0>(m.min(0)), kFloat32, {8}, {kNaN, kNaN, -kInf, -kInf, -0.0, -0.0, -1.0, -1.0});
  CHECK_T(std::get<1>(m.min(0)), kInt64, {8}, {0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0});
  CHECK_T(m.argmax(1), kInt64, {2}, {0.0, 1.0});
  CHECK_T(m.argmin(1), kInt64, {2}, {0.0, 1.0});
  CHECK_T(m.amax({1}), kFloat32, {2}, {kNaN, kNaN});
  CHECK_T(m.amin({0}), kFloat32, {8}, {kNaN, kNaN, -kInf, -kInf, -0.0, -0.0, -1.0, -1.0});
  CHECK_T(m.var(int64_t{0}), kFloat32, {8}, {kNaN, kNaN, kNaN, kNaN, 0.0, 0.5, 4.5, 6.125});
  CHECK_T(m.std(int64_t{1}), kFloat32, {2}, {kNaN, kNaN});
  CHECK_T(m.to(kBool).all(1), kBool, {2}, {0.0, 0.0});
  CHECK_T(m.to(kBool).any(0), kBool, {8}, {1.0, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0});
  CHECK_T(m.softmax(0), kFloat32, {2, 8}, {kNaN, kNaN, kNaN, 1.0, 0.5, 0.7310585975646973, 0.04742587357759476, 0.970687747001648, kNaN, kNaN, kNaN, 0.0, 0.5, 0.2689414322376251, 0.9525741338729858, 0.02931223064661026});
  CHECK_T(m.log_softmax(0), kFloat32, {2, 8}, {kNaN, kNaN, kNaN, 0.0, -0.6931471824645996, -0.31326165795326233, -3.0485873222351074, -0.029750416055321693, kNaN, kNaN, kNaN, -kInf, -0.6931471824645996, -1.31326162815094, -0.04858732968568802, -3.529750347137451});
  CHECK_T(m.softmax(1), kFloat32, {2, 8}, {kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN});
  CHECK_T(matmul(m, w.reshape({8, 1})), kFloat32, {2, 1}, {kNaN, kNaN});
  CHECK_T(matmul(m.t(), m), kFloat32, {8, 8}, {kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kInf, kNaN, kNaN, kNaN, kInf, -kInf, kNaN, kNaN, kNaN, kInf, kNaN, kNaN, -kInf, kInf, kNaN, kNaN, kNaN, kNaN, 0.0, 0.0, 0.0, 0.0, kNaN, kNaN, kNaN, kNaN, 0.0, 1.0, -1.0, 2.5, kNaN, kNaN, kInf, -kInf, 0.0, -1.0, 5.0, -4.5, kNaN, kNaN, -kInf, kInf, 0.0, 2.5, -4.5, 7.25});
  CHECK_T(cat({v, w}, 0), kFloat32, {16}, {kNaN, kInf, -kInf, 0.0, -0.0, 1.0, -1.0, 2.5, 1.0, kNaN, kInf, -kInf, 0.0, -0.0, 2.0, -1.0});
  set_evaluator(Evaluator::Jit);
}

}  // namespace

TEST_CASE("hostile values: NaN and infinities through every op give PyTorch's values (reference)") {
  nan_inf_table(Evaluator::Reference);
}

TEST_CASE("hostile values: NaN and infinities through every op give PyTorch's values (JIT)") {
  nan_inf_table(Evaluator::Jit);
  set_fusion_enabled(false);
  nan_inf_table(Evaluator::Jit);
  set_fusion_enabled(true);
}

namespace {
// Runs f under the reference evaluator and under the JIT (fused and
// unfused): the same bits everywhere (NaN payloads aside).
void check_same_everywhere(const char* what, const std::function<Tensor()>& f) {
  CAPTURE(what);
  set_evaluator(Evaluator::Reference);
  const Tensor r = f();
  const std::vector<double> ref = r.to(kFloat64).to_vector<double>();
  set_evaluator(Evaluator::Jit);
  for (bool fusion : {true, false}) {
    CAPTURE(fusion);
    set_fusion_enabled(fusion);
    const Tensor t = f();
    CHECK(t.dtype() == r.dtype());
    CHECK(t.sizes() == r.sizes());
    const std::vector<double> got = t.to(kFloat64).to_vector<double>();
    REQUIRE(got.size() == ref.size());
    for (size_t i = 0; i < got.size(); ++i) {
      CAPTURE(i);
      CAPTURE(got[i]);
      CAPTURE(ref[i]);
      if (std::isnan(ref[i])) CHECK(std::isnan(got[i]));
      else CHECK((got[i] == ref[i] && std::signbit(got[i]) == std::signbit(ref[i])));
    }
  }
  set_fusion_enabled(true);
}
}  // namespace

TEST_CASE("hostile values: casts of NaN and infinities are defined and agree everywhere") {
  const std::vector<double> specials{kNaN, kInf, -kInf, 0.0, -0.0, 1.0, -1.0, 2.5, 1e30, -1e30, 300.0};
  for (DType from : {kFloat32, kFloat64, kFloat16, kBFloat16})
    for (DType to : {kBool, kUInt8, kInt32, kInt64, kFloat16, kBFloat16, kFloat32, kFloat64}) {
      CAPTURE(dtype_name(from));
      CAPTURE(dtype_name(to));
      check_same_everywhere("cast", [&] { return tensor(specials, kFloat64).to(from).to(to); });
    }
  // PyTorch's values where they are defined: bool and the in-range ones.
  CHECK_T(tensor(specials, kFloat32).to(kBool), kBool, {11}, {1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1});
  CHECK_T(tensor(specials, kFloat32).to(kInt64).narrow(0, 3, 5), kInt64, {5}, {0, 0, 1, -1, 2});
}

TEST_CASE("hostile values: NaN and infinities in float64, float16 and bfloat16 agree everywhere") {
  const std::vector<double> a{kNaN, kInf, -kInf, 0.0, -0.0, 1.0, -1.0, 65504.0};
  const std::vector<double> b{1.0, kNaN, kInf, -kInf, 0.0, -0.0, -kInf, 2.0};
  for (DType d : {kFloat64, kFloat16, kBFloat16}) {
    CAPTURE(dtype_name(d));
    const Tensor v = tensor(a, d), w = tensor(b, d), m = stack({v, w});
    using F = std::function<Tensor()>;
    const std::vector<std::pair<const char*, F>> ops{
        {"exp", [&] { return v.exp(); }},       {"log", [&] { return v.log(); }},
        {"sqrt", [&] { return v.sqrt(); }},     {"rsqrt", [&] { return v.rsqrt(); }},
        {"sin", [&] { return v.sin(); }},       {"cos", [&] { return v.cos(); }},
        {"tanh", [&] { return v.tanh(); }},     {"sigmoid", [&] { return v.sigmoid(); }},
        {"relu", [&] { return v.relu(); }},     {"abs", [&] { return v.abs(); }},
        {"log1p", [&] { return v.log1p(); }},   {"expm1", [&] { return v.expm1(); }},
        {"erf", [&] { return v.erf(); }},       {"floor", [&] { return v.floor(); }},
        {"ceil", [&] { return v.ceil(); }},     {"round", [&] { return v.round(); }},
        {"trunc", [&] { return v.trunc(); }},   {"sign", [&] { return v.sign(); }},
        {"add", [&] { return v + w; }},         {"sub", [&] { return v - w; }},
        {"mul", [&] { return v * w; }},         {"div", [&] { return v / w; }},
        {"pow", [&] { return v.pow(w); }},      {"maximum", [&] { return maximum(v, w); }},
        {"minimum", [&] { return minimum(v, w); }}, {"lt", [&] { return v < w; }},
        {"where", [&] { return where(v > w, v, w); }}, {"clamp", [&] { return v.clamp(-1, 1); }},
        {"sum", [&] { return m.sum(0); }},      {"prod", [&] { return m.prod(0); }},
        {"mean", [&] { return m.mean(1); }},    {"max", [&] { return std::get<0>(m.max(0)); }},
        {"argmax", [&] { return m.argmax(1); }}, {"argmin", [&] { return m.argmin(0); }},
        {"var", [&] { return m.var(int64_t{0}); }},      {"softmax", [&] { return m.softmax(0); }},
        {"log_softmax", [&] { return m.log_softmax(1); }}, {"all", [&] { return m.all(1); }},
        {"matmul", [&] { return matmul(m, v.reshape({8, 1})); }}};
    for (const auto& [name, f] : ops) check_same_everywhere(name, f);
  }
}

TEST_CASE("hostile values: zero-size tensors through every op") {
  const Tensor x = zeros({2, 0}), e = zeros({0});
  // Elementwise and views keep the (broadcast) shape.
  for (const Tensor& t : {x.exp(), x.log(), x.sqrt(), x.rsqrt(), x.abs(), x.sin(), x.cos(), x.tanh(),
                          x.sigmoid(), x.relu(), -x, x.square(), x.clamp(0, 1), x + 1, x * zeros({2, 1}),
                          x.log1p(), x.expm1(), x.erf(), x.floor(), x.round(2), x.sign(), x.frac(),
                          x / ones({1, 0}), x.pow(2), maximum(x, x), where(x > 0, x, 1.0),
                          x.softmax(1), x.log_softmax(1), x.softmax(0), x.t().t(), x.contiguous(), x.clone()})
    CHECK(t.sizes() == Shape{2, 0});
  CHECK((x < 1).sizes() == Shape{2, 0});
  CHECK((x < 1).dtype() == kBool);
  CHECK(x.expand({3, 2, 0}).sizes() == Shape{3, 2, 0});
  CHECK(x.reshape({-1}).sizes() == Shape{0});
  CHECK(x.narrow(0, 1, 1).sizes() == Shape{1, 0});
  CHECK(x.unsqueeze(1).sizes() == Shape{2, 1, 0});
  // Reductions: PyTorch's identities, NaN for mean/var/std, errors for max/min/argmax.
  CHECK_T(x.sum(1), kFloat32, {2}, {0, 0});
  CHECK_T(x.sum(0), kFloat32, {0}, {});
  CHECK_T(x.sum(), kFloat32, {}, {0});
  CHECK_T(x.prod(1), kFloat32, {2}, {1, 1});
  CHECK_T(x.prod(), kFloat32, {}, {1});
  CHECK_T(x.mean(1), kFloat32, {2}, {kNaN, kNaN});
  CHECK_T(x.mean(), kFloat32, {}, {kNaN});
  CHECK_T(x.var(int64_t{1}), kFloat32, {2}, {kNaN, kNaN});
  CHECK_T(x.std(), kFloat32, {}, {kNaN});
  CHECK_T(x.to(kBool).all(1), kBool, {2}, {1, 1});
  CHECK_T(x.to(kBool).any(1), kBool, {2}, {0, 0});
  CHECK_T(x.to(kBool).all(), kBool, {}, {1});
  CHECK_T(std::get<0>(x.max(0)), kFloat32, {0}, {});
  CHECK_THROWS_WITH_AS(x.max(1), "[max] max(): Expected reduction dim 1 to have non-zero size. (input shape [2, 0])", Error);
  CHECK_THROWS_AS(x.amax({1}), Error);
  CHECK_THROWS_AS(x.argmax(1), Error);
  CHECK_THROWS_AS(x.argmax(), Error);
  CHECK_THROWS_AS(x.max(), Error);
  CHECK_THROWS_AS(x.min(), Error);
  // matmul with K = 0 is zeros; with M = 0 empty.
  CHECK_T(matmul(x, ones({0, 3})), kFloat32, {2, 3}, {0, 0, 0, 0, 0, 0});
  CHECK_T(matmul(zeros({0, 3}), ones({3, 4})), kFloat32, {0, 4}, {});
  CHECK_T(matmul(e, e), kFloat32, {}, {0});
  // Joins, splits.
  CHECK_T(cat({x, ones({2, 3})}, 1), kFloat32, {2, 3}, {1, 1, 1, 1, 1, 1});
  CHECK_T(cat({e, tensor({1.0f})}), kFloat32, {1}, {1});
  CHECK(stack({x, x}).sizes() == Shape{2, 2, 0});
  CHECK(split(x, 1, 1).size() == 1);
  // Creation, in place, printing, autograd.
  CHECK(arange(0).numel() == 0);
  CHECK(linspace(0, 1, 0).numel() == 0);
  CHECK(eye(0).sizes() == Shape{0, 0});
  CHECK(randn({0, 3}).sizes() == Shape{0, 3});
  Tensor y = zeros({2, 0});
  y.add_(1).mul_(x).fill_(3);
  y.index_put_({indexing::Slice()}, 2.0);
  CHECK(y.sizes() == Shape{2, 0});
  CHECK(y.to_vector<float>().empty());
  std::ostringstream os;
  os << x << " " << zeros({0}, kInt64);
  CHECK(os.str() == "tensor([], size=(2, 0)) tensor([], dtype=torch.int64)");
  Tensor g = zeros({2, 0}, requires_grad());
  (g * 2).sum().backward();
  CHECK(g.grad().sizes() == Shape{2, 0});
  // The JIT and the reference agree on all of it.
  check_same_everywhere("zero-size reductions", [&] { return cat({x.sum(1), x.prod(1), x.mean(1)}); });
}

TEST_CASE("hostile values: integer overflow wraps as in PyTorch, without undefined behaviour") {
  const int64_t M = std::numeric_limits<int64_t>::max(), m = std::numeric_limits<int64_t>::min();
  const Tensor x = tensor(std::vector<int64_t>{M, m, 5, -7});
  // Values from PyTorch 1.13 (two's complement wrap-around).
  CHECK((x + 1).to_vector<int64_t>() == std::vector<int64_t>{m, m + 1, 6, -6});
  CHECK((-x).to_vector<int64_t>() == std::vector<int64_t>{m + 1, m, -5, 7});
  CHECK(x.abs().to_vector<int64_t>() == std::vector<int64_t>{M, m, 5, 7});
  CHECK((x * 3).to_vector<int64_t>() == std::vector<int64_t>{M - 2, m, 15, -21});
  CHECK(x.sum().item<int64_t>() == -3);
  CHECK(x.prod().item<int64_t>() == m);
  CHECK(tensor(std::vector<int64_t>{1}).add(int64_t{1} << 62, 4).item<int64_t>() == 1);
  CHECK(tensor(std::vector<int64_t>{1}).sub(int64_t{1} << 62, 4).item<int64_t>() == 1);
  const Tensor y = tensor(std::vector<int64_t>{2147483647, -2147483648}, kInt32);
  CHECK((y + 1).to_vector<int32_t>() == std::vector<int32_t>{-2147483647 - 1, -2147483647});
  CHECK((y * 2).to_vector<int32_t>() == std::vector<int32_t>{-2, 0});
  CHECK(y.sum().item<int64_t>() == -1);
  CHECK(tensor(std::vector<int64_t>{3}).pow(50).item<int64_t>() == 6048575297968530377);
  CHECK(tensor(std::vector<int64_t>{2}, kInt32).pow(40).item<int64_t>() == 0);
  CHECK(matmul(tensor(std::vector<int64_t>{M, 2}).reshape({1, 2}), tensor(std::vector<int64_t>{2, 3}).reshape({2, 1}))
            .item<int64_t>() == 4);
  CHECK(tensor(std::vector<int64_t>{200, 100}, kUInt8).add(100).to_vector<int64_t>() == std::vector<int64_t>{44, 200});
  CHECK(tensor(std::vector<int64_t>{3}, kUInt8).neg().item<int64_t>() == 253);
  // The JIT agrees with the reference on all of it.
  check_same_everywhere("int64 wrap", [&] { return cat({x + 1, -x, x.abs(), x * 3, x.sum().reshape({1})}); });
}

// gradcheck for every differentiable op: the analytic Jacobian that
// backward builds (run through the JIT) against central finite differences
// in float64, over broadcasting shapes, keepdim on and off, views,
// non-contiguous inputs and writes through views; gradgradcheck (second
// order, create_graph) for a set of ops. Inputs avoid the points where an
// op is not differentiable (ties, zeros of abs/relu, clamp's bounds).
#include <doctest/doctest.h>

#include <string>

#include "kiln/kiln.h"
#include "kiln/nn_functional.h"

using namespace kiln;
using kiln::indexing::None;
using kiln::indexing::Slice;
using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

namespace {
TensorOptions f64() { return TensorOptions(DType::Float64); }

// A float64 leaf with values in [lo, hi), evaluated (a buffer).
Tensor input(const Shape& s, double lo = -1.0, double hi = 1.0) {
  Tensor t = (rand(s, f64()) * (hi - lo) + lo).eval();
  return t.detach().requires_grad_();
}
// A non-contiguous float64 leaf of shape s (a transposed buffer).
Tensor transposed_input(const Shape& s, double lo = -1.0, double hi = 1.0) {
  REQUIRE(s.size() == 2);
  Tensor t = (rand({s[1], s[0]}, f64()) * (hi - lo) + lo).eval();
  Tensor v = t.t().detach().requires_grad_();
  CHECK(!v.is_contiguous());
  return v;
}

// gradcheck (or gradgradcheck) must pass; a failure shows its Jacobians.
void run_check(const std::string& what, const Fn& fn, const std::vector<Tensor>& inputs,
               bool second_order) {
  INFO(what);
  std::string error;
  try {
    CHECK((second_order ? gradgradcheck(fn, inputs) : gradcheck(fn, inputs)));
  } catch (const kiln::Error& e) {
    error = e.what();
  }
  CHECK_MESSAGE(error.empty(), error);
}
void check(const std::string& what, const Fn& fn, const std::vector<Tensor>& inputs) {
  run_check(what, fn, inputs, false);
}
void check2(const std::string& what, const Fn& fn, const std::vector<Tensor>& inputs) {
  run_check(what, fn, inputs, true);
}
}  // namespace

TEST_CASE("gradcheck: unary math") {
  manual_seed(1);
  Tensor x = input({2, 3}), p = input({2, 3}, 0.5, 2.0);
  check("neg", [](auto& v) { return -v[0]; }, {x});
  check("exp", [](auto& v) { return v[0].exp(); }, {x});
  check("log", [](auto& v) { return v[0].log(); }, {p});
  check("sqrt", [](auto& v) { return v[0].sqrt(); }, {p});
  check("rsqrt", [](auto& v) { return v[0].rsqrt(); }, {p});
  check("abs", [](auto& v) { return v[0].abs(); }, {p * 1 - 1.25});
  check("sin", [](auto& v) { return v[0].sin(); }, {x});
  check("cos", [](auto& v) { return v[0].cos(); }, {x});
  check("tanh", [](auto& v) { return v[0].tanh(); }, {x});
  check("sigmoid", [](auto& v) { return v[0].sigmoid(); }, {x});
  check("log1p", [](auto& v) { return v[0].log1p(); }, {p * 1 - 0.9});
  check("expm1", [](auto& v) { return v[0].expm1(); }, {x});
  check("erf", [](auto& v) { return v[0].erf(); }, {x * 2});
  check("floor (zero)", [](auto& v) { return v[0].floor() * v[0]; }, {x * 3 + 0.25});
  check("gelu", [](auto& v) { return gelu(v[0]); }, {x * 3});
  check("gelu tanh", [](auto& v) { return gelu(v[0], "tanh"); }, {x * 3});
  check("softplus", [](auto& v) { return softplus(v[0], 2.0); }, {x * 3});
  check("elu", [](auto& v) { return elu(v[0], 0.7); }, {x * 3});
  check("mish", [](auto& v) { return mish(v[0]); }, {x * 3});
  check("relu", [](auto& v) { return v[0].relu(); }, {input({2, 3}, 0.1, 1.0)});
  check("relu negative", [](auto& v) { return v[0].relu(); }, {input({3}, -1.0, -0.1)});
  check("square", [](auto& v) { return v[0].square(); }, {x});
  check("pow 3", [](auto& v) { return v[0].pow(3); }, {x});
  check("pow 2.5", [](auto& v) { return v[0].pow(2.5); }, {p});
  check("pow 0", [](auto& v) { return v[0].pow(0); }, {x});
  check("2 ** x", [](auto& v) { return kiln::pow(2.0, v[0]); }, {x});
  check("clamp", [](auto& v) { return v[0].clamp(-0.5, 0.5); }, {tensor({-0.9, -0.2, 0.3, 0.8}, DType::Float64).requires_grad_()});
  check("clamp_min", [](auto& v) { return v[0].clamp_min(0.1); }, {tensor({-0.9, 0.3, 0.8}, DType::Float64).requires_grad_()});
  check("clamp_max", [](auto& v) { return v[0].clamp_max(0.1); }, {tensor({-0.9, 0.3, 0.8}, DType::Float64).requires_grad_()});
}

TEST_CASE("gradcheck: binary ops with broadcasting and scalars") {
  manual_seed(2);
  Tensor a = input({3, 1}), b = input({4}), c = input({2, 3, 4});
  Tensor pa = input({3, 1}, 0.5, 2.0), pb = input({4}, 0.5, 2.0);
  check("add", [](auto& v) { return v[0] + v[1]; }, {a, b});
  check("add alpha", [](auto& v) { return v[0].add(v[1], 2.5); }, {a, c});
  check("sub", [](auto& v) { return v[0] - v[1]; }, {c, b});
  check("sub alpha", [](auto& v) { return v[0].sub(v[1], -3); }, {a, b});
  check("mul", [](auto& v) { return v[0] * v[1]; }, {a, c});
  check("div", [](auto& v) { return v[0] / v[1]; }, {c, pb});
  check("pow tensor", [](auto& v) { return v[0].pow(v[1]); }, {pa, b});
  check("maximum", [](auto& v) { return v[0].maximum(v[1]); }, {a, b});
  check("minimum", [](auto& v) { return v[0].minimum(v[1]); }, {c, a.reshape({3, 1})});
  check("where", [](auto& v) { return where(v[0] > v[1], v[0], v[1] * 2); }, {a, b});
  check("where scalar", [](auto& v) { return where(v[0] > 0, v[0], 0.5); }, {c});
  check("scalar ops", [](auto& v) { return (v[0] + 2) * 3 - 1; }, {a});
  check("rsub", [](auto& v) { return 2 - v[0]; }, {b});
  check("rdiv", [](auto& v) { return 3 / v[0]; }, {pb});
  check("div scalar", [](auto& v) { return v[0] / 4; }, {c});
  check("same input twice", [](auto& v) { return v[0] * v[0] + v[0]; }, {b});
  check("float32 into float64", [](auto& v) { return v[0] * v[1]; }, {a, b});
}

TEST_CASE("gradcheck: matmul in all its shapes") {
  manual_seed(3);
  check("mm", [](auto& v) { return v[0].matmul(v[1]); }, {input({2, 3}), input({3, 4})});
  check("mv", [](auto& v) { return v[0].matmul(v[1]); }, {input({2, 3}), input({3})});
  check("dot", [](auto& v) { return v[0].matmul(v[1]); }, {input({3}), input({3})});
  check("vm", [](auto& v) { return v[0].matmul(v[1]); }, {input({3}), input({3, 2})});
  check("bmm", [](auto& v) { return v[0].matmul(v[1]); }, {input({2, 2, 3}), input({2, 3, 2})});
  check("batch broadcast", [](auto& v) { return v[0].matmul(v[1]); }, {input({2, 1, 2, 3}), input({3, 3, 2})});
  check("batched x 2-D", [](auto& v) { return v[0].matmul(v[1]); }, {input({2, 2, 3}), input({3, 2})});
  check("mm non-contiguous", [](auto& v) { return v[0].matmul(v[1]); }, {transposed_input({2, 3}), transposed_input({3, 2})});
  check("linear regression", [](auto& v) { return (v[0].matmul(v[1]) + v[2] - 1).pow(2).mean(); },
        {input({5, 1}).detach(), input({1, 1}), input({1, 1})});
}

TEST_CASE("gradcheck: reductions, keepdim on and off") {
  manual_seed(4);
  Tensor x = input({2, 3, 2});
  for (bool keep : {false, true}) {
    std::string k = keep ? " keepdim" : "";
    check("sum dims" + k, [keep](auto& v) { return v[0].sum(Shape{0, 2}, keep); }, {x});
    check("mean dim" + k, [keep](auto& v) { return v[0].mean(Shape{1}, keep); }, {x});
    check("prod dim" + k, [keep](auto& v) { return v[0].prod(1, keep); }, {x});
    check("max dim" + k, [keep](auto& v) { return std::get<0>(v[0].max(1, keep)); }, {x});
    check("min dim" + k, [keep](auto& v) { return std::get<0>(v[0].min(-1, keep)); }, {x});
    check("amax" + k, [keep](auto& v) { return v[0].amax(Shape{0, 1}, keep); }, {x});
    check("amin" + k, [keep](auto& v) { return v[0].amin(Shape{2}, keep); }, {x});
    check("var" + k, [keep](auto& v) { return v[0].var(Shape{1}, true, keep); }, {x});
    check("var biased" + k, [keep](auto& v) { return v[0].var(Shape{0, 2}, false, keep); }, {x});
    check("std" + k, [keep](auto& v) { return v[0].std(Shape{2}, true, keep); }, {x});
  }
  check("sum", [](auto& v) { return v[0].sum(); }, {x});
  check("mean", [](auto& v) { return v[0].mean(); }, {x});
  check("prod", [](auto& v) { return v[0].prod(); }, {input({2, 3}, 0.5, 1.5)});
  check("prod with a zero", [](auto& v) { return v[0].prod(1); },
        {tensor({1.5, 0.0, 2.0, 0.5, 1.0, 3.0}, DType::Float64).reshape({2, 3}).detach().requires_grad_()});
  check("max", [](auto& v) { return v[0].max(); }, {x});
  check("min", [](auto& v) { return v[0].min(); }, {x});
  check("var all", [](auto& v) { return v[0].var(); }, {x});
  check("std all", [](auto& v) { return v[0].std(); }, {x});
  check("0-dim sum", [](auto& v) { return v[0].sum(); }, {input({})});
  check("non-contiguous sum", [](auto& v) { return v[0].sum(0); }, {transposed_input({3, 2})});
}

TEST_CASE("gradcheck: softmax and log_softmax over each dim") {
  manual_seed(5);
  Tensor x = input({2, 3, 4});
  for (int64_t d : {0, 1, -1}) {
    check("softmax " + std::to_string(d), [d](auto& v) { return v[0].softmax(d); }, {x});
    check("log_softmax " + std::to_string(d), [d](auto& v) { return v[0].log_softmax(d); }, {x});
  }
  check("softmax non-contiguous", [](auto& v) { return v[0].softmax(1); }, {transposed_input({3, 4})});
  check("cross entropy", [](auto& v) {
    Tensor target = tensor({0.0, 1.0, 0.0, 0.0, 0.0, 1.0}, DType::Float64).reshape({2, 3});
    return -(v[0].log_softmax(1) * target).sum(1).mean();
  }, {input({2, 3})});
}

TEST_CASE("gradcheck: joins and splits") {
  manual_seed(6);
  Tensor a = input({2, 3}), b = input({1, 3}), c = input({2, 3});
  check("cat 0", [](auto& v) { return cat({v[0], v[1]}, 0); }, {a, b});
  check("cat 1", [](auto& v) { return cat({v[0], v[1]}, 1); }, {a, c});
  check("stack", [](auto& v) { return stack({v[0], v[1]}, 1); }, {a, c});
  GradcheckFn chunks = [](const std::vector<Tensor>& v) { return v[0].chunk(2, 1); };
  INFO("chunk");
  CHECK(gradcheck(chunks, {input({2, 4})}));
  GradcheckFn splits = [](const std::vector<Tensor>& v) { return v[0].split(Shape{1, 2}, 0); };
  CHECK(gradcheck(splits, {input({3, 2})}));
  GradcheckFn unbinds = [](const std::vector<Tensor>& v) { return v[0].unbind(1); };
  CHECK(gradcheck(unbinds, {input({2, 3})}));
}

TEST_CASE("gradcheck: views route gradients through their inverse") {
  manual_seed(7);
  Tensor x = input({3, 4}), nc = transposed_input({3, 4});
  check("select", [](auto& v) { return v[0].select(1, 2); }, {x});
  check("index", [](auto& v) { return v[0].index({1, Slice(None, None, 2)}); }, {x});
  check("slice step", [](auto& v) { return v[0].slice(1, 1, 4, 2); }, {x});
  check("narrow", [](auto& v) { return v[0].narrow(0, 1, 2); }, {nc});
  check("view", [](auto& v) { return v[0].view({2, 6}); }, {x});
  check("reshape non-contiguous", [](auto& v) { return v[0].reshape({12}); }, {nc});
  check("flatten", [](auto& v) { return v[0].flatten(); }, {x});
  check("t", [](auto& v) { return v[0].t(); }, {x});
  check("transpose", [](auto& v) { return v[0].transpose(0, 1) * 2; }, {nc});
  check("permute", [](auto& v) { return v[0].permute({2, 0, 1}); }, {input({2, 3, 2})});
  check("squeeze", [](auto& v) { return v[0].squeeze(); }, {input({1, 3, 1})});
  check("squeeze dim", [](auto& v) { return v[0].squeeze(0); }, {input({1, 3})});
  check("unsqueeze", [](auto& v) { return v[0].unsqueeze(1); }, {x});
  check("expand", [](auto& v) { return v[0].expand({2, 3, 4}); }, {input({3, 1})});
  check("contiguous", [](auto& v) { return v[0].contiguous(); }, {nc});
  check("clone", [](auto& v) { return v[0].clone(); }, {x});
  check("as_strided", [](auto& v) { return v[0].as_strided({2, 2}, {1, 4}, 1); }, {x});
  check("as_strided repeats", [](auto& v) { return v[0].as_strided({3, 2}, {0, 1}, 2); }, {x});
  check("view of a view", [](auto& v) { return v[0].t()[1].unsqueeze(0).expand({2, 3}); }, {x});
}

TEST_CASE("gradcheck: avg_pool's own backward (AvgPool2DBackward0) in every mode") {
  const Tensor x = input({2, 2, 7, 6}), v = input({2, 3, 7}), c = input({1, 2, 5, 4, 5});
  auto pool = [](auto f) { return Fn([f](const std::vector<Tensor>& t) { return f(t[0]); }); };
  check("3 x 3, padded", pool([](const Tensor& t) { return avg_pool2d(t, {3}, {1}, {1}); }), {x});
  check("stride 2, the last rows left out", pool([](const Tensor& t) { return avg_pool2d(t, {2}, {2}); }), {x});
  check("ceil_mode, padding not counted",
        pool([](const Tensor& t) { return avg_pool2d(t, {3, 2}, {2, 3}, {1, 1}, true, false); }), {x});
  check("divisor", pool([](const Tensor& t) { return avg_pool2d(t, {2}, {1}, {1}, false, true, 3); }), {x});
  check("4 x 4 (a reduction)", pool([](const Tensor& t) { return avg_pool2d(t, {4}, {3}, {2}, true); }), {x});
  check("1-D", pool([](const Tensor& t) { return avg_pool1d(t, {3}, {2}, {1}, true, false); }), {v});
  check("3-D", pool([](const Tensor& t) { return avg_pool3d(t, {2, 3, 2}, {2, 1, 2}, {1, 1, 0}, true); }), {c});
  check2("second order", pool([](const Tensor& t) { return avg_pool2d(t * t, {3}, {2}, {1}); }), {x});
}

TEST_CASE("gradcheck: convolutions through col2im's own backward (Col2ImBackward0), first and second order") {
  // conv's input gradient folds its columns back (fold_windows), whose
  // gradient is the windows unfolded from g; a transposed convolution
  // folds in its forward; both twice differentiated
  const Tensor x = input({2, 2, 5, 4}), w = input({3, 2, 3, 2}), t = input({2, 3, 3, 2});
  const Tensor wt = input({3, 2, 3, 3});
  check("conv_transpose2d, stride 2, padding 1, output padding",
        [&](auto& v) { return conv_transpose2d(v[0], v[1], {}, {2}, {1}, {1}); }, {t, wt});
  check("conv_transpose2d, dilation 2, stride (1, 2)",
        [&](auto& v) { return conv_transpose2d(v[0], v[1], {}, {1, 2}, {0}, {0}, 1, {2}); }, {t, wt});
  check2("conv2d second order, stride 2, padding 1",
         [&](auto& v) { return conv2d(v[0], v[1], {}, {2}, {1}); }, {x, w});
  check2("conv_transpose2d second order", [&](auto& v) { return conv_transpose2d(v[0], v[1], {}, {2}, {1}); },
         {t, wt});
  check2("narrow and select, second order",
         [](auto& v) { return (v[0] * v[0]).narrow(1, 1, 2) + v[0].select(1, 3).unsqueeze(1); }, {input({3, 4})});
}

TEST_CASE("gradcheck: in-place ops and writes through views") {
  manual_seed(8);
  Tensor x = input({2, 3}), y = input({3}), s = input({});
  check("add_", [](auto& v) { Tensor t = v[0].clone(); t.add_(v[1]); return t; }, {x, y});
  check("mul_ then exp", [](auto& v) { Tensor t = v[0] * 1; t.mul_(v[1]); return t.exp(); }, {x, y});
  check("div_ scalar", [](auto& v) { Tensor t = v[0].clone(); t.div_(3); return t; }, {x});
  check("index put", [](auto& v) { Tensor t = v[0].clone(); t.index_put_({1}, v[1] * 2); return t; }, {x, y});
  check("copy_ into a column", [](auto& v) {
    Tensor t = zeros({2, 3}, TensorOptions(DType::Float64));
    t.select(1, 1).copy_(v[0].select(1, 0));
    return t * v[0];
  }, {x});
  check("write a view then read another", [](auto& v) {
    Tensor t = v[0].clone();
    Tensor row = t[1];
    t[0].mul_(v[1]);
    return row * t.sum();
  }, {x, y});
  check("fill_ with a tensor", [](auto& v) { Tensor t = v[0].clone(); t.select(0, 0).fill_(v[1]); return t; }, {x, s});
  check("zero_ a slice", [](auto& v) { Tensor t = v[0] * 2; t.narrow(1, 0, 1).zero_(); return t; }, {x});
}

TEST_CASE("gradgradcheck: second order through create_graph") {
  manual_seed(9);
  Tensor x = input({2, 3}), y = input({2, 3}), p = input({2, 3}, 0.5, 2.0);
  check2("mul", [](auto& v) { return v[0] * v[1]; }, {x, y});
  check2("div", [](auto& v) { return v[0] / v[1]; }, {x, p});
  check2("exp", [](auto& v) { return v[0].exp(); }, {x});
  check2("log", [](auto& v) { return v[0].log(); }, {p});
  check2("tanh", [](auto& v) { return v[0].tanh(); }, {x});
  check2("sigmoid", [](auto& v) { return v[0].sigmoid(); }, {x});
  check2("erf", [](auto& v) { return v[0].erf(); }, {x});
  check2("log1p expm1", [](auto& v) { return v[0].expm1() * (v[0] + 1.5).log1p(); }, {x});
  check2("gelu", [](auto& v) { return gelu(v[0]); }, {x});
  check2("pow", [](auto& v) { return v[0].pow(3); }, {x});
  check2("sin cos", [](auto& v) { return v[0].sin() * v[0].cos(); }, {x});
  check2("matmul", [](auto& v) { return v[0].matmul(v[1].t()); }, {x, y});
  check2("softmax", [](auto& v) { return v[0].softmax(1); }, {x});
  check2("log_softmax", [](auto& v) { return v[0].log_softmax(0); }, {x});
  check2("mean of squares", [](auto& v) { return (v[0] * v[0]).mean(1); }, {x});
  check2("var", [](auto& v) { return v[0].var(Shape{1}); }, {x});
  check2("broadcast", [](auto& v) { return v[0] * v[1].sum(0, true); }, {x, y});
}

TEST_CASE("gradcheck: a wrong gradient is caught") {
  // d/dx (x * detach(x)) is detach(x) to autograd but 2x numerically.
  Tensor x = tensor({0.5, -1.0}, DType::Float64).requires_grad_();
  std::string error;
  try {
    gradcheck([](const std::vector<Tensor>& v) { return v[0] * v[0].detach(); }, {x});
  } catch (const kiln::Error& e) {
    error = e.what();
  }
  CHECK(error.find("[gradcheck] Jacobian mismatch for output 0 with respect to input 0") != std::string::npos);
  CHECK(error.find("numerical:") != std::string::npos);
}

TEST_CASE("gradgradcheck: a wrong second derivative is caught") {
  // The first derivative of x * detach(x) is detach(x) to autograd, whose
  // derivative is 0; numerically it is 1.
  Tensor x = tensor({0.5, -1.0}, DType::Float64).requires_grad_();
  std::string error;
  try {
    gradgradcheck([](const std::vector<Tensor>& v) { return v[0] * v[0].detach(); }, {x});
  } catch (const kiln::Error& e) {
    error = e.what();
  }
  CHECK(error.find("[gradcheck] Jacobian mismatch for output 0 with respect to input 0") != std::string::npos);
}

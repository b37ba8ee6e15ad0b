// Output layouts: elementwise results keep their inputs' memory order, as
// PyTorch's TensorIterator gives them (core/layout.h). Strides, contiguity,
// view() refusals, in-place writes, autograd through writes into such
// results, the *_like factories and softmax's row-major result, against
// values PyTorch 1.13 printed for the same programs.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kiln/kiln.h"

using namespace kiln;

namespace {

enum class Kind { Add, Gt, MulScalar, Exp, Where, Clone, ToDouble };
struct Operand {
  Shape sizes, strides;
};
struct Case {
  Kind kind;
  std::vector<Operand> ops;
  Shape shape;
  Shape strides;  // PyTorch's; -1 for a dim of one element (unspecified there)
};

// Operands as PyTorch's test built them: arange(n).as_strided(sizes, strides).
Tensor operand(const Operand& o, bool contiguous) {
  int64_t need = 1;
  for (size_t d = 0; d < o.sizes.size(); ++d) need += (o.sizes[d] - 1) * o.strides[d];
  Tensor t = arange(need, TensorOptions(kFloat32)).as_strided(o.sizes, o.strides);
  return contiguous ? t.contiguous() : t;
}

Tensor apply(const Case& c, bool contiguous) {
  std::vector<Tensor> t;
  for (const Operand& o : c.ops) t.push_back(operand(o, contiguous));
  switch (c.kind) {
    case Kind::Add: return t[0] + t[1];
    case Kind::Gt: return t[0] > t[1];
    case Kind::MulScalar: return t[0] * 2;
    case Kind::Exp: return t[0].exp();
    case Kind::Where: return where(t[0] > 3, t[1], t[2]);
    case Kind::Clone: return t[0].clone();
    case Kind::ToDouble: return t[0].to(kFloat64);
  }
  return {};
}

}  // namespace

TEST_CASE("layout: elementwise results take PyTorch's strides, their values unchanged") {
  // Generated with PyTorch 1.13: random permuted, sliced and broadcast
  // operands of 2 to 4 dims, the result's strides as torch printed them.
  const std::vector<Case> cases = {
    {Kind::Add, {{{2, 4, 1}, {1, 4, 2}}, {{1, 1, 1}, {1, 1, 1}}}, {2, 4, 1}, {1, 2, -1}},
    {Kind::Add, {{{5, 5}, {20, 2}}, {{}, {}}}, {5, 5}, {5, 1}},
    {Kind::MulScalar, {{{5, 1}, {1, 1}}}, {5, 1}, {1, -1}},
    {Kind::Exp, {{{5, 5}, {1, 5}}}, {5, 5}, {1, 5}},
    {Kind::Where, {{{5, 1}, {1, 5}}, {{5, 1}, {2, 2}}, {{5, 1}, {1, 1}}}, {5, 1}, {1, -1}},
    {Kind::Clone, {{{5, 1, 1}, {2, 1, 1}}}, {5, 1, 1}, {1, -1, -1}},
    {Kind::ToDouble, {{{1, 1, 5}, {5, 5, 1}}}, {1, 1, 5}, {-1, -1, 1}},
    {Kind::Gt, {{{1, 1, 3}, {2, 1, 2}}, {{1, 1, 3}, {3, 1, 1}}}, {1, 1, 3}, {-1, -1, 1}},
    {Kind::Add, {{{2, 5, 1}, {10, 1, 20}}, {{2, 5, 1}, {10, 1, 20}}}, {2, 5, 1}, {5, 1, -1}},
    {Kind::Add, {{{4, 5}, {5, 1}}, {{4, 5}, {2, 16}}}, {4, 5}, {5, 1}},
    {Kind::MulScalar, {{{2, 1}, {2, 2}}}, {2, 1}, {1, -1}},
    {Kind::Exp, {{{1, 2, 4}, {16, 8, 2}}}, {1, 2, 4}, {-1, 4, 1}},
    {Kind::Where, {{{5, 1, 4, 5}, {40, 10, 10, 2}}, {{5, 1, 4, 5}, {2, 10, 50, 10}}, {{4, 5}, {10, 1}}}, {5, 1, 4, 5}, {20, -1, 5, 1}},
    {Kind::Clone, {{{5, 3, 4}, {1, 20, 5}}}, {5, 3, 4}, {1, 20, 5}},
    {Kind::ToDouble, {{{3, 1, 2}, {1, 3, 3}}}, {3, 1, 2}, {1, -1, 3}},
    {Kind::Gt, {{{1, 2, 5, 3}, {10, 1, 2, 20}}, {{1, 2, 5, 3}, {12, 1, 12, 4}}}, {1, 2, 5, 3}, {-1, 1, 2, 10}},
    {Kind::Add, {{{2, 4}, {2, 4}}, {{2, 4}, {8, 2}}}, {2, 4}, {1, 2}},
    {Kind::Add, {{{3, 4, 3, 3}, {2, 216, 36, 6}}, {{3, 4, 3, 3}, {72, 18, 3, 1}}}, {3, 4, 3, 3}, {1, 27, 9, 3}},
    {Kind::MulScalar, {{{2, 4, 2, 4}, {4, 8, 2, 64}}}, {2, 4, 2, 4}, {2, 4, 1, 16}},
    {Kind::Exp, {{{1, 2}, {4, 2}}}, {1, 2}, {-1, 1}},
    {Kind::Where, {{{4, 3, 2, 5}, {3, 1, 24, 48}}, {{4, 1, 2, 1}, {4, 1, 2, 4}}, {{4, 3, 2, 5}, {20, 80, 10, 1}}}, {4, 3, 2, 5}, {3, 1, 12, 24}},
    {Kind::Clone, {{{5, 1}, {2, 10}}}, {5, 1}, {1, -1}},
    {Kind::ToDouble, {{{1, 5, 1, 3}, {6, 6, 6, 1}}}, {1, 5, 1, 3}, {-1, 3, -1, 1}},
    {Kind::Gt, {{{1, 1, 4, 3}, {12, 1, 1, 4}}, {{1, 1, 4, 3}, {24, 48, 2, 8}}}, {1, 1, 4, 3}, {-1, -1, 1, 4}},
    {Kind::Add, {{{2, 4}, {2, 4}}, {{2, 4}, {8, 1}}}, {2, 4}, {1, 2}},
    {Kind::Add, {{{2, 1, 4}, {1, 1, 4}}, {{2, 1, 4}, {8, 1, 1}}}, {2, 1, 4}, {1, -1, 2}},
    {Kind::MulScalar, {{{3, 5}, {10, 2}}}, {3, 5}, {5, 1}},
    {Kind::Exp, {{{5, 5, 3}, {12, 60, 2}}}, {5, 5, 3}, {3, 15, 1}},
    {Kind::Where, {{{1, 3}, {6, 1}}, {{1, 1}, {1, 1}}, {{1, 3}, {12, 2}}}, {1, 3}, {-1, 1}},
    {Kind::Clone, {{{2, 4, 1, 3}, {1, 24, 2, 4}}}, {2, 4, 1, 3}, {1, 6, -1, 2}},
    {Kind::ToDouble, {{{4, 1}, {1, 1}}}, {4, 1}, {1, -1}},
    {Kind::Gt, {{{5, 2, 1}, {1, 5, 1}}, {{5, 2, 1}, {2, 1, 10}}}, {5, 2, 1}, {1, 5, -1}},
    {Kind::Add, {{{1, 1}, {1, 2}}, {{1, 1}, {1, 1}}}, {1, 1}, {-1, -1}},
    {Kind::Add, {{{5, 3, 2}, {2, 10, 30}}, {{}, {}}}, {5, 3, 2}, {1, 5, 15}},
    {Kind::MulScalar, {{{3, 4, 2, 1}, {1, 6, 3, 48}}}, {3, 4, 2, 1}, {1, 6, 3, -1}},
    {Kind::Exp, {{{1, 4, 2}, {1, 1, 4}}}, {1, 4, 2}, {-1, 1, 4}},
    {Kind::Where, {{{3, 2, 1, 3}, {12, 1, 36, 2}}, {{3, 1, 1, 1}, {1, 3, 6, 3}}, {{}, {}}}, {3, 2, 1, 3}, {6, 1, -1, 2}},
    {Kind::Clone, {{{4, 2, 3}, {6, 24, 1}}}, {4, 2, 3}, {3, 12, 1}},
    {Kind::ToDouble, {{{4, 5, 2, 5}, {2, 160, 8, 16}}}, {4, 5, 2, 5}, {1, 40, 4, 8}},
    {Kind::Gt, {{{4, 5, 1}, {1, 4, 1}}, {{4, 5, 1}, {1, 4, 1}}}, {4, 5, 1}, {1, 4, -1}},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    CAPTURE(i);
    const Case& c = cases[i];
    Tensor r = apply(c, false);
    REQUIRE(r.sizes() == c.shape);
    for (size_t d = 0; d < c.shape.size(); ++d)
      if (c.strides[d] >= 0) CHECK(r.stride(static_cast<int64_t>(d)) == c.strides[d]);
    // the same values as from row-major copies of the operands
    CHECK(r.to_vector<double>() == apply(c, true).to_vector<double>());
  }
}

TEST_CASE("layout: a result in a permuted layout is a tensor as PyTorch's") {
  Tensor x = arange(12, TensorOptions(kFloat32)).reshape({3, 4});
  Tensor y = x.t() * 2;
  CHECK(y.strides() == Shape{1, 4});
  CHECK_FALSE(y.is_contiguous());
  CHECK(y.to_vector<float>() == std::vector<float>{0, 8, 16, 2, 10, 18, 4, 12, 20, 6, 14, 22});
  // memory in x's order, as PyTorch's data_ptr shows it
  const float* p = y.data_ptr<float>();
  CHECK(std::vector<float>(p, p + 12) == std::vector<float>{0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22});
  // view() refuses what PyTorch refuses; reshape copies; contiguous() is row-major
  try {
    y.view({-1});
    FAIL("view of a transposed layout must be refused");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("[view] view size is not compatible with input tensor's size and stride") == 0);
    CHECK(std::string(e.what()).find("(sizes [4, 3], strides [1, 4], requested [-1])") != std::string::npos);
  }
  CHECK(y.reshape({-1}).to_vector<float>() == y.to_vector<float>());
  CHECK(y.view({2, 2, 3}).strides() == Shape{2, 1, 4});  // splits a dim: a view, as in PyTorch
  Tensor c = y.contiguous();
  CHECK(c.is_contiguous());
  CHECK(c.strides() == Shape{3, 1});
  CHECK(c.to_vector<float>() == y.to_vector<float>());
  // chains keep the layout; a row-major operand first decides for itself
  CHECK((y + 1).strides() == Shape{1, 4});
  CHECK((y.exp() * y).strides() == Shape{1, 4});
  Tensor r = arange(12, TensorOptions(kFloat32)).reshape({4, 3});
  CHECK((y + r).strides() == Shape{1, 4});
  CHECK((r + y).strides() == Shape{3, 1});
  CHECK((y + r).to_vector<float>() == (r + y).to_vector<float>());
  // conversions and copies preserve it
  CHECK(y.to(kFloat64).strides() == Shape{1, 4});
  CHECK(y.clone().strides() == Shape{1, 4});
  CHECK((y > 3).strides() == Shape{1, 4});
  CHECK(y.pow(0).strides() == Shape{1, 4});
  CHECK(y.pow(0).to_vector<float>() == std::vector<float>(12, 1.0f));
  // reductions and softmax are row-major, as PyTorch's
  CHECK(y.sum(1, true).strides() == Shape{1, 1});
  CHECK(y.softmax(1).strides() == Shape{3, 1});
  CHECK(y.log_softmax(0).strides() == Shape{3, 1});
  CHECK(y.softmax(1).to_vector<float>() == y.contiguous().softmax(1).to_vector<float>());
}

TEST_CASE("layout: in-place writes into a result in a permuted layout") {
  Tensor x = arange(12, TensorOptions(kFloat32)).reshape({3, 4});
  Tensor y = x.t() * 2;
  y.add_(1);
  CHECK(y.strides() == Shape{1, 4});
  y.index_put_({0}, full({3}, 7.0));
  // PyTorch: y = x.t() * 2; y.add_(1); y[0] = 7
  CHECK(y.to_vector<float>() == std::vector<float>{7, 7, 7, 3, 11, 19, 5, 13, 21, 7, 15, 23});
  // a write through x.t() (the whole of x's memory in another order)
  Tensor z = arange(12, TensorOptions(kFloat32)).reshape({3, 4});
  z.t().mul_(10);
  CHECK(z.to_vector<float>() == std::vector<float>{0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110});
}

TEST_CASE("layout: gradients through writes into views of a result in a permuted layout") {
  // PyTorch: w (3, 4) requires grad; z = w.t() * 2; z[0].mul_(3);
  // z[1:3].add_(z[3:4]); (z * z.detach()).sum().backward(); w.grad
  Tensor w = tensor(std::vector<double>{0.5, -1, 2, 3, 1, 1.5, -2, 0.25, 4, -0.5, 1, 2}, kFloat32)
                 .reshape({3, 4})
                 .requires_grad_();
  Tensor z = w.t() * 2;
  CHECK(z.strides() == Shape{1, 4});
  z.index({0}).mul_(3);
  z.slice(0, 1, 3).add_(z.slice(0, 3, 4));
  (z * z.detach()).sum().backward();
  CHECK(w.grad().to_vector<float>() == std::vector<float>{18, 8, 20, 40, 36, 7, -7, 1, 144, 6, 12, 26});
}

TEST_CASE("layout: the *_like factories keep the layout and draw in memory order") {
  Tensor x = arange(12, TensorOptions(kFloat32)).reshape({3, 4}).t();
  CHECK(zeros_like(x).strides() == Shape{1, 4});
  CHECK(ones_like(x).strides() == Shape{1, 4});
  CHECK(full_like(x, 2).strides() == Shape{1, 4});
  CHECK(empty_like(x).strides() == Shape{1, 4});
  CHECK(full_like(x, 2).to_vector<float>() == std::vector<float>(12, 2.0f));
  manual_seed(5);
  Tensor a = randn_like(x);
  manual_seed(5);
  Tensor b = randn({3, 4});
  CHECK(a.strides() == Shape{1, 4});
  CHECK(a.to_vector<float>() == b.t().to_vector<float>());  // the same numbers at the same memory
  manual_seed(6);
  Tensor u = rand_like(x);
  manual_seed(6);
  CHECK(u.to_vector<float>() == rand({3, 4}).t().to_vector<float>());
  CHECK(randint_like(x, 0, 5).strides() == Shape{1, 4});
  // a row-major or a strided (not dense) tensor: row-major
  CHECK(zeros_like(x.contiguous()).strides() == Shape{3, 1});
  CHECK(zeros_like(arange(12, TensorOptions(kFloat32)).slice(0, 0, 12, 2)).strides() == Shape{1});
}

TEST_CASE("layout: a write through a view of a base that does not cover its memory densely is not differentiable") {
  // from_blob's strided memory (rows with gaps) is the one such base (every
  // computed base is dense, core/layout.h). PyTorch differentiates through
  // it (a gradient with the gaps' layout); kiln refuses it, with a remedy.
  std::vector<float> mem(8, 0.0f);
  Tensor b = from_blob(mem.data(), {2, 2}, {4, 1}, TensorOptions(kFloat32));
  Tensor w = ones({2}).requires_grad_();
  try {
    b.index({0}).copy_(w * 2);
    FAIL("the write must be refused");
  } catch (const Error& e) {
    const std::string m = e.what();
    CHECK(m.find("[backward] an in-place write through a view of a base that does not cover its memory densely "
                 "is not differentiable (base [2, 2] with strides [4, 1]); clone() the base first") == 0);
  }
}

TEST_CASE("layout: a leaf in a permuted layout gets its gradient in that layout") {
  // PyTorch: w = arange(12.).reshape(4, 3).t().detach().requires_grad_();
  // (w * w).sum().backward(): w.grad.stride() == (1, 3)
  Tensor w = arange(12, TensorOptions(kFloat32)).reshape({4, 3}).t().detach().requires_grad_();
  CHECK(w.strides() == Shape{1, 3});
  (w * w).sum().backward();
  CHECK(w.grad().strides() == Shape{1, 3});
  CHECK(w.grad().to_vector<float>() == std::vector<float>{0, 6, 12, 18, 2, 8, 14, 20, 4, 10, 16, 22});
  // a second backward accumulates into it, the layout kept
  (w * 2).sum().backward();
  CHECK(w.grad().strides() == Shape{1, 3});
  CHECK(w.grad().to_vector<float>() == std::vector<float>{2, 8, 14, 20, 4, 10, 16, 22, 6, 12, 18, 24});
  // a row-major leaf: a row-major gradient
  Tensor v = ones({2, 3}).requires_grad_();
  (v.t() * 3).sum().backward();
  CHECK(v.grad().strides() == Shape{3, 1});
}

namespace {
// A random program over three operands: elementwise ops, views, copies,
// in-place writes (into results and through views of them), then a
// reduction or a softmax. Run on permuted / sliced operands, whose results
// take permuted layouts, and on row-major copies of them, whose results are
// all row-major: the values must agree (the layout must never change a
// value). The JIT-vs-reference tests cannot see a wrong layout: both would
// evaluate the same wrong graph.
Tensor random_operand(std::mt19937& rng, const Shape& shape, bool row_major) {
  const size_t n = shape.size();
  Shape perm(n);
  for (size_t d = 0; d < n; ++d) perm[d] = static_cast<int64_t>(d);
  std::shuffle(perm.begin(), perm.end(), rng);
  Shape steps(n), base(n);
  for (size_t k = 0; k < n; ++k) {
    steps[k] = rng() % 4 == 0 ? 2 : 1;
    base[k] = shape[perm[k]] * steps[k];
  }
  Tensor t = (arange(base.numel(), TensorOptions(kFloat32)) * 0.37 - 3.0).sin().reshape(base);
  for (size_t k = 0; k < n; ++k)
    if (steps[k] == 2) t = t.slice(static_cast<int64_t>(k), 0, std::nullopt, 2);
  Shape inv(n);
  for (size_t k = 0; k < n; ++k) inv[perm[k]] = static_cast<int64_t>(k);
  t = t.permute(inv);  // logical shape `shape`, memory in perm's order
  return row_major ? t.contiguous() : t;
}

Tensor run_program(uint32_t seed, bool row_major, std::vector<int>& trace, int& permuted) {
  std::mt19937 rng(seed);
  const int64_t rank = 2 + static_cast<int64_t>(rng() % 3);
  Shape shape(static_cast<size_t>(rank));
  for (auto& s : shape) s = 1 + static_cast<int64_t>(rng() % 5);
  std::vector<Tensor> ops;
  for (int i = 0; i < 3; ++i) ops.push_back(random_operand(rng, shape, row_major));
  Tensor cur = ops[0];
  const int steps = 4 + static_cast<int>(rng() % 4);
  for (int s = 0; s < steps; ++s) {
    const int op = static_cast<int>(rng() % 12);
    const Tensor& other = ops[1 + rng() % 2];
    trace.push_back(op);
    switch (op) {
      case 0: cur = cur + other; break;
      case 1: cur = other * cur - 0.5; break;  // the other operand first decides the layout
      case 2: cur = maximum(cur, other.select(0, 0)); break;  // broadcast of a view
      case 3: cur = (cur * 0.3).exp() + cur.abs(); break;
      case 4: cur = where(cur > 0.1, cur, other).relu() - cur.sigmoid(); break;
      case 5: cur = cur.clone(); break;
      case 6: cur = cur.to(kFloat64).neg().to(kFloat32); break;
      case 7: cur.add_(other); break;  // in place, into a result (or an operand's copy)
      case 8: {
        cur = cur * 1;  // a result of cur's layout, then a write through a view of it
        cur.select(rank - 1, 0).mul_(2.0);
        break;
      }
      case 9: cur = cur.transpose(0, rank - 1) * 1.5; break;  // logical shape changes: keep others aligned
      case 10: cur = zeros_like(cur) + cur * 2; break;
      default: cur = cur.pow(2) - other; break;
    }
    if (cur.sizes() != shape) cur = cur.transpose(0, rank - 1);  // back to the operands' shape
    permuted += cur.is_contiguous() ? 0 : 1;
  }
  switch (rng() % 4) {
    case 0: return cur.sum(static_cast<int64_t>(rng() % static_cast<uint32_t>(rank)), rng() % 2 == 0);
    case 1: return cur.softmax(static_cast<int64_t>(rng() % static_cast<uint32_t>(rank)));
    case 2: return cur.amax({static_cast<int64_t>(rng() % static_cast<uint32_t>(rank))});
    default: return cur;
  }
}
}  // namespace

TEST_CASE("layout: random programs give the same values in permuted layouts as in row-major ones") {
  // 60 programs: each compiles kernels of its own (a few seconds cold)
  int permuted = 0, row_major = 0;
  for (uint32_t seed = 1; seed <= 60; ++seed) {
    std::vector<int> t1, t2;
    const Tensor a = run_program(seed, false, t1, permuted);
    const Tensor b = run_program(seed, true, t2, row_major);
    CAPTURE(seed);
    REQUIRE(t1 == t2);
    REQUIRE(a.sizes() == b.sizes());
    const std::vector<float> va = a.to_vector<float>(), vb = b.to_vector<float>();
    for (size_t i = 0; i < va.size(); ++i) {
      CAPTURE(i);
      // elementwise values are the same bits; a reduction may add in another order
      CHECK(va[i] == doctest::Approx(vb[i]).epsilon(1e-5));
    }
  }
  // most steps of the first runs were in a permuted layout (a transpose
  // step can make a row-major run's value non-contiguous too)
  CHECK(permuted > 150);
  CHECK(permuted > 2 * row_major);
}

// Autograd semantics against PyTorch 1.13: leaves and grad_fn names,
// backward and accumulation, retain_grad, NoGradGuard, detach, kiln::grad,
// higher order, in-place safety (version counter, leaves), CopySlices, and
// the gradient rules whose tie and zero cases PyTorch defines (values below
// were printed by PyTorch 1.13 for the same programs, or worked out by hand).
#include <doctest/doctest.h>

#include <string>
#include <thread>

#include "check_values.h"
#include "kiln/kiln.h"

using namespace kiln;
using kiln_test::check_values;

namespace {
Tensor leaf(const std::vector<double>& v, const Shape& s = {}, DType dt = DType::Float32) {
  Tensor t = tensor(v, dt);
  if (!s.empty()) t = t.reshape(s).clone();
  return t.requires_grad_();
}

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const kiln::Error& e) {
    return e.what();
  }
  return "<no kiln::Error>";
}
bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
}  // namespace

TEST_CASE("autograd: leaves, results, grad_fn names and printing as PyTorch") {
  Tensor x = leaf({1, 2});
  CHECK(x.is_leaf());
  CHECK(x.requires_grad());
  CHECK(x.grad_fn() == nullptr);
  Tensor y = x * 2;
  CHECK(!y.is_leaf());
  CHECK(y.requires_grad());
  REQUIRE(y.grad_fn() != nullptr);
  CHECK(y.grad_fn()->name() == "MulBackward0");
  CHECK(to_string(y) == "tensor([2., 4.], grad_fn=<MulBackward0>)");
  CHECK(to_string(y.sum()) == "tensor(6., grad_fn=<SumBackward0>)");
  CHECK(to_string(x) == "tensor([1., 2.], requires_grad=True)");
  CHECK(to_string(tensor({{1.0f}}, requires_grad())) == "tensor([[1.]], requires_grad=True)");
  // The edge from y goes to x's accumulator.
  auto next = y.grad_fn()->next_functions();
  REQUIRE(next.size() == 1);  // x * 2: one tensor input
  REQUIRE(next[0] != nullptr);
  CHECK(next[0]->name() == "AccumulateGrad");

  // Names for a sample of ops, as PyTorch 1.13 prints them.
  Tensor m = leaf({1, 2, 3, 4, 5, 6}, {2, 3}, DType::Float64);
  Tensor v = leaf({1, 2, 3}, {}, DType::Float64);
  CHECK(m.matmul(m.t()).grad_fn()->name() == "MmBackward0");
  CHECK(m.matmul(v).grad_fn()->name() == "MvBackward0");
  CHECK(v.matmul(v).grad_fn()->name() == "DotBackward0");
  CHECK((2 / m).grad_fn()->name() == "MulBackward0");
  CHECK((2 - m).grad_fn()->name() == "RsubBackward1");
  CHECK(m.square().grad_fn()->name() == "PowBackward0");
  CHECK(m.mean().grad_fn()->name() == "MeanBackward0");
  CHECK(m.mean(1).grad_fn()->name() == "MeanBackward1");
  CHECK(m.max().grad_fn()->name() == "MaxBackward1");
  CHECK(std::get<0>(m.max(1)).grad_fn()->name() == "MaxBackward0");
  CHECK(m.std(Shape{1}).grad_fn()->name() == "StdBackward0");
  CHECK(m.softmax(1).grad_fn()->name() == "SoftmaxBackward0");
  CHECK(m[0].grad_fn()->name() == "SelectBackward0");
  CHECK(m.index({indexing::Slice(), indexing::Slice(1, 3)}).grad_fn()->name() == "SliceBackward0");
  CHECK(m.chunk(3, 1)[0].grad_fn()->name() == "SplitBackward0");
  CHECK(m.reshape({6}).grad_fn()->name() == "ReshapeAliasBackward0");
  CHECK(m.t().reshape({6}).grad_fn()->name() == "UnsafeViewBackward0");
  CHECK(m.t().grad_fn()->name() == "TBackward0");
  CHECK(m.clamp(0, 1).grad_fn()->name() == "ClampBackward1");
  CHECK(cat({m, m}).grad_fn()->name() == "CatBackward0");
  CHECK(stack({m, m}).grad_fn()->name() == "StackBackward0");
  CHECK(m.to(DType::Float32).grad_fn()->name() == "ToCopyBackward0");
  CHECK(where(m > 2, m, 0.0).grad_fn()->name() == "WhereBackward0");
}

TEST_CASE("autograd: backward builds lazy gradients that accumulate until zero_") {
  Tensor x = leaf({1, 2, 3});
  Tensor loss = (x * x).sum();
  kiln::reset_stats();
  loss.backward();
  CHECK(kiln::stats().evaluations == 0);  // nothing computed by backward()
  REQUIRE(x.grad().defined());
  check_values(x.grad(), DType::Float32, {3}, {2, 4, 6});
  (x * x).sum().backward();
  check_values(x.grad(), DType::Float32, {3}, {4, 8, 12});
  x.mutable_grad().zero_();
  (x * 3).sum().backward();
  check_values(x.grad(), DType::Float32, {3}, {3, 3, 3});
  x.set_grad(Tensor());
  CHECK(!x.grad().defined());
  x.sum().backward();
  check_values(x.grad(), DType::Float32, {3}, {1, 1, 1});
}

TEST_CASE("autograd: non-scalar outputs need a gradient, backward(gradient) weights it") {
  Tensor x = leaf({1, 2, 3});
  Tensor y = x * 2;
  std::string e = error_of([&] { y.backward(); });
  CHECK(contains(e, "[backward] grad can be implicitly created only for scalar outputs"));
  CHECK(contains(e, "[3]"));
  e = error_of([&] { y.backward(ones({2})); });
  CHECK(contains(e, "[backward] Mismatch in shape: grad_output[0] has a shape of [2] and output[0] has a shape of [3]."));
  y.backward(tensor({1.0f, 10.0f, 100.0f}));
  check_values(x.grad(), DType::Float32, {3}, {2, 20, 200});
  Tensor c = ones({2});
  e = error_of([&] { c.sum().backward(); });
  CHECK(contains(e, "[backward] element 0 of tensors does not require grad and does not have a grad_fn"));
}

TEST_CASE("autograd: broadcasting is undone by summing, dtypes come back to the input's") {
  Tensor a = leaf({1, 2, 3}, {3, 1});
  Tensor b = leaf({1, 2, 3, 4}, {}, DType::Float64);
  Tensor y = a * b;  // [3, 4] float64
  CHECK(y.dtype() == DType::Float64);
  y.sum().backward();
  check_values(a.grad(), DType::Float32, {3, 1}, {10, 10, 10});
  check_values(b.grad(), DType::Float64, {4}, {6, 6, 6, 6});
}

TEST_CASE("autograd: retain_grad fills a non-leaf's grad, others stay empty") {
  Tensor x = leaf({1, 2});
  Tensor y = x * 3;
  Tensor z = y * y;
  y.retain_grad();
  CHECK(y.retains_grad());
  z.sum().backward();
  check_values(y.grad(), DType::Float32, {2}, {6, 12});
  check_values(x.grad(), DType::Float32, {2}, {18, 36});
  CHECK(!z.grad().defined());
}

TEST_CASE("autograd: NoGradGuard nests, is per thread, and detach() leaves the graph") {
  Tensor x = leaf({1, 2});
  {
    NoGradGuard g;
    CHECK(!GradMode::is_enabled());
    Tensor y = x * 2;
    CHECK(!y.requires_grad());
    CHECK(y.grad_fn() == nullptr);
    {
      NoGradGuard inner;
      CHECK(!(x + 1).requires_grad());
    }
    CHECK(!GradMode::is_enabled());
    bool other_thread = false;
    std::thread t([&] { other_thread = GradMode::is_enabled() && (x * 2).requires_grad(); });
    t.join();
    CHECK(other_thread);
  }
  CHECK(GradMode::is_enabled());
  {
    AutoGradMode off(false);
    CHECK(!(x * 2).requires_grad());
  }
  Tensor d = x.detach();
  CHECK(!d.requires_grad());
  CHECK(d.is_leaf());
  CHECK(d.is_alias_of(x));
  CHECK(!(d * 2).requires_grad());
}

TEST_CASE("autograd: in-place errors in PyTorch's words") {
  Tensor w = leaf({1, 2, 3});
  std::string e = error_of([&] { w.mul_(2); });
  CHECK(contains(e, "[mul_] a leaf Variable that requires grad is being used in an in-place operation."));
  e = error_of([&] { w[0].mul_(2); });
  CHECK(contains(e, "[mul_] a view of a leaf Variable that requires grad is being used in an in-place operation."));
  e = error_of([&] { w.zero_(); });
  CHECK(contains(e, "[zero_] a leaf Variable that requires grad"));
  {
    NoGradGuard g;  // allowed: an optimizer step
    w -= 1.0;
  }
  check_values(w, DType::Float32, {3}, {0, 1, 2});

  // A value saved for backward, changed in place before backward.
  Tensor x = leaf({1, 2});
  Tensor y = x.exp();
  y.add_(1);
  e = error_of([&] { y.sum().backward(); });
  CHECK(contains(e, "[backward] one of the variables needed for gradient computation has been "
                    "modified by an inplace operation: [torch.FloatTensor [2]], which is output 0 "
                    "of ExpBackward0, is at version 1; expected version 0 instead."));
  // Not saved (exp saves its result, not its input): fine, as in PyTorch.
  Tensor x2 = leaf({1, 2});
  Tensor h = x2 * 2;
  Tensor z = h.exp();
  h.add_(1);
  z.sum().backward();
  check_values(x2.grad(), DType::Float32, {2}, {2 * std::exp(2.0), 2 * std::exp(4.0)}, 1e-5);
  // An in-place op's own old self is kept, as PyTorch's original self.
  Tensor a = leaf({1, 2}), b = leaf({3, 4});
  Tensor c = a.clone();
  c.mul_(b);
  CHECK(c.grad_fn()->name() == "MulBackward0");
  c.sum().backward();
  check_values(a.grad(), DType::Float32, {2}, {3, 4});
  check_values(b.grad(), DType::Float32, {2}, {1, 2});
}

TEST_CASE("autograd: a second backward needs retain_graph") {
  Tensor x = leaf({1, 2});
  Tensor y = (x * x).sum();
  y.backward(Tensor(), true);
  y.backward();
  check_values(x.grad(), DType::Float32, {2}, {4, 8});
  std::string e = error_of([&] { y.backward(); });
  CHECK(contains(e, "[backward] Trying to backward through the graph a second time"));
  // Functions that saved nothing can run again, as in PyTorch.
  Tensor s = (x + 1).sum();
  s.backward();
  s.backward();
  check_values(x.grad(), DType::Float32, {2}, {6, 10});
}

TEST_CASE("autograd: kiln::grad returns gradients, unused and non-requiring inputs raise") {
  Tensor x = leaf({1, 2}), u = leaf({5});
  Tensor y = (x * x * x).sum();
  std::vector<Tensor> g = grad({y}, {x}, {}, true);
  check_values(g[0], DType::Float32, {2}, {3, 12});
  CHECK(!x.grad().defined());  // grad() does not accumulate
  std::string e = error_of([&] { grad({y}, {u}, {}, true); });
  CHECK(contains(e, "[grad] One of the differentiated Tensors appears to not have been used in the graph."));
  std::vector<Tensor> gu = grad({y}, {x, u}, {}, true, false, true);
  CHECK(gu[0].defined());
  CHECK(!gu[1].defined());
  e = error_of([&] { grad({y}, {ones({2})}); });
  CHECK(contains(e, "[grad] One of the differentiated Tensors does not require grad"));
}

TEST_CASE("autograd: higher order derivatives of x^3 with create_graph") {
  Tensor x = leaf({2.0}, {}, DType::Float64);
  Tensor y = x.pow(3);
  Tensor d1 = grad({y}, {x}, {}, std::nullopt, true)[0];
  CHECK(d1.requires_grad());
  CHECK(d1.item<double>() == doctest::Approx(12.0));  // 3x^2
  Tensor d2 = grad({d1}, {x}, {}, std::nullopt, true)[0];
  CHECK(d2.item<double>() == doctest::Approx(12.0));  // 6x
  Tensor d3 = grad({d2}, {x})[0];
  CHECK(d3.item<double>() == doctest::Approx(6.0));
  // backward(create_graph) then differentiate the grad itself.
  Tensor t = leaf({1.0, 2.0}, {}, DType::Float64);
  (t.sin() * t).sum().backward(Tensor(), std::nullopt, true);
  Tensor gt = t.grad();  // sin t + t cos t
  CHECK(gt.requires_grad());
  Tensor g2 = grad({gt.sum()}, {t})[0];  // 2 cos t - t sin t
  check_values(g2, DType::Float64, {2},
               {2 * std::cos(1.0) - std::sin(1.0), 2 * std::cos(2.0) - 2 * std::sin(2.0)}, 1e-12);
}

TEST_CASE("autograd: a frozen parameter gets no gradient and adds no gradient work") {
  Tensor w1 = leaf({1, 2}), w2 = leaf({3, 4});
  w2.requires_grad_(false);
  Tensor y = (w1 * w2).sum();
  auto mul = y.grad_fn()->next_functions()[0];
  REQUIRE(mul != nullptr);
  auto edges = mul->next_functions();
  CHECK(edges[0] != nullptr);
  CHECK(edges[1] == nullptr);  // no edge: no rule computes w2's gradient
  y.backward();
  check_values(w1.grad(), DType::Float32, {2}, {3, 4});
  CHECK(!w2.grad().defined());
}

TEST_CASE("autograd: writes through views (CopySlices) and views of written bases") {
  Tensor x = leaf({1, 2}), y = leaf({3});
  Tensor z = zeros({3});
  z.index_put_({1}, y.squeeze() * 2);  // z[1] = 2y
  CHECK(z.requires_grad());
  CHECK(z.grad_fn()->name() == "CopySlices");
  Tensor w = x.clone();
  w[0].mul_(10);  // w = [10 x0, x1]
  CHECK(w.grad_fn()->name() == "CopySlices");
  Tensor loss = (z * tensor({1.0f, 5.0f, 7.0f})).sum() + (w * tensor({2.0f, 3.0f})).sum();
  loss.backward();
  check_values(y.grad(), DType::Float32, {1}, {10});
  check_values(x.grad(), DType::Float32, {2}, {20, 3});
  // A view taken before its base was written reads the base's new history.
  Tensor b = leaf({1, 2, 3}).clone();
  Tensor v = b.narrow(0, 1, 2);
  b.mul_(b);  // b = x^2
  CHECK(v.grad_fn()->name() == "AsStridedBackward0");
  Tensor base = leaf({1, 2, 3});
  Tensor b2 = base.clone();
  Tensor v2 = b2.narrow(0, 1, 2);
  b2.mul_(b2);
  v2.sum().backward();
  check_values(base.grad(), DType::Float32, {3}, {0, 4, 6});
}

TEST_CASE("autograd: a leaf the graph can reach from itself is still freed") {
  // Functions hold saved leaves weakly: a strong reference closes a cycle
  // leaf -> ... -> function -> leaf that nothing frees (found by the fuzzer).
  std::weak_ptr<TensorImpl> view_leaf, base, grad_leaf;
  {
    // A leaf that is a view, whose base is then written with a product of
    // the leaf: view -> base -> CopySlices -> MulBackward0 (saves the leaf).
    Tensor y = zeros({4});
    Tensor x = y.slice(0, 0, 2).requires_grad_();
    y.slice(0, 2, 4).mul_(x * x);
    view_leaf = x.impl_ptr();
    base = y.impl_ptr();
    // backward with create_graph: x2.grad = 2 x2 has a history saving x2.
    Tensor x2 = leaf({1, 3});
    (x2 * x2).sum().backward({}, false, true);
    check_values(x2.grad(), DType::Float32, {2}, {2, 6});
    CHECK(x2.grad().requires_grad());
    grad_leaf = x2.impl_ptr();
  }
  CHECK(view_leaf.expired());
  CHECK(base.expired());
  CHECK(grad_leaf.expired());
  // While the leaf lives, a rule differentiated again still reaches it.
  Tensor x = leaf({2});
  Tensor g = kiln::grad({(x * x * x).sum()}, {x}, {}, true, true)[0];  // 3x^2
  Tensor gg = kiln::grad({g.sum()}, {x})[0];                            // 6x
  check_values(gg, DType::Float32, {1}, {12});
}

TEST_CASE("autograd: ties and zeros follow PyTorch's rules") {
  Tensor x = leaf({1, 3, 3});
  x.max().backward();
  check_values(x.grad(), DType::Float32, {3}, {0, 0.5, 0.5});
  Tensor m = leaf({1, 3, 3, 2, 2, 0}, {2, 3});
  std::get<0>(m.max(1)).sum().backward();  // the returned index only
  check_values(m.grad(), DType::Float32, {2, 3}, {0, 1, 0, 1, 0, 0});
  Tensor am = leaf({1, 3, 3, 2, 2, 0}, {2, 3});
  am.amax(Shape{1}).sum().backward();
  check_values(am.grad(), DType::Float32, {2, 3}, {0, 0.5, 0.5, 0.5, 0.5, 0});
  Tensor a = leaf({1, 2, 2}), b = leaf({2, 2, 1});
  (a.maximum(b) * tensor({1.0f, 10.0f, 100.0f})).sum().backward();
  check_values(a.grad(), DType::Float32, {3}, {0, 5, 100});
  check_values(b.grad(), DType::Float32, {3}, {1, 5, 0});
  Tensor c = leaf({-2, 0.5, 3});
  c.clamp(0, 1).sum().backward();
  check_values(c.grad(), DType::Float32, {3}, {0, 1, 0});
  Tensor p = leaf({1, 0, 3, 0, 0, 2}, {2, 3});
  p.prod(1).sum().backward();
  check_values(p.grad(), DType::Float32, {2, 3}, {0, 3, 0, 0, 0, 0});
  Tensor q = leaf({1, 2, 3, 4}, {2, 2});
  q.prod().backward();
  check_values(q.grad(), DType::Float32, {2, 2}, {24, 12, 8, 6});
  Tensor r = leaf({0, -1, 2});
  (r.abs() + r.relu()).sum().backward();
  check_values(r.grad(), DType::Float32, {3}, {0, -1, 2});
  Tensor s = leaf({1, 2, 3, 4});
  s.std().backward();
  check_values(s.grad(), DType::Float32, {4}, {-0.3873, -0.1291, 0.1291, 0.3873}, 1e-4);
  Tensor sm = leaf({1, 2, 3});
  (sm.log_softmax(0) * tensor({1.0f, 2.0f, 3.0f})).sum().backward();
  check_values(sm.grad(), DType::Float32, {3}, {0.4598, 0.5316, -0.9914}, 1e-4);
}

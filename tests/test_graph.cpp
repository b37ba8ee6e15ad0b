// The laziness contract and the graph underneath it: building ops never
// evaluates; graphs compare by structure; the op list's traits; views are
// AsStrided nodes over their storage's node; in-place writes are Assign nodes
// and bump the storage version; long unread loops stay bounded (auto
// evaluation past kAutoEvalDepth); eval() of several tensors; Philox random
// numbers (reproducible, in range, independent of evaluation order).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "core/node.h"
#include "core/op.h"
#include "core/tensor_impl.h"
#include "tests/check_values.h"

using namespace kiln;

namespace {

// The node holding a tensor's storage value right now.
const Node& storage_node(const Tensor& t) { return *t.impl()->storage->node; }
// The node that reads the tensor (its storage node, or an AsStrided view of it).
NodePtr read_node(const Tensor& t) { return t.impl()->node(); }
bool pending(const Tensor& t) { return storage_node(t).op != Op::Buffer; }

// a * b + 1 over fresh data of the given shape and dtype.
NodePtr axb1(const Shape& shape, DType dt, double seed) {
  Tensor a = full(shape, seed, dt).add(arange(shape.numel(), dt).reshape(shape));
  Tensor b = full(shape, 2 * seed, dt);
  a.eval();  // leaves are Buffers: graphs over different data
  b.eval();
  return read_node(a * b + 1);
}

}  // namespace

TEST_CASE("graph: building tensors and ops does not evaluate") {
  // A CUDA tensor cannot be evaluated without a CUDA backend, so any
  // evaluation while building would raise here.
  const Tensor g = ones({2, 3}, Device(kCUDA));
  CHECK(g.device().is_cuda());
  Tensor y;
  CHECK_NOTHROW(y = ((g * 2 + 1).exp() - g.t().t()).sum(1, true));
  CHECK_NOTHROW(y = y.softmax(0).matmul(ones({1, 4}, Device(kCUDA))));
  CHECK_NOTHROW(y = cat({y, y}, 1).amax({1}).var());
  CHECK_NOTHROW(y = where(g > 0, g, 0.5).reshape({3, 2}).select(0, 1));
  Tensor z = zeros({4}, Device(kCUDA));
  CHECK_NOTHROW(z.add_(1));
  CHECK_NOTHROW(z[1].fill_(7));
  CHECK_NOTHROW(z.to(kFloat64).clamp(0, 1));
  // attributes are known without evaluating
  CHECK(y.sizes() == Shape{2});
  CHECK(y.dtype() == kFloat32);
  CHECK(pending(y));
  CHECK(pending(z));
  if (!cuda::is_available()) {
    CHECK_THROWS_AS(y.eval(), Error);
    CHECK_THROWS_AS(z.to(kCPU).item<float>(), Error);
  }

  // On the CPU too: nothing is computed until read.
  const Tensor a = tensor({1.0, 2.0, 3.0});
  const Tensor b = (a * 2).exp().sum();
  CHECK(pending(b));
  const Node* sum_node = &storage_node(b);
  while (sum_node->op == Op::AsStrided) sum_node = sum_node->inputs.at(0).get();  // keepdim reshape
  CHECK(sum_node->op == Op::Sum);
  CHECK(sum_node->inputs.at(0)->op == Op::Exp);
  CHECK(sum_node->inputs.at(0)->inputs.at(0)->op == Op::Mul);
  CHECK(b.item<float>() == doctest::Approx(std::exp(2.0) + std::exp(4.0) + std::exp(6.0)).epsilon(1e-6));
  CHECK(!pending(b));  // reading replaced the storage's node by its value
  CHECK(storage_node(b).buffer != nullptr);
  // factories are lazy sources
  CHECK(storage_node(zeros({3})).op == Op::Full);
  CHECK(storage_node(arange(4)).op == Op::Arange);
  CHECK(storage_node(eye(2)).op == Op::Eye);
  CHECK(storage_node(linspace(0, 1, 3)).op == Op::Linspace);
  CHECK(storage_node(rand({2})).op == Op::RandUniform);
  CHECK(storage_node(tensor({1, 2})).op == Op::Buffer);
}

TEST_CASE("graph: structurally equal graphs over different data hash and compare equal") {
  const NodePtr n1 = axb1({2, 3}, kFloat32, 1.0);
  const NodePtr n2 = axb1({2, 3}, kFloat32, 5.0);
  REQUIRE(n1 != n2);
  CHECK(n1->op == Op::Add);
  CHECK(n1->hash == n2->hash);
  CHECK(same_structure(*n1, *n2));
  CHECK(same_structure(*n1, *n1));
  // a different shape, dtype, op or attribute differs
  const NodePtr shape = axb1({3, 2}, kFloat32, 1.0);
  const NodePtr dtype = axb1({2, 3}, kFloat64, 1.0);
  CHECK(n1->hash != shape->hash);
  CHECK(!same_structure(*n1, *shape));
  CHECK(n1->hash != dtype->hash);
  CHECK(!same_structure(*n1, *dtype));
  Tensor a = ones({2, 3}), b = ones({2, 3});
  a.eval();
  b.eval();
  const NodePtr base = read_node(a * b + 1);
  CHECK(same_structure(*n1, *base));
  const NodePtr other_op = read_node(a * b - 1);
  const NodePtr other_inner = read_node(a + b + 1);
  const NodePtr other_order = read_node(1 + a * b);
  for (const NodePtr& n : {other_op, other_inner, other_order}) {
    CHECK(n->hash != base->hash);
    CHECK(!same_structure(*base, *n));
  }
  // a floating-point constant is data (a kernel param: a new learning rate
  // compiles nothing); an integer one is structure (compiled in)
  const NodePtr other_const = read_node(a * b + 2);
  CHECK(other_const->hash == base->hash);
  CHECK(same_structure(*base, *other_const));
  CHECK(!same_structure(*read_node(a * b + 2), *read_node((a * b).to(kFloat64) + 2)));
  Tensor ia = ones({2, 3}, kInt64);
  CHECK(read_node(ia * 3 + 1)->hash != read_node(ia * 3 + 2)->hash);
  CHECK(!same_structure(*read_node(ia * 3 + 1), *read_node(ia * 3 + 2)));
  // attributes of views and reductions count
  CHECK(!same_structure(*read_node(a.sum(0)), *read_node(a.sum(1))));
  CHECK(same_structure(*read_node(a.sum(0)), *read_node(b.sum(0))));
  CHECK(!same_structure(*read_node(a.t()), *read_node(a.view({3, 2}))));
  CHECK(!same_structure(*read_node(a.slice(1, 0, 2)), *read_node(a.slice(1, 1, 3))));
  // a device differs
  CHECK(!same_structure(*read_node(ones({2}) + 1), *read_node(ones({2}, Device(kCUDA)) + 1)));
  // a random node's seed and Philox offset are data (kernel params), its
  // distribution's parameters are structure
  const NodePtr r1 = read_node(rand({2, 3}) * 2), r2 = read_node(rand({2, 3}) * 2);
  REQUIRE(r1->inputs[0]->op == Op::RandUniform);
  REQUIRE(r1->inputs[0]->attrs.ints[1] != r2->inputs[0]->attrs.ints[1]);  // other offsets
  CHECK(r1->hash == r2->hash);
  CHECK(same_structure(*r1, *r2));
  CHECK(!same_structure(*read_node(randn({2, 3})), *read_node(randn({2, 3}, kFloat32) * 1)));
  CHECK(!same_structure(*read_node(randint(0, 5, {4})), *read_node(randint(0, 6, {4}))));
  CHECK(read_node(randint(0, 5, {4}))->hash != read_node(randint(0, 6, {4}))->hash);
}

TEST_CASE("graph: the op list and its traits") {
  CHECK(is_elementwise(Op::Add));
  CHECK(is_elementwise(Op::Exp));
  CHECK(is_elementwise(Op::Where));
  CHECK(is_elementwise(Op::Cast));
  CHECK(!is_elementwise(Op::Sum));
  CHECK(!is_elementwise(Op::Matmul));
  CHECK(!is_elementwise(Op::AsStrided));
  CHECK(is_reduction(Op::Sum));
  CHECK(is_reduction(Op::ArgMax));
  CHECK(is_reduction(Op::Any));
  CHECK(!is_reduction(Op::Add));
  CHECK(!is_reduction(Op::Cat));
  CHECK(is_view(Op::AsStrided));
  CHECK(!is_view(Op::Assign));
  CHECK(!is_view(Op::Cat));
  CHECK(is_source(Op::Buffer));
  CHECK(is_source(Op::RandNormal));
  CHECK(!is_source(Op::Neg));
  CHECK(is_comparison(Op::Lt));
  CHECK(!is_comparison(Op::Maximum));
  CHECK(op_class(Op::Matmul) == OpClass::Contraction);
  CHECK(op_class(Op::Cat) == OpClass::Join);
  CHECK(op_class(Op::Assign) == OpClass::Write);
  CHECK(op_class(Op::ToDevice) == OpClass::Transfer);
  CHECK(op_info(Op::Where).arity == 3);
  CHECK(op_info(Op::Cat).arity == -1);
  CHECK(std::string(op_name(Op::Matmul)) == "Matmul");
  // every op has a distinct, non-empty name and an arity matching its class
  std::set<std::string> names;
  int count = 0;
#define KILN_TEST_OP(NAME, CLS, ARITY)                                     \
  {                                                                        \
    const OpInfo& info = op_info(Op::NAME);                                \
    CHECK(std::string(info.name) == #NAME);                                \
    CHECK(info.cls == OpClass::CLS);                                       \
    CHECK(info.arity == (ARITY));                                          \
    CHECK((info.arity < 0 || info.arity == 0 == is_source(Op::NAME)));     \
    names.insert(info.name);                                               \
    ++count;                                                               \
  }
  KILN_FORALL_OPS(KILN_TEST_OP)
#undef KILN_TEST_OP
  CHECK(static_cast<int>(names.size()) == count);
  CHECK(names.count("") == 0);
}

TEST_CASE("graph: views are AsStrided nodes over the same storage node") {
  Tensor x = tensor({{0.0, 1.0, 2.0}, {3.0, 4.0, 5.0}});
  const NodePtr base = x.impl()->storage->node;
  CHECK(read_node(x) == base);  // covers the storage: no view node
  struct Case {
    Tensor v;
    Shape sizes;
    std::vector<int64_t> attrs;  // {offset, strides...}
  };
  const std::vector<Case> cases = {
      {x.t(), {3, 2}, {0, 1, 3}},
      {x[1], {3}, {3, 1}},
      {x.select(1, 2), {2}, {2, 3}},
      {x.slice(1, 1, 3), {2, 2}, {1, 3, 1}},
      {x.slice(1, 0, 3, 2), {2, 2}, {0, 3, 2}},
      {x.unsqueeze(0), {1, 2, 3}, {0, 6, 3, 1}},
      {x[0].expand({4, 3}), {4, 3}, {0, 0, 1}},
      {x.permute({1, 0}).slice(0, 1, 2), {1, 2}, {1, 1, 3}},
      {x.view({3, 2}), {3, 2}, {0, 2, 1}},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    CAPTURE(i);
    const Case& c = cases[i];
    CHECK(c.v.is_alias_of(x));
    CHECK(c.v.impl()->storage == x.impl()->storage);
    const NodePtr n = read_node(c.v);
    REQUIRE(n->op == Op::AsStrided);
    CHECK(n->shape == c.sizes);
    REQUIRE(n->inputs.size() == 1);
    CHECK(n->inputs[0] == base);  // the storage's node itself, not a copy
    CHECK(n->attrs.ints == c.attrs);
  }
  // a view of an unevaluated result views that result's node
  Tensor y = x * 2;
  const NodePtr yv = read_node(y.t());
  CHECK(yv->op == Op::AsStrided);
  CHECK(yv->inputs[0] == y.impl()->storage->node);
  CHECK(yv->inputs[0]->op == Op::Mul);
  kiln_test::check_values(y.t(), kFloat32, {3, 2}, {0, 6, 2, 8, 4, 10});
}

TEST_CASE("graph: in-place writes are Assign nodes and bump the storage version") {
  Tensor x = zeros({2, 3});
  Storage& s = *x.impl()->storage;
  const uint64_t v0 = s.version;
  const NodePtr before = s.node;
  Tensor row = x[1];
  row.fill_(5);  // a partial write
  CHECK(s.version == v0 + 1);
  REQUIRE(s.node->op == Op::Assign);
  CHECK(s.node->inputs.at(0) == before);   // the old value
  CHECK(s.node->inputs.at(1)->op == Op::Full);  // the written region's value
  CHECK(s.node->attrs.ints == std::vector<int64_t>{3, 1});  // {offset, strides}
  CHECK(s.node->shape == Shape{2, 3});
  // the base and other views see the write
  CHECK(x.to_vector<float>() == std::vector<float>{0, 0, 0, 5, 5, 5});
  CHECK(x.select(1, 0).to_vector<float>() == std::vector<float>{0, 5});
  // a write covering the storage replaces its value directly
  const uint64_t v1 = s.version;
  x.add_(1);
  CHECK(s.version == v1 + 1);
  CHECK(s.node->op == Op::Add);
  x.t()[2] *= 10;  // through a transposed view: strided region
  CHECK(s.version == v1 + 2);
  REQUIRE(s.node->op == Op::Assign);
  CHECK(s.node->attrs.ints == std::vector<int64_t>{2, 3});
  CHECK(x.to_vector<float>() == std::vector<float>{1, 1, 10, 6, 6, 60});
  // a tensor built before the write keeps the old value
  Tensor old = x + 0;
  x.zero_();
  CHECK(old.to_vector<float>() == std::vector<float>{1, 1, 10, 6, 6, 60});
  CHECK(x.sum().item<float>() == 0);
  CHECK(s.version == v1 + 3);
}

TEST_CASE("graph: a 100,000-step loop that is never read stays bounded and is right") {
  // (its speed is bench/graph_build's to measure: tests never time)
  Tensor x = zeros({4});
  uint32_t deepest = 0;
  for (int i = 0; i < 100000; ++i) {
    x = x + 1;
    deepest = std::max(deepest, read_node(x)->depth);
  }
  CHECK(deepest <= kAutoEvalDepth + 1);
  kiln_test::check_values(x, kFloat32, {4}, {100000, 100000, 100000, 100000});
  // the same in place, on a view, and with an integer accumulator
  Tensor y = zeros({2, 2}, kInt64);
  Tensor corner = y[0];
  for (int i = 0; i < 100000; ++i) corner.add_(1);
  CHECK(y.impl()->storage->node->depth <= kAutoEvalDepth + 1);
  kiln_test::check_values(y, kInt64, {2, 2}, {100000, 100000, 0, 0});
}

TEST_CASE("graph: eval() of several tensors sharing a subgraph") {
  const Tensor a = tensor({1.0, 2.0, 3.0});
  const Tensor shared = (a * a).exp();
  const Tensor t1 = shared + 1;
  const Tensor t2 = shared.sum();
  const Tensor t3 = shared * shared;
  CHECK(pending(t1));
  CHECK(pending(t2));
  eval(t1, t2, t3);
  CHECK(!pending(t1));
  CHECK(!pending(t2));
  CHECK(!pending(t3));
  const double e1 = std::exp(1.0), e4 = std::exp(4.0), e9 = std::exp(9.0);
  kiln_test::check_values(t1, kFloat32, {3}, {e1 + 1, e4 + 1, e9 + 1});
  kiln_test::check_values(t2, kFloat32, {}, {e1 + e4 + e9});
  kiln_test::check_values(t3, kFloat32, {3}, {e1 * e1, e4 * e4, e9 * e9});
  kiln_test::check_values(shared, kFloat32, {3}, {e1, e4, e9});
  // evaluated tensors, duplicates and views of one storage in one call
  const Tensor u = a + 10;
  CHECK_NOTHROW(eval({u, u, u.t(), u[0], t1, a}));
  kiln_test::check_values(u, kFloat32, {3}, {11, 12, 13});
  CHECK_NOTHROW(eval(std::vector<Tensor>{}));
  // Tensor::eval returns the tensor, evaluated
  const Tensor v = (a - 1).eval();
  CHECK(!pending(v));
  kiln_test::check_values(v, kFloat32, {3}, {0, 1, 2});
  // a later graph over an evaluated tensor builds on its value
  kiln_test::check_values(t1 * 0 + t2, kFloat32, {3}, {e1 + e4 + e9, e1 + e4 + e9, e1 + e4 + e9});
}

TEST_CASE("graph: Philox random numbers are reproducible and in range") {
  manual_seed(42);
  CHECK(initial_seed() == 42);
  const Tensor a = rand({1000});
  const Tensor b = randn({1000});
  const Tensor c = randint(-3, 5, {1000});
  const Tensor d = randint(10, {3, 4});
  manual_seed(42);
  const Tensor a2 = rand({1000});
  const Tensor b2 = randn({1000});
  const Tensor c2 = randint(-3, 5, {1000});
  const Tensor d2 = randint(10, {3, 4});
  CHECK(a.to_vector<float>() == a2.to_vector<float>());
  CHECK(b.to_vector<float>() == b2.to_vector<float>());
  CHECK(c.to_vector<int64_t>() == c2.to_vector<int64_t>());
  CHECK(d.to_vector<int64_t>() == d2.to_vector<int64_t>());
  CHECK(a.dtype() == kFloat32);
  CHECK(b.dtype() == kFloat32);
  CHECK(c.dtype() == kInt64);
  CHECK(d.sizes() == Shape{3, 4});
  // successive calls and other seeds differ
  CHECK(a.to_vector<float>() != rand({1000}).to_vector<float>());
  manual_seed(43);
  CHECK(a.to_vector<float>() != rand({1000}).to_vector<float>());
  // ranges
  const std::vector<float> av = a.to_vector<float>();
  CHECK(*std::min_element(av.begin(), av.end()) >= 0.0f);
  CHECK(*std::max_element(av.begin(), av.end()) < 1.0f);
  const std::vector<int64_t> cv = c.to_vector<int64_t>();
  CHECK(*std::min_element(cv.begin(), cv.end()) == -3);
  CHECK(*std::max_element(cv.begin(), cv.end()) == 4);  // every value of [low, high) appears
  CHECK(std::set<int64_t>(cv.begin(), cv.end()).size() == 8);
  const std::vector<int64_t> dv = d.to_vector<int64_t>();
  CHECK(*std::min_element(dv.begin(), dv.end()) >= 0);
  CHECK(*std::max_element(dv.begin(), dv.end()) < 10);
  // other dtypes
  const Tensor r64 = rand({1000}, kFloat64);
  CHECK(r64.dtype() == kFloat64);
  CHECK(r64.min().item<double>() >= 0.0);
  CHECK(r64.max().item<double>() < 1.0);
  const Tensor rh = rand({1000}, kHalf);
  CHECK(rh.max().item<float>() <= 1.0f);
  CHECK(randint(0, 200, {50}, kUInt8).dtype() == kUInt8);
  CHECK(rand_like(ones({2, 3}, kFloat64)).dtype() == kFloat64);
  CHECK(randn_like(ones({2, 3})).sizes() == Shape{2, 3});
  CHECK(randint_like(ones({4}, kInt32), 5, 6).to_vector<int>() == std::vector<int>{5, 5, 5, 5});
}

TEST_CASE("graph: rand / randn statistics over 100k samples") {
  manual_seed(1234);
  const Tensor u = rand({100000}, kFloat64);
  CHECK(u.mean().item<double>() == doctest::Approx(0.5).epsilon(0.01));
  CHECK(u.var().item<double>() == doctest::Approx(1.0 / 12).epsilon(0.01));
  const Tensor n = randn({100000}, kFloat64);
  CHECK(std::abs(n.mean().item<double>()) < 0.02);
  CHECK(std::abs(n.std().item<double>() - 1.0) < 0.02);
  // about 68.3% within one standard deviation
  const double within = (n.abs() < 1).to(kFloat64).mean().item<double>();
  CHECK(within == doctest::Approx(0.6827).epsilon(0.02));
  const Tensor n32 = randn({100000});
  CHECK(std::abs(n32.mean().item<float>()) < 0.02f);
  CHECK(std::abs(n32.std().item<float>() - 1.0f) < 0.02f);
}

TEST_CASE("graph: random values do not depend on evaluation order") {
  manual_seed(7);
  const Tensor a = rand({64});
  const Tensor b = randn({64});
  const Tensor c = randint(0, 1000, {64});
  // evaluate in reverse order, and through further ops
  const std::vector<int64_t> cv = c.to_vector<int64_t>();
  const std::vector<float> bv = (b * 1).to_vector<float>();
  const std::vector<float> av = a.to_vector<float>();
  manual_seed(7);
  const Tensor a2 = rand({64});
  const Tensor b2 = randn({64});
  const Tensor c2 = randint(0, 1000, {64});
  eval(a2, b2, c2);
  CHECK(a2.to_vector<float>() == av);
  CHECK(b2.to_vector<float>() == bv);
  CHECK(c2.to_vector<int64_t>() == cv);
  CHECK(av != b2.to_vector<float>());
  // a view read before its base, or a part of a larger tensor
  manual_seed(7);
  const Tensor a3 = rand({64});
  CHECK(a3.slice(0, 32, 64).to_vector<float>() == std::vector<float>(av.begin() + 32, av.end()));
  CHECK(a3.to_vector<float>() == av);
}

TEST_CASE("SmallVector keeps values inline, then on the heap, through copies and moves") {
  kiln::SmallVector<double, 2> v{1.5, 2.5};
  CHECK(v.size() == 2);
  v.push_back(3.5);  // past the inline capacity
  v.push_back(v[0]);  // an element of itself while growing
  CHECK(v.size() == 4);
  CHECK(v[2] == 3.5);
  CHECK(v[3] == 1.5);
  kiln::SmallVector<double, 2> c = v;
  CHECK(c == v);
  kiln::SmallVector<double, 2> m = std::move(c);
  CHECK(m == v);
  CHECK(c.empty());
  m = {7.0};
  CHECK(m.size() == 1);
  CHECK(m[0] == 7.0);
  CHECK(!(m == v));
  kiln::SmallVector<double, 2> e;
  e = std::move(m);
  CHECK(e.back() == 7.0);
}

// Provenance: every graph node records the line of the user's call that
// created it — methods, free functions, operators, compound assignment,
// writes through an index, composite ops (stamped with the user's line, not
// kiln's) and the gradient nodes backward() adds (stamped with the forward
// op's line).
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>

#include "core/node.h"
#include "core/tensor_impl.h"
#include "kiln/kiln.h"

using namespace kiln;

namespace {
const Node& node(const Tensor& t) { return *t.impl()->storage->node; }
bool in_this_file(const SourceLoc& l) {
  return std::string(l.file_name()).find("test_provenance.cpp") != std::string::npos;
}
// Every node reachable from n that is not a leaf buffer has a location in this file.
bool all_here(const Node& n, int& count) {
  if (n.op == Op::Buffer) return true;
  ++count;
  if (!in_this_file(n.loc)) return false;
  for (const auto& in : n.inputs)
    if (!all_here(*in, count)) return false;
  return true;
}
}  // namespace

TEST_CASE("provenance: methods, functions and operators record the caller's line") {
  auto a = ones({2, 3});
  const uint32_t l0 = __LINE__ - 1;
  auto b = a.exp();
  const uint32_t l1 = __LINE__ - 1;
  auto c = a + b;
  const uint32_t l2 = __LINE__ - 1;
  auto d = 2.0 * c;
  const uint32_t l3 = __LINE__ - 1;
  auto e = kiln::relu(d);
  const uint32_t l4 = __LINE__ - 1;
  auto f = -e;
  const uint32_t l5 = __LINE__ - 1;
  CHECK(node(a).loc.line() == l0);
  CHECK(node(b).loc.line() == l1);
  CHECK(node(c).loc.line() == l2);
  CHECK(node(d).loc.line() == l3);
  CHECK(node(e).loc.line() == l4);
  CHECK(node(f).loc.line() == l5);
  CHECK(in_this_file(node(c).loc));
  CHECK(std::strcmp(node(c).loc.function_name(), __func__) == 0);
}

TEST_CASE("provenance: composite ops stamp every node with the user's line") {
  auto x = rand({4, 5});
  auto s = x.softmax(1);  // max, sub, exp, sum, div inside kiln
  const uint32_t l = __LINE__ - 1;
  int count = 0;
  CHECK(all_here(node(s), count));
  CHECK(count >= 4);
  CHECK(node(s).loc.line() == l);
  auto v = x.var(Shape{1}, true, true);
  const uint32_t lv = __LINE__ - 1;
  CHECK(node(v).loc.line() == lv);
  // results in a permuted layout (core/layout.h): the views that read them,
  // and the row-major copy softmax makes of one, carry the user's lines too
  auto y = x.t() * 2;
  auto ts = y.softmax(1);
  count = 0;
  CHECK(all_here(node(ts), count));
  CHECK(count >= 6);
  CHECK(y.impl()->node()->op == Op::AsStrided);
  CHECK(y.impl()->node()->loc.line() == __LINE__ - 6);
}

TEST_CASE("provenance: in-place ops, compound assignment and index writes") {
  auto w = zeros({3});
  w += 1;
  const uint32_t l1 = __LINE__ - 1;
  CHECK(node(w).loc.line() == l1);
  auto g = ones({3});
  w -= 0.5 * g;
  const uint32_t l2 = __LINE__ - 1;
  CHECK(node(w).loc.line() == l2);
  w.index({1}) = 7;
  const uint32_t l3 = __LINE__ - 1;
  CHECK(node(w).loc.line() == l3);
  w.mul_(2);
  const uint32_t l4 = __LINE__ - 1;
  CHECK(node(w).loc.line() == l4);
  CHECK(w.to_vector<float>() == std::vector<float>{1.0f, 14.0f, 1.0f});
}

TEST_CASE("provenance: gradient nodes carry the line of the forward op they differentiate") {
  auto w = full({2, 2}, 0.5, requires_grad());
  auto x = ones({2, 2});
  auto y = (x.matmul(w)).exp();
  const uint32_t lfwd = __LINE__ - 1;
  auto loss = y.sum();
  loss.backward();
  // w.grad() = x^T @ (exp(xw) * 1): its top node comes from MmBackward0,
  // recorded on the forward line; no gradient node names kiln's sources.
  const Node& g = node(w.grad());
  CHECK(g.loc.line() == lfwd);
  int count = 0;
  CHECK(all_here(g, count));
  CHECK(count >= 2);
  CHECK(w.grad().to_vector<float>()[0] == doctest::Approx(2 * std::exp(1.0f)));
}

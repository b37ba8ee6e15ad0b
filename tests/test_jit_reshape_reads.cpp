// A reshape of a value computed inline reads it dim by dim where the two
// shapes pair up in runs of equal element counts (jit/lower_views.cpp,
// grouped_reshape): a split dim divides its own index only, merged dims
// multiply; the general read unravels the flat position through every dim
// of the value, a division per dim at every element (kept where the split
// dim is the last one). Pinned: the kernels'
// divisions, and every reshape's values against the reference evaluator,
// compiled and interpreted (the fallback's too).
#include <doctest/doctest.h>

#include "jit/schedule.h"
#include "kiln/kiln.h"
#include "tests/jit_checks.h"

using namespace kiln;

namespace {

Tensor data(const Shape& s, double scale = 1.0) { return kiln_test::sine_leaf(s, kFloat32, scale); }

// The integer divisions and remainders among the values of the kernel that
// computes t (its plan's only step).
int divisions(const Tensor& t) {
  const jit::Schedule s = kiln_test::plan(t);
  REQUIRE(s.steps.size() == 1);
  int count = 0;
  for (const jit::Value& v : s.steps[0].code->ir.values)
    count += (v.op == jit::VOp::Div || v.op == jit::VOp::Mod) && v.dtype == kInt64;
  return count;
}

}  // namespace

TEST_CASE("jit: a reshape of a computed value reads it dim by dim") {
  // the value's channels seen as groups of channels (a per-group factor):
  // the read merges two dims of the view into one of the value's, a
  // multiplication
  const Tensor x = data({2, 12, 5, 6}), g = data({1, 3, 1, 1, 1}, 0.5);
  const Tensor merge = (x * 2 + 1).reshape({2, 3, 4, 5, 6}) * g;
  CHECK(divisions(merge) == 0);
  kiln_test::check_jit(merge);
  // the other way (group_norm's gradient reads its normalized groups as
  // channels): the split dim divides its own index, one division and one
  // remainder, not one of each per dim of the value
  const Tensor y = data({2, 3, 4, 5, 6}), h = data({1, 12, 1, 1}, 0.25);
  const Tensor split = (y.exp() - 1).reshape({2, 12, 5, 6}) * h;
  CHECK(divisions(split) == 2);
  kiln_test::check_jit_close(split, 1e-6);
  // a split of the last dim: the general read (it divides at every element
  // either way)
  kiln_test::check_jit_close((y.exp() - 1).reshape({2, 12, 30}) * data({1, 12, 1}, 0.25), 1e-6);
  // a split and a merge in one reshape, size-1 dims on both sides
  const Tensor z = data({6, 1, 10, 7}), k = data({2, 1, 1, 1, 70}, 0.5);
  kiln_test::check_jit((z * z).reshape({2, 3, 1, 1, 70}) + k);
  // a reduction over the split value's group dims (group_norm's statistics)
  kiln_test::close_to_reference(((x * 2 + 1).reshape({2, 3, 4, 5, 6}) * g).sum({2, 3, 4}), 1e-6);
  // no pairing finer than the whole: the general read
  const Tensor w = data({6, 4}), c = data({1, 6}, 0.5);
  kiln_test::check_jit((w + 1).reshape({4, 6}) * c);
}

// Adjacent dims that every read of a kernel sees as one contiguous block
// run as one loop (jit/lower_merge.cpp): a mean over an image's [H, W], an
// elementwise op over [N, C, H, W], a norm's rows. The tests pin the loop
// structure (loops counted in the kernel IR, no integer division or
// remainder left by the merge) and the values against the reference
// evaluator; reads that cannot see the dims as one block (a transpose, a
// broadcast along part of them) keep one loop per dim, with equal values;
// a strided view (a slice, a permutation) merges the dims whose strides
// are row-major within it.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "codegen/backend.h"
#include "kiln/nn_functional.h"
#include "tests/jit_checks.h"

using namespace kiln;

namespace {

Tensor data(const Shape& s, DType dt = kFloat32) { return kiln_test::sine_leaf(s, dt, 2.0); }

int count_loops(const std::vector<jit::Stmt>& body) {
  int n = 0;
  for (const jit::Stmt& s : body) n += (s.kind == jit::StmtKind::Loop) + count_loops(s.body);
  return n;
}

struct Structure {
  size_t kernels = 0;
  int loops = 0;             // in the last kernel (the one writing t)
  bool divides = false;      // an integer Div or Mod in it
};

Structure structure_of(const Tensor& t) {
  const jit::Schedule s = kiln_test::plan(t);
  Structure r;
  r.kernels = s.steps.size();
  const jit::Kernel& k = s.steps.back().code->ir;
  r.loops = count_loops(k.body);
  for (const jit::Value& v : k.values)
    r.divides = r.divides || ((v.op == jit::VOp::Div || v.op == jit::VOp::Mod) && v.dtype == kInt64);
  return r;
}

}  // namespace

TEST_CASE("merged dims: a reduction over adjacent dims is one loop without divisions") {
  const Tensor x = data({4, 3, 7, 9});
  // rows over N, C; one loop over H * W (not one per dim: 4 loops)
  for (const Tensor& t : {x.sum({2, 3}), x.mean({2, 3}), (x * x).sum({2, 3}, true), x.amax({2, 3})}) {
    const Structure s = structure_of(t);
    CHECK(s.kernels == 1);
    CHECK(s.loops == 3);
    CHECK_FALSE(s.divides);
    kiln_test::check_jit(t);
  }
  // every dim but the first: one row loop, one reduction loop
  const Tensor all = x.sum({1, 2, 3});
  CHECK(structure_of(all).loops == 2);
  CHECK_FALSE(structure_of(all).divides);
  kiln_test::check_jit(all);
  // a run in the middle: each reduction step reads a column at the stride of the last dim
  const Tensor mid = x.sum({1, 2});
  CHECK(structure_of(mid).loops == 3);
  CHECK_FALSE(structure_of(mid).divides);
  kiln_test::check_jit(mid);
  // size-1 dims inside the run get no loop; the run goes across them
  const Tensor y = data({2, 5, 1, 6});
  CHECK(structure_of(y.sum({1, 2, 3})).loops == 2);
  kiln_test::check_jit(y.sum({1, 2, 3}));
  // integers accumulate in int64 as before
  const Tensor xi = (data({3, 4, 5, 6}) * 100).to(kInt32);
  CHECK(structure_of(xi.sum({2, 3})).loops == 3);
  kiln_test::check_jit(xi.sum({2, 3}));
  kiln_test::check_jit(xi.amin({1, 2, 3}));
}

TEST_CASE("merged dims: a row kernel's statistics and its per-element loop merge alike") {
  const Tensor x = data({4, 3, 7, 9});
  // x - mean: rows over N, C; the mean's loop and the final loop, one each
  const Tensor centred = x - x.mean({2, 3}, true);
  const Structure s = structure_of(centred);
  CHECK(s.kernels == 1);
  CHECK(s.loops == 4);
  CHECK_FALSE(s.divides);
  kiln_test::check_jit(centred);
  // var: the mean read inside the squares' loop (a broadcast along the whole run)
  const Tensor v = x.var({2, 3});
  CHECK(structure_of(v).loops == 4);
  CHECK_FALSE(structure_of(v).divides);
  kiln_test::close_to_reference(v, 1e-6);
  // softmax over a flattened image's dims: max, sum of exp, output
  const Tensor sm = (x - x.amax({1, 2, 3}, true)).exp();
  const Tensor soft = sm / sm.sum({1, 2, 3}, true);
  CHECK_FALSE(structure_of(soft).divides);
  kiln_test::close_to_reference(soft, 1e-6);
  // the norms over several trailing dims
  kiln_test::close_to_reference(layer_norm(x, {3, 7, 9}), 1e-5);
  kiln_test::close_to_reference(group_norm(x, 3), 1e-5);
  kiln_test::close_to_reference(instance_norm(x), 1e-5);
  kiln_test::close_to_reference(batch_norm(x, Tensor(), Tensor(), Tensor(), Tensor(), true), 1e-5);
}

TEST_CASE("merged dims: elementwise kernels loop once over the dims their reads see as one block") {
  const Tensor x = data({4, 3, 7, 9});
  // every dim: one (parallel) loop
  const Tensor t = x * 2 + 1;
  CHECK(structure_of(t).loops == 1);
  CHECK_FALSE(structure_of(t).divides);
  kiln_test::check_jit(t);
  // a per-channel bias broadcast along H, W: loops over N, C and one over H * W
  const Tensor b = data({3, 1, 1});
  CHECK(structure_of(x + b).loops == 3);
  CHECK_FALSE(structure_of(x + b).divides);
  kiln_test::check_jit(x + b);
  // broadcast along part of every run (a row of W): one loop per dim
  const Tensor w = data({9});
  CHECK(structure_of(x * w).loops == 4);
  CHECK_FALSE(structure_of(x * w).divides);
  kiln_test::check_jit(x * w);
  // an added size-1 dim (unsqueeze) reads through
  const Tensor u = data({4, 3, 63}).reshape({4, 3, 1, 63}).exp() + data({4, 3, 1, 63});
  CHECK(structure_of(u).loops == 1);
  kiln_test::check_jit_close(u, 2e-7);
  // a permuted read cannot (tiles of the transpose): equal values
  kiln_test::check_jit(x.permute({0, 1, 3, 2}).contiguous() * 3);
  kiln_test::check_jit(x.permute({0, 2, 1, 3}) * 3);
  // random numbers at their row-major positions, as before
  manual_seed(7);
  const Tensor r = rand({4, 3, 7, 9}) + x;
  CHECK(structure_of(r).loops == 1);
  kiln_test::check_jit(r);
}

TEST_CASE("merged dims: empty dims and a new shape") {
  // a zero-size dim inside the run: an empty loop
  kiln_test::check_jit(data({2, 3, 0, 4}).sum({2, 3}));
  kiln_test::check_jit(data({2, 3, 0, 4}) * 2);
  kiln_test::check_jit(data({2, 0, 3, 4}).mean({2, 3}));
  // a new shape of the same structure compiles nothing
  auto f = [](const Tensor& x) { return x - x.mean({2, 3}, true) + (x * 2).sum({1, 2, 3}, true); };
  const Tensor first = f(data({2, 3, 5, 7}));
  first.eval();
  reset_stats();
  const Tensor second = f(data({3, 2, 6, 4}));
  second.eval();
  if (codegen::cpu_backend().available()) {
    CHECK(stats().kernels_compiled == 0);
    CHECK(stats().cache_hits_disk == 0);
  }
  kiln_test::close_to_reference(f(data({3, 2, 6, 4})), 1e-6);
}

TEST_CASE("merged dims: a row-major block of a buffer at an offset (narrow, select) merges too") {
  const Tensor x = data({4, 3, 7, 9});
  x.eval();
  // images 1 and 2 of the batch, and image 3 alone: offsets into x
  for (const Tensor& t : {x.narrow(0, 1, 2).mean({2, 3}), x.select(0, 3).sum({1, 2}), x.narrow(0, 2, 2) * 2}) {
    const Structure s = structure_of(t);
    CHECK(s.kernels == 1);
    CHECK_FALSE(s.divides);
    kiln_test::check_jit(t);
  }
  CHECK(structure_of(x.narrow(0, 1, 2).mean({2, 3})).loops == 3);  // rows over N, C; one loop over H * W
  CHECK(structure_of(x.select(0, 3).sum({1, 2})).loops == 2);
  CHECK(structure_of(x.narrow(0, 2, 2) * 2).loops == 1);
  // another offset of the same structure compiles nothing (the offset is a param)
  x.narrow(0, 1, 2).mean({2, 3}).eval();
  reset_stats();
  const Tensor other = x.narrow(0, 0, 2).mean({2, 3});
  other.eval();
  if (codegen::cpu_backend().available()) CHECK(stats().kernels_compiled == 0);
  kiln_test::check_jit(x.narrow(0, 0, 2).mean({2, 3}));
}

TEST_CASE("merged dims: a strided view of a buffer merges the dims whose strides are row-major within it") {
  using namespace kiln::indexing;
  const Tensor x = data({4, 3, 7, 9});
  x.eval();
  // x[:, 1:3]: strides (189, 63, 9, 1) over [4, 2, 7, 9]: C, H and W one
  // block (63 = 7 * 9, 9 = 9 * 1), N apart (189 is not 2 * 63)
  const Tensor c = x.index({Slice(), Slice(1, 3)});
  CHECK(structure_of(c * 2).loops == 2);
  CHECK_FALSE(structure_of(c * 2).divides);
  CHECK(structure_of(c.sum({1, 2, 3})).loops == 2);  // rows over N, one loop over the rest
  CHECK_FALSE(structure_of(c.sum({1, 2, 3})).divides);
  // x[:, :, 2:5]: H and W one block, C apart (63 is not 3 * 9)
  const Tensor h = x.index({Slice(), Slice(), Slice(2, 5)});
  CHECK(structure_of(h + 1).loops == 3);
  CHECK_FALSE(structure_of(h + 1).divides);
  // N and C swapped, written row-major: H and W still one block
  const Tensor p = x.permute({1, 0, 2, 3}).contiguous();
  CHECK(structure_of(p).loops == 3);
  CHECK_FALSE(structure_of(p).divides);
  // a step of 2 along W keeps its loop (constant steps: LLVM's interleaved
  // loads), as does a slice read through its own strides
  CHECK(structure_of(x.index({Slice(), Slice(), Slice(), Slice(None, None, 2)}) * 2).loops == 4);
  for (const Tensor& t : {c * 2, c.sum({1, 2, 3}), h + 1, p, c.mean({2, 3}), h.amax({2, 3}),
                          x.index({Slice(), Slice(), Slice(), Slice(None, None, 2)}) * 2,
                          x.index({Slice(1, 3), Slice(), Slice(1, 6), Slice(2, 7)}) - 1}) {
    CHECK(structure_of(t).kernels == 1);
    kiln_test::check_jit(t);
  }
  // another slice of the same sizes compiles nothing (offsets and strides are params)
  (h + 1).eval();
  reset_stats();
  const Tensor other = x.index({Slice(), Slice(), Slice(3, 6)}) + 1;
  other.eval();
  if (codegen::cpu_backend().available()) CHECK(stats().kernels_compiled == 0);
  kiln_test::check_jit(x.index({Slice(), Slice(), Slice(3, 6)}) + 1);
}

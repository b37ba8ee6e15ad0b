// Views: every view op gives PyTorch's sizes, strides, storage offset and
// contiguity, and shares storage with its base; writes through any view are
// seen through the base and every other view, while tensors computed before a
// write keep the values they had (PyTorch's eager semantics, kept lazily).
// Expected values are what PyTorch gives for the same program.
#include <doctest/doctest.h>

#include <cstdint>
#include <ostream>
#include <vector>

#include "kiln/kiln.h"
#include "tests/check_values.h"
#include "tests/jit_checks.h"

using namespace kiln;
using kiln::indexing::Ellipsis;
using kiln::indexing::Slice;
using I = std::vector<int64_t>;
using F = std::vector<double>;

namespace {

constexpr auto none = std::nullopt;

struct Layout {
  Shape sizes, strides;
  int64_t offset;
  bool contiguous;
  friend bool operator==(const Layout& a, const Layout& b) {
    return a.sizes == b.sizes && a.strides == b.strides && a.offset == b.offset &&
           a.contiguous == b.contiguous;
  }
  friend std::ostream& operator<<(std::ostream& os, const Layout& l) {
    return os << "{sizes " << l.sizes << ", strides " << l.strides << ", offset " << l.offset
              << (l.contiguous ? ", contiguous}" : ", not contiguous}");
  }
};
using L = Layout;

Layout layout(const Tensor& t) { return {t.sizes(), t.strides(), t.storage_offset(), t.is_contiguous()}; }
I iv(const Tensor& t) { return t.to_vector<int64_t>(); }
F fv(const Tensor& t) { return t.to_vector<double>(); }

Tensor x234() { return arange(24).reshape({2, 3, 4}); }
Tensor m34() { return arange(12).reshape({3, 4}); }

}  // namespace

TEST_CASE("views: select and operator[]") {
  Tensor x = x234();
  Tensor s = x.select(1, 2);
  CHECK(layout(s) == L{{2, 4}, {12, 1}, 8, false});
  CHECK(iv(s) == I{8, 9, 10, 11, 20, 21, 22, 23});
  CHECK(s.is_alias_of(x));
  Tensor n = x.select(-1, -1);
  CHECK(layout(n) == L{{2, 3}, {12, 4}, 3, false});
  CHECK(iv(n) == I{3, 7, 11, 15, 19, 23});
  CHECK(layout(x[1]) == L{{3, 4}, {4, 1}, 12, true});
  CHECK(layout(x[1][2]) == L{{4}, {1}, 20, true});
  CHECK(iv(x[1][2]) == I{20, 21, 22, 23});
  Tensor e = x[-1][-1][-1];
  CHECK(layout(e) == L{{}, {}, 23, true});
  CHECK(e.item<int64_t>() == 23);
  CHECK(x[1][2].is_alias_of(x));
}

TEST_CASE("views: slice with negative bounds, steps and None") {
  Tensor a = arange(10);
  CHECK(layout(a.slice(0, 2, 8, 3)) == L{{2}, {3}, 2, false});
  CHECK(iv(a.slice(0, 2, 8, 3)) == I{2, 5});
  CHECK(layout(a.slice(0, -3)) == L{{3}, {1}, 7, true});
  CHECK(iv(a.slice(0, -3)) == I{7, 8, 9});
  CHECK(layout(a.slice(0, -8, -2, 2)) == L{{3}, {2}, 2, false});
  CHECK(iv(a.slice(0, -8, -2, 2)) == I{2, 4, 6});
  CHECK(iv(a.slice(0, 5, 100)) == I{5, 6, 7, 8, 9});
  CHECK(layout(a.slice(0, 8, 3)) == L{{0}, {1}, 8, true});
  CHECK(iv(a.slice(0, 8, 3)).empty());
  CHECK(layout(a.slice(0, none, 4)) == L{{4}, {1}, 0, true});
  CHECK(iv(a.slice(0, -100, 2)) == I{0, 1});
  Tensor m = m34();
  Tensor c = m.slice(1, 1, 3);
  CHECK(layout(c) == L{{3, 2}, {4, 1}, 1, false});
  CHECK(iv(c) == I{1, 2, 5, 6, 9, 10});
  // A slice of a slice composes offsets and steps.
  Tensor ss = a.slice(0, 1, none, 2).slice(0, 1, none, 2);
  CHECK(layout(ss) == L{{2}, {4}, 3, false});
  CHECK(iv(ss) == I{3, 7});
}

TEST_CASE("views: narrow") {
  Tensor m = m34();
  CHECK(layout(m.narrow(1, -2, 2)) == L{{3, 2}, {4, 1}, 2, false});
  CHECK(iv(m.narrow(1, -2, 2)) == I{2, 3, 6, 7, 10, 11});
  CHECK(layout(m.narrow(0, 1, 2)) == L{{2, 4}, {4, 1}, 4, true});
  CHECK(iv(m.narrow(0, 1, 2)) == I{4, 5, 6, 7, 8, 9, 10, 11});
  CHECK(m.narrow(0, 1, 2).is_alias_of(m));
}

TEST_CASE("views: view, including -1 and non-contiguous inputs") {
  Tensor a = arange(12);
  Tensor v = a.view({3, -1});
  CHECK(layout(v) == L{{3, 4}, {4, 1}, 0, true});
  CHECK(v.is_alias_of(a));
  Tensor m = m34();
  Tensor tv = m.t().view({2, 2, 3});
  CHECK(layout(tv) == L{{2, 2, 3}, {2, 1, 4}, 0, false});
  CHECK(iv(tv) == I{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});
  Tensor nv = m.narrow(0, 1, 2).view({-1});
  CHECK(layout(nv) == L{{8}, {1}, 4, true});
  CHECK(iv(nv) == I{4, 5, 6, 7, 8, 9, 10, 11});
  CHECK(layout(m.select(1, 1).view({3, 1})) == L{{3, 1}, {4, 4}, 1, false});
  CHECK(layout(full({}, 5).view({1, 1})) == L{{1, 1}, {1, 1}, 0, true});
  CHECK(layout(m.view_as(ones({2, 6}))) == L{{2, 6}, {6, 1}, 0, true});
}

TEST_CASE("views: reshape is a view when it can be, a copy when not") {
  Tensor m = m34().to(kFloat);
  Tensor r = m.reshape({2, 6});
  CHECK(layout(r) == L{{2, 6}, {6, 1}, 0, true});
  CHECK(r.is_alias_of(m));
  r[1][0] = 100;  // writes through to m
  CHECK(m[1][2].item<float>() == 100);
  Tensor c = m.t().reshape({12});
  CHECK_FALSE(c.is_alias_of(m));
  CHECK(layout(c) == L{{12}, {1}, 0, true});
  CHECK(fv(c) == F{0, 4, 8, 1, 5, 9, 2, 100, 10, 3, 7, 11});
  Tensor x = zeros({2, 2});
  Tensor rv = x.reshape({4});
  rv[1] = 7;
  CHECK(fv(x) == F{0, 7, 0, 0});
  Tensor rc = x.t().reshape({4});
  CHECK(fv(rc) == F{0, 0, 7, 0});
  rc[3] = 9;  // a copy: x is untouched
  CHECK(fv(x) == F{0, 7, 0, 0});
  CHECK(fv(rc) == F{0, 0, 7, 9});
  x[0][0] = 1;  // ... and the copy does not see later writes to x
  CHECK(fv(rc) == F{0, 0, 7, 9});
}

TEST_CASE("views: flatten") {
  Tensor x = x234();
  CHECK(layout(x.flatten(1)) == L{{2, 12}, {12, 1}, 0, true});
  CHECK(x.flatten(1).is_alias_of(x));
  CHECK(layout(x.flatten(0, 1)) == L{{6, 4}, {4, 1}, 0, true});
  CHECK(layout(full({}, 5).flatten()) == L{{1}, {1}, 0, true});
  CHECK(iv(full({}, 5).flatten()) == I{5});
  Tensor p = x.permute({2, 0, 1}).flatten();
  CHECK_FALSE(p.is_alias_of(x));
  CHECK(iv(p) == I{0, 4, 8, 12, 16, 20, 1, 5, 9, 13, 17, 21, 2, 6, 10, 14, 18, 22, 3, 7, 11, 15, 19, 23});
  CHECK(iv(x.transpose(0, 1).flatten(1)) ==
        I{0, 1, 2, 3, 12, 13, 14, 15, 4, 5, 6, 7, 16, 17, 18, 19, 8, 9, 10, 11, 20, 21, 22, 23});
  Tensor z = zeros({2, 2});
  z.flatten().add_(arange(4.0));
  CHECK(fv(z) == F{0, 1, 2, 3});
}

TEST_CASE("views: t, transpose and permute") {
  Tensor m = m34(), x = x234();
  CHECK(layout(m.t()) == L{{4, 3}, {1, 4}, 0, false});
  CHECK(iv(m.t()) == I{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});
  CHECK(layout(arange(3).t()) == L{{3}, {1}, 0, true});
  CHECK(layout(x.transpose(0, 2)) == L{{4, 3, 2}, {1, 4, 12}, 0, false});
  CHECK(iv(x.transpose(0, 2)).at(1) == 12);
  CHECK(layout(x.permute({2, 0, 1})) == L{{4, 2, 3}, {1, 12, 4}, 0, false});
  CHECK(layout(x.permute({-1, 0, -2})) == L{{4, 2, 3}, {1, 12, 4}, 0, false});
  CHECK(iv(x.permute({2, 0, 1})) ==
        I{0, 4, 8, 12, 16, 20, 1, 5, 9, 13, 17, 21, 2, 6, 10, 14, 18, 22, 3, 7, 11, 15, 19, 23});
  CHECK(layout(m.t().t()) == layout(m));
  CHECK(m.t().is_alias_of(m));
}

TEST_CASE("views: squeeze and unsqueeze") {
  Tensor z = arange(6).reshape({1, 3, 1, 2});
  CHECK(layout(z.squeeze()) == L{{3, 2}, {2, 1}, 0, true});
  CHECK(layout(z.squeeze(2)) == L{{1, 3, 2}, {6, 2, 1}, 0, true});
  CHECK(layout(z.squeeze(1)) == L{{1, 3, 1, 2}, {6, 2, 2, 1}, 0, true});
  CHECK(layout(z.squeeze(-4)) == L{{3, 1, 2}, {2, 2, 1}, 0, true});
  Tensor y = arange(6).reshape({3, 2});
  CHECK(layout(y.unsqueeze(-1)) == L{{3, 2, 1}, {2, 1, 1}, 0, true});
  CHECK(layout(y.unsqueeze(0)) == L{{1, 3, 2}, {6, 2, 1}, 0, true});
  CHECK(layout(y.unsqueeze(1)) == L{{3, 1, 2}, {2, 2, 1}, 0, true});
  CHECK(layout(y.unsqueeze(-3)) == L{{1, 3, 2}, {6, 2, 1}, 0, true});
  CHECK(layout(m34().select(1, 1).unsqueeze(1)) == L{{3, 1}, {4, 1}, 1, false});
  CHECK(iv(y.unsqueeze(1)) == I{0, 1, 2, 3, 4, 5});
  Tensor s = full({}, 3.0);
  CHECK(layout(s.unsqueeze(0)) == L{{1}, {1}, 0, true});
  CHECK(layout(s.squeeze(0)) == L{{}, {}, 0, true});
  z.squeeze()[2][1] = 50;
  CHECK(iv(z.flatten()) == I{0, 1, 2, 3, 4, 50});
}

TEST_CASE("views: expand has stride 0 and sees writes to its base") {
  Tensor b = tensor({1, 2, 3}).view({3, 1});
  Tensor e = b.expand({2, 3, 4});
  CHECK(layout(e) == L{{2, 3, 4}, {0, 1, 0}, 0, false});
  CHECK(iv(e) == I{1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3});
  CHECK(layout(b.expand({-1, 2})) == L{{3, 2}, {1, 0}, 0, false});
  CHECK(iv(b.expand({-1, 2})) == I{1, 1, 2, 2, 3, 3});
  CHECK(layout(full({}, 7).expand({2, 2})) == L{{2, 2}, {0, 0}, 0, false});
  CHECK(layout(b.expand_as(ones({3, 5}))) == L{{3, 5}, {1, 0}, 0, false});
  Tensor x = arange(6.0).view({2, 3});
  Tensor ex = x.slice(1, 0, 1).expand({2, 3});
  x.index_put_({Slice(), 0}, tensor({7.0, 8.0}));
  CHECK(fv(ex) == F{7, 7, 7, 8, 8, 8});
}

TEST_CASE("views: contiguous, clone and detach") {
  Tensor m = m34().to(kFloat);
  Tensor c = m.contiguous();
  CHECK(c.impl() == m.impl());
  Tensor tc = m.t().contiguous();
  CHECK(layout(tc) == L{{4, 3}, {3, 1}, 0, true});
  CHECK_FALSE(tc.is_alias_of(m));
  CHECK(fv(tc) == F{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});
  // clone: independent both ways.
  Tensor x = tensor({1.0, 2.0, 3.0});
  Tensor cl = x.clone(), d = x.detach();
  CHECK_FALSE(cl.is_alias_of(x));
  CHECK(d.is_alias_of(x));
  CHECK(layout(cl) == layout(x));
  x.add_(1);
  CHECK(fv(cl) == F{1, 2, 3});
  CHECK(fv(d) == F{2, 3, 4});
  d.mul_(2);  // detach shares storage: x sees it
  CHECK(fv(x) == F{4, 6, 8});
  cl.fill_(0);
  CHECK(fv(x) == F{4, 6, 8});
  // clone of a view keeps its values, contiguous.
  Tensor v = m.slice(1, 1, none, 2).clone();
  CHECK(layout(v) == L{{3, 2}, {2, 1}, 0, true});
  CHECK(fv(v) == F{1, 3, 5, 7, 9, 11});
}

TEST_CASE("views: chunk, split and unbind") {
  Tensor a = arange(10);
  auto c3 = a.chunk(3);
  REQUIRE(c3.size() == 3);
  CHECK(layout(c3[0]) == L{{4}, {1}, 0, true});
  CHECK(layout(c3[1]) == L{{4}, {1}, 4, true});
  CHECK(layout(c3[2]) == L{{2}, {1}, 8, true});
  CHECK(iv(c3[2]) == I{8, 9});
  auto c4 = chunk(a, 4);
  REQUIRE(c4.size() == 4);
  CHECK(layout(c4[3]) == L{{1}, {1}, 9, true});
  auto sp = a.split(Shape{3, 7});
  REQUIRE(sp.size() == 2);
  CHECK(layout(sp[1]) == L{{7}, {1}, 3, true});
  auto sd = m34().split(3, 1);
  REQUIRE(sd.size() == 2);
  CHECK(layout(sd[0]) == L{{3, 3}, {4, 1}, 0, false});
  CHECK(layout(sd[1]) == L{{3, 1}, {4, 1}, 3, false});
  CHECK(iv(sd[1]) == I{3, 7, 11});
  auto ub = m34().unbind(1);
  REQUIRE(ub.size() == 4);
  CHECK(layout(ub[2]) == L{{3}, {4}, 2, false});
  CHECK(iv(ub[2]) == I{2, 6, 10});
  // Writes through the pieces land in the base.
  Tensor x = arange(6.0);
  x.chunk(3)[1].fill_(-1);
  CHECK(fv(x) == F{0, 1, -1, -1, 4, 5});
  x.view({2, 3}).unbind(1)[2].zero_();
  CHECK(fv(x) == F{0, 1, 0, -1, 4, 0});
}

TEST_CASE("views: index with integers, Slice, None and Ellipsis") {
  Tensor m = m34(), x = x234();
  Tensor e = m.index({1, 2});
  CHECK(layout(e) == L{{}, {}, 6, true});
  CHECK(e.item<int64_t>() == 6);
  Tensor s = m.index({Slice(1, none), Slice(none, none, 2)});
  CHECK(layout(s) == L{{2, 2}, {4, 2}, 4, false});
  CHECK(iv(s) == I{4, 6, 8, 10});
  Tensor n = m.index({none, "...", 1});
  CHECK(layout(n) == L{{1, 3}, {12, 4}, 1, false});
  CHECK(iv(n) == I{1, 5, 9});
  CHECK(layout(x.index({Ellipsis, 0})) == L{{2, 3}, {12, 4}, 0, false});
  CHECK(iv(x.index({Ellipsis, 0})) == I{0, 4, 8, 12, 16, 20});
  Tensor q = x.index({0, "...", Slice(1, 3)});
  CHECK(layout(q) == L{{3, 2}, {4, 1}, 1, false});
  CHECK(iv(q) == I{1, 2, 5, 6, 9, 10});
  CHECK(layout(x.index({none, 1, none})) == L{{1, 1, 3, 4}, {24, 12, 4, 1}, 12, true});
  CHECK(layout(x.index({Slice(), none, -1})) == L{{2, 1, 4}, {12, 12, 1}, 8, false});
  CHECK(iv(x.index({Slice(), none, -1})) == I{8, 9, 10, 11, 20, 21, 22, 23});
  CHECK(layout(x.index({1, Slice(none, none, 2), Slice(1, none, 2)})) == L{{2, 2}, {8, 2}, 13, false});
  CHECK(iv(x.index({1, Slice(none, none, 2), Slice(1, none, 2)})) == I{13, 15, 21, 23});
  CHECK(layout(x.index({"..."})) == layout(x));
  CHECK(layout(x.index({-1, -1, -1})) == L{{}, {}, 23, true});
  CHECK(layout(x.index({Slice(), Slice(), none})) == L{{2, 3, 1, 4}, {12, 4, 4, 1}, 0, true});
  CHECK(layout(x.index({true})) == L{{1, 2, 3, 4}, {24, 12, 4, 1}, 0, true});
  CHECK(layout(m.index({1, none, none})) == L{{1, 1, 4}, {4, 4, 1}, 4, true});
  CHECK(m.index({Slice(1, none)}).is_alias_of(m));
}

TEST_CASE("views: fill_, zero_ and copy_ through views of views") {
  Tensor m = zeros({3, 4});
  Tensor v = m.slice(0, 1).slice(1, 1);
  Tensor w = v.slice(1, none, none, 2);
  w.fill_(5);
  CHECK(fv(m) == F{0, 0, 0, 0, 0, 5, 0, 5, 0, 5, 0, 5});
  CHECK(fv(v) == F{5, 0, 5, 5, 0, 5});
  m.select(1, 1).zero_();
  CHECK(fv(v) == F{0, 0, 5, 0, 0, 5});
  // copy_ broadcasts and converts dtypes.
  m = zeros({3, 4});
  m.slice(1, 1, 3).copy_(tensor({7, 8}));
  CHECK(fv(m) == F{0, 7, 8, 0, 0, 7, 8, 0, 0, 7, 8, 0});
  m = zeros({3, 4});
  m.t()[1].copy_(tensor({1.5, 2.5, 3.5}, kFloat64));
  CHECK(fv(m) == F{0, 1.5, 0, 0, 0, 2.5, 0, 0, 0, 3.5, 0, 0});
  Tensor mi = zeros({2, 3}, kLong);
  mi[0].copy_(tensor({1.7, -2.7, 3.2}));
  CHECK(iv(mi) == I{1, -2, 3, 0, 0, 0});
  CHECK(mi.dtype() == kLong);
  Tensor mb = zeros({2, 2});
  mb.copy_(tensor({{true, false}, {false, true}}));
  CHECK(fv(mb) == F{1, 0, 0, 1});
  Tensor m0 = zeros({2, 3});
  m0[1].copy_(tensor(9));
  CHECK(fv(m0) == F{0, 0, 0, 9, 9, 9});
  Tensor rows = arange(6.0).view({2, 3});
  rows[0].copy_(rows[1]);
  CHECK(fv(rows) == F{3, 4, 5, 3, 4, 5});
}

TEST_CASE("views: index_put_ and assignment through index and operator[]") {
  Tensor m = zeros({3, 4});
  m.index_put_({Slice(), 1}, 3);
  CHECK(fv(m) == F{0, 3, 0, 0, 0, 3, 0, 0, 0, 3, 0, 0});
  m.index({Slice(1, none), Slice(none, none, 2)}) = tensor({1.0, 2.0});
  CHECK(fv(m) == F{0, 3, 0, 0, 1, 3, 2, 0, 1, 3, 2, 0});
  m[0] = 5;
  CHECK(fv(m) == F{5, 5, 5, 5, 1, 3, 2, 0, 1, 3, 2, 0});
  m[2][3] = -1;
  CHECK(fv(m) == F{5, 5, 5, 5, 1, 3, 2, 0, 1, 3, 2, -1});
  m.index_put_({"...", 0}, arange(3.0));
  CHECK(fv(m) == F{0, 5, 5, 5, 1, 3, 2, 0, 2, 3, 2, -1});
  m.index_put_({none, 1}, 0);
  CHECK(fv(m) == F{0, 5, 5, 5, 0, 0, 0, 0, 2, 3, 2, -1});
  m.index_put_({0}, tensor({{9.0, 8.0, 7.0, 6.0}}));  // leading 1s dropped, as set_item
  CHECK(fv(m[0]) == F{9, 8, 7, 6});
  m.index_put_({1, Slice(0, 2)}, full({}, 4));
  CHECK(fv(m[1]) == F{4, 4, 0, 0});
  // Assigning to a named Tensor rebinds it: no write.
  Tensor row = m[2];
  row = zeros({4});
  CHECK(fv(m[2]) == F{2, 3, 2, -1});
}

TEST_CASE("views: in-place arithmetic on views of views and transposed views") {
  Tensor m = arange(12.0).reshape({3, 4});
  Tensor v = m.t().slice(0, 1, 3);  // columns 1 and 2, as rows
  v.add_(10);
  CHECK(fv(m) == F{0, 11, 12, 3, 4, 15, 16, 7, 8, 19, 20, 11});
  v += 1;
  CHECK(fv(m) == F{0, 12, 13, 3, 4, 16, 17, 7, 8, 20, 21, 11});
  v -= tensor({1.0, 2.0, 3.0});
  CHECK(fv(m) == F{0, 11, 12, 3, 4, 14, 15, 7, 8, 17, 18, 11});
  v *= 2;
  CHECK(fv(m) == F{0, 22, 24, 3, 4, 28, 30, 7, 8, 34, 36, 11});
  v /= 4;
  CHECK(fv(m) == F{0, 5.5, 6, 3, 4, 7, 7.5, 7, 8, 8.5, 9, 11});
  v.sub_(ones({3}), 2);
  CHECK(fv(m) == F{0, 3.5, 4, 3, 4, 5, 5.5, 7, 8, 6.5, 7, 11});
  v.mul_(tensor({{1.0}, {0.0}}));
  CHECK(fv(m) == F{0, 3.5, 0, 3, 4, 5, 0, 7, 8, 6.5, 0, 11});
  v.div_(2);
  CHECK(fv(m) == F{0, 1.75, 0, 3, 4, 2.5, 0, 7, 8, 3.25, 0, 11});
  CHECK(fv(v) == F{1.75, 2.5, 3.25, 0, 0, 0});
  // A strided view with itself as the operand.
  m = arange(12.0).reshape({3, 4});
  Tensor s = m.index({Slice(none, none, 2), Slice(1, none, 2)});
  s.add_(s);
  CHECK(fv(m) == F{0, 2, 2, 6, 4, 5, 6, 7, 8, 18, 10, 22});
  s.mul_(s.t().t());
  CHECK(fv(m) == F{0, 4, 2, 36, 4, 5, 6, 7, 8, 324, 10, 484});
  m = arange(12.0).reshape({3, 4});
  m[1] += m[0];
  CHECK(fv(m) == F{0, 1, 2, 3, 4, 6, 8, 10, 8, 9, 10, 11});
  Tensor mi = arange(6).reshape({2, 3});
  mi.t().add_(tensor({100, 200}));
  CHECK(iv(mi) == I{100, 101, 102, 203, 204, 205});
  // Overlapping input and output in a strided (not dense) layout: the input
  // is read before the write, as PyTorch's kernel does.
  Tensor o = arange(6.0).view({2, 3});
  o.slice(1, 0, 2).add_(o.slice(1, 1));
  CHECK(fv(o) == F{1, 3, 2, 7, 9, 5});
}

TEST_CASE("views: writes into the base are seen through existing views") {
  Tensor m = arange(6).reshape({2, 3});
  Tensor c = m.select(1, 1), t = m.t(), r = m[1];
  m.mul_(10);
  CHECK(iv(c) == I{10, 40});
  CHECK(iv(t) == I{0, 30, 10, 40, 20, 50});
  m.fill_(1);
  CHECK(iv(c) == I{1, 1});
  m[1] = tensor({4, 5, 6});
  CHECK(iv(c) == I{1, 5});
  CHECK(iv(r) == I{4, 5, 6});
  // A view written after it was read sees the new value on the next read.
  Tensor x = arange(6.0).view({2, 3});
  Tensor sq = x.unsqueeze(0).squeeze(0);
  CHECK(fv(sq) == F{0, 1, 2, 3, 4, 5});
  sq.index_put_({0, 0}, 100);
  CHECK(fv(x) == F{100, 1, 2, 3, 4, 5});
  CHECK(fv(sq) == F{100, 1, 2, 3, 4, 5});
}

TEST_CASE("views: a tensor computed before a write keeps the old value") {
  Tensor x = tensor({1.0, 2.0, 3.0});
  Tensor y = x * 2;
  x.add_(1);
  CHECK(fv(y) == F{2, 4, 6});
  CHECK(fv(x) == F{2, 3, 4});
  CHECK(fv(x * 2) == F{4, 6, 8});
  // Through a view: the reduction keeps its value, a new one sees the write.
  x = tensor({1.0, 2.0, 3.0});
  Tensor v = x.slice(0, 1);
  Tensor sum_before = v.sum();
  v.mul_(10);
  CHECK(sum_before.item<float>() == 5);
  CHECK(fv(x) == F{1, 20, 30});
  CHECK(v.sum().item<float>() == 50);
  // Interleaving reads and writes.
  Tensor a = zeros({4});
  Tensor snap0 = a + 0;
  CHECK(fv(snap0) == F{0, 0, 0, 0});
  std::vector<Tensor> snaps;
  for (int i = 0; i < 3; ++i) {
    a[i] = i + 1;
    snaps.push_back(a * 1);
    if (i == 1) CHECK(fv(snaps[1]) == F{1, 2, 0, 0});
  }
  CHECK(fv(snaps[0]) == F{1, 0, 0, 0});
  CHECK(fv(snaps[1]) == F{1, 2, 0, 0});
  CHECK(fv(snaps[2]) == F{1, 2, 3, 0});
  CHECK(fv(snap0) == F{0, 0, 0, 0});
  // A copy_ from a clone taken before the write.
  Tensor b = arange(4.0);
  Tensor old = b.slice(0, 0, 2).clone();
  b.slice(0, 1, 3).copy_(old);
  CHECK(fv(b) == F{0, 0, 1, 3});
  // Evaluating several pending tensors together after writes.
  Tensor p = arange(3.0);
  Tensor q = p + 1;
  p.mul_(3);
  Tensor r = p + 1;
  kiln::eval(q, r);
  CHECK(fv(q) == F{1, 2, 3});
  CHECK(fv(r) == F{1, 4, 7});
}

TEST_CASE("views: many writes through views give the values of the last") {
  Tensor x = zeros({2, 3});
  Tensor row = x[0], col = x.select(1, 2);
  for (int i = 0; i < 5; ++i) {
    row.add_(1);
    col.mul_(2);
  }
  // x[0][2] = (((((0+1)*2+1)*2+1)*2+1)*2+1)*2 = 62.
  CHECK(fv(x) == F{5, 5, 62, 0, 0, 0});
  CHECK(fv(col) == F{62, 0});
  Tensor y = zeros({1000});
  for (int i = 0; i < 1000; ++i) y[i] = i;
  CHECK(y.sum().item<double>() == 499500);
}

TEST_CASE("views: from_blob aliases the caller's memory both ways") {
  float data[6] = {0, 1, 2, 3, 4, 5};
  Tensor t = from_blob(data, {2, 3});
  CHECK(layout(t) == L{{2, 3}, {3, 1}, 0, true});
  t[0][1] = 9;  // lands at once, with no read
  CHECK(data[1] == 9);
  t.index({Slice(), 2}).add_(10);
  CHECK(data[2] == 12);
  CHECK(data[5] == 15);
  data[4] = 42;  // a caller write before evaluation is seen
  CHECK(t[1][1].item<float>() == 42);
  CHECK(fv(t) == F{0, 9, 12, 3, 42, 15});
  CHECK(t.data_ptr<float>() == data);
  CHECK(t[1].data_ptr<float>() == data + 3);
  // A graph built before a kiln write keeps the old values.
  Tensor y = t * 2;
  t.add_(1);
  CHECK(data[0] == 1);
  CHECK(fv(y) == F{0, 18, 24, 6, 84, 30});
  CHECK(fv(t) == F{1, 10, 13, 4, 43, 16});
  // A view of it writes through to the caller's array.
  t[1].fill_(7);
  CHECK(data[3] == 7);
  CHECK(data[4] == 7);
  CHECK(data[5] == 7);
}

TEST_CASE("views: from_blob with explicit strides") {
  int64_t data[6] = {0, 1, 2, 3, 4, 5};
  Tensor tt = from_blob(data, {3, 2}, Shape{1, 3}, kLong);
  CHECK(layout(tt) == L{{3, 2}, {1, 3}, 0, false});
  CHECK(iv(tt) == I{0, 3, 1, 4, 2, 5});
  CHECK(iv(tt.t()) == I{0, 1, 2, 3, 4, 5});
  tt[2][0] = -1;
  CHECK(data[2] == -1);
  tt.select(1, 1).mul_(10);
  CHECK(data[3] == 30);
  CHECK(data[4] == 40);
  CHECK(data[5] == 50);
  data[0] = 100;
  CHECK(iv(tt) == I{100, 30, 1, 40, -1, 50});
  // Every other element.
  float f[5] = {1, 2, 3, 4, 5};
  Tensor odd = from_blob(f, {3}, Shape{2});
  CHECK(fv(odd) == F{1, 3, 5});
  odd.zero_();
  CHECK(F(f, f + 5) == F{0, 2, 0, 4, 0});
}

// Views of values computed inline whose flat position used to be divided back
// into the value's index (jit/lower_views.cpp strided_of, jit/lower.cpp
// merged_from): windows of a padded tensor, and a permuted tensor flattened.
// The kernels index them with no division, and agree with the reference.
TEST_CASE("views: windows of a computed value and a flattened permutation are indexed without division") {
  auto no_division = [](const Tensor& t) {
    const jit::Schedule s = jit::schedule({t.impl()->storage->node}, jit::ScheduleOptions{});
    size_t divisions = 0, kernels = 0;
    for (const auto& step : s.steps) {
      if (!step.code) continue;
      ++kernels;
      for (const jit::Value& v : step.code->ir.values) divisions += v.op == jit::VOp::Div || v.op == jit::VOp::Mod;
    }
    CHECK(kernels >= 1);
    return divisions == 0;
  };
  const Tensor x = kiln_test::ramp({2, 3, 6, 7});
  x.eval();
  // unfold windows (overlapping, strided, dilated) of (x * 2)
  const Tensor win = (x * 2).unfold(2, 3, 2).unfold(3, 3, 1).slice(-1, 0, std::nullopt, 2);
  CHECK(no_division(win.sum({-1, -2})));
  kiln_test::check_jit(win.sum({-1, -2}));
  // a diagonal of a computed value
  CHECK(no_division((x + 1).diagonal(0, 2, 3) * 3));
  kiln_test::check_jit((x + 1).diagonal(0, 2, 3) * 3);
  // attention's x.transpose(1, 2).reshape(b, t, h * d), computed inline
  const Tensor merged = (x.exp()).transpose(1, 2).reshape({2, 6, 21});
  CHECK(no_division(merged));
  kiln_test::check_jit_close(merged, 2e-6);  // kiln's own exp when compiled
  // a convolution's im2col: windows of a padded value, permuted and merged
  const Tensor cols = (x + 1).unfold(2, 3, 1).unfold(3, 3, 1).permute({0, 1, 4, 5, 2, 3}).reshape({2, 27, 20});
  CHECK(no_division(cols.contiguous()));
  kiln_test::check_jit(cols.contiguous());
  CHECK_T(cols.sum(), kFloat32, {}, {(x + 1).unfold(2, 3, 1).unfold(3, 3, 1).sum().item<double>()});
}

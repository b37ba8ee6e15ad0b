// Compositions PyTorch users reach for (core/composite.cpp): masked_fill,
// lerp, outer, tril / triu, repeat, and their in-place forms. Expected
// values, dtypes and gradients were generated with /usr/bin/python3
// (torch 1.13) and pasted in. lerp's within 1e-6: PyTorch's CPU kernel,
// compiled for FMA hardware, fuses its multiply and add (GCC contracts
// them); kiln rounds each operation, as PyTorch does on CPUs without FMA,
// so a value can differ in its last bit (0.3 lerp from -2 to 5:
// 0.10000014 against PyTorch's 0.10000008).
#include <doctest/doctest.h>

#include "tests/check_values.h"

using namespace kiln;
using kiln_test::mk;
using kiln_test::mki;

namespace {
Tensor x23() { return mk({-2.5, -1.5, -0.5, 0.5, 1.5, 2.5}, {2, 3}, kFloat32); }  // arange(6.) - 2.5
Tensor mask3() { return tensor(std::vector<bool>{true, false, true}); }
}  // namespace

TEST_CASE("ops: masked_fill fills where the mask is true, in self's dtype") {
  CHECK_T(x23().masked_fill(mask3(), 7.5), kFloat32, {2, 3}, {7.5, -1.5, 7.5, 7.5, 1.5, 7.5}, 0);
  CHECK_T(masked_fill(x23(), mask3(), 7.5), kFloat32, {2, 3}, {7.5, -1.5, 7.5, 7.5, 1.5, 7.5}, 0);
  // the mask broadcasts with self, out of place
  CHECK(x23().masked_fill(tensor(std::vector<bool>{true, false}).reshape({2, 1, 1}), 1.0).sizes() == Shape{2, 2, 3});
  // the value is cast to self's dtype: 2.7 -> 2, -2.7 -> -2 in int64; 0.0 -> false
  const Tensor xi = arange(6, kInt64).reshape({2, 3});
  CHECK_T(xi.masked_fill(mask3(), 2.7), kInt64, {2, 3}, {2, 1, 2, 2, 4, 2});
  CHECK_T(xi.masked_fill(mask3(), -2.7), kInt64, {2, 3}, {-2, 1, -2, -2, 4, -2});
  CHECK_T(mask3().masked_fill(tensor(std::vector<bool>{true, true, false}), 0.0), kBool, {3}, {0, 0, 1});
  // in place, through a view of its base
  Tensor base = x23().clone();
  base[1].masked_fill_(mask3(), 0);
  CHECK_T(base, kFloat32, {2, 3}, {-2.5, -1.5, -0.5, 0.0, 1.5, 0.0}, 0);
  // gradients: self's where the mask is false, the 0-D value's summed where true
  Tensor xg = x23().requires_grad_();
  Tensor v = tensor(3.0f).requires_grad_();
  (xg.masked_fill(mask3(), v) * (arange(1.0, 7.0).reshape({2, 3}))).sum().backward();
  CHECK_T(xg.grad(), kFloat32, {2, 3}, {0, 2, 0, 0, 5, 0}, 0);
  CHECK_T(v.grad(), kFloat32, {}, {14}, 0);
}

TEST_CASE("ops: lerp with a scalar and a tensor weight, PyTorch's two-sided formula") {
  const Tensor a = mk({0, 1, -2, 1e8, 3}, {5}, kFloat32), b = mk({10, -1, 5, 1, 3.5}, {5}, kFloat32);
  CHECK_T(a.lerp(b, 0.3), kFloat32, {5}, {3.0, 0.3999999761581421, 0.10000008344650269, 70000000.0, 3.1500000953674316});
  CHECK_T(a.lerp(b, 0.7), kFloat32, {5}, {7.0, -0.3999999761581421, 2.8999998569488525, 30000002.0, 3.3499999046325684});
  CHECK_T(a.lerp(b, 0.5), kFloat32, {5}, {5.0, 0.0, 1.5, 50000000.0, 3.25});
  CHECK_T(lerp(a, b, -0.6), kFloat32, {5}, {-6.0, 2.200000047683716, -6.200000286102295, 160000000.0, 2.700000047683716});
  CHECK_T(lerp(a, b, 1.5), kFloat32, {5}, {15.0, -2.0, 8.5, -50000000.0, 3.75});
  const Tensor w = mk({0.3, 0.7, 0.5, -0.6, 1.5}, {5}, kFloat32);
  CHECK_T(lerp(a, b, w), kFloat32, {5}, {3.0, -0.3999999761581421, 1.5, 160000000.0, 3.75});
  // all three broadcast
  CHECK_T(zeros({2, 1}).lerp(ones({3}), mk({0.25, 0.75}, {2, 1}, kFloat32)), kFloat32, {2, 3},
          {0.25, 0.25, 0.25, 0.75, 0.75, 0.75}, 0);
  // gradients: (1 - w), w and (end - start), times the incoming gradient
  Tensor ag = a.clone().requires_grad_(), bg = b.clone().requires_grad_(), wg = w.clone().requires_grad_();
  (lerp(ag, bg, wg) * arange(1.0, 6.0)).sum().backward();
  CHECK_T(ag.grad(), kFloat32, {5}, {0.6999999881, 0.6000000238, 1.5, 6.4000000954, -2.5});
  CHECK_T(bg.grad(), kFloat32, {5}, {0.3000000119, 1.3999999762, 1.5, -2.4000000954, 7.5});
  CHECK_T(wg.grad(), kFloat32, {5}, {10, -4, 21, -4e8, 2.5});
}

TEST_CASE("ops: outer of two vectors promotes as mul") {
  CHECK_T(outer(mk({1, 2}, {2}, kFloat32), mki({3, 4, 5}, {3}, kInt64)), kFloat32, {2, 3}, {3, 4, 5, 6, 8, 10}, 0);
  CHECK_T(mki({1, -1}, {2}, kInt64).outer(mki({2, 3}, {2}, kInt64)), kInt64, {2, 2}, {2, 3, -2, -3});
}

TEST_CASE("ops: tril / triu keep one side of a diagonal of the last two dims") {
  const Tensor z = arange(1.0, 13.0).reshape({3, 4});
  CHECK_T(z.tril(), kFloat32, {3, 4}, {1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0}, 0);
  CHECK_T(z.triu(), kFloat32, {3, 4}, {1, 2, 3, 4, 0, 6, 7, 8, 0, 0, 11, 12}, 0);
  CHECK_T(z.tril(1), kFloat32, {3, 4}, {1, 2, 0, 0, 5, 6, 7, 0, 9, 10, 11, 12}, 0);
  CHECK_T(triu(z, 1), kFloat32, {3, 4}, {0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12}, 0);
  CHECK_T(tril(z, -1), kFloat32, {3, 4}, {0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0}, 0);
  CHECK_T(z.triu(-1), kFloat32, {3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 0, 10, 11, 12}, 0);
  CHECK_T(z.tril(5), kFloat32, {3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, 0);
  CHECK_T(z.triu(5), kFloat32, {3, 4}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 0);
  CHECK_T(z.tril(-5), kFloat32, {3, 4}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 0);
  // batched over leading dims, any dtype
  CHECK_T(arange(8, kInt64).reshape({2, 2, 2}).tril(), kInt64, {2, 2, 2}, {0, 0, 2, 3, 4, 0, 6, 7});
  CHECK_T(ones({2, 2}, kBool).triu(), kBool, {2, 2}, {1, 1, 0, 1});
  // a transposed view, and in place
  CHECK_T(z.t().tril(), kFloat32, {4, 3}, {1, 0, 0, 2, 6, 0, 3, 7, 11, 4, 8, 12}, 0);
  Tensor y = z.clone();
  y.triu_(1);
  CHECK_T(y, kFloat32, {3, 4}, {0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12}, 0);
  // the gradient is the incoming one, masked the same way
  Tensor g = ones({3, 3}).requires_grad_();
  (g.tril() * arange(1.0, 10.0).reshape({3, 3})).sum().backward();
  CHECK_T(g.grad(), kFloat32, {3, 3}, {1, 0, 0, 4, 5, 0, 7, 8, 9}, 0);
}

TEST_CASE("ops: repeat tiles along each dim, leading repeats add dims") {
  const Tensor r = mki({1, 2, 3, 4, 5, 6}, {2, 3}, kInt64);
  CHECK_T(r.repeat({2, 2}), kInt64, {4, 6},
          {1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6, 1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6});
  CHECK(r.repeat({2, 1, 2}).sizes() == Shape{2, 2, 6});
  CHECK(r.repeat({1, 0}).sizes() == Shape{2, 0});
  CHECK_T(r.t().repeat({1, 2}), kInt64, {3, 4}, {1, 4, 1, 4, 2, 5, 2, 5, 3, 6, 3, 6});
  // always a new row-major tensor, even where a view would do
  Tensor one = mki({7}, {1}, kInt64), same = r.t();
  Tensor tiles = one.repeat({3}), copy = same.repeat({1, 1});
  CHECK(copy.is_contiguous());
  tiles[1].fill_(0);
  copy[0][0].fill_(-1);
  CHECK_T(tiles, kInt64, {3}, {7, 0, 7});
  CHECK_T(one, kInt64, {1}, {7});
  CHECK_T(copy, kInt64, {3, 2}, {-1, 4, 2, 5, 3, 6});
  CHECK_T(r, kInt64, {2, 3}, {1, 2, 3, 4, 5, 6});
  // the gradient sums over the copies
  Tensor rg = mk({1, 2}, {2}, kFloat32).requires_grad_();
  (rg.repeat({3, 2}) * arange(12.0).reshape({3, 4})).sum().backward();
  CHECK_T(rg.grad(), kFloat32, {2}, {30, 36}, 0);
}

TEST_CASE("ops: silu, leaky_relu, hardtanh, relu6 and their gradients") {
  const double inf = kiln_test::kInf, nan = kiln_test::kNaN;
  const Tensor x = mk({-3, -1, -0.5, 0, 0.25, 1, 3, 7, nan, -inf, inf}, {11}, kFloat32);
  CHECK_T(silu(x), kFloat32, {11}, {-0.14227761328220367, -0.2689414322376251, -0.1887703388929367, 0.0, 0.140544131398201, 0.7310585975646973, 2.857722520828247, 6.993622779846191, nan, nan, inf});
  CHECK_T(leaky_relu(x), kFloat32, {11}, {-0.029999999329447746, -0.009999999776482582, -0.004999999888241291, 0.0, 0.25, 1.0, 3.0, 7.0, nan, -inf, inf}, 0);
  CHECK_T(leaky_relu(x, 0.2), kFloat32, {11}, {-0.6000000238418579, -0.20000000298023224, -0.10000000149011612, 0.0, 0.25, 1.0, 3.0, 7.0, nan, -inf, inf}, 0);
  CHECK_T(hardtanh(x), kFloat32, {11}, {-1, -1, -0.5, 0, 0.25, 1, 1, 1, nan, -1, 1}, 0);
  CHECK_T(hardtanh(x, -2.0, 2.0), kFloat32, {11}, {-2, -1, -0.5, 0, 0.25, 1, 2, 2, nan, -2, 2}, 0);
  CHECK_T(relu6(x), kFloat32, {11}, {0, 0, 0, 0, 0.25, 1, 3, 6, nan, 0, 6}, 0);
  // integers keep their dtype
  const Tensor xi = mki({-3, 0, 2, 9}, {4}, kInt64);
  CHECK_T(relu6(xi), kInt64, {4}, {0, 0, 2, 6});
  CHECK_T(hardtanh(xi), kInt64, {4}, {-1, 0, 1, 1});
  // gradients; hardtanh's and relu6's are zero at the bounds, leaky_relu's is the slope at 0
  const std::vector<double> g8 = {-3, -1, -0.5, 0, 0.25, 1, 3, 7};
  Tensor g = mk(g8, {8}, kFloat32).requires_grad_();
  silu(g).sum().backward();
  CHECK_T(g.grad(), kFloat32, {8}, {-0.08810410648584366, 0.07232948392629623, 0.260038822889328, 0.5, 0.623710036277771, 0.9276705384254456, 1.0881041288375854, 1.0054601430892944});
  g = mk(g8, {8}, kFloat32).requires_grad_();
  leaky_relu(g, 0.2).sum().backward();
  CHECK_T(g.grad(), kFloat32, {8}, {0.2, 0.2, 0.2, 0.2, 1, 1, 1, 1});
  g = mk(g8, {8}, kFloat32).requires_grad_();
  hardtanh(g).sum().backward();
  CHECK_T(g.grad(), kFloat32, {8}, {0, 0, 1, 1, 1, 0, 0, 0}, 0);
  Tensor g2 = mk({-1, 1, 6, 0}, {4}, kFloat32).requires_grad_();
  relu6(g2).sum().backward();
  CHECK_T(g2.grad(), kFloat32, {4}, {0, 1, 0, 0}, 0);
}

TEST_CASE("ops: addcmul / addcdiv, in place too, and lerp_") {
  const Tensor s = mk({1, -2, 0.5, 3}, {4}, kFloat32), a = mk({0.1, 3, -1, 7}, {4}, kFloat32),
               b = mk({3, 0.3, 2, -0.7}, {4}, kFloat32);
  CHECK_T(addcmul(s, a, b), kFloat32, {4}, {1.2999999523162842, -1.0999999046325684, -1.5, -1.8999998569488525});
  CHECK_T(s.addcmul(a, b, 0.25), kFloat32, {4}, {1.0750000476837158, -1.774999976158142, 0.0, 1.774999976158142});
  CHECK_T(addcdiv(s, a, b), kFloat32, {4}, {1.0333333015441895, 8.0, 0.0, -7.0});
  CHECK_T(s.addcdiv(a, b, -0.5), kFloat32, {4}, {0.9833333492279053, -7.0, 0.75, 8.0});
  CHECK(s.addcmul(a.reshape({4, 1}), b, 2).sizes() == Shape{4, 4});
  CHECK_T(addcmul(mki({1, 2}, {2}, kInt64), mki({3, 4}, {2}, kInt64), mki({5, 6}, {2}, kInt64), 2), kInt64, {2}, {31, 50});
  // gradients: 1, value * t2 (/ t2), value * t1 (- value * t1 / t2^2)
  Tensor sg = s.clone().requires_grad_(), ag = a.clone().requires_grad_(), bg = b.clone().requires_grad_();
  (sg.addcdiv(ag, bg, 0.5) * arange(1.0, 5.0)).sum().backward();
  CHECK_T(sg.grad(), kFloat32, {4}, {1, 2, 3, 4}, 0);
  CHECK_T(ag.grad(), kFloat32, {4}, {0.1666666716337204, 3.3333332538604736, 0.75, -2.857142925262451});
  CHECK_T(bg.grad(), kFloat32, {4}, {-0.0055555556900799274, -33.33333206176758, 0.375, -28.571430206298828});
  sg = s.clone().requires_grad_(), ag = a.clone().requires_grad_(), bg = b.clone().requires_grad_();
  (sg.addcmul(ag, bg, 0.5) * arange(1.0, 5.0)).sum().backward();
  CHECK_T(ag.grad(), kFloat32, {4}, {1.5, 0.30000001192092896, 3.0, -1.399999976158142});
  CHECK_T(bg.grad(), kFloat32, {4}, {0.05000000074505806, 3.0, -1.5, 14.0});
  // in place, as an optimizer writes its moments
  Tensor m = s.clone();
  m.addcmul_(a, a, 0.5).addcdiv_(a, b);
  CHECK_T(m, kFloat32, {4}, s.addcmul(a, a, 0.5).addcdiv(a, b).to_vector<double>(), 0);
  Tensor e = mk({0, 1, 2, 4}, {4}, kFloat32);
  e.lerp_(full({4}, 10.0), 0.1);
  CHECK_T(e, kFloat32, {4}, {1.0, 1.899999976158142, 2.799999952316284, 4.599999904632568});
}

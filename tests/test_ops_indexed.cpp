// gather, index_select, embedding and scatter_add (core/gather.cpp: the
// Gather and ScatterAdd ops) against PyTorch 1.13: values and gradients
// printed by a script run with /usr/bin/python3 and pasted in; the JIT
// against the reference evaluator on larger shapes; kernel counts.
#include <doctest/doctest.h>

#include <vector>

#include "core/reference/evaluate.h"
#include "core/tensor_impl.h"
#include "jit/executor.h"
#include "jit/schedule.h"
#include "tests/check_values.h"
#include "tests/jit_checks.h"

using namespace kiln;
using kiln_test::check_jit;
using kiln_test::ids;
using kiln_test::kernels;
using kiln_test::ramp;

TEST_CASE("ops: gather along each dim, repeated indices, its gradient adds where it read") {
  const Tensor i0 = ids({2, 0, 1, 1, 0, 2, 2, 0}, {2, 4}), i1 = ids({3, 3, 0, 1, 0, 2, 2, 2, 2}, {3, 3});
  Tensor x = ramp({3, 4}).requires_grad_();
  Tensor y0 = x.gather(0, i0);
  CHECK_T(y0, kFloat32, {2, 4}, {-0.37387657165527344, 0.8414709568023682, -0.9775301218032837, -0.8834545016288757, 0.29552021622657776, 0.31154128909111023, 0.8504367470741272, 0.6754632592201233});
  CHECK(y0.grad_fn()->name() == "GatherBackward0");
  (y0 * arange(1.0, 9.0).reshape({2, 4})).sum().backward();
  CHECK_T(x.grad(), kFloat32, {3, 4}, {5.0, 2.0, 0.0, 8.0, 0.0, 0.0, 3.0, 4.0, 1.0, 6.0, 7.0, 0.0});
  x.set_grad(Tensor());
  Tensor y1 = gather(x, -1, i1);  // index narrower than x in dim 0: rows 0..2
  CHECK_T(y1, kFloat32, {3, 3}, {0.6754632592201233, 0.6754632592201233, 0.29552021622657776, -0.6118578314781189, 0.04158075898885727, -0.9775301218032837, 0.8504367470741272, 0.8504367470741272, 0.8504367470741272});
  (y1 * arange(1.0, 10.0).reshape({3, 3})).sum().backward();
  CHECK_T(x.grad(), kFloat32, {3, 4}, {3.0, 0.0, 0.0, 3.0, 5.0, 4.0, 6.0, 0.0, 0.0, 0.0, 24.0, 0.0});
  // integer and float64 data; a 0-dim input
  CHECK_T(arange(12).reshape({3, 4}).gather(1, i1), kInt64, {3, 3}, {3, 3, 0, 5, 4, 6, 10, 10, 10});
  CHECK_T(ramp({3, 4}).to(kFloat64).gather(0, i0), kFloat64, {2, 4}, {-0.37387657165527344, 0.8414709568023682, -0.9775301218032837, -0.8834545016288757, 0.29552021622657776, 0.31154128909111023, 0.8504367470741272, 0.6754632592201233});
  CHECK_T(tensor(2.5).gather(0, tensor(int64_t{0})), kFloat32, {}, {2.5});
}

TEST_CASE("ops: index_select and embedding, with gradients (repeated rows add up)") {
  Tensor x = ramp({3, 4}).requires_grad_();
  const Tensor sel = ids({3, 0, 3, 1}, {4});
  Tensor y = x.index_select(1, sel);
  CHECK_T(y, kFloat32, {3, 4}, {0.6754632592201233, 0.29552021622657776, 0.6754632592201233, 0.8414709568023682, -0.8834545016288757, 0.04158075898885727, -0.8834545016288757, -0.6118578314781189, 0.9893582463264465, -0.37387657165527344, 0.9893582463264465, 0.31154128909111023});
  (y * arange(1.0, 13.0).reshape({3, 4})).sum().backward();
  CHECK_T(x.grad(), kFloat32, {3, 4}, {2.0, 4.0, 0.0, 4.0, 6.0, 8.0, 0.0, 12.0, 10.0, 12.0, 0.0, 20.0});
  CHECK_T(index_select(x.detach(), 0, ids({2, 2, 0}, {3})), kFloat32, {3, 4}, {-0.37387657165527344, 0.31154128909111023, 0.8504367470741272, 0.9893582463264465, -0.37387657165527344, 0.31154128909111023, 0.8504367470741272, 0.9893582463264465, 0.29552021622657776, 0.8414709568023682, 0.9916647672653198, 0.6754632592201233});
  CHECK_T(x.detach().index_select(0, zeros({0}, kInt64)), kFloat32, {0, 4}, {});
  Tensor W = ramp({5, 3}, 2.0).requires_grad_();
  const Tensor tok = ids({4, 0, 4, 1, 1, 2}, {2, 3});
  Tensor e = embedding(tok, W);
  CHECK_T(e, kFloat32, {2, 3, 3}, {1.3259387016296387, 0.04955161362886429, -1.2501418590545654, 0.5910404324531555, 1.6829419136047363, 1.9833295345306396, 1.3259387016296387, 0.04955161362886429, -1.2501418590545654, 1.3509265184402466, 0.08316151797771454, -1.2237156629562378, 1.3509265184402466, 0.08316151797771454, -1.2237156629562378, -1.9550602436065674, -1.7669090032577515, -0.7477531433105469});
  (e * ramp({2, 3, 3})).sum().backward();
  CHECK_T(W.grad(), kFloat32, {5, 3}, {0.6754632592201233, 0.04158075898885727, -0.6118578314781189, 0.974510669708252, 0.875212550163269, 0.3642873167991638, -0.9809362888336182, -0.8754521608352661, -0.35822945833206177, 0.0, 0.0, 0.0, -0.6820099353790283, -0.04198354482650757, 0.6177881956100464});
}

TEST_CASE("ops: scatter_add adds in order where the index says, and its gradients") {
  Tensor base = ramp({3, 4}, 0.5).requires_grad_(), src = ramp({2, 4}, 3.0).requires_grad_();
  const Tensor si = ids({1, 2, 0, 1, 1, 0, 0, 2}, {2, 4});
  Tensor z = base.scatter_add(0, si, src);
  CHECK_T(z, kFloat32, {3, 4}, {0.14776010811328888, -1.4148379564285278, 0.538236141204834, 0.33773162961006165, 1.0320934057235718, -0.30592891573905945, -0.48876506090164185, 1.5846625566482544, -0.18693828582763672, 2.6801834106445312, 0.4252183735370636, -2.155684232711792});
  (z * arange(1.0, 13.0).reshape({3, 4})).sum().backward();
  CHECK_T(base.grad(), kFloat32, {3, 4}, {1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0});
  CHECK_T(src.grad(), kFloat32, {2, 4}, {5.0, 10.0, 3.0, 8.0, 5.0, 2.0, 3.0, 12.0});
  CHECK_T(scatter_add(zeros({5}, kInt64), 0, ids({4, 0, 4, 4}, {4}), ids({1, 2, 3, 4}, {4})), kInt64, {5}, {2, 0, 0, 0, 8});
  // src larger than the index: its leading part is read
  CHECK_T(zeros({3}).scatter_add(0, ids({2, 2}, {2}), tensor({1.0, 2.0, 100.0})), kFloat32, {3}, {0, 0, 3});
}

TEST_CASE("jit: gather and scatter_add equal the reference, compiled, interpreted and on threads") {
  const int threads = get_num_threads();
  set_num_threads(2);
  manual_seed(4);
  const Tensor x = randn({300, 70});
  const Tensor i0 = randint(0, 300, {120, 70}), i1 = randint(0, 70, {300, 90});
  for (DType dt : {kFloat32, kFloat16, kFloat64, kInt32}) {
    CAPTURE(dtype_name(dt));
    const Tensor xd = (x * 10).to(dt);
    check_jit(xd.gather(0, i0));
    check_jit(xd.gather(1, i1) * 2);
    check_jit(xd.index_select(1, randint(0, 70, {33})).sum(1));
    // many additions into few elements: order matters for float16 / float32
    check_jit(zeros({300, 70}, dt).scatter_add(0, i0, xd.narrow(0, 0, 120)));
    check_jit(zeros({300, 8}, dt).scatter_add(1, randint(0, 8, {300, 70}), xd));
    check_jit(zeros({5}, dt).scatter_add(0, randint(0, 5, {300}), xd.select(1, 3)));
  }
  set_num_threads(threads);
}

TEST_CASE("jit fusion: gather reads its input in place and its readers fuse, scatter_add is a copy and a scatter") {
  const Tensor x = ramp({40, 30});
  x.eval();
  const Tensor i = randint(0, 30, {40, 5});
  i.eval();
  CHECK(kernels((x.gather(1, i) * 2 + 1).sum(1)) == 1);
  CHECK(kernels(x.t().index_select(0, ids({3, 1}, {2})).exp()) == 1);  // through a view of memory
  CHECK(kernels((x * 2).exp().gather(1, i)) == 1);  // computed where the index points
  CHECK(kernels(x.softmax(1).gather(1, i)) == 2);   // a reduction's value is stored first
  CHECK(kernels(zeros({40, 30}).scatter_add(1, i, x.narrow(1, 0, 5) * 3)) == 2);
  check_jit((x * 2).gather(1, i) * 3 - 1);
}

TEST_CASE("ops: gather at an argmax is the max, the index computed in the same graph") {
  manual_seed(1);
  const Tensor x = randn({37, 50});
  CHECK((x.gather(1, x.argmax(1, true)) == std::get<0>(x.max(1, true))).all().item<bool>());
  const Tensor y = (x * 2).exp();  // a computed input, computed where the index says
  CHECK((y.gather(0, y.argmin(0, true)) == y.amin({0}, true)).all().item<bool>());
  CHECK_T(y.index_select(1, tensor(std::vector<int64_t>{49, 0})).sum(1),
          kFloat32, {37}, ((y.select(1, 49) + y.select(1, 0))).to_vector<double>());
}
TEST_CASE("ops: flip and roll reorder along dims (gathers computed from the loop index), gradients") {
  const Tensor x0 = arange(24.0).reshape({2, 3, 4});
  CHECK_T(x0.flip({0}), kFloat32, {2, 3, 4}, {12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0}, 0);
  CHECK_T(x0.flip({2}), kFloat32, {2, 3, 4}, {3.0, 2.0, 1.0, 0.0, 7.0, 6.0, 5.0, 4.0, 11.0, 10.0, 9.0, 8.0, 15.0, 14.0, 13.0, 12.0, 19.0, 18.0, 17.0, 16.0, 23.0, 22.0, 21.0, 20.0}, 0);
  CHECK_T(x0.flip({0, 2}), kFloat32, {2, 3, 4}, {15.0, 14.0, 13.0, 12.0, 19.0, 18.0, 17.0, 16.0, 23.0, 22.0, 21.0, 20.0, 3.0, 2.0, 1.0, 0.0, 7.0, 6.0, 5.0, 4.0, 11.0, 10.0, 9.0, 8.0}, 0);
  CHECK_T(x0.flip({-1, 1}), kFloat32, {2, 3, 4}, {11.0, 10.0, 9.0, 8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0, 0.0, 23.0, 22.0, 21.0, 20.0, 19.0, 18.0, 17.0, 16.0, 15.0, 14.0, 13.0, 12.0}, 0);
  CHECK_T(x0.flip({0, 1, 2}), kFloat32, {2, 3, 4}, {23.0, 22.0, 21.0, 20.0, 19.0, 18.0, 17.0, 16.0, 15.0, 14.0, 13.0, 12.0, 11.0, 10.0, 9.0, 8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0, 0.0}, 0);
  CHECK_T(x0.roll({1}, {2}), kFloat32, {2, 3, 4}, {3.0, 0.0, 1.0, 2.0, 7.0, 4.0, 5.0, 6.0, 11.0, 8.0, 9.0, 10.0, 15.0, 12.0, 13.0, 14.0, 19.0, 16.0, 17.0, 18.0, 23.0, 20.0, 21.0, 22.0}, 0);
  CHECK_T(x0.roll({-5}, {1}), kFloat32, {2, 3, 4}, {8.0, 9.0, 10.0, 11.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 20.0, 21.0, 22.0, 23.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0}, 0);
  CHECK_T(x0.roll({2}, {}), kFloat32, {2, 3, 4}, {22.0, 23.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0}, 0);
  CHECK_T(x0.roll({1, -1}, {0, 2}), kFloat32, {2, 3, 4}, {13.0, 14.0, 15.0, 12.0, 17.0, 18.0, 19.0, 16.0, 21.0, 22.0, 23.0, 20.0, 1.0, 2.0, 3.0, 0.0, 5.0, 6.0, 7.0, 4.0, 9.0, 10.0, 11.0, 8.0}, 0);
  CHECK_T(x0.roll({7}, {0}), kFloat32, {2, 3, 4}, {12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0}, 0);
  Tensor x = x0.clone().requires_grad_();
  (x.flip({0, 2}) * arange(1.0, 25.0).reshape({2, 3, 4})).sum().backward();
  CHECK_T(x.grad(), kFloat32, {2, 3, 4}, {16.0, 15.0, 14.0, 13.0, 20.0, 19.0, 18.0, 17.0, 24.0, 23.0, 22.0, 21.0, 4.0, 3.0, 2.0, 1.0, 8.0, 7.0, 6.0, 5.0, 12.0, 11.0, 10.0, 9.0}, 0);
  x.set_grad(Tensor());
  (x.roll({1, -1}, {0, 2}) * arange(1.0, 25.0).reshape({2, 3, 4})).sum().backward();
  CHECK_T(x.grad(), kFloat32, {2, 3, 4}, {16.0, 13.0, 14.0, 15.0, 20.0, 17.0, 18.0, 19.0, 24.0, 21.0, 22.0, 23.0, 4.0, 1.0, 2.0, 3.0, 8.0, 5.0, 6.0, 7.0, 12.0, 9.0, 10.0, 11.0}, 0);
  // a new tensor even when nothing moves; functional forms; one kernel for both flips
  CHECK_T(flip(ones({1, 3}), {0}), kFloat32, {1, 3}, {1, 1, 1}, 0);
  CHECK_T(roll(x0, {0}, {1}), kFloat32, {2, 3, 4}, x0.to_vector<double>(), 0);
  CHECK_T(tensor(std::vector<int64_t>{1, 2, 3}).flip({0}), kInt64, {3}, {3, 2, 1});
  CHECK(kernels((x0 * 2).flip({0, 2}).roll({1}, {1}) + 1) == 1);
  check_jit((x0.sqrt() * 2).flip({1, 2}).roll({-3}, {2}) - x0);  // sqrt: correctly rounded in both
}
